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
a stale one counts as none. A spot check (`spotcheck`) holds nothing: its verdict stands until a
current review settles it. `Decision.exit_code` is the command line's exit code.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd

from citeaudit import table as C
from citeaudit.citations.kinds import kind_of
from citeaudit.decide.reviews import Review, row_fingerprint
from citeaudit.decide.routing import blocks, contrasts, verdict_words
from citeaudit.decide.spotcheck import is_spot_check
from citeaudit.decide.state import review_state as _review_state
from citeaudit.decide.state import routed_state, row_state
from citeaudit.printable import printable
from citeaudit.settings.environment import DEFAULT_SPOT_CHECK
from citeaudit.settings.values import check_rate
from citeaudit.table import (
    FAILING_VERDICTS,
    WAITING_STATES,
    ErrorKind,
    Flag,
    ReviewState,
    Row,
    State,
    Status,
    Verdict,
)

EXIT_ACCEPT, EXIT_NOT_ACCEPTED = 0, 1


@dataclass(frozen=True)
class Decision:
    """The whole answer's status and the reasons: rejected citations first, then waiting ones."""

    status: Status
    reasons: tuple[str, ...]

    def __post_init__(self) -> None:
        # reasons quote ids, claims and markers of the answer under audit: never a control character
        object.__setattr__(self, "reasons", tuple(printable(reason) for reason in self.reasons))

    def to_dict(self) -> dict[str, object]:
        """`{"status": ..., "reasons": [...]}`, ready for `json.dumps`."""
        return {"status": str(self.status), "reasons": list(self.reasons)}

    @property
    def exit_code(self) -> int:
        """0 for ACCEPT, 1 for REVIEW or REJECT (the command line's contract)."""
        return EXIT_ACCEPT if self.status == Status.ACCEPT else EXIT_NOT_ACCEPTED


def apply_reviews(table: pd.DataFrame, reviews: Iterable[Review], spot_check: float = DEFAULT_SPOT_CHECK
                  ) -> pd.DataFrame:
    """Add `fingerprint`, `review_verdict` and `review_state` (none / current / stale), then
    `state`, `final_verdict` and `spot_check` (`settle`, at the `spot_check` rate).

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
    for row in C.row_dicts(out):  # plain dicts: a Series per row costs more than the work
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
    return settle(out, spot_check)


def settle(table: pd.DataFrame, spot_check: float = DEFAULT_SPOT_CHECK) -> pd.DataFrame:
    """Step 4's outcome per row, written once: `state` (`row_state`), `final_verdict` (the
    current review's verdict, else the routed one; None while nothing decides the row) and
    `spot_check` (the row's verdict stands apart from any review and its fingerprint is drawn at
    the `spot_check` rate, `spotcheck.is_spot_check`). The decision, the report, the dashboard,
    the review queue, the CLI and the notebooks read these.

    A spot check changes neither the state nor the final verdict: it is listed for review and
    holds nothing; once a current review exists, the row is `reviewed` like any other.
    """
    rate = check_rate(spot_check)
    out = table.copy()
    records = C.row_dicts(out)
    states = [row_state(row) for row in records]
    finals = [row[C.REVIEW_VERDICT] if state == State.REVIEWED else
              row[C.VERDICT] if state in (State.STANDS, State.FABRICATED) else None
              for state, row in zip(states, records)]
    drawn = [bool(rate > 0 and routed_state(row) == State.STANDS and is_spot_check(_fingerprint(row), rate))
             for row in records]
    out[C.STATE] = pd.Series(states, index=out.index, dtype=object)
    out[C.FINAL_VERDICT] = pd.Series(finals, index=out.index, dtype=object)
    out[C.SPOT_CHECK] = pd.Series(drawn, index=out.index, dtype=object)
    return out


def _fingerprint(row: Row) -> str | None:
    """The row's fingerprint, as `apply_reviews` wrote it, else computed from the row (None for a
    row without evidence, or a table that has no evidence column)."""
    digest = row.get(C.FINGERPRINT)
    if isinstance(digest, str):
        return digest
    return row_fingerprint(row) if C.EVIDENCE in row else None


def _label(row: C.Row, position: int) -> str:
    """How a reason names its citation: the id, or seed 000's `answer.claims[i] "C1"` (its kind's `label`)."""
    return kind_of(row).label(row, position)


def _target(row: pd.Series) -> str:
    """What the citation points at, in words: `source "S1"`, `section 4.1.3`, `lines [L2-L3]` (its kind's `target`)."""
    return kind_of(row).target(row)


FLAG_REASONS = {
    Flag.NEAR_QUOTE: "the quote is not verbatim",
    Flag.SECTION_MISMATCH: "the quote is in another section than the one cited",
    Flag.JUDGE_ERROR: "the judge failed",
    Flag.OFFSET_MISMATCH: "the response's offsets do not point at the quote",
    Flag.PAGE_MISMATCH: "the quote is not on the page the response cites",
    Flag.SOURCE_MISMATCH: "the quote is in another source than the one the response cites",
    Flag.CONTRAST: "a contrast check between claim and evidence fired",
    Flag.UNCOVERED: "the calibration does not cover this document: the model said no to every question for more "
                    "of its citations than for any document the calibration was fitted on",
}


def _flag_reason(row: pd.Series, flag: Flag) -> str:
    """What a flag means for this row: the contrast checks' own lines, else `FLAG_REASONS`."""
    if flag == Flag.CONTRAST:
        return "; and ".join(f"{f['check']}: {f['says']}" for f in contrasts(row)) or FLAG_REASONS[flag]
    return FLAG_REASONS[flag]


def why_it_waits(row: pd.Series, threshold: float | None) -> str:
    """Why a waiting citation needs a human, with the number that decided it: the judge's error,
    each flag that sends it to a human whatever the score (by name, with what it means, and the
    score against the threshold), or the score below the threshold. "" for a row no model was
    asked about (step 1 only, or seed 000's contract, where the reviews decide).

    The decision's reasons, the command line and the HTML report all say it in these words.
    """
    verdict, score = row[C.VERDICT], row.get(C.SCORE)
    if isinstance(row.get(C.ERROR), str) and row[C.ERROR]:
        if row.get(C.ERROR_KIND) == ErrorKind.REPLAY_MISS:
            return "no recorded answer of the judge: record one, or review it by hand"
        return "the judge failed: see the row's error"
    if not isinstance(verdict, str):
        return ""
    words = verdict_words(row)
    blocking = [f"flagged {f} ({_flag_reason(row, Flag(f))})" for f in row[C.FLAGS] if blocks(f, verdict)]
    if not isinstance(score, float):
        return f"model says {words}; the calibration cannot score this answer"
    if threshold is None:
        return f"model says {words}, score {score:.2f}" + (f", but {' and '.join(blocking)}" if blocking else "")
    if blocking:
        sign, link = ("≥", "but") if score >= threshold else ("<", "and")
        flagged = " and ".join(blocking)
        return f"model says {words}, score {score:.2f} {sign} threshold {threshold:.2f}, {link} {flagged}"
    return f"model says {words}, score {score:.2f} < threshold {threshold:.2f}"


def _rejected_reason(row: C.Row, label: str, final: str, by_review: bool, threshold: float | None) -> str:
    if by_review:
        what = "contradicts it" if final == Verdict.CONTRADICTED else "does not support it"
        return f"{label}: review found that {_target(row)} {what}"
    if final == Verdict.FABRICATED:
        return f"{label}: fabricated ({row[C.FABRICATED_REASON]})"
    against = f" ≥ threshold {threshold:.2f}" if threshold is not None else ""
    return f"{label}: {verdict_words(row)} (model verdict stands: score {row[C.SCORE]:.2f}{against})"


def _pending_reason(row: C.Row, label: str, threshold: float | None) -> str:
    if row.get(C.STATE) == State.UNCHECKED:
        return f"{label}: unchecked: {row[C.UNCHECKED_REASON]}"
    if _review_state(row) == ReviewState.STALE:
        return (f"{label}: review is stale (the claim or {_target(row)} changed since it was reviewed); "
                "review it again")
    why = why_it_waits(row, threshold)
    return f"{label}: no review yet; have its support by {_target(row)} reviewed" + (f" ({why})" if why else "")


def decide(table: pd.DataFrame, input_errors: Sequence[str] = (), needs_review: Sequence[str] = (),
           threshold: float | None = None) -> Decision:
    """ACCEPT / REVIEW / REJECT for one answer's routed (and reviewed) table; see the module doc.

    `input_errors` are contract violations of the input (each a REJECT reason); `needs_review`
    are things outside the table a human must look at (e.g. unrecognized citation markers);
    `threshold` is the one the table was routed at, named in the reasons beside each score.
    """
    if input_errors:
        return Decision(Status.REJECT, tuple(input_errors))
    if C.STATE not in table.columns:
        table = settle(table)
    rejected, waiting, reviewed = [], [], 0
    for position, row in enumerate(C.row_dicts(table)):
        label, state, final = _label(row, position), row[C.STATE], row[C.FINAL_VERDICT]
        reviewed += state == State.REVIEWED
        if state in WAITING_STATES:
            waiting.append(_pending_reason(row, label, threshold))
        elif final in FAILING_VERDICTS:
            rejected.append(_rejected_reason(row, label, final, state == State.REVIEWED, threshold))
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
