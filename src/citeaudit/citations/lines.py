"""Line citations: an answer whose facts end in `[L5]`, `[L2-L3]` or `[L2-3]` over a plain-text
document numbered from line 1.

Each marker closes a claim: the text before it, back to the previous marker or the start of the
sentence. A range that starts at 0, is reversed, or runs past the last line is invalid and the
citation is `fabricated` without a model call. Markers in another form (`[line 2]`, `(L2)`, `[2]`)
are reported as unrecognized, never silently dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from citeaudit.citations.records import Citation, LineRange
from citeaudit.errors import CiteAuditError, InputError
from citeaudit.settings import environment as config
from citeaudit.sources.document import Document
from citeaudit.sources.reading import read_text
from citeaudit.sources.text import load_text

# at most 9 digits: a longer number is no line of any document (and int() of it is unbounded)
MARKER = re.compile(r"\[L(\d{1,9})(?:-L?(\d{1,9}))?\]")
# things that look like a line citation but are not in the accepted form: [line 4], [L1,L2],
# [L-6], [L1-L2-L3], (L2), [2], [2-3]; never silently dropped
LOOKALIKE = re.compile(
    r"\[\s*(?:lines?|ln|l)\s*[-–—.:#]?\s*\d[^\[\]\n]*\]"
    r"|\(\s*(?:lines?|l)\s*\d+(?:\s*[-–—]\s*l?\s*\d+)?\s*\)"
    r"|\[\s*\d+(?:\s*[-–—,;]\s*\d+)*\s*\]",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?。](?=\s)|\n\s*\n")


@dataclass(frozen=True)
class ExtractedCitations:
    citations: list[Citation]  # every accepted marker, as a line citation (kind `lines`)
    unrecognized: list[str]  # markers in another form, as written


def _claim_before(answer: str, start: int, floor: int) -> str:
    """The claim a marker closes: from the previous marker, or the start of its sentence."""
    text = answer[floor:start]
    body = text.rstrip()
    cut = 0
    for match in _SENTENCE_END.finditer(body):
        if match.end() < len(body):  # a sentence that ended before this claim began
            cut = match.end()
    return " ".join(body[cut:].split())


def extract_line_citations(answer: str) -> ExtractedCitations:
    """Every accepted marker with its claim, and every look-alike marker that was not accepted.

    >>> found = extract_line_citations("The run started at dawn [L2]. It ended late [L4-5]. See [line 7].")
    >>> [(c.id, c.claim, c.locator.first, c.locator.last) for c in found.citations]
    [('c1', 'The run started at dawn', 2, 2), ('c2', 'It ended late', 4, 5)]
    >>> found.unrecognized
    ['[line 7]']
    """
    citations = []
    accepted = set()
    floor = 0
    for n, match in enumerate(MARKER.finditer(answer), start=1):
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else first
        claim = _claim_before(answer, match.start(), floor)
        citations.append(Citation(f"c{n}", claim, None, LineRange(first, last, match.group(0))))
        accepted.add(match.span())
        floor = match.end()
    # LOOKALIKE also matches the accepted forms; those are not unrecognized
    unrecognized = [m.group(0) for m in LOOKALIKE.finditer(answer) if m.span() not in accepted]
    return ExtractedCitations(citations, unrecognized)


def range_problem(first: int, last: int, n_lines: int) -> str | None:
    """Why a range is invalid, or None when `1 <= first <= last <= n_lines`."""
    if first < 1:
        return f"line range starts at {first}; lines are numbered from 1"
    if last < first:
        return f"line range is reversed ({first} > {last})"
    if last > n_lines:
        return f"line {last} is past the end of the document ({n_lines} lines)"
    return None


@dataclass(frozen=True)
class LineAnswer:
    """A line-cited answer over its document, with the counts the check reports."""

    document: Document
    answer: str
    extracted: ExtractedCitations

    @property
    def summary(self) -> dict:
        n_lines = len(self.document.lines)
        ranges = [c.locator for c in self.extracted.citations if isinstance(c.locator, LineRange)]
        invalid = sum(range_problem(r.first, r.last, n_lines) is not None for r in ranges)
        return {
            "document_lines": n_lines,
            "citations_found": len(self.extracted.citations),
            "invalid_citations": invalid,
            "unrecognized_citations": len(self.extracted.unrecognized),
        }


def load_line_answer(document: str | Path, answer: str | Path, *, dirs: Sequence[Path] = ()) -> LineAnswer:
    """Read a plain-text document (a path, or a name `resolve_source` finds in `dirs`) and an answer
    text (both UTF-8); a relative answer path that is not in the working folder is looked for among
    the shipped files too (`config.find_input`)."""
    doc = load_text(document, dirs=dirs)
    try:
        text = read_text(config.find_input(answer))
    except CiteAuditError as exc:
        raise InputError(f"answer file: {exc}") from None
    return LineAnswer(doc, text, extract_line_citations(text))
