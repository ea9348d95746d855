"""Step 4: apply human reviews, settle each citation's final verdict, decide the whole answer.

This is the one place an answer is decided, for every citation format, command, notebook and
report (DESIGN.md "Route, review, decide"):

``REJECT``  an input contract violation, or a fabricated, contradicted or unsupported verdict
            that stands (routed `auto`, or given by a current human review);
``REVIEW``  otherwise, while a citation waits for a human (routed `review` with no current
            review), something a human must look at was found outside the table (an
            unrecognized citation marker), or nothing was checked at all (no citation);
``ACCEPT``  otherwise: every citation is verified. Nothing reaches ACCEPT by default.

A current review (its fingerprint matches what the row shows now) replaces the model's verdict;
a stale one counts as none. `Decision.exit_code` is the command line's exit code.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd

from . import columns as C
from .reviews import Review, row_fingerprint
from .sourceid import quoted
from .vocab import FAILING_VERDICTS, Kind, ReviewState, Route, Status, Verdict

EXIT_ACCEPT, EXIT_NOT_ACCEPTED = 0, 1


@dataclass(frozen=True)
class Decision:
    """The whole answer's status and the reasons: rejected citations first, then waiting ones."""

    status: Status
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        """`{"status": ..., "reasons": [...]}`, ready for `json.dumps`."""
        return {"status": str(self.status), "reasons": list(self.reasons)}

    @property
    def exit_code(self) -> int:
        """0 for ACCEPT, 1 for REVIEW or REJECT (the command line's contract)."""
        return EXIT_ACCEPT if self.status == Status.ACCEPT else EXIT_NOT_ACCEPTED


def apply_reviews(table: pd.DataFrame, reviews: Iterable[Review]) -> pd.DataFrame:
    """Add `fingerprint`, `review_verdict` and `review_state` (none / current / stale).

    The latest review of a citation id counts. It is current when its fingerprint equals the
    fingerprint of what the row shows now (`reviews.row_fingerprint`).
    """
    latest: dict[str, Review] = {}
    for review in reviews:
        latest[review.citation_id] = review
    out = table.copy()
    prints: list[str | None] = []
    verdicts: list[Verdict | None] = []
    states: list[ReviewState] = []
    for _, row in out.iterrows():
        digest = row_fingerprint(row)
        found = latest.get(str(row[C.ID]))
        prints.append(digest)
        if found is None:
            verdicts.append(None)
            states.append(ReviewState.NONE)
        else:
            verdicts.append(Verdict(found.verdict))
            states.append(ReviewState.CURRENT if found.fingerprint == digest else ReviewState.STALE)
    out[C.FINGERPRINT] = pd.Series(prints, index=out.index, dtype=object)
    out[C.REVIEW_VERDICT] = pd.Series(verdicts, index=out.index, dtype=object)
    out[C.REVIEW_STATE] = pd.Series(states, index=out.index, dtype=object)
    return out


def _review_state(row: pd.Series) -> ReviewState:
    state = row.get(C.REVIEW_STATE)
    return ReviewState(state) if isinstance(state, str) else ReviewState.NONE


def final_verdicts(table: pd.DataFrame) -> pd.DataFrame:
    """Per row: `final_verdict`, `by_review` (a current human review gave it) and `pending`."""
    finals, by_review, pending = [], [], []
    for _, row in table.iterrows():
        if _review_state(row) == ReviewState.CURRENT:
            finals.append(row[C.REVIEW_VERDICT])
            by_review.append(True)
            pending.append(False)
        else:
            finals.append(row[C.VERDICT])
            by_review.append(False)
            pending.append(row[C.ROUTE] != Route.AUTO)
    return pd.DataFrame({"final_verdict": finals, "by_review": by_review, "pending": pending}, index=table.index)


def _label(row: pd.Series, position: int) -> str:
    """How a reason names its citation: the id, or seed 000's `answer.claims[i] "C1"`."""
    if row[C.KIND] == Kind.SOURCE:
        return f"answer.claims[{position}] {quoted(row[C.ID])}"
    return str(row[C.ID])


def _target(row: pd.Series) -> str:
    """What the citation points at, in words: `source "S1"`, `section 4.1.3`, `lines [L2-L3]`."""
    cited = row[C.FOUND_SECTION] or row[C.CITED_SECTION]
    if row[C.KIND] == Kind.SOURCE:
        return f"source {quoted(cited)}"
    if row[C.KIND] == Kind.LINES:
        return f"lines {cited}"
    return f"section {cited}" if cited else "the source"


def _score(row: pd.Series) -> object:
    """What the threshold was compared with: the routing score (calibrated), else the confidence."""
    score = row.get(C.SCORE)
    return score if isinstance(score, float) else row[C.CONFIDENCE]


def _model_says(row: pd.Series) -> str:
    verdict, confidence = row[C.VERDICT], _score(row)
    if isinstance(verdict, str) and isinstance(confidence, float):
        return f" (model says {verdict}, {confidence:.2f})"
    if isinstance(row[C.ERROR], str):
        return " (the judge failed: see the row's error)"
    return ""


def _rejected_reason(row: pd.Series, label: str, final: str, by_review: bool) -> str:
    if by_review:
        what = "contradicts it" if final == Verdict.CONTRADICTED else "does not support it"
        return f"{label}: review found that {_target(row)} {what}"
    if final == Verdict.FABRICATED:
        return f"{label}: fabricated ({row[C.FABRICATED_REASON]})"
    return f"{label}: {final} (model verdict, confidence {_score(row):.2f})"


def _pending_reason(row: pd.Series, label: str) -> str:
    if _review_state(row) == ReviewState.STALE:
        return (f"{label}: review is stale (the claim or {_target(row)} changed since it was reviewed); "
                "review it again")
    return f"{label}: no review yet; have its support by {_target(row)} reviewed{_model_says(row)}"


def decide(table: pd.DataFrame, input_errors: Sequence[str] = (), needs_review: Sequence[str] = ()) -> Decision:
    """ACCEPT / REVIEW / REJECT for one answer's routed (and reviewed) table; see the module doc.

    `input_errors` are contract violations of the input (each a REJECT reason); `needs_review`
    are things outside the table a human must look at (e.g. unrecognized citation markers).
    """
    if input_errors:
        return Decision(Status.REJECT, tuple(input_errors))
    finals = final_verdicts(table)
    rejected, waiting, reviewed = [], [], 0
    for position, (i, row) in enumerate(table.iterrows()):
        label = _label(row, position)
        final, by_review = finals.at[i, "final_verdict"], bool(finals.at[i, "by_review"])
        reviewed += by_review
        if finals.at[i, "pending"]:
            waiting.append(_pending_reason(row, label))
        elif final in FAILING_VERDICTS:
            rejected.append(_rejected_reason(row, label, final, by_review))
    waiting += list(needs_review)
    if rejected:
        return Decision(Status.REJECT, tuple(rejected + waiting))
    if table.empty:
        waiting.append("nothing was checked: the answer has no citation in a recognized form")
    if waiting:
        return Decision(Status.REVIEW, tuple(waiting))
    if reviewed == len(table):
        return Decision(Status.ACCEPT, (f"all {len(table)} claim(s) have current supported reviews",))
    by_humans = f", {reviewed} of them by a current review" if reviewed else ""
    return Decision(Status.ACCEPT, (f"all {len(table)} citation(s) verified{by_humans}",))
