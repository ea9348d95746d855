"""Step 3: verdicts, flags and routing on pass or fail.

What decides an answer is whether each citation passes (verified) or fails (contradicted,
unsupported or fabricated), so routing looks at P(supports) alone (DESIGN.md "Route, review,
decide"). With the routing score s = max(P(supports), 1 − P(supports)) (the judge's
`confidence`; for a sampled answer a Wilson lower bound, see `judge.py`), optionally mapped by a
per-model `Calibration` first, a verdict stands (`auto`) when s ≥ threshold: `verified` when
P(supports) ≥ threshold, failing when P(supports) ≤ 1 − threshold. A failing verdict is named
by the larger of P(contradicts) and P(says nothing); when those two are close the row carries the
informational flag `contradicted_or_unsupported` (the answer is rejected either way; a reviewer
may refine the word), which does not send it to review. The blocking flags (near quote, section
mismatch, judge error) always do.

A pure function over the audit table: changing the threshold re-routes stored results and never
calls a model. A calibration given once is kept in the table's `attrs` and reused by later
re-routing of that table.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from . import columns as C
from .config import DEFAULT_THRESHOLD
from .vocab import BLOCKING_FLAGS, RELATION_TO_VERDICT, Flag, QuoteStatus, Relation, Route, Verdict

if TYPE_CHECKING:
    from .calibrate import Calibration

CALIBRATION_ATTR = "calibration"
# the failing word is unsure when the larger failing relation holds less than this share of the
# failing mass (0.6 / 0.4 between contradicts and says nothing is still "close")
FAILURE_KIND_MARGIN = 0.65


def _fabricated(row: pd.Series) -> bool:
    return isinstance(row[C.FABRICATED_REASON], str)


def flags_of(row: pd.Series) -> list[Flag]:
    """Blocking reasons a citation needs a human whatever the confidence (`BLOCKING_FLAGS`)."""
    flags = []
    if row[C.QUOTE_STATUS] == QuoteStatus.NEAR:
        flags.append(Flag.NEAR_QUOTE)
    if not _fabricated(row) and row[C.SECTION_MATCH] is False:
        flags.append(Flag.SECTION_MISMATCH)
    if isinstance(row[C.ERROR], str) and row[C.ERROR]:
        flags.append(Flag.JUDGE_ERROR)
    return flags


def _number(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def model_verdict(probabilities: object, relation: object = None) -> Verdict | None:
    """The verdict from the three probabilities: verified when P(supports) ≥ 1/2, else the larger
    failing relation. Without probabilities, the recorded relation's verdict (or None).

    >>> str(model_verdict({"supports": 0.4, "contradicts": 0.25, "says_nothing": 0.35}))
    'unsupported'
    """
    if isinstance(probabilities, dict) and Relation.SUPPORTS in probabilities:
        p = probabilities
        if p[Relation.SUPPORTS] >= 0.5:
            return Verdict.VERIFIED
        return Verdict.CONTRADICTED if p[Relation.CONTRADICTS] >= p[Relation.SAYS_NOTHING] else Verdict.UNSUPPORTED
    return RELATION_TO_VERDICT[Relation(relation)] if isinstance(relation, str) else None


def failure_kind_unsure(probabilities: object) -> bool:
    """Whether contradicts and says nothing are too close to name a failing verdict with confidence.

    >>> failure_kind_unsure({"supports": 0.2, "contradicts": 0.45, "says_nothing": 0.35})
    True
    >>> failure_kind_unsure({"supports": 0.2, "contradicts": 0.7, "says_nothing": 0.1})
    False
    """
    if not isinstance(probabilities, dict):
        return False
    failing = probabilities[Relation.CONTRADICTS] + probabilities[Relation.SAYS_NOTHING]
    if failing <= 0:
        return False
    larger = max(probabilities[Relation.CONTRADICTS], probabilities[Relation.SAYS_NOTHING])
    return larger / failing < FAILURE_KIND_MARGIN


def routing_score(row: pd.Series, calibration: Calibration | None = None) -> float | None:
    """The score compared with the threshold: the confidence, mapped by `calibration` when it
    applies to the row (answers read from log-probabilities; a sampled bound is never mapped up)."""
    confidence = _number(row[C.CONFIDENCE])
    if confidence is None:
        return None
    if calibration is not None and row.get(C.METHOD) == "logprobs":
        return calibration.map(confidence)
    return confidence


def route(table: pd.DataFrame, threshold: float = DEFAULT_THRESHOLD,
          calibration: Calibration | None = None) -> pd.DataFrame:
    """Add `verdict`, `flags`, `route` (`auto` or `review`) and `threshold` to a located table.

    A fabricated citation (nothing found, decided in step 1) stands as `auto`. Otherwise the
    verdict follows P(supports) (`model_verdict`), and the route is `auto` when the routing score
    is at least `threshold` and no blocking flag is raised; a row not judged (locate-only, or an
    error) has no verdict and goes to review. `calibration` (or the one this table was routed
    with before) maps the score first.
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be between 0 and 1, not {threshold}")
    out = table.copy()
    if calibration is None:
        calibration = table.attrs.get(CALIBRATION_ATTR)
    verdicts: list[Verdict | None] = []
    routes: list[Route] = []
    flags: list[list[Flag]] = []
    for _, row in out.iterrows():
        row_flags = flags_of(row)
        verdict: Verdict | None
        if _fabricated(row):
            verdict, where = Verdict.FABRICATED, Route.AUTO
        else:
            verdict = model_verdict(row.get(C.PROBABILITIES), row[C.RELATION])
            score = routing_score(row, calibration)
            confident = score is not None and score >= threshold
            blocked = any(flag in BLOCKING_FLAGS for flag in row_flags)
            where = Route.AUTO if verdict and confident and not blocked else Route.REVIEW
            if verdict in (Verdict.CONTRADICTED, Verdict.UNSUPPORTED) and failure_kind_unsure(row.get(C.PROBABILITIES)):
                row_flags.append(Flag.FAILURE_KIND_UNSURE)
        verdicts.append(verdict)
        routes.append(where)
        flags.append(row_flags)
    out[C.VERDICT] = pd.Series(verdicts, index=out.index, dtype=object)
    out[C.ROUTE] = pd.Series(routes, index=out.index, dtype=object)
    out[C.FLAGS] = pd.Series(flags, index=out.index, dtype=object)
    out[C.THRESHOLD] = threshold
    if calibration is not None:
        out.attrs[CALIBRATION_ATTR] = calibration
    return out
