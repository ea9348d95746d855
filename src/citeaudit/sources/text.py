"""Plain text: numbered paragraphs and lines.

Any text no other format claims or recognizes. Sections are its paragraphs, numbered "1", "2", ...
(separated by lines of whitespace only), and its lines are numbered from 1 for line citations
(`[L2-L3]`); `load_text(..., sections="headings")` splits numbered headings as in an RFC instead,
and `sections="auto"` (what `load_document` asks for) the document's own numbered clauses when their
numbering is consistent ("3.", "3.2", "(b)", "Article 17": `numbering`), else its paragraphs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from citeaudit.sources.build import clean_lines
from citeaudit.sources.document import Document, Lines, Section, codes_of, line_bounds
from citeaudit.sources.numbering import with_numbering
from citeaudit.sources.reading import read_text, resolve_source
from citeaudit.sources.registry import SourceFormat
from citeaudit.sources.rfc import numbered_sections

_BLANK_LINE_BREAK = re.compile(r"\n(?=[^\S\n]*\n)")  # a line break followed by a line of whitespace only
_NON_SPACE = re.compile(r"\S")


def paragraph_spans(text: str) -> Iterator[tuple[int, int]]:
    r"""`[start, end)` of each paragraph: from its first non-space character to its last, paragraphs
    separated by lines of whitespace only. Linear in time and in memory (a single regular
    expression with an alternation under a star held ~135 bytes per character of a text without
    blank lines).

    >>> list(paragraph_spans("  one\ntwo  \n \n\nthree\n"))
    [(2, 9), (15, 20)]
    """
    start = 0
    for cut in [*(m.start() for m in _BLANK_LINE_BREAK.finditer(text)), len(text)]:
        first = _NON_SPACE.search(text, start, cut)
        if first is not None:
            end = cut
            while end > first.start() and text[end - 1].isspace():
                end -= 1
            yield first.start(), end
        start = cut + 1


def load_text(source: str | Path, sections: str = "paragraphs", *, dirs: Sequence[Path] = ()) -> Document:
    """Load any plain-text file (a path, or a name `resolve_source` finds in `dirs`). Sections are
    numbered paragraphs ("1", "2", ...) separated by blank lines; with `sections="headings"`,
    numbered headings as in an RFC ("2.1.  Title"); with `"numbered"` or `"auto"`, the document's
    numbered clauses (`numbering.with_numbering`)."""
    if sections not in ("paragraphs", "headings", "auto", "numbered"):
        raise ValueError(f"sections must be 'auto', 'numbered', 'paragraphs' or 'headings', not {sections!r}")
    path = resolve_source(source, download=False, dirs=dirs)
    raw = read_text(path)
    codes = codes_of(raw)
    starts, ends = line_bounds(codes)
    clean, clean_to_raw = clean_lines(raw, codes, starts, ends, np.zeros(0, dtype=np.int64))
    del codes
    if sections == "headings":
        found = numbered_sections(clean, clean_to_raw)
    else:
        found = {}
        for n, (c_start, c_end) in enumerate(paragraph_spans(clean), start=1):
            text = clean[c_start:c_end]
            found[str(n)] = Section(
                id=str(n),
                title=text.splitlines()[0][:60],
                text=text,
                start=int(clean_to_raw[c_start]),
                end=int(clean_to_raw[c_end - 1]) + 1,
                clean_start=c_start,
                clean_end=c_end,
            )
    document = Document(path.name, raw, clean, clean_to_raw, found, Lines(raw, starts, ends))
    if sections != "headings":
        return with_numbering(document, sections, replaces=True)
    return document


FORMAT = SourceFormat("text", load_text, aliases=("txt", "plain"), numbered=True)
