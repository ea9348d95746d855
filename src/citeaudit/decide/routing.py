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
blocking flags (near quote, section mismatch, judge error) always do. The `contrast` flag (a
contrast check between claim and evidence fired, `decide.contrast`, read from the `contrast`
column) keeps a `verified` verdict from standing and leaves a failing one as it is: a flag never
makes anything pass.

A pure function over the audit table: changing the threshold re-routes stored results and never
calls a model. This is the one routing implementation: the pipeline (`route`), the threshold
tables, the offline evaluation and the cross-validation in `calibrate.py` all score a row with
`judge_outcome` and let it stand by `stands`. The threshold and the calibration are arguments
(an `Audit` holds them), never columns or table attributes.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import pandas as pd

from citeaudit import table as C
from citeaudit.decide.calibration import Calibration
from citeaudit.settings.environment import DEFAULT_THRESHOLD
from citeaudit.table import BLOCKING_FLAGS, RELATION_TO_VERDICT, Flag, QuoteStatus, Relation, Route, Row, Verdict

# the failing word is unsure when the larger failing relation holds less than this share of the
# failing mass (0.6 / 0.4 between contradicts and says nothing is still "close")
FAILURE_KIND_MARGIN = 0.65


def _fabricated(row: Row) -> bool:
    return isinstance(row[C.FABRICATED_REASON], str)


def flags_of(row: Row) -> list[Flag]:
    """Blocking reasons a citation needs a human whatever the confidence (`BLOCKING_FLAGS`)."""
    flags = []
    if row[C.QUOTE_STATUS] == QuoteStatus.NEAR:
        flags.append(Flag.NEAR_QUOTE)
    if not _fabricated(row) and row[C.SECTION_MATCH] is False:
        flags.append(Flag.SECTION_MISMATCH)
    if isinstance(row[C.ERROR], str) and row[C.ERROR]:
        flags.append(Flag.JUDGE_ERROR)
    findings = row.get(C.FINDINGS)  # a vendor response's location checks (vendor_audit.py)
    if isinstance(findings, list):
        flags.extend(Flag(f["flag"]) for f in findings if not _fabricated(row))
    if contrasts(row) and not _fabricated(row):
        flags.append(Flag.CONTRAST)
    return flags


def contrasts(row: Row) -> list[dict]:
    """The row's contrast findings (`decide.contrast`: dicts with `check` and `says`), or []."""
    found = row.get(C.CONTRAST)
    return [f for f in found if isinstance(f, dict)] if isinstance(found, list) else []


def blocks(flag: object, verdict: object) -> bool:
    """Whether `flag` keeps a verdict from standing: a blocking flag always, `contrast` a `verified` one.

    >>> blocks("contrast", "verified"), blocks("contrast", "contradicted"), blocks("near_quote", "unsupported")
    (True, False, True)
    """
    return flag in BLOCKING_FLAGS or (flag == Flag.CONTRAST and verdict == Verdict.VERIFIED)


def blocked_by(flags: list[Flag], verdict: object) -> bool:
    """Whether any of a row's `flags` keeps its verdict from standing (`blocks`)."""
    return any(blocks(flag, verdict) for flag in flags)


def _number(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _failing(probabilities: dict) -> Verdict:
    if probabilities[Relation.CONTRADICTS] >= probabilities[Relation.SAYS_NOTHING]:
        return Verdict.CONTRADICTED
    return Verdict.UNSUPPORTED


def is_sampled(method: object) -> bool:
    """Whether an answer was sampled (no log-probabilities): its confidence is a lower bound."""
    return isinstance(method, str) and method.startswith("sampling")


def sampled(row: Row) -> bool:
    """Whether the row's answer was sampled (`is_sampled` of its `method`)."""
    return is_sampled(row.get(C.METHOD))


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


def _named(row: Row, calibration: Calibration | None) -> float | None:
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


class Outcome(NamedTuple):
    """What routing reads off a judged answer: the verdict, the routing score compared with the
    threshold, and P(pass) (the calibrated probability that the citation passes; P(supports)
    without a calibration; None for a sampled answer or one the calibration cannot map)."""

    verdict: Verdict | None
    score: float | None
    p_pass: float | None = None


def judge_outcome(probabilities: object, relation: object, confidence: object, method: object = None,
                  answers: object = None, calibration: Calibration | None = None,
                  evidence: object = None) -> Outcome:
    """A judged answer's verdict and routing score: the one scoring rule of every surface.

    Uncalibrated, the score is the judge's `confidence` (max(P(supports), 1 − P(supports)), or a
    sampled lower bound). A calibration maps P(supports) to P(pass), the probability that the
    citation passes (`Calibration.p_pass`), for answers read from log-probabilities: the verdict
    passes when P(pass) ≥ 1/2 and the score is max(P(pass), 1 − P(pass)), the chance that the
    pass-or-fail call is right. A map of the yes/no answers reads `answers` (and, in inputs
    `answers+length`, the length of the judged `evidence` text); an answer without them gets no
    score (it goes to review); when the map also names failures, P(contradicted |
    fails) ≥ 1/2 makes a failing verdict `contradicted`, else `unsupported`. A sampled bound is
    never mapped.

    >>> judge_outcome({"supports": 0.9, "contradicts": 0.05, "says_nothing": 0.05}, "supports", 0.9)
    Outcome(verdict=<Verdict.VERIFIED: 'verified'>, score=0.9, p_pass=0.9)
    """
    number = _number(confidence)
    has_probs = isinstance(probabilities, dict) and Relation.SUPPORTS in probabilities
    if calibration is not None and has_probs and number is not None and not is_sampled(method):
        assert isinstance(probabilities, dict)
        chars = len(evidence) if isinstance(evidence, str) else None
        p = calibration.p_pass_if_mapped(probabilities[Relation.SUPPORTS], answers, chars)
        if p is None:  # a map of inputs this row lacks: no score, so review
            return Outcome(model_verdict(probabilities, relation), None)
        named = calibration.p_contradicted(answers) if p < 0.5 else None
        if named is not None:
            return Outcome(Verdict.CONTRADICTED if named >= 0.5 else Verdict.UNSUPPORTED, 1.0 - p, p)
        return Outcome(model_verdict(probabilities, p_pass=p), max(p, 1.0 - p), p)
    p_supports = _number(probabilities.get(Relation.SUPPORTS)) if isinstance(probabilities, dict) else None
    return Outcome(model_verdict(probabilities, relation), number, None if is_sampled(method) else p_supports)


def stands(verdict: object, score: float | None, threshold: float | None, blocked: bool = False) -> bool:
    """Whether a model verdict stands without a human: a verdict, a score at or above the
    threshold, and no blocking flag. No threshold (None) lets nothing stand.

    >>> stands("verified", 0.9, 0.84), stands("verified", 0.8, 0.84), stands("verified", 0.9, 0.84, blocked=True)
    (True, False, False)
    """
    return bool(verdict) and score is not None and threshold is not None and score >= threshold and not blocked


def stands_where(verdicts: pd.Series, scores: pd.Series, thresholds: pd.Series | float | None,
                 blocked: pd.Series) -> pd.Series:
    """`stands` over columns, row by row (a threshold per row, or one for all; None or NaN lets that
    row's verdict wait), as a boolean Series on `verdicts`' index.

    >>> stands_where(pd.Series(["verified", "verified", None]), pd.Series([0.9, 0.8, 0.95]), 0.84,
    ...              pd.Series([False, False, False])).tolist()
    [True, False, False]
    """
    t = pd.Series(thresholds, index=verdicts.index, dtype=float) if not isinstance(thresholds, pd.Series) \
        else pd.to_numeric(thresholds, errors="coerce").astype(float)
    has_verdict = verdicts.notna() & (verdicts.astype(object) != "")
    score = pd.to_numeric(scores, errors="coerce").astype(float)
    return has_verdict & score.notna() & t.notna() & (score >= t) & ~blocked.fillna(False).astype(bool)


def judged_verdict(row: Row, calibration: Calibration | None = None) -> Outcome:
    """A judged row's verdict, routing score and P(pass) (`judge_outcome` of its columns)."""
    return judge_outcome(row.get(C.PROBABILITIES), row[C.RELATION], row[C.CONFIDENCE], row.get(C.METHOD),
                         row.get(C.ANSWERS), calibration, row.get(C.EVIDENCE))


def coverage_gap(table: pd.DataFrame, calibration: Calibration | None) -> str | None:
    """Why `calibration` does not cover the document this judged table cites
    (`Calibration.uncovered` over the yes/no answers read from log-probabilities), or None."""
    if calibration is None or C.ANSWERS not in table.columns:
        return None
    methods = table[C.METHOD] if C.METHOD in table.columns else [None] * len(table)
    return calibration.uncovered(a for a, m in zip(table[C.ANSWERS], methods) if not is_sampled(m))


def route(table: pd.DataFrame, threshold: float = DEFAULT_THRESHOLD,
          calibration: Calibration | None = None) -> pd.DataFrame:
    """Add `p_pass`, `score`, `verdict`, `flags` and `route` (`auto` or `review`) to a judged table.
    The contrast findings are read from the table's `contrast` column (`decide.contrast.check_contrast`;
    absent: none), never computed here.

    A fabricated citation (nothing found, decided in step 1) stands as `auto`. Otherwise the
    verdict and score are `judge_outcome`'s (through `calibration` when given), and the route is
    `auto` when the verdict `stands`; a row not judged (locate-only, or an error) has no verdict
    and goes to review. When the calibration does not cover the table's document (`coverage_gap`),
    every row with yes/no answers is flagged `uncovered` and goes to review.
    """
    if not 0.0 <= threshold <= 1.0:  # NaN fails this too
        raise ValueError(f"threshold must be between 0 and 1, not {threshold}")
    out = table.copy()
    verdicts: list[Verdict | None] = []
    scores: list[float | None] = []
    passes: list[float | None] = []
    routes: list[Route] = []
    flags: list[list[Flag]] = []
    uncovered = coverage_gap(out, calibration) is not None
    for row in C.row_dicts(out):
        row_flags = flags_of(row)
        if uncovered and isinstance(row.get(C.ANSWERS), dict) and not _fabricated(row):
            row_flags.append(Flag.UNCOVERED)
        verdict: Verdict | None
        score: float | None = None
        p_pass: float | None = None
        if _fabricated(row):
            verdict, where = Verdict.FABRICATED, Route.AUTO
        else:
            verdict, score, p_pass = judged_verdict(row, calibration)
            blocked = blocked_by(row_flags, verdict)
            where = Route.AUTO if stands(verdict, score, threshold, blocked) else Route.REVIEW
            if verdict in (Verdict.CONTRADICTED, Verdict.UNSUPPORTED) and \
                    failure_kind_unsure(row.get(C.PROBABILITIES), _named(row, calibration)):
                row_flags.append(Flag.FAILURE_KIND_UNSURE)
        verdicts.append(verdict)
        scores.append(score)
        passes.append(p_pass)
        routes.append(where)
        flags.append(row_flags)
    out[C.SCORE] = pd.Series(scores, index=out.index, dtype=object)
    out[C.P_PASS] = pd.Series(passes, index=out.index, dtype=object)
    out[C.VERDICT] = pd.Series(verdicts, index=out.index, dtype=object)
    out[C.ROUTE] = pd.Series(routes, index=out.index, dtype=object)
    out[C.FLAGS] = pd.Series(flags, index=out.index, dtype=object)
    return out


def score_note(row: C.Row, calibrated: bool = False) -> str | None:
    """The one line that explains a verdict whose pass or fail differs from what P(supports) alone
    says (the model's `relation` is `supports` exactly when P(supports) ≥ 0.5): which number decided,
    and the number it overrode, each named once. None otherwise. Every surface that explains a score
    (the CLI's table, the report's card, the review queue) writes this line.

    >>> row = pd.Series({C.VERDICT: "unsupported", C.RELATION: "supports", C.P_PASS: 0.46,
    ...                  C.PROBABILITIES: {"supports": 0.67, "contradicts": 0.2, "says_nothing": 0.13}})
    >>> score_note(row, calibrated=True)
    'calibrated: P(pass) 0.46 < 0.5, so it fails, although P(supports) 0.67 ≥ 0.5'
    >>> row = pd.Series({C.VERDICT: "verified", C.RELATION: "says_nothing", C.P_PASS: 0.62,
    ...                  C.PROBABILITIES: {"supports": 0.49, "contradicts": 0.2, "says_nothing": 0.31}})
    >>> score_note(row, calibrated=True)
    'calibrated: P(pass) 0.62 ≥ 0.5, so it passes, although P(supports) 0.49 < 0.5'
    """
    verdict, relation, p_pass = row.get(C.VERDICT), row.get(C.RELATION), _number(row.get(C.P_PASS))
    probabilities = row.get(C.PROBABILITIES)
    if not isinstance(verdict, str) or not isinstance(relation, str) or p_pass is None or \
            verdict == Verdict.FABRICATED or not isinstance(probabilities, dict):
        return None
    passes = verdict == Verdict.VERIFIED
    if passes == (relation == Relation.SUPPORTS):
        return None
    supports = probabilities[Relation.SUPPORTS]
    # uncalibrated, P(pass) is P(supports) and cannot disagree with it: the line names the map's number
    name = "calibrated: P(pass)" if calibrated else "P(pass)"
    sign, word, other = ("≥", "passes", "<") if passes else ("<", "fails", "≥")
    return f"{name} {p_pass:.2f} {sign} 0.5, so it {word}, although P(supports) {supports:.2f} {other} 0.5"


def verdict_words(row: C.Row) -> str:
    """The verdict as surfaces write it: a failing word is asserted only when the model's answers
    separate contradicted from unsupported (no `contradicted_or_unsupported` flag).

    >>> verdict_words(pd.Series({C.VERDICT: "unsupported", C.FLAGS: ["contradicted_or_unsupported"]}))
    'unsupported or contradicted'
    """
    verdict = row.get(C.VERDICT)
    flags = row.get(C.FLAGS)
    if verdict in (Verdict.CONTRADICTED, Verdict.UNSUPPORTED) and isinstance(flags, list) and \
            Flag.FAILURE_KIND_UNSURE in flags:
        other = Verdict.CONTRADICTED if verdict == Verdict.UNSUPPORTED else Verdict.UNSUPPORTED
        return f"{verdict} or {other}"
    return str(verdict) if verdict is not None else "-"
