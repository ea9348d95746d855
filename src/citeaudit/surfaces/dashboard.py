"""A batch's dashboard: one self-contained HTML page over every answer of a dataset.

What an analyst looks at first, top to bottom:

  decisions   how many answers are ACCEPT, REVIEW, REJECT (and how many lines were invalid)
  verdicts    per verdict, how many stand and how many wait for a human (the rows' `state`)
  answers     every REJECT and REVIEW answer with its first reason, linking to its section
  spot checks the standing verdicts drawn at random for review (`decide.spotcheck`) still open, and
              the warning line when the reviewed ones say the calibration's promise does not hold
  sources     the documents with the most failing citations (contradicted, unsupported, fabricated)
  histogram   the routing score of every judged citation, split into verdicts that stand and
              verdicts that wait, with the threshold marked
  sections    per REJECT / REVIEW answer: its reasons and its report cards (`answer_cards`, which
              `run_batch(..., cards=answer_cards)` renders on the worker) or its line's error

Like the single-answer report, the page has inline CSS and an inline SVG only: no script, no
external fetch, and every text from the dataset goes through `html.escape`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from citeaudit import table as C
from citeaudit.decide.agreements import precision_warning
from citeaudit.decide.state import drawn
from citeaudit.pipeline.audit import Audit
from citeaudit.pipeline.batch import BatchResult, Outcome
from citeaudit.stores import atomic_write_text
from citeaudit.surfaces.report import PAGE_CSS, _e, answer_html
from citeaudit.table import WAITING_STATES, State, Status, Verdict

FAILING = (Verdict.CONTRADICTED, Verdict.UNSUPPORTED, Verdict.FABRICATED)
TOP_SOURCES = 10
CARD_SECTIONS = 200  # answers whose cards are drawn; past it, only their reasons (the page stays small)
BIN_WIDTH = 0.05

def answer_anchor(line: int) -> str:
    """The HTML anchor of an answer's section in the dashboard (line numbers are unique)."""
    return f"answer-{line}"


def answer_cards(audit: Audit, line: int) -> str:
    """The report cards of the answer on `line` of the dataset, anchored for the dashboard: the
    `cards` renderer of `run_batch`, called on the worker that holds the answer's document."""
    return answer_html(audit, answer_anchor(line))


_CSS = """
.grid{display:flex;flex-wrap:wrap;gap:1rem} .grid>div{flex:1 1 18rem}
table.counts{border-collapse:collapse;font-size:.9rem;width:100%}
table.counts th,table.counts td{border-bottom:1px solid #ddd;padding:.25rem .4rem;text-align:left}
table.counts td.n{text-align:right;font-variant-numeric:tabular-nums}
.answer{border-top:3px solid #ddd;margin-top:2rem;padding-top:.5rem}
.answer h2{font-size:1.1rem} .hist text{font-size:11px;fill:#444}
"""


def row_sources(outcome: Outcome) -> list[str]:
    """The source each of an outcome's rows cites: the answer's document, or for a source-id
    answer the cited source id qualified by the answer (its sources travel with the answer)."""
    if outcome.source is not None:
        return [outcome.source] * len(outcome.rows)
    return [f"{outcome.answer_id}: {found if isinstance(found, str) else cited}"
            for found, cited in zip(outcome.rows[C.FOUND_SECTION], outcome.rows[C.CITED_SECTION], strict=True)]


def citation_table(result: BatchResult) -> pd.DataFrame:
    """Every audited citation (invalid lines left out) with its answer, source and card state;
    `verdict` is the one that decides it: a current human review's, else the model's or step 1's."""
    frames = []
    for outcome in result.outcomes:
        if outcome.invalid or outcome.rows.empty:
            continue
        frame = outcome.rows[[C.ID, C.VERDICT, C.ROUTE, C.SCORE, C.MODEL, C.STATE]].copy()
        frame.insert(0, "answer_id", outcome.answer_id)
        frame["source"] = row_sources(outcome)
        reviewed = (frame[C.STATE] == State.REVIEWED).to_numpy()
        frame.loc[reviewed, C.VERDICT] = outcome.rows.loc[reviewed, C.REVIEW_VERDICT].to_numpy()
        frames.append(frame)
    columns = ["answer_id", C.ID, C.VERDICT, C.ROUTE, C.SCORE, C.MODEL, C.STATE, "source"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def decision_counts(result: BatchResult) -> dict[str, int]:
    """Answers per decision, every decision present (0 when none)."""
    counts = Counter(o.status for o in result.outcomes)
    return {str(s): counts.get(str(s), 0) for s in (Status.ACCEPT, Status.REVIEW, Status.REJECT)}


def verdict_counts(citations: pd.DataFrame) -> pd.DataFrame:
    """Per verdict (plus `judge error`, `not judged`, and `unchecked` when a vendor citation's source
    was not given): how many stand, how many wait for review."""
    names = []
    for _, row in citations.iterrows():
        if row[C.STATE] == State.JUDGE_ERROR:
            names.append("judge error")
        elif row[C.STATE] == State.NOT_JUDGED:
            names.append("not judged")
        elif row[C.STATE] == State.UNCHECKED:  # a vendor citation of a source not given
            names.append("unchecked")
        else:
            names.append(str(row[C.VERDICT]))
    frame = pd.DataFrame({"verdict": names, "stands": ~citations[C.STATE].isin(WAITING_STATES).to_numpy()})
    order = [str(v) for v in Verdict] + ["judge error", "not judged"] + \
        (["unchecked"] if "unchecked" in names else [])
    table = pd.DataFrame({"verdict": order})
    table["stands"] = [int(((frame.verdict == v) & frame.stands).sum()) for v in order]
    table["waits for review"] = [int(((frame.verdict == v) & ~frame.stands).sum()) for v in order]
    table["total"] = table["stands"] + table["waits for review"]
    return table[table.total > 0].reset_index(drop=True)


def failing_sources(citations: pd.DataFrame, top: int = TOP_SOURCES) -> pd.DataFrame:
    """The sources with the most failing citations (by the verdict given, standing or not)."""
    columns = ["source", "failing", "failing, stands", "citations", "answers"]
    if citations.empty:
        return pd.DataFrame(columns=columns)
    failing = citations[C.VERDICT].isin([str(v) for v in FAILING])
    stands = ~citations[C.STATE].isin(WAITING_STATES)
    grouped = citations.assign(failing=failing, failing_stands=failing & stands).groupby("source", sort=False)
    table = pd.DataFrame({
        "failing": grouped["failing"].sum().astype(int),
        "failing, stands": grouped["failing_stands"].sum().astype(int),
        "citations": grouped.size().astype(int),
        "answers": grouped["answer_id"].nunique().astype(int),
    }).reset_index()
    table = table[table.failing > 0].sort_values(["failing", "source"], ascending=[False, True], kind="stable")
    return table.head(top).reset_index(drop=True)[columns]


def score_histogram(citations: pd.DataFrame, width: float = BIN_WIDTH) -> pd.DataFrame:
    """Judged citations per bin of the routing score, `stands` and `waits` (fabricated rows have no score)."""
    judged = citations[citations[C.SCORE].notna()]
    edges = np.round(np.arange(0.0, 1.0 + width / 2, width), 6)
    scores = judged[C.SCORE].astype(float).to_numpy()
    stands = ~judged[C.STATE].isin(WAITING_STATES).to_numpy()
    index = np.clip(np.searchsorted(edges, scores, side="right") - 1, 0, len(edges) - 2)
    return pd.DataFrame({
        "low": edges[:-1], "high": edges[1:],
        "stands": np.bincount(index[stands], minlength=len(edges) - 1),
        "waits": np.bincount(index[~stands], minlength=len(edges) - 1),
    })


def _histogram_svg(bins: pd.DataFrame, thresholds: list[float]) -> str:
    bins = bins[bins.high > min([0.5, *bins.low[(bins.stands + bins.waits) > 0]])].reset_index(drop=True)
    if (bins.stands + bins.waits).sum() == 0:
        return "<p class='meta'>No citation was judged (step 1 only, or every quote fabricated).</p>"
    w, h, left, bottom = 520, 180, 34, 28
    bar = (w - left - 8) / len(bins)
    peak = int((bins.stands + bins.waits).max())
    scale = (h - bottom - 10) / peak
    low = float(bins.low.iloc[0])
    parts = [f"<svg class='hist' role='img' aria-label='confidence histogram' width='{w}' height='{h}' "
             f"viewBox='0 0 {w} {h}' xmlns='http://www.w3.org/2000/svg'>",
             f"<line x1='{left}' y1='{h - bottom}' x2='{w - 8}' y2='{h - bottom}' stroke='#888'/>",
             f"<text x='2' y='14'>{peak}</text><text x='2' y='{h - bottom}'>0</text>"]
    for n, b in bins.iterrows():
        x = left + int(n) * bar
        y = float(h - bottom)
        for count, colour, label in ((int(b.stands), "#1a7f37", "stand"), (int(b.waits), "#bf8700", "wait")):
            if count:
                parts.append(f"<rect x='{x + 1:.1f}' y='{y - count * scale:.1f}' width='{bar - 2:.1f}' "
                             f"height='{count * scale:.1f}' fill='{colour}'><title>{b.low:.2f}-{b.high:.2f}: "
                             f"{count} {label}</title></rect>")
                y -= count * scale
        if int(n) % 2 == 0:
            parts.append(f"<text x='{x:.1f}' y='{h - bottom + 14}'>{b.low:.2f}</text>")
    parts.append(f"<text x='{w - 30}' y='{h - bottom + 14}'>1.00</text>")
    span = 1.0 - low
    for t in thresholds:
        x = left + (t - low) / span * (w - left - 8)
        parts.append(f"<line class='threshold' x1='{x:.1f}' y1='6' x2='{x:.1f}' y2='{h - bottom}' stroke='#cf222e' "
                     f"stroke-dasharray='4 3'/><text x='{x + 3:.1f}' y='16'>threshold {t:.2f}</text>")
    parts.append("</svg><p class='meta'>green: the verdict stands (confident, or reviewed by a human) &middot; "
                 "amber: it waits for review</p>")
    return "".join(parts)


def _table(frame: pd.DataFrame, cls: str = "counts") -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in frame.columns)
    body = "".join(
        "<tr>" + "".join(f"<td class='n'>{v}</td>" if isinstance(v, (int, np.integer)) else f"<td>{_e(v)}</td>"
                         for v in row) + "</tr>"
        for row in frame.itertuples(index=False))
    return f"<table class='{cls}'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _answers_to_look_at(outcomes: list[Outcome]) -> str:

    rows = []
    for status in (Status.REJECT, Status.REVIEW):
        for o in (o for o in outcomes if o.status == status):
            rows.append(f"<tr><td><a href='#{answer_anchor(o.line)}'>{_e(o.answer_id)}</a></td><td class='n'>{o.line}"
                        f"</td><td class='{_e(o.status)}'>{_e(o.status)}</td><td>{_e(o.source or 'source ids')}</td>"
                        f"<td>{_e(o.brief(200))}</td></tr>")
    if not rows:
        return "<p>Every answer is ACCEPT.</p>"
    return ("<table class='counts' id='answers'><thead><tr><th>answer</th><th>line</th><th>decision</th>"
            f"<th>source</th><th>first reason</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")


def _answer_section(o: Outcome, cards: bool = True) -> str:

    reasons = "".join(f"<li>{_e(r)}</li>" for r in o.reasons)
    if o.invalid:
        body = f"<pre class='error'>{_e(o.reasons[0] if o.reasons else '')}</pre>"
    elif not cards:
        body = (f"<p class='meta'>Cards left out: only the first {CARD_SECTIONS} answers to look at carry them. "
                "The rows (--output) have every citation; `citeaudit report` draws this answer alone.</p>")
    elif o.cards is not None:
        body = o.cards
    else:
        body = "<p class='meta'>Cards not rendered: run the batch with cards (citeaudit batch --html).</p>"
    return (f"<section class='answer' id='{answer_anchor(o.line)}'><h2>{_e(o.answer_id)} "
            f"<span class='{_e(o.status)}'>{_e(o.status)}</span> <span class='meta'>line {o.line} &middot; "
            f"{_e(o.source or 'source ids')}</span></h2><ul>{reasons}</ul>{body}"
            "<p class='meta'><a href='#answers'>back to the answers</a></p></section>")


def open_spot_checks(result: BatchResult) -> pd.DataFrame:
    """The spot checks of the batch not yet reviewed: answer, line, citation, verdict, source."""
    columns = ["answer_id", "line", "citation", "verdict", "source"]
    rows = [[o.answer_id, o.line, row[C.ID], row[C.VERDICT], source]
            for o in result.outcomes if not o.invalid and not o.rows.empty
            for (_, row), source in zip(o.rows.iterrows(), row_sources(o), strict=True)
            if drawn(row) and row[C.STATE] == State.STANDS]
    return pd.DataFrame(rows, columns=columns)


def _spot_checks(result: BatchResult) -> str:
    """The open spot checks (at most CARD_SECTIONS of them listed), then the warning line, if any."""
    spots = open_spot_checks(result)
    warning = precision_warning({"dataset": result.rows}, result.routing) if result.outcomes else None
    warned = f"<p class='REJECT'>warning: {_e(warning)}</p>" if warning else ""
    if not len(spots):
        return warned
    rate = f" ({result.routing.spot_check:.0%} of the verdicts that stand)" if result.routing is not None else ""
    more = f"<p class='meta'>... and {len(spots) - CARD_SECTIONS} more (see the rows' `spot_check`)</p>" \
        if len(spots) > CARD_SECTIONS else ""
    return (f"<h2>Spot checks to review ({len(spots)})</h2><p class='meta'>Standing verdicts drawn at random{rate} "
            "to measure how often standing verdicts are right; they hold nothing unless a review disagrees.</p>"
            f"{warned}{_table(spots.head(CARD_SECTIONS))}{more}")


def render_dashboard(result: BatchResult, title: str = "Citation audit of a dataset") -> str:
    """The dashboard as one HTML string (inline CSS and SVG, no scripts, every text escaped)."""
    citations = citation_table(result)
    decisions = decision_counts(result)
    invalid = sum(o.invalid for o in result.outcomes)
    routing = result.routing if len(citations) and citations[C.MODEL].notna().any() else None
    thresholds = [routing.threshold] if routing is not None else []
    models = sorted({m for m in citations[C.MODEL] if isinstance(m, str)}) or ["none (step 1 only)"]
    decision_table = pd.DataFrame({"decision": list(decisions), "answers": list(decisions.values())})
    sources = failing_sources(citations)
    look_at = [o for o in result.outcomes if o.status != Status.ACCEPT]
    summary = (
        "<div class='summary' id='top'>"
        f"<p>{len(result.outcomes)} answers ({invalid} invalid lines) &middot; {len(citations)} citations"
        f" &middot; model: {_e(', '.join(models))} &middot; "
        f"{_e(routing.note() if routing is not None else 'threshold: not used (no model asked)')}</p>"
        + "".join(f"<span class='status {k}'>{k}: {n}</span> &nbsp; " for k, n in decisions.items())
        + "</div>"
    )
    body = (
        f"<h1>{_e(title)}</h1>{summary}"
        "<div class='grid'>"
        f"<div><h2>Decisions</h2>{_table(decision_table)}</div>"
        f"<div><h2>Verdicts</h2>{_table(verdict_counts(citations)) if len(citations) else '<p>none</p>'}</div>"
        "</div>"
        f"<h2>Confidence of the judged citations</h2>{_histogram_svg(score_histogram(citations), thresholds)}"
        "<h2>Sources with the most failing citations</h2>"
        + (_table(sources) if len(sources) else "<p>No failing citation.</p>")
        + f"<h2>Answers to look at ({len(look_at)})</h2>{_answers_to_look_at(result.outcomes)}"
        + _spot_checks(result)
        + "".join(_answer_section(o, n < CARD_SECTIONS) for n, o in enumerate(look_at))
    )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>{_e(title)}</title><style>{PAGE_CSS}{_CSS}</style></head><body>{body}</body></html>"
    )


def write_dashboard(result: BatchResult, path: str | Path, title: str = "Citation audit of a dataset") -> Path:
    """Write the dashboard of `result` (`render_dashboard`) to `path` through a temporary file
    renamed into place."""
    if not isinstance(result, BatchResult):
        raise TypeError(f"write_dashboard(result, path, ...) takes the BatchResult first, not {type(result).__name__}")
    return atomic_write_text(path, render_dashboard(result, title))
