"""Step 3 and 4: verdicts, routing at a confidence threshold, and the per-answer decision.

Pure functions over the audit table: changing the threshold re-routes stored results and never
calls a model.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from . import columns as C
from .config import DEFAULT_THRESHOLD

RELATION_TO_VERDICT = {"supports": "verified", "contradicts": "contradicted", "says_nothing": "unsupported"}
FAILING_VERDICTS = ("fabricated", "contradicted", "unsupported")
DECISIONS = ("ACCEPT", "REVIEW", "REJECT")


def _fabricated(row: pd.Series) -> bool:
    return isinstance(row[C.FABRICATED_REASON], str)


def flags_of(row: pd.Series) -> list[str]:
    """Reasons a citation needs a human whatever the confidence."""
    flags = []
    if row[C.QUOTE_STATUS] == "near":
        flags.append("near_quote")
    if not _fabricated(row) and row[C.SECTION_MATCH] is False:
        flags.append("section_mismatch")
    if isinstance(row[C.ERROR], str) and row[C.ERROR]:
        flags.append("judge_error")
    return flags


def route(table: pd.DataFrame, threshold: float = DEFAULT_THRESHOLD) -> pd.DataFrame:
    """Add `verdict`, `flags` and `route` (`auto` or `review`) to a located (and judged) table.

    A fabricated citation (nothing found, decided in step 1) stands as `auto`. Otherwise the
    verdict follows the relation, and the route is `auto` when confidence >= threshold and no
    flag is raised; a row not judged (locate-only, or an error) has no verdict and goes to review
    unless it is fabricated.
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be between 0 and 1, not {threshold}")
    out = table.copy()
    verdicts, routes, flags = [], [], []
    for _, row in out.iterrows():
        row_flags = flags_of(row)
        if _fabricated(row):
            verdict, where = "fabricated", "auto"
        else:
            verdict = RELATION_TO_VERDICT.get(row[C.RELATION]) if isinstance(row[C.RELATION], str) else None
            confident = row[C.CONFIDENCE] is not None and not pd.isna(row[C.CONFIDENCE]) and row[C.CONFIDENCE] >= threshold
            where = "auto" if verdict and confident and not row_flags else "review"
        verdicts.append(verdict)
        routes.append(where)
        flags.append(row_flags)
    out[C.VERDICT] = pd.Series(verdicts, index=out.index, dtype=object)
    out[C.ROUTE] = pd.Series(routes, index=out.index, dtype=object)
    out[C.FLAGS] = pd.Series(flags, index=out.index, dtype=object)
    out[C.THRESHOLD] = threshold
    return out


@dataclass(frozen=True)
class Decision:
    """The whole answer's status and the reasons, one per citation that decided it."""

    status: str
    reasons: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"status": self.status, "reasons": list(self.reasons)}


def final_verdicts(table: pd.DataFrame) -> pd.DataFrame:
    """Per row, the verdict that counts and whether it still waits for a human.

    A current human review replaces the model's verdict; a stale review counts as none.
    """
    out = pd.DataFrame(index=table.index)
    has_review = C.REVIEW_STATE in table and C.REVIEW_VERDICT in table
    finals, pending = [], []
    for _, row in table.iterrows():
        if has_review and row[C.REVIEW_STATE] == "current":
            finals.append(row[C.REVIEW_VERDICT])
            pending.append(False)
        else:
            finals.append(row[C.VERDICT])
            pending.append(row[C.ROUTE] != "auto")
    out["final_verdict"] = finals
    out["pending"] = pending
    return out


def decide(table: pd.DataFrame, contract_errors: list[str] | None = None,
           needs_review: list[str] | None = None) -> Decision:
    """ACCEPT / REVIEW / REJECT for one answer (DESIGN.md "Route, review, decide").

    REJECT on any input contract violation or any fabricated, contradicted or unsupported verdict
    that stands (auto, or confirmed by a current review); else REVIEW while any citation waits for
    review or `needs_review` names something a human must look at (an unrecognized citation
    marker, say); else ACCEPT.
    """
    if contract_errors:
        return Decision("REJECT", tuple(contract_errors))
    finals = final_verdicts(table)
    rejected = [
        f"{table.at[i, C.ID]}: {finals.at[i, 'final_verdict']}"
        + (" (human review)" if C.REVIEW_STATE in table and table.at[i, C.REVIEW_STATE] == "current" else "")
        for i in table.index
        if not finals.at[i, "pending"] and finals.at[i, "final_verdict"] in FAILING_VERDICTS
    ]
    if rejected:
        return Decision("REJECT", tuple(rejected))
    waiting = [
        f"{table.at[i, C.ID]}: waits for review"
        + (f" (model says {table.at[i, C.VERDICT]})" if isinstance(table.at[i, C.VERDICT], str) else "")
        for i in table.index
        if finals.at[i, "pending"]
    ]
    waiting += list(needs_review or [])
    if waiting:
        return Decision("REVIEW", tuple(waiting))
    return Decision("ACCEPT", (f"all {len(table)} citations verified",))
