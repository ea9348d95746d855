"""Threshold figures over a judged, labelled table: which verdicts stand at a threshold, how many are
right, reliability bins and the threshold advice. Pure functions, no model calls; see `calibrate.fit`
for what *auto* and *right* mean."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from citeaudit import table as C
from citeaudit.decide.calibration import (
    DEFAULT_TARGET,
    Calibration,
)
from citeaudit.decide.routing import blocked_by, judge_outcome, model_verdict, route, stands_where
from citeaudit.table import Verdict

GRID = tuple(round(t, 2) for t in np.arange(0.0, 1.0001, 0.05))
FINE_GRID = tuple(round(t, 2) for t in np.arange(0.5, 1.0001, 0.01))  # where a threshold is recommended
LABELS = (Verdict.VERIFIED, Verdict.CONTRADICTED, Verdict.UNSUPPORTED)


def judge_only(table: pd.DataFrame) -> pd.DataFrame:
    """The table without the contrast checks' columns: a calibration measures the judge, so what it
    is fitted and scored on never depends on which contrast checks a run had on (`--contrast-checks`);
    they hold back verdicts after it, in routing."""
    return table.drop(columns=[C.CONTRAST, C.CONTRAST_NOTE], errors="ignore")


def labelled_rows(table: pd.DataFrame) -> pd.DataFrame:
    table = judge_only(table)
    labelled = table[table[C.EXPECTED].notna()]
    if labelled.empty:
        raise ValueError("no row has a gold `expected` verdict; threshold analysis needs a labelled set")
    return labelled


def _passes(verdicts: Iterable[object]) -> np.ndarray:
    return np.array([v == Verdict.VERIFIED for v in verdicts], dtype=bool)


def pass_fail_right(verdicts: Iterable[object], gold: Iterable[object]) -> np.ndarray:
    """Per row: does the verdict pass exactly when the gold verdict passes?

    >>> pass_fail_right(["verified", "contradicted", "unsupported"], ["verified", "unsupported", "verified"]).tolist()
    [True, True, False]
    """
    return _passes(verdicts) == _passes(gold)


def threshold_table(table: pd.DataFrame, thresholds: Iterable[float] = GRID,
                    calibration: Calibration | None = None) -> pd.DataFrame:
    """Per threshold: how many verdicts stand, how many of them are right, how many go to review.

    Columns: `threshold`, `auto` (verdicts that stand), `auto_share`, `auto_accuracy` (pass or
    fail right; NaN when none stands), `review` (sent to a human), `wrong_auto` (wrong verdicts
    that would stand), `model_auto` (of the standing verdicts, those that came from the model
    rather than step 1), `model_share` (`model_auto` over the rows the model judged) and
    `model_accuracy` (of those, the share right; NaN when none stands).
    """
    labelled = labelled_rows(table)
    judged = int(labelled[C.CONFIDENCE].notna().sum())
    # verdicts, scores and flags do not depend on the threshold: route once, then compare per threshold
    routed = route(labelled, 1.0, calibration)
    settled = routed[C.FABRICATED_REASON].map(lambda reason: isinstance(reason, str))
    blocked = pd.Series([blocked_by(flags, verdict)
                         for flags, verdict in zip(routed[C.FLAGS], routed[C.VERDICT])], index=routed.index)
    rows = []
    for t in thresholds:
        is_auto = settled | stands_where(routed[C.VERDICT], routed[C.SCORE], float(t), blocked)
        auto = routed[is_auto]
        right_rows = pass_fail_right(auto[C.VERDICT], auto[C.EXPECTED])
        right = int(right_rows.sum())
        from_model = auto[C.FABRICATED_REASON].isna().to_numpy()
        model_auto = int(from_model.sum())
        rows.append({
            "threshold": float(t),
            "auto": len(auto),
            "auto_share": len(auto) / len(routed),
            "auto_accuracy": right / len(auto) if len(auto) else float("nan"),
            "review": len(routed) - len(auto),
            "wrong_auto": len(auto) - right,
            "model_auto": model_auto,
            "model_share": model_auto / judged if judged else float("nan"),
            "model_accuracy": float(right_rows[from_model].mean()) if model_auto else float("nan"),
        })
    return pd.DataFrame(rows)


def _lowest_in(grid: pd.DataFrame, target: float) -> float | None:
    reached = grid[(grid["auto"] > 0) & (grid["auto_accuracy"] >= target)]
    return float(reached["threshold"].min()) if not reached.empty else None


def lowest_threshold(table: pd.DataFrame, target: float = DEFAULT_TARGET,
                     thresholds: Iterable[float] = GRID) -> float | None:
    """The lowest threshold whose standing verdicts are at least `target` accurate, else None."""
    return _lowest_in(threshold_table(table, thresholds), target)


def judged_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The labelled rows the model judged: what the judge answered (raw confidence, method,
    probabilities, P(supports), relation, the yes/no answers, the judged evidence), the uncalibrated
    verdict, gold, right."""
    labelled = labelled_rows(table)
    judged = labelled[labelled[C.CONFIDENCE].notna()]
    nothing = pd.Series([None] * len(judged), index=judged.index, dtype=object)
    probabilities = judged.get(C.PROBABILITIES, nothing)
    verdicts = [model_verdict(p, r) for p, r in zip(probabilities, judged[C.RELATION])]
    p_supports = [p.get("supports") if isinstance(p, dict) else None for p in probabilities]
    return pd.DataFrame({
        "confidence": judged[C.CONFIDENCE].astype(float),
        "method": judged.get(C.METHOD, nothing),
        "probabilities": probabilities,
        "relation": judged[C.RELATION],
        "p_supports": pd.Series(p_supports, index=judged.index, dtype=float),
        "answers": judged.get(C.ANSWERS, nothing),
        "evidence": judged.get(C.EVIDENCE, nothing),
        "verdict": pd.Series(verdicts, index=judged.index, dtype=object),
        "gold": judged[C.EXPECTED],
        "correct": pass_fail_right(verdicts, judged[C.EXPECTED]).astype(float),
        "gold_pass": _passes(judged[C.EXPECTED]).astype(float),
    }, index=judged.index)


def outcomes(rows: pd.DataFrame, calibration: Calibration | None = None) -> tuple[list, np.ndarray]:
    """Verdict and routing score of each of `judged_rows`, by the pipeline's own rule
    (`route.judge_outcome`); a row that gets no score (a map of answers it lacks) scores 0."""
    verdicts, scores, _ = outcomes_with_p_pass(rows, calibration)
    return verdicts, scores


def outcomes_with_p_pass(rows: pd.DataFrame, calibration: Calibration | None = None
                         ) -> tuple[list, np.ndarray, np.ndarray]:
    """`outcomes` and each row's P(pass) (`route.Outcome.p_pass`; NaN where there is none)."""
    verdicts, scores, p_pass = [], [], []
    evidence = rows["evidence"] if "evidence" in rows else pd.Series(None, index=rows.index, dtype=object)
    for probabilities, relation, confidence, method, answers, text in zip(
            rows["probabilities"], rows["relation"], rows["confidence"], rows["method"], rows["answers"], evidence):
        verdict, score, p = judge_outcome(probabilities, relation, confidence, method, answers, calibration, text)
        verdicts.append(verdict)
        scores.append(0.0 if score is None else score)
        p_pass.append(float("nan") if p is None else p)
    return verdicts, np.array(scores, dtype=float), np.array(p_pass, dtype=float)


def scored_rows(rows: pd.DataFrame, calibration: Calibration | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Routing score and pass-or-fail rightness of `judged_rows`, through `calibration` if given
    (`outcomes`: the pipeline's scoring, so a row never stands here that would not stand there)."""
    verdicts, scores = outcomes(rows, calibration)
    return scores, pass_fail_right(verdicts, rows["gold"]).astype(float)


def reliability(table: pd.DataFrame, bins: int = 10, calibration: Calibration | None = None) -> pd.DataFrame:
    """Model verdicts binned by (mapped) confidence: mean confidence, pass-or-fail accuracy, count.

    `bins` equal bins of [0, 1], as `sklearn.calibration.calibration_curve` cuts them (a score on an
    edge falls in the lower bin); an empty bin keeps its row, count 0 and NaN.
    """
    from sklearn.calibration import calibration_curve  # here: importing scikit-learn takes seconds

    scores, correct = scored_rows(judged_rows(table), calibration)
    edges = np.linspace(0.0, 1.0, bins + 1)
    # the bins of `calibration_curve` (strategy "uniform": a score on an edge falls in the lower bin),
    # which leaves out the empty ones: the table keeps them, with their count
    counts = np.bincount(np.searchsorted(edges[1:-1], scores), minlength=bins)
    accuracy, confidence = np.full(bins, np.nan), np.full(bins, np.nan)
    if len(scores):
        accuracy[counts > 0], confidence[counts > 0] = calibration_curve(correct, scores, n_bins=bins)
    return pd.DataFrame({"bin": [f"{edges[b]:.1f}-{edges[b + 1]:.1f}" for b in range(bins)], "count": counts,
                         "confidence": confidence, "accuracy": accuracy})


def expected_calibration_error(table: pd.DataFrame, bins: int = 10, calibration: Calibration | None = None) -> float:
    """Sum over bins of (share of verdicts in bin) x |accuracy - mean confidence|."""
    rel = reliability(table, bins, calibration)
    used = rel[rel["count"] > 0]
    total = used["count"].sum()
    if total == 0:
        return float("nan")
    return float((used["count"] / total * (used["accuracy"] - used["confidence"]).abs()).sum())


@dataclass(frozen=True)
class ThresholdAdvice:
    target: float
    threshold: float | None
    ece: float
    statement: str


def advise(table: pd.DataFrame, target: float = DEFAULT_TARGET, grid: pd.DataFrame | None = None) -> ThresholdAdvice:
    """The lowest threshold reaching `target` on this set (in-sample), with a plain statement.

    `grid` is `threshold_table(table)` when the caller already has it. For a threshold to use on
    other answers, fit a `Calibration`, whose figures are cross-validated.
    """
    grid = threshold_table(table) if grid is None else grid
    found = _lowest_in(grid, target)
    ece = expected_calibration_error(table)
    if found is None:
        statement = f"No threshold reaches {target:.0%} accuracy of the verdicts that stand."
    else:
        row = grid[grid["threshold"] == found].iloc[0]
        statement = (
            f"The lowest threshold reaching {target:.0%} accuracy of standing verdicts (pass or fail) is "
            f"{found:.2f}: {int(row['auto'])} of {len(labelled_rows(table))} verdicts stand "
            f"({int(row['model_auto'])} of them from the model), {int(row['review'])} go to review."
        )
        if row["model_auto"] == 0:
            statement += " No model verdict stands there: only step 1's fabricated verdicts do."
    return ThresholdAdvice(target, found, ece, statement)


def standing_mask(held: pd.DataFrame, thresholds: pd.Series | float | None) -> np.ndarray:
    """Whether each held-out row's verdict stands at its threshold (`route.stands_where`)."""
    return stands_where(held["verdict"], held["score"], thresholds, held["blocked"]).to_numpy(dtype=bool)
