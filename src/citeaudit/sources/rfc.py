"""RFC plain text: page furniture removed, numbered sections, lines.

An RFC's pages end in a footer ("Jones, et al.   Standards Track   [Page 9]"), a form feed and the
next page's header ("RFC 7519   JSON Web Token (JWT)   May 2015"): those lines are removed from the
clean text, so a sentence runs on across a page break. Sections are the numbered headers ("4.1.3.
Title" at the start of a line); an appendix header ends the section before it. A `.txt` (or any
file whose extension no format claims) is an RFC when its first 20,000 bytes hold at least two of
an RFC's signs (its "Request for Comments: N" line, a page header, a `[Page N]` footer).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from citeaudit.sources.build import clean_lines
from citeaudit.sources.document import Document, Lines, Section, codes_of, line_bounds
from citeaudit.sources.reading import read_text, resolve_source
from citeaudit.sources.registry import SourceFormat

_RFC_FOOTER = re.compile(r"^.*\S.*\s\[Page \d+\]\s*$")
_RFC_HEADER = re.compile(r"^RFC \d+\s{2,}.*\S\s{2,}\w+ \d{4}\s*$")
_RFC_SIGNS = re.compile(r"^(?:Request for Comments:\s*\d+|RFC \d+\s{2,}.*\S\s{2,}\w+ \d{4})\s*$|\[Page \d+\]\s*$",
                        re.MULTILINE)
_SECTION_HEADER = re.compile(r"(?m)^(?:(\d+(?:\.\d+)*)\.\s{1,2}(\S.*)|Appendix [A-Z]\..*)$")


def looks_like_rfc(head: str) -> bool:
    """Whether a text's beginning has an RFC's header or page footers (two signs at least)."""
    return len(_RFC_SIGNS.findall(head)) >= 2


def furniture_lines(raw: str, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Indices of the lines that are RFC page footers or headers.

    Only lines holding `[Page N]` or beginning (after form feeds) with `RFC N` can be either, so
    the two expressions run on those lines alone, not on every line of the text.
    """
    hits = [match.start() for match in re.finditer(r"\[Page \d|RFC \d", raw)]
    lines = np.searchsorted(starts, np.array(hits, dtype=np.int64), side="right") - 1
    candidates = set()
    for hit, i in zip(hits, lines.tolist()):
        if i >= 0 and hit < ends[i] and (raw[hit] == "[" or not raw[starts[i] : hit].strip("\f")):
            candidates.add(i)
    return np.array(sorted(i for i in candidates if is_furniture(raw[starts[i] : ends[i]].lstrip("\f"))),
                    dtype=np.int64)


def is_furniture(line: str) -> bool:
    """Whether a line (form feeds stripped) is an RFC page footer or header."""
    return bool(_RFC_FOOTER.match(line) or _RFC_HEADER.match(line))


def numbered_sections(clean: str, clean_to_raw: np.ndarray) -> dict[str, Section]:
    """One section per numbered header ("2.1.  Title"), up to the next header (an appendix header ends one too)."""
    marks = list(_SECTION_HEADER.finditer(clean))
    sections: dict[str, Section] = {}
    for mark, nxt in zip(marks, [*marks[1:], None]):
        if mark.group(1) is None:  # an appendix header only ends the section before it
            continue
        chunk_end = nxt.start() if nxt else len(clean)
        chunk = clean[mark.start() : chunk_end]
        text = chunk.strip()
        lead = len(chunk) - len(chunk.lstrip())
        c_start = mark.start() + lead
        c_end = c_start + len(text)
        sections[mark.group(1)] = Section(
            id=mark.group(1),
            title=mark.group(2).strip(),
            text=text,
            start=int(clean_to_raw[c_start]),
            end=int(clean_to_raw[c_end - 1]) + 1,
            clean_start=c_start,
            clean_end=c_end,
        )
    return sections


def load_rfc(source: str | Path = "rfc7519.txt", *, dirs: Sequence[Path] = (),
             download_dir: Path | None = None) -> Document:
    """Load a plain-text RFC: page furniture removed, numbered sections split, lines kept.

    `source` is a path or a file name resolved by `resolve_source` in `dirs` (downloaded to
    `download_dir` when pinned and found nowhere; see the module's docstring).
    """
    path = resolve_source(source, dirs=dirs, download_dir=download_dir)
    raw = read_text(path)
    codes = codes_of(raw)
    starts, ends = line_bounds(codes)
    clean, clean_to_raw = clean_lines(raw, codes, starts, ends, furniture_lines(raw, starts, ends))
    del codes
    sections = numbered_sections(clean, clean_to_raw)
    return Document(path.name, raw, clean, clean_to_raw, sections, Lines(raw, starts, ends))


FORMAT = SourceFormat("rfc", load_rfc, detect=looks_like_rfc)
