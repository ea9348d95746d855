"""The pipeline over one table: locate (step 1), judge (step 2), route (step 3).

Every stage takes the table and returns it with more columns, same index, one row per citation.
A failure in one row is written to that row's `error` and never aborts the batch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd
from tqdm.auto import tqdm

from . import columns as C
from .columns import frame
from .citations import Citation, load_citations
from .config import DEFAULT_THRESHOLD
from .documents import Document, canonical_section_id, load_rfc
from .judge import Judge
from .lines import LineAnswer, locate_line_citations
from .locate import NEAR_THRESHOLD, index_document, locate
from .route import route

PROGRESS_MIN = 5  # show a progress bar when more model calls than this are due


def locate_citations(document: Document, citations: Iterable[Citation],
                     near_threshold: float = NEAR_THRESHOLD) -> pd.DataFrame:
    """Step 1 for quote citations over one document: one row per citation, in input order."""
    index = index_document(document)
    rows = []
    for citation in citations:
        cited = canonical_section_id(citation.locator)
        found = locate(index, citation.quote, cited, near_threshold)
        reason = None
        if found.fabricated:
            if citation.quote is not None:
                reason = f"quote not found in {document.name} (best match {found.match_score:.0f}/100)"
            else:
                reason = f"section {citation.locator!r} does not exist in {document.name}"
        rows.append({
            C.ID: citation.id,
            C.CLAIM: citation.claim,
            C.QUOTE: citation.quote,
            C.CITED_SECTION: citation.locator,
            C.EXPECTED: citation.expected,
            C.QUOTE_STATUS: found.quote_status,
            C.FOUND_SECTION: found.found_section,
            C.SECTION_MATCH: found.section_match,
            C.MATCH_SCORE: found.match_score,
            C.SPAN: found.span,
            C.EVIDENCE: found.evidence,
            C.CLOSEST: found.closest,
            C.FABRICATED_REASON: reason,
        })
    return frame(rows, C.LOCATE_COLUMNS)


def judge_citations(table: pd.DataFrame, judge: Judge, document_name: str = "the source",
                    progress: bool | None = None) -> pd.DataFrame:
    """Step 2: ask the judge about every row that has evidence; fabricated rows are skipped."""
    out = table.copy()
    for column in C.JUDGE_COLUMNS:
        out[column] = pd.Series([None] * len(out), index=out.index, dtype=object)
    todo = [i for i in out.index if out.at[i, C.EVIDENCE] is not None]
    show = progress if progress is not None else (len(todo) > PROGRESS_MIN and judge.cache.mode != "replay")
    for i in tqdm(todo, desc="judge", unit="citation", disable=not show):
        found = out.at[i, C.FOUND_SECTION]
        if not found:
            where = f"an excerpt of {document_name}"
        elif found.startswith("L"):
            where = f"lines {found[1:].replace('-L', '-')} of {document_name}"
        else:
            where = f"section {found} of {document_name}"
        result = judge.judge(out.at[i, C.CLAIM], out.at[i, C.EVIDENCE], where=where, what=f"citation {out.at[i, C.ID]!r}")
        out.at[i, C.RELATION] = result.relation
        out.at[i, C.PROBABILITIES] = result.probabilities
        out.at[i, C.CONFIDENCE] = result.confidence
        out.at[i, C.METHOD] = result.method
        out.at[i, C.MODEL] = result.model
        out.at[i, C.CACHED] = result.cached
        out.at[i, C.ERROR] = result.error
    return out


def _judge_and_route(table: pd.DataFrame, judge: Judge | None, document_name: str, threshold: float,
                     locate_only: bool, progress: bool | None) -> pd.DataFrame:
    if locate_only:
        for column in C.JUDGE_COLUMNS:
            table[column] = None
    else:
        table = judge_citations(table, judge or Judge(), document_name, progress)
    return route(table, threshold)


def audit_quotes(source: str | Path | Document, citations: str | Path | list[Citation],
                 judge: Judge | None = None, threshold: float = DEFAULT_THRESHOLD,
                 locate_only: bool = False, progress: bool | None = None) -> pd.DataFrame:
    """Steps 1-3 for a quote-citation file over one source; the routed table.

    With `locate_only` no model is asked: relation, probabilities and confidence stay None and
    only fabricated citations get a verdict.
    """
    document = source if isinstance(source, Document) else load_rfc(source)
    records = citations if isinstance(citations, list) else load_citations(citations)
    table = locate_citations(document, records)
    return _judge_and_route(table, judge, document.name, threshold, locate_only, progress)


def audit_lines(answer: LineAnswer, judge: Judge | None = None, threshold: float = DEFAULT_THRESHOLD,
                locate_only: bool = False, progress: bool | None = None) -> pd.DataFrame:
    """Steps 1-3 for a line-cited answer: the cited lines are the evidence of each claim."""
    table = locate_line_citations(answer.document, answer.extracted)
    return _judge_and_route(table, judge, answer.document.name, threshold, locate_only, progress)
