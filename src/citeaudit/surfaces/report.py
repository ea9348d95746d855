"""A self-contained HTML audit report: the decision, a summary table, and one card per citation.

The page has inline CSS only: no script, no external fetch. Every piece of document, claim or
quote text goes through `html.escape`, so a claim containing `<script>` shows as text.

Each citation is in exactly one of these states (`card_state`), each with its own look, so a
model's guess is never dressed as a verdict that stands:

  fabricated   the quote or locator is not in the source: stands without a model
  error        the judge failed on this row (the error text is shown); waits for a human
  reviewed     a human's current review decides it
  auto         the model's verdict stands (confident enough, no flag)
  waiting      the model says X, but not confidently enough (or a flag is set): waits for review
  unjudged     step 1 only: no model was asked

A spot check (a standing verdict drawn at random for review, `decide.spotcheck`) keeps the look of
its state, with "spot check" in its badge and sentence and, with a review command, that command.
"""

from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from citeaudit import table as C
from citeaudit.decide.agreements import precision_warning
from citeaudit.decide.decision import row_state, why_it_waits
from citeaudit.decide.reviews import ReviewCommand
from citeaudit.decide.routing import contrasts, score_note, verdict_words
from citeaudit.decide.state import drawn
from citeaudit.pipeline.audit import Audit
from citeaudit.sources.document import Document
from citeaudit.stores import atomic_write_text
from citeaudit.surfaces.views import contrast_html, evidence_html, quote_html
from citeaudit.table import WAITING_STATES, ReviewState, State, Verdict

# Japanese families before the generic one: each glyph comes from the first family that has it
JAPANESE_FONTS = '"Hiragino Sans","Yu Gothic UI",Meiryo,"Noto Sans CJK JP","IPAGothic"'
PAGE_CSS = ("\nbody{font-family:system-ui," + JAPANESE_FONTS + ",sans-serif;"
            "margin:2rem auto;max-width:62rem;color:#222;padding:0 1rem}") + """
h1{font-size:1.4rem} .summary{border:1px solid #ccc;padding:1rem;border-radius:6px;background:#fafafa}
.status{font-weight:700;font-size:1.2rem;margin:0} .ACCEPT{color:#1a7f37} .REVIEW{color:#9a6700} .REJECT{color:#cf222e}
table.index{border-collapse:collapse;width:100%;margin:1rem 0;font-size:.9rem}
table.index th,table.index td{border-bottom:1px solid #ddd;padding:.3rem .4rem;text-align:left;vertical-align:top}
table.index td.claim{max-width:28rem}
.card{border:1px solid #ddd;border-left:6px solid #8c959f;border-radius:6px;padding:1rem;margin:1rem 0}
.card h2{font-size:1rem;margin:0 0 .5rem} .claim-text{font-size:1.05rem;margin:.3rem 0 .6rem}
.badge{display:inline-block;padding:.1rem .55rem;border-radius:1rem;font-size:.85rem;border:2px solid transparent}
.s-auto-pass{background:#1a7f37;color:#fff} .s-auto-fail{background:#cf222e;color:#fff}
.s-fabricated{background:#6e40c9;color:#fff} .s-reviewed{background:#0969da;color:#fff}
.s-waiting{background:#fff8c5;color:#7d4e00;border:2px dashed #bf8700}
.s-error{background:#fff;color:#a40e26;border:2px solid #cf222e}
.s-unjudged,.s-unchecked{background:#eaeef2;color:#424a53}
.card.auto-pass{border-left-color:#1a7f37} .card.auto-fail{border-left-color:#cf222e}
.card.fabricated{border-left-color:#6e40c9} .card.reviewed{border-left-color:#0969da}
.card.waiting{border-left-color:#bf8700;border-left-style:dashed}
.card.error{border-left-color:#cf222e;border-left-style:double}
.meta{color:#555;font-size:.9rem} .bar{display:inline-block;height:.7rem;background:#0969da;vertical-align:middle}
table.probs td{padding:0 .5rem;font-size:.85rem}
pre{white-space:pre-wrap;background:#f6f8fa;padding:.6rem;border-radius:4px}
pre.error{background:#ffebe9;color:#82071e}
pre.command{background:#eaeef2;font-size:.85rem}
mark{background:#fff8c5;outline:1px solid #d4a72c}
details summary{cursor:pointer;color:#0969da;font-size:.9rem}
a{color:#0969da}
"""


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value))


def _score(row: pd.Series) -> str:
    """The routing score the threshold was compared with (`score`: from the calibrated P(pass) when
    the model has a calibration), so that the figures shown agree with the routes and the threshold."""
    value = row[C.SCORE] if C.SCORE in row.index else row[C.CONFIDENCE]
    return f"{value:.2f}" if isinstance(value, float) and not pd.isna(value) else "-"


@dataclass(frozen=True)
class CardState:
    """How a citation's outcome is shown: a css key, the badge text and one sentence."""

    key: str  # auto-pass, auto-fail, fabricated, reviewed, waiting, error, unjudged
    badge: str
    sentence: str


def card_state(row: pd.Series, calibrated: bool = False, threshold: float | None = None) -> CardState:
    """How the row's `state` (step 4, `decide.settle`) looks on a card; see the module docstring.
    A waiting citation's sentence says why it waits, in the decision's words (`decide.why_it_waits`,
    against `threshold`, the one the table was routed at). Where a calibration turned the model's
    answer around, the sentence says so in one line (`route.score_note`)."""
    state = row.get(C.STATE)
    if not isinstance(state, str):
        state = row_state(row)
    verdict = verdict_words(row) if isinstance(row[C.VERDICT], str) else None
    spot = ", spot check" if drawn(row) else ""
    if state == State.REVIEWED:
        return CardState("reviewed", f"reviewed by a human{spot}: {row[C.REVIEW_VERDICT]}",
                         f"A human reviewed this evidence and decided {row[C.REVIEW_VERDICT]}; "
                         f"the model had said {verdict or 'nothing'} (score {_score(row)}).")
    if state == State.FABRICATED:
        return CardState("fabricated", "fabricated", "Stands without a model: the citation points at nothing "
                         "in the source.")
    if state == State.JUDGE_ERROR:
        first = str(row[C.ERROR]).split(". ")[0].rstrip(".")
        return CardState("error", "judge error, waits for review",
                         f"The judge gave no verdict for this citation ({first}); a human decides.")
    if state == State.UNCHECKED:
        return CardState("unchecked", "unchecked: source not given",
                         f"Nothing to check it against: {row.get(C.UNCHECKED_REASON)}.")
    if state == State.NOT_JUDGED:
        return CardState("unjudged", "not judged", "Step 1 only: no model was asked about this citation.")
    stale = " An earlier review no longer matches this evidence (stale)." if \
        row.get(C.REVIEW_STATE) == ReviewState.STALE else ""
    note = score_note(row, calibrated)
    why = f" ({note}.)" if note else ""
    if state == State.STANDS:
        key = "auto-pass" if row[C.VERDICT] == Verdict.VERIFIED else "auto-fail"
        agrees = " A contrast check agrees that it fails (below)." if contrasts(row) and \
            row[C.VERDICT] != Verdict.VERIFIED else ""
        checked = " Drawn at random as a spot check: a review of it measures how often standing verdicts are " \
            "right; it holds nothing unless the reviewer disagrees." if spot else ""
        return CardState(key, f"{verdict} (stands{spot})", f"The model's verdict stands: score {_score(row)} "
                         f"reaches the threshold and no flag holds it back.{agrees}{why}{stale}{checked}")
    return CardState("waiting", f"model says {verdict}, waits for review",
                     f"Waits for a human: {why_it_waits(row, threshold)}.{why}{stale}")


_NEXT = {
    "fabricated": "Fix or drop this citation in the answer: what it quotes or cites is not in the source.",
    "error": "Get a verdict: record the judge's answer (see how_to_record), or review it by hand.",
    "reviewed": "Nothing: the human review decides (until the claim or the evidence changes).",
    "auto-pass": "Nothing: the verdict stands.",
    "auto-fail": "Fix the answer: the source does not back this claim (or review it if you disagree).",
    "waiting": "Review it: notebook 05, or `citeaudit review --id ... --verdict ...`.",
    "unjudged": "Run the judge (without --locate-only / locate_only=True).",
    "unchecked": "Give the source it cites (--source), or review it by hand.",
}


def explain(audit: Audit | pd.DataFrame, calibrated: bool = False, threshold: float | None = None) -> pd.DataFrame:
    """One row per citation of an `Audit` in words: its state, what that means and what to do next.

    Given a bare table instead, `calibrated` says it was scored by a calibration (as
    `Audit.calibration` would) and `threshold` is the one it was routed at.
    """
    if isinstance(audit, Audit):
        table, calibrated, threshold = audit.table, audit.calibration is not None, audit.threshold
    else:
        table = audit
    states = [card_state(row, calibrated, threshold) for _, row in table.iterrows()]
    return pd.DataFrame({
        "citation": table[C.ID],
        "outcome": [s.badge for s in states],
        "what it means": [s.sentence for s in states],
        "next": [_NEXT[s.key] for s in states],
    })


def _probabilities_html(probs: object) -> str:
    if not isinstance(probs, dict):
        return ""
    cells = "".join(
        f"<tr><td>{_e(name)}</td><td>{p:.2f}</td>"
        f"<td><span class='bar' style='width:{p * 10:.1f}rem'></span></td></tr>"
        for name, p in probs.items()
    )
    return f"<p class='meta'>what the model answered:</p><table class='probs'>{cells}</table>"


def _findings_html(row: pd.Series) -> str:
    """A vendor response's location checks that failed (`vendor_audit.py`), one line each."""
    findings = row.get(C.FINDINGS)
    if not isinstance(findings, list) or not findings:
        return ""
    items = "".join(f"<li><b>{_e(f['flag'])}</b>: {_e(f['says'])}</li>" for f in findings)
    return f"<p class='meta'>the response's own location does not hold:</p><ul class='findings'>{items}</ul>"


def _review_html(row: pd.Series, review: ReviewCommand | None) -> str:
    """The `citeaudit review` command of a citation that shows evidence: a waiting one or a spot
    check (to review), or a verdict that stood (to override); else nothing."""
    state = row.get(C.STATE)
    evidence = row[C.EVIDENCE]
    if review is None or not isinstance(evidence, str) or (state not in WAITING_STATES and state != State.STANDS):
        return ""
    spot_check = drawn(row) and state == State.STANDS
    what = ("to override this verdict that stood with a human one" if state == State.STANDS and not spot_check
            else "to record a human review")
    return (f"<p class='meta'>{what}, replace {_e(review.PLACEHOLDER)} and run:</p>"
            f"<pre class='command'>{_e(review.command(str(row[C.ID])))}</pre><p class='meta'>{_e(review.legend())}</p>")


def _card(row: pd.Series, document: Document | None, anchor: str, top: str = "top", calibrated: bool = False,
          threshold: float | None = None, review: ReviewCommand | None = None) -> str:
    state = card_state(row, calibrated, threshold)
    error = row.get(C.ERROR)
    flags = ", ".join(row[C.FLAGS]) if row[C.FLAGS] else "none"
    return (
        f"<section class='card {state.key}' id='{_e(anchor)}'>"
        f"<h2>{_e(row[C.ID])} <span class='badge s-{state.key}'>{_e(state.badge)}</span></h2>"
        f"<p class='claim-text'>{_e(row[C.CLAIM])}</p>"
        f"<p class='meta state'>{_e(state.sentence)}</p>"
        + (f"<pre class='error'>{_e(error)}</pre>" if isinstance(error, str) and error else "")
        + _findings_html(row)
        + contrast_html(row)
        + quote_html(row, document)
        + f"<p class='meta'>cited: {_e(row[C.CITED_SECTION])} &middot; quote: {_e(row[C.QUOTE_STATUS])} &middot; "
        f"found in: {_e(row[C.FOUND_SECTION])} &middot; route: <b>{_e(row[C.ROUTE])}</b> &middot; "
        f"score: {_score(row)} &middot; flags: {_e(flags)}</p>"
        f"{_probabilities_html(row[C.PROBABILITIES])}"
        f"<p class='meta'>evidence the judge reads:</p>{evidence_html(row, document, window=True)}"
        f"{_review_html(row, review)}"
        f"<p class='meta'><a href='#{_e(top)}'>back to the summary</a></p>"
        "</section>"
    )


def _index(table: pd.DataFrame, anchors: list[str]) -> str:
    rows = []
    for anchor, (_, row) in zip(anchors, table.iterrows(), strict=True):
        state = card_state(row)
        rows.append(
            f"<tr><td><a href='#{_e(anchor)}'>{_e(row[C.ID])}</a></td>"
            f"<td class='claim'>{_e(row[C.CLAIM])}</td>"
            f"<td><span class='badge s-{state.key}'>{_e(state.badge)}</span></td>"
            f"<td>{_e(row[C.ROUTE])}</td><td>{_score(row)}</td></tr>")
    return ("<table class='index'><thead><tr><th>citation</th><th>claim</th><th>verdict</th><th>route</th>"
            f"<th>score</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")


def render_html(audit: Audit, title: str | None = None, review: ReviewCommand | None = None) -> str:
    """The report as one HTML string (inline CSS, no scripts, every text escaped). With `review`
    (the audit's inputs and a review store) each waiting citation's card shows the exact
    `citeaudit review` command that records a review of it."""
    table, document, decision = audit.table, audit.document, audit.decision
    title = title or f"Citation audit of {audit.name}"
    calibrated = audit.calibration is not None
    states = Counter(card_state(row, calibrated, audit.threshold).key for _, row in table.iterrows())
    models = sorted({m for m in table[C.MODEL] if isinstance(m, str)}) or ["none (step 1 only)"]
    counts = ", ".join(f"{_e(k)}: {n}" for k, n in sorted(states.items()))
    reasons = "".join(f"<li>{_e(r)}</li>" for r in decision.reasons)
    warning = precision_warning({audit.name: table}, audit.routing)
    warned = f"<p class='REJECT'>warning: {_e(warning)}</p>" if warning else ""
    summary = (
        "<div class='summary' id='top'>"
        f"<p class='status {_e(decision.status)}'>{_e(decision.status)}</p><ul>{reasons}</ul>{warned}"
        f"<p>{len(table)} citations &middot; {counts}</p>"
        f"<p>{_e(audit.routing_note())} &middot; model: {_e(', '.join(models))}"
        f" &middot; source: {_e(audit.name)}</p></div>"
    )
    anchors = [f"citation-{row[C.ID]}" for _, row in table.iterrows()]
    cards = "".join(_card(row, document, anchor, calibrated=calibrated, threshold=audit.threshold, review=review)
                    for anchor, (_, row) in zip(anchors, table.iterrows(), strict=True))
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>{_e(title)}</title><style>{PAGE_CSS}</style></head>"
        f"<body><h1>{_e(title)}</h1>{summary}{_index(table, anchors)}{cards}</body></html>"
    )


def answer_html(audit: Audit, anchor: str, top: str = "top") -> str:
    """One answer's citations as an index table and cards, for a page that holds many answers
    (the batch dashboard): card anchors are `{anchor}-c1`, `{anchor}-c2`, ... in table order, and
    each card links back to `#{top}`."""
    table, document = audit.table, audit.document
    anchors = [f"{anchor}-c{n}" for n in range(1, len(table) + 1)]
    calibrated = audit.calibration is not None
    cards = "".join(_card(row, document, a, top, calibrated, audit.threshold)
                    for a, (_, row) in zip(anchors, table.iterrows(), strict=True))
    return _index(table, anchors) + cards


def write_report(audit: Audit, path: str | Path, title: str | None = None, review: ReviewCommand | None = None) -> Path:
    """Write the report of `audit` (`render_html`) to `path` through a unique temporary file renamed
    into place."""
    if not isinstance(audit, Audit):
        raise TypeError(f"write_report(audit, path, ...) takes the Audit first, not {type(audit).__name__}")
    return atomic_write_text(path, render_html(audit, title, review))
