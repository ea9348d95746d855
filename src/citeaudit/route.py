"""Step 3: verdicts, flags and routing on pass or fail.

What decides an answer is whether each citation passes (verified) or fails (contradicted,
unsupported or fabricated), so routing looks at P(supports) alone (DESIGN.md "Route, review,
decide"). With the routing score s = max(P(supports), 1 − P(supports)) (the judge's
`confidence`; for a sampled answer a Wilson lower bound, see `judge.py`), a verdict stands
(`auto`) when s ≥ threshold: `verified` when P(supports) ≥ threshold, failing when
P(supports) ≤ 1 − threshold. A per-model `Calibration` first maps P(supports) to P(pass), the
probability that the citation passes, and the same rule applies to it (`judged_verdict`). A
failing verdict is named by the larger of P(contradicts) and P(says nothing); when those two are
close the row carries the informational flag `contradicted_or_unsupported` (the answer is
rejected either way; a reviewer may refine the word), which does not send it to review. The
blocking flags (near quote, section mismatch, judge error) always do.

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


def _failing(probabilities: dict) -> Verdict:
    if probabilities[Relation.CONTRADICTS] >= probabilities[Relation.SAYS_NOTHING]:
        return Verdict.CONTRADICTED
    return Verdict.UNSUPPORTED


def sampled(row: pd.Series) -> bool:
    """Whether the row's answer was sampled (no log-probabilities): its confidence is a lower bound."""
    method = row.get(C.METHOD)
    return isinstance(method, str) and method.startswith("sampling")


def model_verdict(probabilities: object, relation: object = None, p_pass: float | None = None) -> Verdict | None:
    """The verdict: verified when P(pass) ≥ 1/2, else the larger failing relation. P(pass) is
    P(supports) unless a calibration gives it (`p_pass`). Without probabilities, the recorded
    relation's verdict (or None).

    >>> str(model_verdict({"supports": 0.4, "contradicts": 0.25, "says_nothing": 0.35}))
    'unsupported'
    >>> str(model_verdict({"supports": 0.4, "contradicts": 0.25, "says_nothing": 0.35}, p_pass=0.7))
    'verified'
    """
    if isinstance(probabilities, dict) and Relation.SUPPORTS in probabilities:
        p = probabilities[Relation.SUPPORTS] if p_pass is None else p_pass
        return Verdict.VERIFIED if p >= 0.5 else _failing(probabilities)
    return RELATION_TO_VERDICT[Relation(relation)] if isinstance(relation, str) else None


def _named(row: pd.Series, calibration: Calibration | None) -> float | None:
    """P(contradicted | fails) of a calibration that names failures, for a row it maps; else None."""
    if calibration is None or sampled(row):
        return None
    return calibration.p_contradicted(row.get(C.ANSWERS))


def failure_kind_unsure(probabilities: object, p_contradicted: float | None = None) -> bool:
    """Whether contradicts and says nothing are too close to name a failing verdict with confidence
    (or, when a calibration names failures, whether P(contradicted | fails) is).

    >>> failure_kind_unsure({"supports": 0.2, "contradicts": 0.45, "says_nothing": 0.35})
    True
    >>> failure_kind_unsure({"supports": 0.2, "contradicts": 0.7, "says_nothing": 0.1})
    False
    >>> failure_kind_unsure({"supports": 0.2, "contradicts": 0.7, "says_nothing": 0.1}, p_contradicted=0.55)
    True
    """
    if p_contradicted is not None:
        return max(p_contradicted, 1.0 - p_contradicted) < FAILURE_KIND_MARGIN
    if not isinstance(probabilities, dict):
        return False
    failing = probabilities[Relation.CONTRADICTS] + probabilities[Relation.SAYS_NOTHING]
    if failing <= 0:
        return False
    larger = max(probabilities[Relation.CONTRADICTS], probabilities[Relation.SAYS_NOTHING])
    return larger / failing < FAILURE_KIND_MARGIN


def judged_verdict(row: pd.Series, calibration: Calibration | None = None) -> tuple[Verdict | None, float | None]:
    """A judged row's verdict and routing score.

    Uncalibrated, the score is the judge's `confidence` (max(P(supports), 1 − P(supports)), or a
    sampled lower bound). A calibration maps P(supports) to P(pass), the probability that the
    citation passes (`Calibration.p_pass`), for answers read from log-probabilities: the verdict
    passes when P(pass) ≥ 1/2 and the score is max(P(pass), 1 − P(pass)), the chance that the
    pass-or-fail call is right. A map of the yes/no answers reads the row's `answers`; a row
    without them gets no score (it goes to review); when it also names failures, P(contradicted |
    fails) ≥ 1/2 makes a failing verdict `contradicted`, else `unsupported`. A sampled bound is
    never mapped.
    """
    probabilities = row.get(C.PROBABILITIES)
    confidence = _number(row[C.CONFIDENCE])
    has_probs = isinstance(probabilities, dict) and Relation.SUPPORTS in probabilities
    if calibration is not None and has_probs and confidence is not None and not sampled(row):
        answers = row.get(C.ANSWERS)
        if not calibration.maps(answers):  # a map of answers this row lacks: no score, so review
            return model_verdict(probabilities, row[C.RELATION]), None
        p = calibration.p_pass(probabilities[Relation.SUPPORTS], answers)
        named = calibration.p_contradicted(answers)
        if p < 0.5 and named is not None:
            return (Verdict.CONTRADICTED if named >= 0.5 else Verdict.UNSUPPORTED), 1.0 - p
        return model_verdict(probabilities, p_pass=p), max(p, 1.0 - p)
    return model_verdict(probabilities, row[C.RELATION]), confidence


def routing_score(row: pd.Series, calibration: Calibration | None = None) -> float | None:
    """The score compared with the threshold (see `judged_verdict`)."""
    return judged_verdict(row, calibration)[1]


def route(table: pd.DataFrame, threshold: float = DEFAULT_THRESHOLD,
          calibration: Calibration | None = None) -> pd.DataFrame:
    """Add `score`, `verdict`, `flags`, `route` (`auto` or `review`) and `threshold` to a located table.

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
    scores: list[float | None] = []
    routes: list[Route] = []
    flags: list[list[Flag]] = []
    for _, row in out.iterrows():
        row_flags = flags_of(row)
        verdict: Verdict | None
        score: float | None = None
        if _fabricated(row):
            verdict, where = Verdict.FABRICATED, Route.AUTO
        else:
            verdict, score = judged_verdict(row, calibration)
            confident = score is not None and score >= threshold
            blocked = any(flag in BLOCKING_FLAGS for flag in row_flags)
            where = Route.AUTO if verdict and confident and not blocked else Route.REVIEW
            if verdict in (Verdict.CONTRADICTED, Verdict.UNSUPPORTED) and \
                    failure_kind_unsure(row.get(C.PROBABILITIES), _named(row, calibration)):
                row_flags.append(Flag.FAILURE_KIND_UNSURE)
        verdicts.append(verdict)
        scores.append(score)
        routes.append(where)
        flags.append(row_flags)
    out[C.SCORE] = pd.Series(scores, index=out.index, dtype=object)
    out[C.VERDICT] = pd.Series(verdicts, index=out.index, dtype=object)
    out[C.ROUTE] = pd.Series(routes, index=out.index, dtype=object)
    out[C.FLAGS] = pd.Series(flags, index=out.index, dtype=object)
    out[C.THRESHOLD] = threshold
    if calibration is not None:
        out.attrs[CALIBRATION_ATTR] = calibration
    return out
