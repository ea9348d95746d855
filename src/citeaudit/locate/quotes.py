"""Step 1: find each quote in its source, deterministically and without a model.

Matching runs on the document's text index (`textindex.py`: a normalized copy of the clean text,
built once per document by `index_document`, that keeps for every character its offset in the
clean text and so in the raw file, and a token index). The same `normalize` is applied to quotes.

`quote_status` is one of:
  exact   the normalized quote occurs in the document;
  elided  the quote contains `...`/`…` and its pieces occur in order within one section;
  near    no verbatim match, but a passage scores >= `near_threshold` (rapidfuzz alignment);
  missing nothing close: the citation is `fabricated`, no model call;
  none    the citation gives no quote; the cited section is the evidence.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from rapidfuzz import fuzz

from citeaudit import table as C
from citeaudit.citations.lines import range_problem
from citeaudit.citations.records import Citation, LineRange, SectionRef, SourceRef
from citeaudit.locate.locators import resolve as resolve_locator
from citeaudit.locate.textindex import DocumentIndex, index_document, normalize, strip_enclosing_quotes, tokens_of
from citeaudit.sources.document import Document, codes_of
from citeaudit.sources.japanese import same_place
from citeaudit.sources.registry import evidence_of
from citeaudit.table import QuoteStatus

NEAR_THRESHOLD = 90.0
# fuzzy alignment costs len(quote) x len(document); a longer quote is matched exactly or not at all
NEAR_MAX_CHARS = 2_000
# below this many characters str.find scans a range faster than any index lookup
SCAN_CHARS = 100_000
# a text of up to this many normalized characters is aligned in full for every near/missing quote
NEAR_EXHAUSTIVE_CHARS = 300_000
EXACT_TOKENS = 3  # interior tokens of a quote intersected to find where it may occur
ELIDED_MAX_CANDIDATES = 5_000  # beyond this many places for the rarest piece, scan every section
NEAR_TOKENS = 12  # the rarest tokens of a quote that vote for candidate windows
NEAR_MAX_POSTINGS = 50_000  # a token this frequent votes only when no rarer one exists
NEAR_MAX_WINDOWS = 256  # candidate windows aligned per quote, most votes first

_ELLIPSIS = re.compile(r"\s*\.\.\.\s*")
_WORD = re.compile(r"\w+")


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


def _around(index: DocumentIndex, cited: str | None) -> list[str]:
    """The cited section, then the sections that enclose it, nearest first (a statute's article
    around a cited paragraph, a page around a cited heading); none when nothing is cited."""
    if cited not in index.section_ranges:
        return []
    lo, hi = index.section_ranges[cited]
    holding = np.flatnonzero((index.section_lo <= lo) & (index.section_hi >= hi))  # one pass in C, not a loop
    enclosing = sorted((int(index.section_hi[i] - index.section_lo[i]), index.section_ids[i]) for i in holding
                       if (int(index.section_lo[i]), int(index.section_hi[i])) != (lo, hi))
    return [cited, *(sid for _, sid in enclosing)]


def _search_order(index: DocumentIndex, cited: str | None) -> list[str]:
    """Every section: the cited one and those around it first (`_around`), then in document order."""
    first = _around(index, cited)
    return [*first, *(sid for sid in index.section_ranges if sid not in first)]


def _evidence_at(index: DocumentIndex, start: int, cited: str | None = None) -> tuple[str | None, str]:
    """The found section id and its text (the cited one when it holds `start`: sections of some
    formats overlap, pages and headings); outside every section, the enclosing paragraph."""
    lo, hi = index.section_ranges.get(cited, (0, 0)) if cited else (0, 0)
    section = index.document.sections[cited] if cited and lo <= start < hi else index.section_of(start)
    if section is not None:
        return section.id, evidence_of(index.document, section)
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


def _member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Which of `values` occur in the sorted array `sorted_set`."""
    if len(sorted_set) == 0:
        return np.zeros(len(values), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_set, values), len(sorted_set) - 1)
    return sorted_set[at] == values


def _candidate_starts(index: DocumentIndex, needle: str) -> np.ndarray | None:
    """Sorted starts where `needle` can occur: each of its rarest interior tokens is in place there.

    An interior token (both neighbours inside the needle are not letters or digits) is a whole
    token of the text wherever the needle occurs, so no occurrence is left out. None when the
    needle has no interior token (the caller scans instead).
    """
    starts, ends, hashes = tokens_of(codes_of(needle))
    interior = (starts > 0) & (ends < len(needle))
    if not interior.any() or len(index.token_hash) == 0:
        return None
    offsets, hashes = starts[interior], hashes[interior]
    lo, hi = index.postings(hashes)
    found: np.ndarray | None = None
    for j in np.argsort(hi - lo, kind="stable")[:EXACT_TOKENS]:
        at = index.token_pos[lo[j] : hi[j]].astype(np.int64) - offsets[j]
        found = at if found is None else found[_member(found, at)]
        if len(found) == 0:
            break
    return found


def _first_occurrence(index: DocumentIndex, needle: str, lo: int, hi: int) -> int:
    """`index.text.find(needle, lo, hi)`: a scan of a short range, the token index for a long one."""
    if hi - lo <= SCAN_CHARS:
        return index.text.find(needle, lo, hi)
    starts = _candidate_starts(index, needle)
    if starts is None:
        return index.text.find(needle, lo, hi)
    starts = starts[(starts >= lo) & (starts <= hi - len(needle))]
    for start in starts.tolist():
        if index.text.startswith(needle, start):
            return start
    return -1


def _find_exact(index: DocumentIndex, needle: str, cited: str | None) -> tuple[int, int] | None:
    """First occurrence inside the cited section, else in the nearest section around it, else the
    first anywhere."""
    if not needle:
        return None
    for sid in _around(index, cited):
        lo, hi = index.section_ranges[sid]
        pos = _first_occurrence(index, needle, lo, hi)
        if pos >= 0:
            return pos, pos + len(needle)
    pos = _first_occurrence(index, needle, 0, len(index.text))
    return (pos, pos + len(needle)) if pos >= 0 else None


def _sections_holding(index: DocumentIndex, pieces: list[str]) -> set[str] | None:
    """The sections holding a whole occurrence of the piece with the rarest token, or None when
    the index cannot tell (no piece has an interior token, or the piece is everywhere)."""
    best: np.ndarray | None = None
    piece = ""
    for candidate in pieces:
        starts = _candidate_starts(index, candidate)
        if starts is not None and (best is None or len(starts) < len(best)):
            best, piece = starts, candidate
    if best is None or len(best) > ELIDED_MAX_CANDIDATES:
        return None
    held = set()
    for start in best.tolist():
        if start >= 0 and index.text.startswith(piece, start):
            sid = index.section_holding(start, start + len(piece))
            if sid is not None:
                held.add(sid)
    return held


def _find_elided(index: DocumentIndex, pieces: list[str], cited: str | None) -> tuple[int, int] | None:
    """The pieces in order within one section, the cited one first, then in document order.

    In a long text only the sections that hold the rarest piece are tried (any section where the
    pieces occur in order holds each of them).
    """
    order = _search_order(index, cited)
    if len(index.text) > SCAN_CHARS:
        held = _sections_holding(index, pieces)
        if held is not None:
            order = [sid for sid in order if sid in held]
    for sid in order:
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


Best = tuple[float, int, int]  # score, normalized [start, end)


def _align(index: DocumentIndex, needle: str, sid: str, best: Best) -> Best:
    """`best`, or the section's best alignment when it scores higher."""
    lo, hi = index.section_ranges[sid]
    found = fuzz.partial_ratio_alignment(needle, index.text[lo:hi], score_cutoff=best[0] + 1e-9)
    if found is not None and found.score > best[0]:
        return (found.score, lo + found.dest_start, lo + found.dest_end)
    return best


def _candidate_windows(index: DocumentIndex, needle: str) -> tuple[np.ndarray, int]:
    """Starts of the windows of the text where many of the needle's rarest tokens fall in place.

    Each token occurrence votes for the start it implies for the needle; votes are pooled in bins
    of `width` characters (a changed word shifts the rest by a few), and a window is a bin whose
    votes, with the next bin's, come from at least half the tokens. Returns (starts, width).
    """
    width = max(32, len(needle) // 4)
    starts, _, hashes = tokens_of(codes_of(needle))
    if len(starts) == 0 or len(index.token_hash) == 0:
        return np.zeros(0, dtype=np.int64), width
    hashes, first = np.unique(hashes, return_index=True)
    offsets = starts[first]
    lo, hi = index.postings(hashes)
    counts = hi - lo
    order = [j for j in np.argsort(counts, kind="stable") if counts[j] > 0]
    common = [j for j in order if counts[j] > NEAR_MAX_POSTINGS]
    order = [j for j in order if counts[j] <= NEAR_MAX_POSTINGS][:NEAR_TOKENS] or common[:2]
    if not order:
        return np.zeros(0, dtype=np.int64), width
    bins = []
    for j in order:
        implied = index.token_pos[lo[j] : hi[j]].astype(np.int64) - offsets[j]
        at = np.maximum(implied, 0) // width  # sorted: one vote per token and bin
        bins.append(at[np.concatenate([[True], at[1:] != at[:-1]])])
    votes = np.bincount(np.concatenate(bins), minlength=len(index.text) // width + 2)
    pooled = votes[:-1] + votes[1:]  # a bin and the next one
    need = max(1, -(-len(order) // 2))
    chosen = np.flatnonzero(pooled >= need)
    if len(chosen) > NEAR_MAX_WINDOWS:
        chosen = chosen[np.argsort(-pooled[chosen], kind="stable")[:NEAR_MAX_WINDOWS]]
    return np.sort(chosen) * width, width


def _find_near(index: DocumentIndex, needle: str, cited: str | None) -> Best:
    """Best rapidfuzz alignment over the sections, the cited one first (it wins ties).

    A text of up to `NEAR_EXHAUSTIVE_CHARS` is aligned section by section in full. In a longer one
    the cited section is aligned in full and the others only where the token index finds a window
    sharing many of the needle's rare tokens: a window that scores above the best so far has its
    whole section aligned, so the score and passage reported are the section's, as in a full pass.
    A section with no such window is not read; a missing quote's score is the best of those read.
    """
    best: Best = (0.0, 0, 0)
    if len(index.text) <= NEAR_EXHAUSTIVE_CHARS:
        for sid in _search_order(index, cited):
            best = _align(index, needle, sid, best)
        return best
    done = set()
    for sid in _around(index, cited):
        best = _align(index, needle, sid, best)
        done.add(sid)
    windows, width = _candidate_windows(index, needle)
    probes = windows + width  # the middle of the starts each window's votes imply
    at = np.searchsorted(index.section_lo, probes, side="right") - 1
    inside = (at >= 0) & (probes < index.section_hi[np.maximum(at, 0)])
    located = sorted((index.section_rank[index.section_ids[i]], start, index.section_ids[i])
                     for start, i in zip(windows[inside].tolist(), at[inside].tolist()))
    margin = len(needle) // 4 + 8
    seen = set()
    for _, start, sid in located:
        if sid in done:
            continue
        lo, hi = index.section_ranges[sid]
        window = index.text[max(lo, start - margin) : min(hi, start + 2 * width + len(needle) + margin)]
        if window in seen:  # copies of one passage score alike: the first one stands
            continue
        seen.add(window)
        found = fuzz.partial_ratio_alignment(needle, window, score_cutoff=best[0] + 1e-9)
        if found is not None and found.score > best[0]:
            best = _align(index, needle, sid, best)
            done.add(sid)
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
        return Location(QuoteStatus.NONE, section.id, True, None, (section.start, section.end),
                        evidence_of(document, section))

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
    closest = document.clean_slice(*index.raw_span(start, end)) if end > start and not _in_heading(index, start, end) \
        else None
    return Location(QuoteStatus.MISSING, None, None, round(score, 1), None, None, closest)


def _in_heading(index: DocumentIndex, start: int, end: int) -> bool:
    """Whether normalized `[start, end)` lies within its section's heading line: a heading names a
    topic and quotes nothing, so it is never offered as the passage closest to a missing quote."""
    section = index.section_of(start)
    if section is None:
        return False
    return int(index.to_clean[end - 1]) < section.clean_start + len(section.text.split("\n", 1)[0])


def best_passage(index: DocumentIndex, text: str) -> tuple[str | None, str, tuple[int, int]] | None:
    """The section whose words best match `text` (BM25 over the document's sections), with its id,
    text and raw span: the evidence of a claim-only citation that names no part of its source.
    None when no section shares a word with `text`."""
    wanted = {w for w in _WORD.findall(normalize(text).lower()) if len(w) > 1}
    sections = [s for s in index.document.sections.values() if s.text.strip()]
    if not wanted or not sections:
        return None
    bags = [Counter(_WORD.findall(normalize(s.text).lower())) for s in sections]
    mean = sum(sum(b.values()) for b in bags) / len(bags) or 1.0
    df = {w: sum(1 for b in bags if w in b) for w in wanted}
    idf = {w: math.log(1 + (len(bags) - n + 0.5) / (n + 0.5)) for w, n in df.items() if n}
    k1, b = 1.2, 0.75
    best, best_score = None, 0.0
    for section, bag in zip(sections, bags):
        scale = k1 * (1 - b + b * sum(bag.values()) / mean)
        score = sum(weight * bag[w] * (k1 + 1) / (bag[w] + scale) for w, weight in idf.items() if bag[w])
        if score > best_score:
            best, best_score = section, score
    if best is None:
        return None
    return best.id, best.text, (best.start, best.end)


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
    found = locate(index_document(document), citation.quote, resolve_locator(document, locator.section), near_threshold)
    if not found.fabricated:
        return found
    if found.reason is not None:
        return found
    if citation.quote is not None:
        reason = f"quote not found in {document.name} (best match {found.match_score:.1f}/100)"
    else:
        reason = f"section {locator.section!r} does not exist in {document.name}"
    return replace(found, reason=reason)


def locate_citations(citations: Iterable[Citation], document: Document | None = None,
                     sources: Mapping[str, str] | None = None,
                     near_threshold: float = NEAR_THRESHOLD) -> pd.DataFrame:
    """Step 1 for citations of any kind: one row per citation, in input order.

    Quote and line citations point into `document`; source citations into `sources` (id ->
    content). A statute locator such as 同条第2項 names its article through the citation before it
    (`japanese.same_place`). A row with no evidence (a missing quote, a section or line range that does not
    exist, an unknown source) carries the reason in `fabricated_reason`; no model will be asked.
    """
    rows = []
    previous: str | None = None  # the place the citation before named (同条第2項 names its article)
    for citation in citations:
        located = citation  # located with 同条 written out; the row shows the locator as the answer wrote it
        if isinstance(citation.locator, SectionRef) and document is not None:
            section = same_place(citation.locator.section, previous) or citation.locator.section
            located = replace(citation, locator=SectionRef(section))
            previous = resolve_locator(document, section) or previous
        found = _locate_one(located, document, sources, near_threshold)
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
