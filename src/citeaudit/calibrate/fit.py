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

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

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
)
from citeaudit.errors import InputError

if TYPE_CHECKING:
    from matplotlib.axes import Axes


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
    verdicts, scores = outcomes(rows, fitted)  # in sample: the map scores the rows it was fitted on
    figures["ceiling_in_sample"] = coverage_ceiling(pd.DataFrame({
        "verdict": pd.Series(verdicts, index=rows.index, dtype=object), "score": scores,
        "right": pass_fail_right(verdicts, rows["gold"]),
        "blocked": blocked_rows(labelled_rows(table)).reindex(rows.index),
    }, index=rows.index), target)
    figures.update({k: v for k, v in strategy_metrics(table).items() if k != "judged"})
    if repeats:
        figures["repeated"] = repeated_cross_validation(table, target, folds, repeats, inputs)
    return replace(
        fitted,
        fitted_on={"citations": len(labelled_rows(table)), "judged": len(fit_rows), "sets": list(sets)},
        cross_validated=figures, when=datetime.now(UTC).isoformat(timespec="seconds"),
    )


@dataclass
class StrategyComparison:
    """Several strategies of one model on the same labelled sets, each with its own calibration."""

    tables: dict[str, pd.DataFrame]
    calibrations: dict[str, Calibration]
    target: float = DEFAULT_TARGET

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

    def figure(self, ax: Axes | None = None) -> Axes:
        """Risk-coverage curves of every strategy on one plot, the recommended thresholds starred."""
        from citeaudit.surfaces.plots import risk_coverage_by_strategy

        marks = {name: fitted.threshold for name, fitted in self.calibrations.items()}
        return risk_coverage_by_strategy(self.grids(), marks, self.target, ax)


def compare_strategies(tables: dict[str, pd.DataFrame], model: str, target: float = DEFAULT_TARGET,
                       folds: int = FOLDS) -> StrategyComparison:
    """Fit a calibration per strategy (`fit_calibration`) over its judged labelled table."""
    calibrations = {name: fit_calibration(table, model, name, target, folds) for name, table in tables.items()}
    return StrategyComparison(dict(tables), calibrations, target)


