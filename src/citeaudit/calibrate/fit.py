"""Threshold analysis and per-model calibration over stored results: pure functions, no model calls.

Input: a judged table with gold verdicts in `expected` (from a labelled citation file). A row is
*auto* at threshold t when `route(table, t)` lets its verdict stand. What decides an answer is
pass or fail, so a verdict is *right* when it passes (verified) exactly when the gold verdict
does (contradicted, unsupported and fabricated all fail); `strategy_metrics` also scores the
three-way word.

Calibration (`fit_calibration`): a monotone map from P(supports) to P(pass), the probability
that the citation passes (gold verified), fitted by Platt scaling on the log-odds of P(supports)
(a logistic curve, slope held at or above 0, Platt's smoothed targets so that a perfectly
separated set does not diverge). The verdict then passes when P(pass) ≥ 1/2, which moves the
decision boundary to where this model's P(supports) actually splits passing from failing
citations, and the routing score max(P(pass), 1 − P(pass)) is the chance that the pass-or-fail
call is right: a map from the routing score to accuracy. The recommended threshold is the lowest
one on that score at which the verdicts that stand reach the target accuracy on the set it was
fitted on. Its figures are cross-validated (`cross_validate`): stratified folds, the map and the threshold fitted
on the other folds and scored on the held-out one, never in-sample. It is saved as JSON beside the
recordings, `cache/calibration/<model>.<strategy>.json`, one per model and strategy.

This module fits and compares; the figures it uses live beside it: `scoring` (threshold tables,
reliability, advice), `maps` (the map and its threshold), `crossval` (held-out figures), `domains`
(leave one domain out, the worst-domain rule).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import pandas as pd

from citeaudit.calibrate.crossval import REPEATS, cross_validate, repeated_cross_validation, strategy_metrics
from citeaudit.calibrate.domains import aligned
from citeaudit.calibrate.maps import FOLDS, blocked_rows, coverage_ceiling, default_inputs, fit_map
from citeaudit.calibrate.scoring import (
    FINE_GRID,
    judged_rows,
    labelled_rows,
    outcomes,
    pass_fail_right,
    threshold_table,
)
from citeaudit.decide.calibration import (
    DEFAULT_TARGET,
    Calibration,
    remembered_features,
)
from citeaudit.errors import InputError


@remembered_features()
def fit_calibration(table: pd.DataFrame, model: str, strategy: str, target: float = DEFAULT_TARGET,
                    folds: int = FOLDS, sets: Sequence[str] = (), inputs: str | None = None,
                    repeats: int = REPEATS, documents: Sequence[str] | None = None) -> Calibration:
    """Fit the map (of `inputs`, default `default_inputs`) and threshold on every judged row read
    from log-probabilities, with the cross-validated figures of the same procedure attached (seed 0,
    and over `repeats` fold assignments in `cross_validated["repeated"]`; 0 skips those), and in
    `cross_validated["ceiling_in_sample"]` the `coverage_ceiling` of the map on the rows it was
    fitted on (the most that any threshold could let stand at the target there).

    `documents` names the document each row of `table` cites (e.g. its citation file): given, a map
    of the answers keeps what `Calibration.uncovered` compares a new document with."""
    rows = judged_rows(table)
    fit_rows = rows[rows["method"] == "logprobs"]
    if fit_rows.empty:
        raise InputError("no labelled citation was judged from log-probabilities: nothing to calibrate. "
                         "Record the labelled sets with a judge that returns logprobs.")
    inputs = inputs or default_inputs(table)
    by_row = None if documents is None else aligned(documents, table)
    fitted = fit_map(fit_rows, target, model, str(strategy), inputs, by_row)
    figures, _ = cross_validate(table, target, folds, 0, inputs)
    blocked = _blocked(table, rows)
    figures["ceiling_in_sample"] = _ceiling_in_sample(rows, blocked, fitted, target)
    figures.update({k: v for k, v in strategy_metrics(table).items() if k != "judged"})
    if repeats:
        figures["repeated"] = repeated_cross_validation(table, target, folds, repeats, inputs)
    return replace(
        fitted,
        fitted_on={"citations": len(labelled_rows(table)), "judged": len(fit_rows), "sets": list(sets),
                   "rows": _fingerprint(rows, blocked)},
        cross_validated=figures, when=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def _blocked(table: pd.DataFrame, rows: pd.DataFrame) -> pd.Series:
    """Which of the judged `rows` of `table` a flag keeps from standing."""
    return blocked_rows(labelled_rows(table)).reindex(rows.index)


def _ceiling_in_sample(rows: pd.DataFrame, blocked: pd.Series, fitted: Calibration, target: float) -> dict | None:
    verdicts, scores = outcomes(rows, fitted)  # in sample: the map scores the rows it was fitted on
    return coverage_ceiling(pd.DataFrame({
        "verdict": pd.Series(verdicts, index=rows.index, dtype=object), "score": scores,
        "right": pass_fail_right(verdicts, rows["gold"]), "blocked": blocked,
    }, index=rows.index), target)


def _fingerprint(rows: pd.DataFrame, blocked: pd.Series) -> str:
    """What a fit reads from a labelled table, as a SHA-256 (its first 16 hex digits): per judged row
    its gold verdict, method, relation, probabilities and yes/no answers (floats to 10 significant
    digits: another machine may differ in a last digit), its evidence's length, and whether a flag
    keeps it from standing (`blocked`). `fitted_on_table` compares it."""
    digest = hashlib.sha256()
    for gold, method, relation, probabilities, answers, evidence, stop in zip(
            rows["gold"], rows["method"], rows["relation"], rows["probabilities"], rows["answers"],
            rows["evidence"], blocked):
        digest.update(json.dumps([str(gold), str(method), str(relation), _rounded(probabilities), _rounded(answers),
                                  len(evidence) if isinstance(evidence, str) else None, bool(stop)]).encode())
    return digest.hexdigest()[:16]


def _rounded(values: object) -> object:
    if not isinstance(values, dict):
        return None
    return {str(k): f"{v:.10g}" if isinstance(v, float) else str(v) for k, v in sorted(values.items())}


def fitted_on_table(calibration: Calibration, table: pd.DataFrame, target: float = DEFAULT_TARGET,
                    folds: int = FOLDS, repeats: int = REPEATS) -> bool:
    """Whether `calibration` was fitted by `fit_calibration` (with `target`, `folds` and `repeats`
    fold assignments) on exactly this labelled table, so that fitting again would give it back: the
    same fingerprint of the judged rows (`_fingerprint`), the same counts of citations and judged
    rows, the same figures of the judge's answers (`strategy_metrics`: accuracy, AUROC...) and the
    same in-sample ceiling of its map on these rows (floats to 1e-9, relative: another machine may
    differ in a last digit). One pass over the rows, where a fit takes seconds to a minute. Never a
    calibration saved without a fingerprint (before it was kept), a profile, or one whose threshold
    the worst-domain rule set."""
    cv = calibration.cross_validated
    if (calibration.profile is not None or calibration.fitted_on.get("threshold_rule", "pooled") != "pooled"
            or calibration.target != target or cv.get("folds") != folds
            or (cv.get("repeated") or {}).get("repeats", 0) != repeats):
        return False
    rows = judged_rows(table)
    blocked = _blocked(table, rows)
    if calibration.fitted_on.get("rows") != _fingerprint(rows, blocked):
        return False
    fit_rows = rows[rows["method"] == "logprobs"]
    if (calibration.fitted_on.get("citations"), calibration.fitted_on.get("judged")) != (
            len(labelled_rows(table)), len(fit_rows)) or fit_rows.empty:
        return False
    metrics = {k: v for k, v in strategy_metrics(table).items() if k != "judged"}
    return (all(_same(cv.get(k), v) for k, v in metrics.items())
            and _same(cv.get("ceiling_in_sample"), _ceiling_in_sample(rows, blocked, calibration, target)))


def _same(saved: object, now: object) -> bool:
    """Saved figures (read back from JSON) against figures computed now: floats to 1e-9 relative,
    NaN as NaN, dicts key by key, anything else exactly."""
    if isinstance(saved, dict) and isinstance(now, dict):
        return saved.keys() == now.keys() and all(_same(saved[k], now[k]) for k in saved)
    if isinstance(saved, (int, float)) and isinstance(now, (int, float)) and not isinstance(saved, bool):
        return (math.isnan(saved) and math.isnan(now)) or math.isclose(saved, now, rel_tol=1e-9, abs_tol=1e-12)
    return saved == now


@dataclass
class StrategyComparison:
    """Several strategies of one model on the same labelled sets, each with its own calibration."""

    tables: dict[str, pd.DataFrame]
    calibrations: dict[str, Calibration]
    target: float = DEFAULT_TARGET
    reused: list[str] = field(default_factory=list)  # strategies whose calibration was saved, not fitted here

    def figures(self) -> pd.DataFrame:
        """One row per strategy: cross-validated accuracy, balanced accuracy, AUROC of P(supports),
        coverage and precision of the verdicts that stand at the recommended threshold (the first
        fold assignment, then the means over the repeated ones when they were run)."""
        rows = []
        for name, fitted in self.calibrations.items():
            cv = fitted.cross_validated
            rows.append({
                "strategy": name,
                "judged": cv["judged"],
                "accuracy": cv["accuracy_cv"],
                "balanced_accuracy": cv["balanced_accuracy_cv"],
                "auroc": cv["auroc"],
                "threshold": fitted.threshold,
                "coverage": cv["coverage"],
                "precision": cv["precision"],
                "coverage_mean": cv.get("repeated", {}).get("coverage_mean", float("nan")),
                "precision_mean": cv.get("repeated", {}).get("precision_mean", float("nan")),
            })
        return pd.DataFrame(rows).set_index("strategy")

    def grids(self) -> dict[str, pd.DataFrame]:
        """Each strategy's threshold table on its own calibrated score (fitted on the whole set)."""
        return {name: threshold_table(self.tables[name], FINE_GRID, fitted)
                for name, fitted in self.calibrations.items()}



def compare_strategies(tables: dict[str, pd.DataFrame], model: str, target: float = DEFAULT_TARGET,
                       folds: int = FOLDS, saved: Iterable[Calibration | None] = (),
                       repeats: int = REPEATS) -> StrategyComparison:
    """A calibration per strategy over its judged labelled table: one of `saved` (e.g. the
    calibrations in force) for that model and strategy when it was fitted on exactly this table
    (`fitted_on_table`: the same procedure would give it back), else `fit_calibration` here.
    `StrategyComparison.reused` names the strategies whose calibration was saved."""
    ready = {c.strategy: c for c in saved if c is not None and c.model == model}
    calibrations, reused = {}, []
    for name, table in tables.items():
        found = ready.get(str(name))
        if found is not None and fitted_on_table(found, table, target, folds, repeats):
            calibrations[name] = found
            reused.append(name)
        else:
            calibrations[name] = fit_calibration(table, model, name, target, folds, repeats=repeats)
    return StrategyComparison(dict(tables), calibrations, target, reused)


