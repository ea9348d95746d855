"""Notebook widgets: a threshold slider over stored results and a review queue.

The logic lives in ordinary objects (`ThresholdExplorer.view`, `ReviewQueue.decide`, ...) that
tests call directly; the `ipywidgets` wiring only forwards events to them.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from citeaudit import table as C
from citeaudit.calibrate.scoring import pass_fail_right, reliability, threshold_table
from citeaudit.decide.agreements import precision_warning
from citeaudit.decide.batch_review import BatchOutcome, review_batch
from citeaudit.decide.calibration import Calibration
from citeaudit.decide.decision import Decision
from citeaudit.decide.reviews import Review, load_reviews, review_row
from citeaudit.decide.routing import route, score_note, verdict_words
from citeaudit.decide.spotcheck import open_spot_checks
from citeaudit.errors import InputError
from citeaudit.extras import require
from citeaudit.pipeline.audit import Audit
from citeaudit.settings.environment import DEFAULT_THRESHOLD
from citeaudit.surfaces.views import evidence_html, quote_html
from citeaudit.table import REVIEW_VERDICTS, WAITING_STATES, Route, State, Verdict

if TYPE_CHECKING:
    from ipywidgets import Button, VBox
    from matplotlib.figure import Figure
    from pandas.io.formats.style import Styler
    from traitlets.utils.bunch import Bunch


SCORE_FLOOR = 0.5  # the lowest routing score: max(p, 1 - p) of a probability p

def threshold_view(table: pd.DataFrame, threshold: float, calibration: Calibration | None = None) -> pd.DataFrame:
    """Each labelled citation re-routed at `threshold`: P(supports), routing score, verdict, route,
    the flags that keep a verdict from standing whatever its score, gold, and whether the verdict is
    right on pass or fail (what decides the answer)."""
    routed = route(table, threshold, calibration)
    scores = routed[C.SCORE]
    supports = [p.get("supports") if isinstance(p, dict) else None
                for p in routed.get(C.PROBABILITIES, pd.Series([None] * len(routed), index=routed.index))]
    return pd.DataFrame({
        "citation": routed[C.ID],
        "P(supports)": [round(p, 2) if isinstance(p, float) else None for p in supports],
        "score": [round(c, 2) if isinstance(c, float) else None for c in scores],
        "verdict": routed[C.VERDICT],
        "route": routed[C.ROUTE],
        "flags": [", ".join(f) if isinstance(f, list) else "" for f in routed[C.FLAGS]],
        "gold": routed[C.EXPECTED],
        "right": [bool(r) if v is not None else None
                  for v, r in zip(routed[C.VERDICT], pass_fail_right(routed[C.VERDICT], routed[C.EXPECTED]))],
    })


def style_threshold_view(view: pd.DataFrame) -> Styler:
    """Colour standing wrong verdicts red, standing right ones green, reviewed ones grey."""

    def colour(row: pd.Series) -> list[str]:
        if row["route"] != Route.AUTO:
            tone = "color: #888"
        elif row["right"]:
            tone = "background-color: #dafbe1"
        else:
            tone = "background-color: #ffebe9; font-weight: bold"
        return [tone] * len(row)

    number = {col: (lambda c: "-" if pd.isna(c) else f"{c:.2f}") for col in ("P(supports)", "score")
              if col in view.columns}
    require("jinja2", "lab", "a styled table")
    return view.style.apply(colour, axis=1).format(number)


@dataclass
class ThresholdExplorer:
    """Re-routes a judged, labelled table at any threshold; no model is called.

    A verdict stands when its routing score (max(P(supports), 1 − P(supports)), mapped by
    `calibration` when one is given) reaches the threshold; right and wrong are on pass or fail.
    """

    table: pd.DataFrame
    threshold: float = DEFAULT_THRESHOLD
    calibration: Calibration | None = None
    grid: pd.DataFrame = field(init=False)
    rel: pd.DataFrame = field(init=False)

    def __post_init__(self) -> None:
        self.grid = threshold_table(self.table, calibration=self.calibration)
        self.rel = reliability(self.table, calibration=self.calibration)

    def view(self, threshold: float | None = None) -> pd.DataFrame:
        """The slider's callback: set the threshold and return the re-routed table."""
        if threshold is not None:
            self.threshold = float(threshold)
        return threshold_view(self.table, self.threshold, self.calibration)

    def summary(self, view: pd.DataFrame | None = None) -> str:
        """One line on the current threshold; `view` is `self.view()` when the caller has it."""
        view = self.view() if view is None else view
        auto = view[view["route"] == Route.AUTO]
        wrong = int((auto["right"] == False).sum())  # noqa: E712
        judged = int(view["score"].notna().sum())
        settled = f" ({judged} judged by the model, {len(view) - judged} settled by step 1)"
        settled = "" if judged == len(view) else settled
        return (f"threshold {self.threshold:.2f}: {len(auto)} of {len(view)} labelled citations{settled} stand "
                f"({len(auto) / len(view):.0%}), {wrong} of them wrong on pass/fail; "
                f"{len(view) - len(auto)} go to review")

    def wrong_standing(self, view: pd.DataFrame | None = None) -> pd.DataFrame:
        """The rows of `view` (default `self.view()`) whose verdict stands and is wrong on pass or
        fail: what the threshold lets through. The slider's table has every row; this is the short
        list to read when the table itself is not shown again."""
        view = self.view() if view is None else view
        return view[(view["route"] == Route.AUTO) & (view["right"] == False)]  # noqa: E712

    def figure(self) -> Figure:
        from citeaudit.surfaces.plots import threshold_figure

        # the marker sits at exactly the slider's threshold, not at the grid's nearest 0.05
        at = threshold_table(self.table, [self.threshold], calibration=self.calibration).iloc[0]
        return threshold_figure(self.grid, self.rel, self.threshold, at)

    def widget(self) -> VBox:
        """A slider that re-renders the summary, the styled table and both plots on every move."""
        w = require("ipywidgets", "lab", "the threshold slider")
        plt = require("matplotlib.pyplot", "lab", "the threshold slider")

        # a routing score is max(P(pass), 1 - P(pass)), never below 0.5: below it nothing moves
        slider = w.FloatSlider(value=self.threshold, min=SCORE_FLOOR, max=1.0, step=0.01, description="threshold",
                               continuous_update=False, readout_format=".2f")
        out = w.Output()

        def render(change: Bunch | None = None) -> None:
            # the Output's state is set directly rather than captured (`with out:`): capture with
            # clear_output(wait=True) sometimes left a headless kernel (nbclient) waiting for idle
            view = self.view(slider.value)
            fig = self.figure()
            out.outputs = ()
            out.append_stdout(self.summary(view) + "\n")
            out.append_display_data(fig)
            plt.close(fig)
            out.append_display_data(style_threshold_view(view))

        slider.observe(render, names="value")
        render()
        return w.VBox([slider, out])


# states whose verdict stood without a human: a reviewer may override them (`ReviewQueue.override`)
OVERRIDABLE_STATES = frozenset({State.STANDS, State.FABRICATED})


@dataclass
class ReviewQueue:
    """The citations waiting for a human, one at a time, then the spot checks (standing verdicts
    drawn at random, `decide.spotcheck`: listed apart in `spot_checks`, they hold nothing); each
    decision is stored at once. A verdict that stood without a human can be overridden too
    (`standing`, `override`), and many reviews recorded in one go (`batch_review`). After each
    write `saved` says what was written, to which store, and how many reviews it holds."""

    audit: Audit
    store: Path
    position: int = 0
    pending: list = field(init=False, default_factory=list)
    spot_checks: list = field(init=False, default_factory=list)  # drawn, still standing: after `pending`
    saved: str = field(init=False, default="")  # what the last decision wrote, in words
    stored: int = field(init=False, default=0)  # reviews in the store, as the last refresh read it

    def __post_init__(self) -> None:
        self.store = Path(self.store)
        self.refresh()

    @property
    def table(self) -> pd.DataFrame:
        return self.audit.table

    def refresh(self) -> None:
        """Re-apply the store: rows with a current review leave the queue."""
        reviews = load_reviews(self.store)
        self.stored = len(reviews)
        self.audit = self.audit.with_reviews(reviews)
        # an unchecked vendor citation has no evidence to review: it waits for its source, not a human
        self.pending = list(self.table.index[self.table[C.STATE].isin(WAITING_STATES) & self.table[C.EVIDENCE].notna()])
        self.spot_checks = list(open_spot_checks(self.table).index)
        self.position = min(self.position, len(self.order))

    @property
    def order(self) -> list:
        """The queue's rows in the order it shows them: the waiting ones, then the spot checks."""
        return self.pending + self.spot_checks

    @property
    def done(self) -> bool:
        return self.position >= len(self.order)

    def current(self) -> pd.Series | None:
        return None if self.done else self.table.loc[self.order[self.position]]

    def decide(self, verdict: str | Verdict, note: str | None = None, reviewer: str | None = None) -> Review:
        """A button's callback: store the review of the current citation now, then move on."""
        row = self.current()
        if row is None:
            raise IndexError("the review queue is empty")
        return self._record(str(row[C.ID]), verdict, note, reviewer)

    def standing(self) -> list[str]:
        """Ids of the citations whose verdict stood without a human (the model's, or fabricated)
        and that show evidence a review can be bound to: what `override` accepts."""
        table = self.table
        mask = table[C.STATE].isin(OVERRIDABLE_STATES) & table[C.EVIDENCE].notna()
        return [str(i) for i in table.loc[mask, C.ID]]

    def override(self, citation_id: str, verdict: str | Verdict, note: str | None = None,
                 reviewer: str | None = None) -> Review:
        """Store a human verdict for a citation whose verdict stood (`standing`), bound by the same
        fingerprint as any review; once current it replaces the standing verdict."""
        if citation_id not in self.standing():
            raise InputError(f"citation {citation_id!r} has no standing verdict to override; those that do: "
                             f"{', '.join(self.standing()) or 'none'} (a waiting one is reviewed in the queue).")
        return self._record(citation_id, verdict, note, reviewer)

    def review_batch(self, batch: str | Path | pd.DataFrame, reviewer: str | None = None) -> BatchOutcome:
        """Record a batch of reviews at once (a CSV or JSON Lines file of id, verdict, note, or a table
        with those columns; `decide.batch_review`): each bound to its row's evidence like a button's
        review; a bad row is left out and named in `problems`, the others go in."""
        outcome = review_batch(self.table, batch, self.store, reviewer)
        self.refresh()
        self.saved = outcome.summary(self.store) + f" ({self.stored} review(s) in the store)"
        return outcome

    def precision_warning(self) -> str | None:
        """The one line when the reviewed spot checks say the calibration's promise does not hold."""
        return precision_warning({self.audit.name: self.table}, self.audit.routing)

    def _record(self, citation_id: str, verdict: str | Verdict, note: str | None, reviewer: str | None) -> Review:
        review = review_row(self.table, citation_id, self.store, verdict, reviewer, note or None)
        self.refresh()  # a reviewed row leaves `pending`; the same position is the next one
        self.saved = (f"saved {review.verdict} for {review.citation_id} to {self.store} "
                      f"({self.stored} review(s) in the store)")
        return review

    def skip(self) -> None:
        """Leave the current citation for later."""
        if not self.done:
            self.position += 1

    def decision(self) -> Decision:
        return self.audit.decision

    def overview(self) -> pd.DataFrame:
        """Every citation with its verdict, confidence, route and review, as words (no NaN, no None)."""
        table = self.table
        return pd.DataFrame({
            "citation": table[C.ID],
            "claim": table[C.CLAIM],
            "model verdict": [v or "-" for v in table[C.VERDICT]],
            "score": [f"{c:.2f}" if isinstance(c, float) else "-" for c in table[C.SCORE]],
            "state": [f"{state} (spot check)" if drawn is True else state
                      for state, drawn in zip(table[C.STATE], table[C.SPOT_CHECK])],
            "human review": [f"{v} ({s})" if v else "none yet" if i in self.order else "-"
                             for i, v, s in zip(table.index, table[C.REVIEW_VERDICT], table[C.REVIEW_STATE])],
        })

    def card_html(self) -> str:
        """The current citation: claim, probabilities as bars, the evidence with the quote marked."""
        row = self.current()
        if row is None:
            return ("<p><b>Queue empty.</b> Every citation routed to review, and every spot check, has a current "
                    "review.</p>")
        probs = row[C.PROBABILITIES] if isinstance(row[C.PROBABILITIES], dict) else {}
        bars = "".join(
            f"<div>{html.escape(k)} {v:.2f} <span style='display:inline-block;height:.7em;width:{v * 12:.1f}em;"
            f"background:#0969da'></span></div>" for k, v in probs.items()
        )
        if bars:
            bars = "<p style='color:#555'>what the model answered:</p>" + bars
        note = score_note(row, self.audit.calibration is not None)
        if note:
            bars += f"<p style='color:#555'>{html.escape(note)}</p>"
        found = row[C.FOUND_SECTION]
        evidence = evidence_html(row, self.audit.document, window=True)
        score = row[C.SCORE]
        error = row[C.ERROR] if isinstance(row[C.ERROR], str) else None
        model_says = (f"{verdict_words(row)} (score {score:.2f}, threshold {self.audit.threshold:.2f})"
                      if isinstance(score, float) and self.audit.threshold is not None
                      else "nothing: the judge failed" if error else "nothing: no model was asked")
        cid, cited = html.escape(str(row[C.ID])), html.escape(str(row[C.CITED_SECTION]))
        if self.position < len(self.pending):
            where = f"{self.position + 1} of {len(self.pending)} waiting"
        else:  # a spot check: listed after the waiting ones, marked as what it is
            where = (f"<b>spot check</b> {self.position - len(self.pending) + 1} of {len(self.spot_checks)}: a "
                     "standing verdict drawn at random to measure how often standing verdicts are right; it holds "
                     "nothing unless you disagree")
        return (
            f"<p>{where} &middot; citation <b>{cid}</b>"
            f" &middot; cited {cited} &middot; model says {html.escape(model_says)}</p>"
            f"<p style='font-size:1.1em'>{html.escape(str(row[C.CLAIM]))}</p>"
            + (f"<pre style='background:#ffebe9;color:#82071e;white-space:pre-wrap'>{html.escape(error)}</pre>"
               if error else "")
            + f"{quote_html(row, self.audit.document)}{bars}"
            f"<p style='color:#555'>evidence the judge reads ({html.escape(str(found))}):</p>{evidence}"
        )

    def widget(self, reviewer: str | None = None) -> VBox:
        """The card, a note field and buttons verified / contradicted / unsupported / skip, the
        status line (the decision, and what the last write saved where), and an override form for
        a verdict that stood (citation, human verdict, note, record)."""
        w = require("ipywidgets", "lab", "the review queue's widget")

        card = w.HTML(self.card_html())
        status = w.HTML()
        note = w.Text(placeholder="note (optional)", layout=w.Layout(width="60%"))
        buttons = [w.Button(description=v, button_style=s)
                   for v, s in zip(REVIEW_VERDICTS, ("success", "danger", "warning"))]
        skip = w.Button(description="skip")

        def show() -> None:
            card.value = self.card_html()
            decision = self.decision()
            saved = f"<br><span style='color:#1a7f37'>{html.escape(self.saved)}</span>" if self.saved else ""
            spots = f" &middot; {len(self.spot_checks)} spot check(s)" if self.spot_checks else ""
            warning = self.precision_warning()
            warned = f"<br><span style='color:#cf222e'>warning: {html.escape(warning)}</span>" if warning else ""
            status.value = (f"<p>answer: <b>{decision.status}</b> &middot; {len(self.pending)} waiting{spots}{saved}"
                            f"{warned}</p>")

        def on_verdict(button: Button) -> None:
            if not self.done:
                self.decide(button.description, note.value, reviewer)
                note.value = ""
            show()

        def on_skip(_button: Button) -> None:
            self.skip()
            show()

        for button in buttons:
            button.on_click(on_verdict)
        skip.on_click(on_skip)

        # overriding a verdict that stood: pick the citation, the human verdict, record
        pick = w.Dropdown(description="citation")
        human = w.Dropdown(description="verdict", options=[str(v) for v in REVIEW_VERDICTS])
        why = w.Text(placeholder="note (optional)", layout=w.Layout(width="60%"))
        record = w.Button(description="record override", button_style="primary")
        left = w.HTML()

        def offer() -> None:
            pick.options = self._standing_options()
            pick.index = 0 if pick.options else None  # new options leave none picked: the first, shown as picked
            record.disabled = not pick.options
            left.value = "" if pick.options else (
                "<p style='color:#555'>No verdict that stood is left to override: each has a human verdict "
                "now, or none stood.</p>")

        def on_override(_button: Button) -> None:
            if pick.value is not None:
                self.override(pick.value, human.value, why.value, reviewer)
                why.value = ""
                offer()
            show()

        record.on_click(on_override)
        override = w.VBox([w.HTML("<p><b>Override a verdict that stood</b> (the model's, confident enough): a "
                                  "human verdict replaces it while the evidence stays the same. A fabricated "
                                  "quote has no evidence a review could be bound to: correct the quote in the "
                                  "citation file and audit again.</p>"),
                           w.HBox([pick, human]), why, record, left])
        offer()
        show()
        return w.VBox([card, note, w.HBox([*buttons, skip]), status, override])

    def _standing_options(self) -> list[tuple[str, str]]:
        """The override picker's choices: (`id: final verdict`, id) for each `standing` citation."""
        final = dict(zip(self.table[C.ID].astype(str), self.table[C.FINAL_VERDICT]))
        return [(f"{cid}: {final[cid]}", cid) for cid in self.standing()]
