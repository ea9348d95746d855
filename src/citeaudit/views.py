"""Read-only views of the audit table: the step tables notebooks and the command line show, and
the JSON Lines records the command line writes."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pandas as pd

from . import columns as C
from .documents import Document
from .stores import atomic_write_text
from .vocab import Kind, Relation


def step1_view(table: pd.DataFrame) -> pd.DataFrame:
    """Step 1 per citation: quote status, where it was found and the length of the evidence."""
    return pd.DataFrame({
        "citation": table[C.ID],
        "quote": table[C.QUOTE_STATUS],
        "cited": table[C.CITED_SECTION],
        "found in": table[C.FOUND_SECTION],
        "score": table[C.MATCH_SCORE],
        "evidence chars": [f"{len(e):,}" if isinstance(e, str) else None for e in table[C.EVIDENCE]],
    }).astype(object).where(lambda f: f.notna(), "-")


def step2_view(table: pd.DataFrame) -> pd.DataFrame:
    """Step 2 and 3 per citation: probabilities, relation, confidence, verdict and route."""
    probs = [p if isinstance(p, dict) else {} for p in table[C.PROBABILITIES]]
    view = pd.DataFrame({
        "citation": table[C.ID],
        "quote": table[C.QUOTE_STATUS],
        **{str(r): [p.get(r) for p in probs] for r in Relation},
        "relation": table[C.RELATION],
        "confidence": table[C.CONFIDENCE],
        "verdict": table[C.VERDICT],
        "route": table[C.ROUTE],
        "flags": [", ".join(f) for f in table[C.FLAGS]],
    })
    if C.EXPECTED in table and table[C.EXPECTED].notna().any():
        view["expected"] = table[C.EXPECTED]
    for col in (*Relation, C.CONFIDENCE):
        view[col] = [f"{v:.2f}" if isinstance(v, float) and not pd.isna(v) else "-" for v in view[col]]
    return view.astype(object).where(lambda f: f.notna(), "-")


def records(table: pd.DataFrame) -> list[dict]:
    """One JSON-ready dict per row with the command line's fields (DESIGN.md)."""
    out = []
    for _, row in table.iterrows():
        record = {}
        for field in C.OUTPUT_FIELDS:
            value = row[field] if field in row.index else None
            if field == C.SPAN and value is not None:
                value = {"start": int(value[0]), "end": int(value[1])}
            if field == C.PROBABILITIES and value is None:
                value = dict.fromkeys(map(str, Relation))
            if isinstance(value, float) and pd.isna(value):
                value = None
            record[field] = value
        out.append(record)
    return out


def write_jsonl(table: pd.DataFrame, path: str | Path) -> Path:
    """Write the table as strict JSON Lines through a unique temporary file renamed into place."""
    lines = (json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n" for record in records(table))
    return atomic_write_text(path, "".join(lines))


def highlight_html(document: Document, section_id: str, span: tuple[int, int] | None) -> str:
    """A section's clean text as escaped HTML, with the raw `span` (if any) inside `<mark>`."""
    section = document.sections[section_id]
    if span is not None:  # a quote that runs on past its section (a PDF page) is marked up to its end
        span = (max(span[0], section.start), min(span[1], section.end))
    if span is None or not (section.start <= span[0] < span[1] <= section.end):
        return f"<pre>{html.escape(section.text)}</pre>"
    before = document.clean_slice(section.start, span[0])
    marked = document.clean_slice(span[0], span[1])
    after = document.clean_slice(span[1], section.end)
    return f"<pre>{html.escape(before)}<mark>{html.escape(marked)}</mark>{html.escape(after)}</pre>"


def lines_view(table: pd.DataFrame) -> pd.DataFrame:
    """Line citations: each claim beside its marker and the lines it cites (or why it is invalid)."""
    return pd.DataFrame({
        "citation": table[C.ID],
        "claim": table[C.CLAIM],
        "marker": table[C.CITED_SECTION],
        "cited lines": [e if isinstance(e, str) else f"INVALID: {r}"
                        for e, r in zip(table[C.EVIDENCE], table[C.FABRICATED_REASON])],
    })


def evidence_html(row: pd.Series, document: Document | None = None) -> str:
    """What the judge read for one row, as escaped HTML, with the matched passage in `<mark>`.

    A located quote is marked at its span inside its section; cited lines are all evidence, so
    all are marked; a claim-only section is shown plain; a fabricated row says why it has none.
    """
    if row[C.EVIDENCE] is None:
        return f"<p class='meta'>No evidence: {html.escape(str(row[C.FABRICATED_REASON]))}</p>"
    found = row[C.FOUND_SECTION]
    if document is not None and row[C.QUOTE] is not None and row[C.SPAN] is not None and found in document.sections:
        return highlight_html(document, found, tuple(row[C.SPAN]))
    if row[C.KIND] == Kind.LINES:
        return f"<pre><mark>{html.escape(row[C.EVIDENCE])}</mark></pre>"
    return f"<pre>{html.escape(row[C.EVIDENCE])}</pre>"
