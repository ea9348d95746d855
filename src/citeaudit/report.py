"""A self-contained HTML audit report: a summary and one card per citation.

The page has inline CSS only: no script, no external fetch. Every piece of document or claim
text goes through `html.escape`, so a claim containing `<script>` shows as text.
"""

from __future__ import annotations

import html
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from . import columns as C
from .documents import Document
from .stores import atomic_write_text
from .views import evidence_html
from .vocab import Route

if TYPE_CHECKING:
    from .audit import Audit

_CSS = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:60rem;color:#222}
h1{font-size:1.4rem} .summary{border:1px solid #ccc;padding:1rem;border-radius:6px;background:#fafafa}
.status{font-weight:700;font-size:1.2rem} .ACCEPT{color:#1a7f37} .REVIEW{color:#9a6700} .REJECT{color:#cf222e}
.card{border:1px solid #ddd;border-radius:6px;padding:1rem;margin:1rem 0}
.card h2{font-size:1rem;margin:0 0 .5rem} .claim{font-size:1.05rem;margin:.3rem 0 .6rem}
.badge{display:inline-block;padding:.1rem .5rem;border-radius:1rem;color:#fff;font-size:.85rem}
.verified{background:#1a7f37} .contradicted{background:#cf222e} .unsupported{background:#9a6700}
.fabricated{background:#6e40c9} .none{background:#8c959f}
.meta{color:#555;font-size:.9rem} .bar{display:inline-block;height:.7rem;background:#0969da;vertical-align:middle}
table.probs td{padding:0 .5rem;font-size:.85rem}
pre{white-space:pre-wrap;background:#f6f8fa;padding:.6rem;border-radius:4px}
mark{background:#fff8c5;outline:1px solid #d4a72c}
"""


def _e(value) -> str:
    return html.escape("" if value is None else str(value))


def _probabilities_html(probs) -> str:
    if not isinstance(probs, dict):
        return "<p class='meta'>No model was asked.</p>"
    cells = "".join(
        f"<tr><td>{_e(name)}</td><td>{p:.2f}</td><td><span class='bar' style='width:{p * 10:.1f}rem'></span></td></tr>"
        for name, p in probs.items()
    )
    return f"<table class='probs'>{cells}</table>"


def _card(row: pd.Series, document: Document | None) -> str:
    verdict = row[C.VERDICT] or "none"
    review = row[C.REVIEW_STATE] if C.REVIEW_STATE in row.index and row[C.REVIEW_STATE] else "none"
    review_text = f"{_e(row[C.REVIEW_VERDICT])} ({_e(review)})" if review != "none" else "none"
    confidence = f"{row[C.CONFIDENCE]:.2f}" if isinstance(row[C.CONFIDENCE], float) else "-"
    flags = ", ".join(row[C.FLAGS]) if row[C.FLAGS] else "none"
    return (
        f"<section class='card' id='citation-{_e(row[C.ID])}'>"
        f"<h2>{_e(row[C.ID])} <span class='badge {_e(verdict)}'>{_e(verdict)}</span>"
        + (" <span class='meta'>model verdict, waits for review</span>" if row[C.ROUTE] == Route.REVIEW else "")
        + "</h2>"
        f"<p class='claim'>{_e(row[C.CLAIM])}</p>"
        f"<p class='meta'>cited: {_e(row[C.CITED_SECTION])} &middot; quote: {_e(row[C.QUOTE_STATUS])} &middot; "
        f"found in: {_e(row[C.FOUND_SECTION])} &middot; route: <b>{_e(row[C.ROUTE])}</b> &middot; "
        f"confidence: {confidence} &middot; review: {review_text} &middot; flags: {_e(flags)}</p>"
        f"{_probabilities_html(row[C.PROBABILITIES])}"
        f"{evidence_html(row, document)}"
        "</section>"
    )


def render_html(audit: Audit, title: str | None = None) -> str:
    """The report as one HTML string (inline CSS, no scripts, every text escaped)."""
    table, document, decision = audit.table, audit.document, audit.decision
    title = title or f"Citation audit of {audit.name}"
    verdicts = Counter(v or "none" for v in table[C.VERDICT])
    routes = Counter(table[C.ROUTE])
    models = sorted({m for m in table[C.MODEL] if isinstance(m, str)}) or ["none (step 1 only)"]
    counts = ", ".join(f"{_e(k)}: {n}" for k, n in sorted(verdicts.items()))
    route_counts = ", ".join(f"{_e(k)}: {n}" for k, n in sorted(routes.items()))
    reasons = "".join(f"<li>{_e(r)}</li>" for r in decision.reasons)
    summary = (
        "<div class='summary'>"
        f"<p class='status {_e(decision.status)}'>{_e(decision.status)}</p><ul>{reasons}</ul>"
        f"<p>{len(table)} citations &middot; verdicts: {counts} &middot; routes: {route_counts}</p>"
        f"<p>threshold: {_e(audit.threshold)} &middot; model: {_e(', '.join(models))}"
        f" &middot; source: {_e(audit.name)}</p></div>"
    )
    cards = "".join(_card(row, document) for _, row in table.iterrows())
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>{_e(title)}</title><style>{_CSS}</style></head>"
        f"<body><h1>{_e(title)}</h1>{summary}{cards}</body></html>"
    )


def write_report(path: str | Path, audit: Audit, title: str | None = None) -> Path:
    """Write the report to `path` through a unique temporary file renamed into place."""
    return atomic_write_text(path, render_html(audit, title))
