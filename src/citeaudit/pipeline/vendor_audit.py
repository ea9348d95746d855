"""Audit the citations a vendor's API response already carries (`responses.py` reads them).

Each vendor citation becomes one row of the audit table, of kind `response`:

- the **claim** is the answer text the citation is attached to, as the answer wrote it;
- its **source** is matched to one of the given sources by what the response names (a file name,
  title, URL or URI, compared by their last path segment, with or without extension), else by the
  vendor's document index (the order the documents were sent in: give `--source` in that order);
  a citation whose source was not given is `unchecked`: no evidence, state `unchecked`, which
  waits like a review and so never lets the answer be ACCEPTed;
- the vendor's **quote**, when it gives one, is located in that source like any quote (step 1);
  when it is not there but is in another given source, the row's evidence is where it is and it
  carries the blocking flag `source_mismatch` (a misattributed citation); when it is nowhere, the
  citation is `fabricated`;
- the vendor's **location** is checked against where the quote is: character offsets
  (`offset_mismatch`: "the quote is at characters 12,040-12,100 of rfc7519.txt, not at
  11,870-11,930 as the response says") and pages (`page_mismatch`: "page 7 cited, the quote is
  on page 8"). Each failed check is a `findings` entry and a blocking flag: the verdict waits for
  a human whatever the judge's confidence, as a quote found in another section than cited does;
- a citation with **no quote** is judged claim-only: its evidence is the cited page (or the
  section holding the cited characters); with no location, the whole source when it is short,
  else the section whose text best matches the claim (`locate.best_passage`).

The answer text outside every citation's span is `Audit.uncited`; with `require_coverage` (the
default) each piece is a review reason, so an answer with uncited text is at best REVIEW.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from citeaudit import table as C
from citeaudit.citations.records import Citation, SectionRef
from citeaudit.citations.responses import CitedSource, ParsedResponse, VendorCitation, load_response, parse_response
from citeaudit.decide.calibration import Calibration
from citeaudit.errors import InputError
from citeaudit.judge.judge import Judge
from citeaudit.locate.locators import page_id, with_cited_regions
from citeaudit.locate.quotes import NEAR_THRESHOLD, Location, best_passage, locate
from citeaudit.locate.textindex import index_document, normalize
from citeaudit.pipeline.audit import Audit, audit_table, run_for
from citeaudit.pipeline.loading import load_document
from citeaudit.printable import printable
from citeaudit.settings.options import AuditOptions
from citeaudit.sources.document import Document
from citeaudit.table import Flag, Kind, QuoteStatus

WHOLE_SOURCE_CHARS = 4_000  # a claim-only citation of a source this short reads all of it
OFFSET_SLACK = 2  # characters a vendor's offsets may be off by (a trimmed space or newline) and still hold
_FOUND = (QuoteStatus.EXACT, QuoteStatus.ELIDED, QuoteStatus.NEAR)


def _alnum(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.lower())


def _keys(name: str) -> set[str]:
    """Comparison keys of a name the response gives: itself, and for a path or URL its last
    segment with and without the extension."""
    tail = re.split(r"[?#]", name.strip())[0].rstrip("/").rsplit("/", 1)[-1]
    keys = {_alnum(name), _alnum(tail), _alnum(tail.rsplit(".", 1)[0]) if "." in tail else ""}
    return {k for k in keys if k}


def _source_keys(document: Document) -> set[str]:
    return _keys(document.name)


def match_source(source: CitedSource, documents: list[Document]) -> tuple[int, str] | None:
    """The position of the given document a citation's source is, and how it was matched: by a
    name the response gives, else by the vendor's document index, else the only source given
    when the response names none. None: the source was not given."""
    for name in source.names:
        wanted = _keys(name)
        for i, document in enumerate(documents):
            if wanted & _source_keys(document):
                return i, f"named {name!r}"
    if source.index is not None and 0 <= source.index < len(documents):
        return source.index, f"document {source.index}"
    if not source.names and source.index is None and len(documents) == 1:
        return 0, "the only source"
    return None


def _cited_text(citation: VendorCitation) -> str:
    """What the citation points at, in words: its source and the vendor's location."""
    parts = [str(citation.source)]
    if citation.location:
        parts.append(citation.location)
    return "; ".join(parts)


def _pages_of(document: Document, span: tuple[int, int]) -> list[int]:
    """The pages (sections `page N`) that hold any of the raw span."""
    lo, hi = document.clean_offset(span[0]), document.clean_offset(max(span[0], span[1] - 1))
    pages = []
    for sid, section in document.sections.items():
        found = re.fullmatch(r"page (\d+)", sid)
        if found and section.clean_start <= hi and lo < section.clean_end:
            pages.append(int(found.group(1)))
    return sorted(pages)


def _has_pages(document: Document) -> bool:
    return "page 1" in document.sections


def _page_words(pages: list[int] | tuple[int, int]) -> str:
    if isinstance(pages, tuple):
        first, last = pages
        return f"page {first}" if first == last else f"pages {first}-{last}"
    return ("page " if len(pages) == 1 else "pages ") + ", ".join(map(str, pages))


def _with_pages(document: Document, pages: tuple[int, int] | None) -> tuple[Document, str | None]:
    """The document with a section for the cited page range, and that section's id (None when the
    document has no such pages)."""
    if pages is None:
        return document, None
    pid = page_id(*pages)
    document = with_cited_regions(document, [Citation("", "", None, SectionRef(pid))])
    return document, pid if pid in document.sections else None


def _offsets_hold(document: Document, chars: tuple[int, int], quote: str, span: tuple[int, int]) -> bool:
    """Whether the vendor's character range holds the quote: its text (raw, or the clean text a
    vendor may have been sent) is the quote, or it starts and ends where the quote was found."""
    wanted = normalize(quote)
    for text in (document.raw, document.clean):
        if chars[1] <= len(text) and normalize(text[chars[0]:chars[1]]) == wanted:
            return True
    return abs(chars[0] - span[0]) <= OFFSET_SLACK and abs(chars[1] - span[1]) <= OFFSET_SLACK


def _offset_finding(document: Document, citation: VendorCitation, span: tuple[int, int]) -> dict[str, str] | None:
    chars = citation.chars
    if chars is None or citation.quote is None or _offsets_hold(document, chars, citation.quote, span):
        return None
    where = f"{span[0]:,}-{span[1]:,}"
    if chars[1] > len(document.raw):
        return {"flag": Flag.OFFSET_MISMATCH,
                "says": f"the response cites characters {chars[0]:,}-{chars[1]:,}, past the end of {document.name} "
                        f"({len(document.raw):,} characters); the quote is at {where}"}
    return {"flag": Flag.OFFSET_MISMATCH,
            "says": f"the quote is at characters {where} of {document.name}, not at {chars[0]:,}-{chars[1]:,} as "
                    "the response says"}


def _page_finding(document: Document, citation: VendorCitation, span: tuple[int, int]) -> dict[str, str] | None:
    pages = citation.pages
    if pages is None or citation.quote is None:
        return None
    if not _has_pages(document):
        return {"flag": Flag.PAGE_MISMATCH,
                "says": f"{_page_words(pages)} cited, but {document.name} has no pages to check it against"}
    found = _pages_of(document, span)
    if any(pages[0] <= p <= pages[1] for p in found):
        return None
    return {"flag": Flag.PAGE_MISMATCH,
            "says": f"{_page_words(pages)} cited, the quote is on {_page_words(found) if found else 'no page'} "
                    f"of {document.name}"}


def _row(citation: VendorCitation, vendor: str, values: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {
        C.ID: citation.id, C.KIND: Kind.RESPONSE, C.CLAIM: citation.claim, C.QUOTE: citation.quote,
        C.CITED_SECTION: _cited_text(citation), C.EXPECTED: None, C.QUOTE_STATUS: None, C.FOUND_SECTION: None,
        C.SECTION_MATCH: None, C.MATCH_SCORE: None, C.SPAN: None, C.EVIDENCE: None, C.CLOSEST: None,
        C.FABRICATED_REASON: None, C.SOURCE_FILE: None, C.VENDOR: vendor, C.VENDOR_LOCATION: citation.location or None,
        C.FINDINGS: [], C.UNCHECKED_REASON: None,
    }
    row.update(values)
    return row


def _from_location(found: Location, document: Document) -> dict[str, Any]:
    return {C.QUOTE_STATUS: found.quote_status, C.FOUND_SECTION: found.found_section, C.MATCH_SCORE: found.match_score,
            C.SPAN: found.span, C.EVIDENCE: found.evidence, C.CLOSEST: found.closest, C.SOURCE_FILE: document.name}


def _claim_only(citation: VendorCitation, document: Document, vendor: str) -> dict[str, Any]:
    """A citation without a quote: the cited page or characters, else the whole short source or
    the section that best matches the claim."""
    base = {C.QUOTE_STATUS: QuoteStatus.NONE, C.SOURCE_FILE: document.name}
    if citation.pages is not None:
        paged, pid = _with_pages(document, citation.pages)
        if pid is None:
            return _row(citation, vendor, {**base, C.FABRICATED_REASON:
                        f"{_page_words(citation.pages)} does not exist in {document.name}"})
        cited = paged.sections[pid]
        return _row(citation, vendor, {**base, C.FOUND_SECTION: pid, C.SPAN: (cited.start, cited.end),
                    C.EVIDENCE: cited.text})
    if citation.chars is not None:
        start, end = citation.chars
        if end > len(document.raw) or start >= len(document.raw):
            return _row(citation, vendor, {**base, C.FABRICATED_REASON:
                        f"characters {start:,}-{end:,} are past the end of {document.name} "
                        f"({len(document.raw):,} characters)"})
        section = document.section_at(document.clean_offset(start))
        if section is not None:
            return _row(citation, vendor, {**base, C.FOUND_SECTION: section.id, C.SPAN: (section.start, section.end),
                        C.EVIDENCE: section.text})
        return _row(citation, vendor, {**base, C.SPAN: (start, end), C.EVIDENCE: document.raw[start:end]})
    if len(document.clean) <= WHOLE_SOURCE_CHARS:
        return _row(citation, vendor, {**base, C.SPAN: (0, len(document.raw)), C.EVIDENCE: document.clean.strip()})
    best = best_passage(index_document(document), citation.claim)
    if best is None:
        return _row(citation, vendor, {**base, C.FABRICATED_REASON:
                    f"no passage of {document.name} shares a word with the claim"})
    sid, evidence, span = best
    return _row(citation, vendor, {**base, C.FOUND_SECTION: sid, C.SPAN: span, C.EVIDENCE: evidence})


def _quoted(citation: VendorCitation, documents: list[Document], at: int, vendor: str,
            near_threshold: float) -> dict[str, Any]:
    """A citation with a quote: located in its source, else in the other given sources."""
    document, cited = _with_pages(documents[at], citation.pages)
    if cited is None and citation.chars is not None and citation.chars[0] < len(document.raw):
        section = document.section_at(document.clean_offset(citation.chars[0]))
        cited = section.id if section is not None else None
    assert citation.quote is not None
    found = locate(index_document(document), citation.quote, cited, near_threshold)
    if found.quote_status in _FOUND:
        findings = [f for f in (_offset_finding(document, citation, found.span or (0, 0)),
                                _page_finding(document, citation, found.span or (0, 0))) if f]
        return _row(citation, vendor, {**_from_location(found, document), C.FINDINGS: findings})
    for j, other in enumerate(documents):
        if j == at:
            continue
        elsewhere = locate(index_document(other), citation.quote, None, near_threshold)
        if elsewhere.quote_status in _FOUND:
            where = f"section {elsewhere.found_section} of " if elsewhere.found_section else ""
            says = f"the quote is in {where}{other.name}, not in {document.name} as the response says"
            return _row(citation, vendor, {**_from_location(elsewhere, other),
                        C.FINDINGS: [{"flag": Flag.SOURCE_MISMATCH, "says": says}]})
    others = " nor in any other source given" if len(documents) > 1 else ""
    score = f" (best match {found.match_score:.1f}/100)" if found.match_score is not None else ""
    return _row(citation, vendor, {C.QUOTE_STATUS: found.quote_status, C.MATCH_SCORE: found.match_score,
                C.CLOSEST: found.closest, C.SOURCE_FILE: document.name,
                C.FABRICATED_REASON: found.reason or f"quote not found in {document.name}{score}{others}"})


def locate_response(response: ParsedResponse, documents: list[Document],
                    near_threshold: float = NEAR_THRESHOLD) -> pd.DataFrame:
    """Step 1 for a vendor response: one row per vendor citation, in response order, with the
    locate columns and `columns.RESPONSE_FIELDS` (see the module docstring)."""
    rows = []
    given = ", ".join(d.name for d in documents) or "none"
    for citation in response.citations:
        matched = match_source(citation.source, documents)
        if matched is None:
            rows.append(_row(citation, response.format, {C.UNCHECKED_REASON: (
                f"the response cites {citation.source}, which is not among the sources given ({given}); "
                "give it with --source to check this citation")}))
        elif citation.quote is None:
            rows.append(_claim_only(citation, documents[matched[0]], response.format))
        else:
            rows.append(_quoted(citation, documents, matched[0], response.format, near_threshold))
    return C.frame(rows, C.LOCATE_COLUMNS + C.RESPONSE_FIELDS)


def response_view(audit: Audit) -> pd.DataFrame:
    """A vendor response's citations in words, one row each: the claim as the answer wrote it, what
    the response cites, where step 1 found the quote (source and section), each finding of the
    vendor's location, and the outcome (`state`, `final_verdict`, or the model's verdict while it
    waits)."""
    table = audit.table
    verdicts = [final if isinstance(final, str) else (f"{verdict}?" if isinstance(verdict, str) else "-")
                for final, verdict in zip(table[C.FINAL_VERDICT], table[C.VERDICT])]
    return pd.DataFrame({
        "citation": table[C.ID],
        "claim": table[C.CLAIM],
        "cites": table[C.CITED_SECTION],
        "quote": table[C.QUOTE_STATUS].map(lambda v: v if isinstance(v, str) else "-"),
        "found in": [" ".join(str(p) for p in (source, section) if p) or "-"
                     for source, section in zip(table[C.SOURCE_FILE], table[C.FOUND_SECTION])],
        "findings": ["; ".join(f["says"] for f in findings) or "-" for findings in table[C.FINDINGS]],
        "verdict": verdicts,
        "state": table[C.STATE],
    })


def uncited_reasons(uncited: Iterable[str]) -> list[str]:
    """Review reasons for answer text that no citation covers (`require_coverage`)."""
    return [f"uncited answer text: {printable(text if len(text) <= 120 else text[:117] + '...')!r}"
            for text in uncited]


def _documents(sources: Iterable[str | Path | Document], format: str | None, sections: str) -> list[Document]:
    documents = [s if isinstance(s, Document) else load_document(s, format, sections) for s in sources]
    if not documents:
        raise InputError("a response is checked against its sources: give at least one --source")
    return documents


def audit_response(response: str | Path | Mapping[str, Any] | ParsedResponse,
                   sources: Iterable[str | Path | Document], *, response_format: str | None = None,
                   format: str | None = None, sections: str = "auto", require_coverage: bool = True,
                   options: AuditOptions | None = None,
                   judge: Judge | None = None, threshold: float | None = None, concurrency: int | None = None,
                   calibration: Calibration | bool | None = True, locate_only: bool = False,
                   **per_call: Any) -> Audit:
    """Audit the citations of a saved vendor response (a path, its parsed JSON or a
    `ParsedResponse`) against the given sources (paths, names or `Document`s; `format` names their
    document format when the extension does not, `sections` how each is divided, as for
    `load_document`: auto, numbered or paragraphs).

    `response_format` names the vendor format (default: by the JSON's shape). Answer text outside
    every citation keeps the answer in REVIEW unless `require_coverage` is False (fail closed: an
    assertion nobody cited is not accepted by default); it is `Audit.uncited` either way. The
    other keyword arguments are `audit_citations`'s (`options`, `locate_only`, `reviews`, ...).
    """
    if isinstance(response, ParsedResponse):
        parsed = response
    elif isinstance(response, str | Path):
        parsed = load_response(response, response_format)
    else:
        parsed = parse_response(response, response_format)
    documents = _documents(sources, format, sections)
    table = locate_response(parsed, documents)
    uncited = tuple(parsed.uncited())
    needs = list(per_call.pop("needs_review", ())) + (uncited_reasons(uncited) if require_coverage else [])
    document = documents[0] if len(documents) == 1 else None
    # locate-only still runs the contrast checks: those of `options`, as a judged audit would
    run = options if locate_only else run_for(options, judge, threshold=threshold, concurrency=concurrency,
                                              calibration=calibration)
    audit = audit_table(table, document, None, run, locate_only=locate_only, needs_review=needs,
                        **per_call)
    return replace(audit, uncited=uncited)
