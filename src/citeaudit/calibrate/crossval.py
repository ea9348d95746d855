"""Cross-validated figures of the calibration procedure: stratified folds, each map and threshold
fitted on the other folds and scored on the held-out one, once (`cross_validate`) or over repeated
fold assignments (`repeated_cross_validation`), and the three-way scores of a strategy."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from citeaudit.calibrate.maps import FOLDS, blocked_rows, default_inputs, fit_map, stratified_folds
from citeaudit.calibrate.scoring import LABELS, judged_rows, labelled_rows, outcomes, pass_fail_right
from citeaudit.decide.calibration import (
    DEFAULT_TARGET,
    remembered_features,
)
from citeaudit.decide.routing import stands
from citeaudit.table import Verdict

REPEATS = 20  # fold assignments of the repeated cross-validation


@remembered_features()
def cross_validate(table: pd.DataFrame, target: float = DEFAULT_TARGET, folds: int = FOLDS,
                   seed: int = 0, inputs: str | None = None) -> tuple[dict, pd.DataFrame]:
    """Held-out figures of the calibration procedure, and each judged row's held-out outcome.

    For each fold, the map (of `inputs`, default `default_inputs`) and its threshold are fitted on
    the other folds (rows read from log-probabilities) and the held-out rows are routed with them.
    Figures over the judged rows: `judged`, `stand` (verdicts that stand), `coverage` (stand /
    judged), `stand_right`, `precision` (stand_right / stand, NaN when none stands),
    `pass_fail_accuracy_cv` (over every judged row, standing or not), the three-way `accuracy_cv` and
    `balanced_accuracy_cv` (the failing word named by the fold's calibration when it names
    failures) and the folds' thresholds.
    """
    return _cross_validate(_Prepared.of(table, inputs), target, folds, seed)


@dataclass(frozen=True)
class _Prepared:
    """What every fold assignment of one table reads: its judged rows, which of them a blocking flag
    keeps from standing, and the map's inputs (computed once for repeated cross-validation)."""

    rows: pd.DataFrame
    blocked: pd.Series
    inputs: str

    @classmethod
    def of(cls, table: pd.DataFrame, inputs: str | None = None) -> _Prepared:
        rows = judged_rows(table)
        blocked = blocked_rows(labelled_rows(table)).reindex(rows.index)
        return cls(rows, blocked, inputs or default_inputs(table))


def _cross_validate(prepared: _Prepared, target: float, folds: int, seed: int) -> tuple[dict, pd.DataFrame]:
    rows, blocked, inputs = prepared.rows, prepared.blocked, prepared.inputs
    fold = stratified_folds(rows["gold"], folds, seed)
    columns = ["fold", "score", "threshold", "stand", "right", "verdict"]
    held = pd.DataFrame(index=rows.index, columns=columns, dtype=object)
    thresholds = []
    logprobs = (rows["method"] == "logprobs").to_numpy()
    for k in range(folds):
        test = fold == k
        if not test.any():
            continue
        train = rows[~test & logprobs]
        fitted = fit_map(train, target, inputs=inputs) if not train.empty else None
        t = fitted.threshold if fitted is not None else None
        thresholds.append(t)
        verdicts, scores = outcomes(rows[test], fitted)
        right = pass_fail_right(verdicts, rows.loc[test, "gold"])
        part = [[k, float(score), t, stands(verdict, score, t, bool(b)), bool(ok), verdict]
                for verdict, score, ok, b in zip(verdicts, scores, right, blocked[test])]
        held.loc[rows.index[test]] = pd.DataFrame(part, index=rows.index[test], columns=columns, dtype=object)
    stand = held["stand"].astype(bool)
    right_rows = held["right"].astype(bool)
    stand_right = int((stand & right_rows).sum())
    figures = {
        "folds": folds,
        "judged": len(rows),
        "stand": int(stand.sum()),
        "coverage": float(stand.mean()) if len(rows) else float("nan"),
        "stand_right": stand_right,
        "precision": stand_right / int(stand.sum()) if stand.any() else float("nan"),
        "pass_fail_accuracy_cv": float(right_rows.mean()) if len(rows) else float("nan"),
        **{f"{name}_cv": value for name, value in _three_way(held["verdict"], rows["gold"]).items()},
        "fold_thresholds": [None if t is None else round(t, 2) for t in thresholds],
    }
    return figures, held


def _three_way(verdicts: pd.Series, gold: pd.Series) -> dict:
    """Accuracy and balanced accuracy (mean recall of verified, contradicted, unsupported) over the
    rows whose gold verdict is one of those three.

    >>> _three_way(pd.Series(["verified", "verified", "unsupported"]),
    ...            pd.Series(["verified", "contradicted", "unsupported"]))
    {'accuracy': 0.6666666666666666, 'balanced_accuracy': 0.6666666666666666}
    """
    keep = gold.isin(LABELS)
    v, g = verdicts[keep], gold[keep]
    recalls = [float((v[g == label] == label).mean()) for label in LABELS if (g == label).any()]
    return {"accuracy": float((v == g).mean()) if len(g) else float("nan"),
            "balanced_accuracy": float(np.mean(recalls)) if recalls else float("nan")}


def strategy_metrics(table: pd.DataFrame) -> dict:
    """How well the model's verdicts match the gold ones over the judged rows (no threshold).

    `accuracy` and `balanced_accuracy` (the mean recall of verified, contradicted and unsupported)
    are over judged rows whose gold verdict is one of those three; `majority_balanced_accuracy` is
    what always answering one class scores (1/3 with three classes present); `pass_fail_accuracy`
    over every judged row; `auroc` of P(supports) for gold verified against the rest
    (`sklearn.metrics.roc_auc_score`).
    """
    from sklearn.metrics import roc_auc_score  # here: importing scikit-learn takes seconds

    rows = judged_rows(table)
    three = rows[rows["gold"].isin(LABELS)]
    recalls = [float((three[three["gold"] == label]["verdict"] == label).mean())
               for label in LABELS if (three["gold"] == label).any()]
    scored = rows[rows["p_supports"].notna()]
    verified = (scored["gold"] == Verdict.VERIFIED).to_numpy()
    auroc = float(roc_auc_score(verified, scored["p_supports"])) if 0 < verified.sum() < len(verified) else float("nan")
    return {
        "judged": len(rows),
        "accuracy": float((three["verdict"] == three["gold"]).mean()) if len(three) else float("nan"),
        "balanced_accuracy": float(np.mean(recalls)) if recalls else float("nan"),
        "majority_balanced_accuracy": 1 / len(recalls) if recalls else float("nan"),
        "pass_fail_accuracy": float(rows["correct"].mean()) if len(rows) else float("nan"),
        "auroc": auroc,
    }


@remembered_features()
def repeated_cross_validation(table: pd.DataFrame, target: float = DEFAULT_TARGET, folds: int = FOLDS,
                              repeats: int = REPEATS, inputs: str | None = None) -> dict:
    """`cross_validate` with `repeats` fold assignments (seeds 0, 1, ...): the mean, spread and
    extremes of coverage and precision over them, and their pooled precision. One assignment of
    171 rows to 5 folds moves precision by a point or two either way; this says how much."""
    prepared = _Prepared.of(table, inputs)
    runs = [_cross_validate(prepared, target, folds, seed)[0] for seed in range(repeats)]
    coverage = np.array([r["coverage"] for r in runs], dtype=float)
    precision = np.array([r["precision"] for r in runs], dtype=float)
    balanced = np.array([r["balanced_accuracy_cv"] for r in runs], dtype=float)
    stand = sum(r["stand"] for r in runs)
    return {
        "repeats": repeats,
        "coverage_mean": float(coverage.mean()), "coverage_sd": float(coverage.std()),
        "coverage_min": float(coverage.min()), "coverage_max": float(coverage.max()),
        "precision_mean": float(np.nanmean(precision)), "precision_sd": float(np.nanstd(precision)),
        "precision_min": float(np.nanmin(precision)), "precision_max": float(np.nanmax(precision)),
        "precision_pooled": sum(r["stand_right"] for r in runs) / stand if stand else float("nan"),
        "balanced_accuracy_mean": float(balanced.mean()),
    }
