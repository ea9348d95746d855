"""Step 1: find each quote in its source, deterministically and without a model.

Matching runs on a normalized copy of the document's clean text (built once per document by
`index_document`) that keeps, for every character, its offset in the clean text and so in the raw
file. The same `normalize` is applied to quotes.

`quote_status` is one of:
  exact   the normalized quote occurs in the document;
  elided  the quote contains `...`/`…` and its pieces occur in order within one section;
  near    no verbatim match, but a passage scores >= `near_threshold` (rapidfuzz alignment);
  missing nothing close: the citation is `fabricated`, no model call;
  none    the citation gives no quote; the cited section is the evidence.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from rapidfuzz import fuzz

from . import columns as C
from .citations import Citation, LineRange, SourceRef
from .documents import Document, Section
from .lines import range_problem
from .vocab import QuoteStatus

NEAR_THRESHOLD = 90.0
# fuzzy alignment costs len(quote) x len(document); a longer quote is matched exactly or not at all
NEAR_MAX_CHARS = 2_000

_FOLD = str.maketrans(
    {
        **dict.fromkeys("‘’‚‛′`´", "'"),
        **dict.fromkeys("“”„‟″«»", '"'),
        **dict.fromkeys("‐‑‒–—―−﹘﹣－", "-"),
    }
)
_DROP = frozenset("\u200b\u200c\u200d\u2060\ufeff\u00ad")
_ELLIPSIS = re.compile(r"\s*\.\.\.\s*")


def _normalize_chars(text: str, offsets) -> tuple[str, np.ndarray]:
    """Normalize `text` (see `normalize`), mapping every output character to an input offset."""
    folded: list[tuple[str, int]] = [
        (out, off)
        for ch, off in zip(text, offsets)
        for out in unicodedata.normalize("NFKC", ch).translate(_FOLD)
        if out not in _DROP
    ]
    chars: list[str] = []
    origin: list[int] = []
    i = 0
    while i < len(folded):
        ch, off = folded[i]
        if not ch.isspace():
            chars.append(ch)
            origin.append(off)
            i += 1
            continue
        j = i
        while j < len(folded) and folded[j][0].isspace():
            j += 1
        run = "".join(c for c, _ in folded[i:j])
        hyphen_break = bool(chars) and chars[-1] == "-" and ("\n" in run or "\r" in run)
        if chars and j < len(folded) and not hyphen_break:
            chars.append(" ")
            origin.append(off)
        i = j
    return "".join(chars), np.asarray(origin, dtype=np.int64)


def normalize(text: str) -> str:
    """The form both quotes and documents are compared in.

    NFKC; curly quotes and dash variants folded to ASCII; zero-width characters and soft hyphens
    dropped; a hyphen followed by a line break joined to the next word; whitespace runs collapsed.

    >>> normalize("“case-\\n   sensitive”\\u00a0strings\\u200b…")
    '"case-sensitive" strings...'
    """
    return _normalize_chars(text, range(len(text)))[0]


def strip_enclosing_quotes(quote: str) -> str:
    """Remove one pair of quotation marks enclosing the whole (normalized) quote."""
    for left, right in (('"', '"'), ("'", "'")):
        if len(quote) > 1 and quote.startswith(left) and quote.endswith(right):
            return quote[1:-1].strip()
    return quote


@dataclass(frozen=True, eq=False)
class DocumentIndex:
    """A document's normalized clean text, with maps back to clean and raw offsets."""

    document: Document
    text: str
    to_clean: np.ndarray
    section_ranges: dict[str, tuple[int, int]]

    def section_of(self, pos: int) -> Section | None:
        return self.document.section_at(int(self.to_clean[pos]))

    def raw_span(self, start: int, end: int) -> tuple[int, int]:
        """Raw `[start, end)` of the normalized characters `[start, end)`."""
        return self.document.raw_span(int(self.to_clean[start]), int(self.to_clean[end - 1]) + 1)


@functools.lru_cache(maxsize=16)
def index_document(document: Document) -> DocumentIndex:
    """Normalize a document once; every quote is matched against this index."""
    text, to_clean = _normalize_chars(document.clean, range(len(document.clean)))
    ranges = {}
    for sid, section in document.sections.items():
        lo = int(np.searchsorted(to_clean, section.clean_start, side="left"))
        hi = int(np.searchsorted(to_clean, section.clean_end, side="left"))
        ranges[sid] = (lo, hi)
    return DocumentIndex(document, text, to_clean, ranges)


@dataclass(frozen=True)
class Location:
    """What step 1 found for one citation."""

    quote_status: str
    found_section: str | None
    section_match: bool | None
    match_score: float | None
    span: tuple[int, int] | None  # raw [start, end)
    evidence: str | None  # the text the judge reads; None when there is nothing to judge
    closest: str | None = None  # the closest passage (clean text) for near and missing quotes
    reason: str | None = None  # why a fabricated citation has no evidence

    @property
    def fabricated(self) -> bool:
        return self.evidence is None


def _search_order(index: DocumentIndex, cited: str | None) -> list[str]:
    ids = list(index.section_ranges)
    if cited in index.section_ranges:
        ids.remove(cited)
        ids.insert(0, cited)
    return ids


def _evidence_at(index: DocumentIndex, start: int, cited: str | None = None) -> tuple[str | None, str]:
    """The found section id and its text (the cited one when it holds `start`: sections of some
    formats overlap, pages and headings); outside every section, the enclosing paragraph."""
    lo, hi = index.section_ranges.get(cited, (0, 0)) if cited else (0, 0)
    section = index.document.sections[cited] if cited and lo <= start < hi else index.section_of(start)
    if section is not None:
        return section.id, section.text
    clean = index.document.clean
    pos = int(index.to_clean[start])
    lo = clean.rfind("\n\n", 0, pos)
    hi = clean.find("\n\n", pos)
    return None, clean[lo + 2 if lo >= 0 else 0 : hi if hi >= 0 else len(clean)].strip()


def _found(index: DocumentIndex, status: str, cited: str | None, start: int, end: int, score: float) -> Location:
    found_id, evidence = _evidence_at(index, start, cited)
    span = index.raw_span(start, end)
    return Location(
        quote_status=status,
        found_section=found_id,
        section_match=found_id is not None and found_id == cited,
        match_score=round(float(score), 1),
        span=span,
        evidence=evidence,
        closest=index.document.clean_slice(*span) if status == QuoteStatus.NEAR else None,
    )


def _find_exact(index: DocumentIndex, needle: str, cited: str | None) -> tuple[int, int] | None:
    """First occurrence inside the cited section, else the first anywhere."""
    if not needle:
        return None
    if cited in index.section_ranges:
        lo, hi = index.section_ranges[cited]
        pos = index.text.find(needle, lo, hi)
        if pos >= 0:
            return pos, pos + len(needle)
    pos = index.text.find(needle)
    return (pos, pos + len(needle)) if pos >= 0 else None


def _find_elided(index: DocumentIndex, pieces: list[str], cited: str | None) -> tuple[int, int] | None:
    for sid in _search_order(index, cited):
        lo, hi = index.section_ranges[sid]
        pos, first = lo, -1
        for piece in pieces:
            found = index.text.find(piece, pos, hi)
            if found < 0:
                break
            first = found if first < 0 else first
            pos = found + len(piece)
        else:
            return first, pos
    return None


def _find_near(index: DocumentIndex, needle: str, cited: str | None) -> tuple[float, int, int]:
    """Best rapidfuzz alignment over the sections, the cited one first (it wins ties)."""
    best = (0.0, 0, 0)
    for sid in _search_order(index, cited):
        lo, hi = index.section_ranges[sid]
        found = fuzz.partial_ratio_alignment(needle, index.text[lo:hi], score_cutoff=best[0] + 1e-9)
        if found is not None and found.score > best[0]:
            best = (found.score, lo + found.dest_start, lo + found.dest_end)
    return best


def locate(
    index: DocumentIndex,
    quote: str | None,
    cited_section: str | None,
    near_threshold: float = NEAR_THRESHOLD,
) -> Location:
    """Step 1 for one quote citation. `cited_section` is a canonical id (or None/unknown)."""
    document = index.document
    if quote is None:
        section = document.sections.get(cited_section) if cited_section else None
        if section is None:
            return Location(QuoteStatus.NONE, None, False, None, None, None)
        return Location(QuoteStatus.NONE, section.id, True, None, (section.start, section.end), section.text)

    needle = normalize(quote)
    for candidate in dict.fromkeys((needle, strip_enclosing_quotes(needle))):
        hit = _find_exact(index, candidate, cited_section)
        if hit:
            return _found(index, QuoteStatus.EXACT, cited_section, *hit, 100.0)

    needle = strip_enclosing_quotes(needle)
    pieces = [p for p in _ELLIPSIS.split(needle) if p]
    if "..." in needle and pieces:
        hit = _find_elided(index, pieces, cited_section)
        if hit:
            return _found(index, QuoteStatus.ELIDED, cited_section, *hit, 100.0)

    if len(needle) > NEAR_MAX_CHARS:
        return Location(QuoteStatus.MISSING, None, None, None, None, None, reason=(
            f"quote not found verbatim in {document.name}; a quote over {NEAR_MAX_CHARS:,} characters "
            "is matched exactly or not at all"))
    score, start, end = _find_near(index, needle.replace("...", " "), cited_section)
    if score >= near_threshold and end > start:
        return _found(index, QuoteStatus.NEAR, cited_section, start, end, score)
    closest = document.clean_slice(*index.raw_span(start, end)) if end > start else None
    return Location(QuoteStatus.MISSING, None, None, round(score, 1), None, None, closest)


def _locate_line_range(document: Document, lines: LineRange) -> Location:
    problem = range_problem(lines.first, lines.last, len(document.lines))
    if problem is not None:
        return Location(QuoteStatus.NONE, None, False, None, None, None, reason=problem)
    span = (document.lines[lines.first - 1].start, document.lines[lines.last - 1].end)
    return Location(QuoteStatus.NONE, lines.label, True, None, span, document.line_range(lines.first, lines.last))


def _locate_one(citation: Citation, document: Document | None, sources: Mapping[str, str] | None,
                near_threshold: float) -> Location:
    locator = citation.locator
    if isinstance(locator, SourceRef):
        content = (sources or {}).get(locator.source_id)
        if content is None:
            return Location(QuoteStatus.NONE, None, False, None, None, None,
                            reason=f"source {locator.source_id!r} is not among the sources")
        return Location(QuoteStatus.NONE, locator.source_id, True, None, (0, len(content)), content)
    if document is None:
        raise ValueError(f"citation {citation.id!r} cites {locator}: a document is needed to locate it")
    if isinstance(locator, LineRange):
        return _locate_line_range(document, locator)
    found = locate(index_document(document), citation.quote, document.resolve(locator.section), near_threshold)
    if not found.fabricated:
        return found
    if found.reason is not None:
        return found
    if citation.quote is not None:
        reason = f"quote not found in {document.name} (best match {found.match_score:.0f}/100)"
    else:
        reason = f"section {locator.section!r} does not exist in {document.name}"
    return replace(found, reason=reason)


def locate_citations(citations: Iterable[Citation], document: Document | None = None,
                     sources: Mapping[str, str] | None = None,
                     near_threshold: float = NEAR_THRESHOLD) -> pd.DataFrame:
    """Step 1 for citations of any kind: one row per citation, in input order.

    Quote and line citations point into `document`; source citations into `sources` (id ->
    content). A row with no evidence (a missing quote, a section or line range that does not
    exist, an unknown source) carries the reason in `fabricated_reason`; no model will be asked.
    """
    rows = []
    for citation in citations:
        found = _locate_one(citation, document, sources, near_threshold)
        rows.append({
            C.ID: citation.id,
            C.KIND: citation.kind,
            C.CLAIM: citation.claim,
            C.QUOTE: citation.quote,
            C.CITED_SECTION: str(citation.locator),
            C.EXPECTED: citation.expected,
            C.QUOTE_STATUS: found.quote_status,
            C.FOUND_SECTION: found.found_section,
            C.SECTION_MATCH: found.section_match,
            C.MATCH_SCORE: found.match_score,
            C.SPAN: found.span,
            C.EVIDENCE: found.evidence,
            C.CLOSEST: found.closest,
            C.FABRICATED_REASON: found.reason,
        })
    return C.frame(rows, C.LOCATE_COLUMNS)
