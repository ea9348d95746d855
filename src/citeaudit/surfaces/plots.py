"""Figures for threshold tuning: risk-coverage curves and the reliability diagram.

Everything is on pass or fail (what decides an answer): a standing verdict is right when it passes
exactly when the gold verdict does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import pandas as pd

from citeaudit.extras import require

plt = require("matplotlib.pyplot", "lab", "plotting")

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from citeaudit.calibrate.fit import StrategyComparison


def risk_coverage(grid: pd.DataFrame, threshold: float | None = None, ax: Axes | None = None,
                  at: pd.Series | None = None) -> Axes:
    """Accuracy of the verdicts that stand against the share that stands, as the threshold moves.

    The marker is `at` (the threshold table's row at exactly `threshold`) when given, else the
    grid's row nearest to `threshold`; its label names the threshold of the point it marks."""
    ax = ax or plt.subplots(figsize=(5, 4))[1]
    ax.plot(grid["auto_share"], grid["auto_accuracy"], marker="o", ms=3)
    if threshold is not None:
        if at is None:
            at = grid.iloc[(grid["threshold"] - threshold).abs().argmin()]
        ax.plot([at["auto_share"]], [at["auto_accuracy"]], marker="o", ms=10, color="crimson",
                label=f"threshold {at['threshold']:.2f}")
        ax.legend(loc="lower left")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("share of verdicts that stand (auto)")
    ax.set_ylabel("pass/fail accuracy of the verdicts that stand")
    ax.set_title("Risk-coverage")
    return ax


def plot_strategy_comparison(comparison: StrategyComparison, ax: Axes | None = None) -> Axes:
    """Risk-coverage curves of every strategy of `comparison` on one plot, each calibration's
    recommended threshold starred (`compare_strategies`, `setup_judge`'s `comparison`)."""
    marks = {name: fitted.threshold for name, fitted in comparison.calibrations.items()}
    return risk_coverage_by_strategy(comparison.grids(), marks, comparison.target, ax)


def risk_coverage_by_strategy(grids: Mapping[str, pd.DataFrame], marks: Mapping[str, float | None] | None = None,
                              target: float | None = None, ax: Axes | None = None) -> Axes:
    """One risk-coverage curve per strategy, over the citations the model judged.

    `grids` maps a strategy to its `threshold_table` (on a fine grid); `marks` the threshold to
    mark on each curve (e.g. the calibration's recommended one, on the same scale as the grid).
    """
    ax = ax or plt.subplots(figsize=(6, 4.5))[1]
    for name, grid in grids.items():
        line, = ax.plot(grid["model_share"], grid["model_accuracy"], marker="o", ms=2, label=name)
        mark = (marks or {}).get(name)
        if mark is not None:
            at = grid.iloc[(grid["threshold"] - mark).abs().argmin()]
            ax.plot([at["model_share"]], [at["model_accuracy"]], marker="*", ms=14, color=line.get_color())
    if target is not None:
        ax.axhline(target, ls=":", color="grey", label=f"target {target:.0%}")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("share of judged citations whose verdict stands")
    ax.set_ylabel("pass/fail accuracy of those verdicts")
    ax.set_title("Risk-coverage by strategy (star: recommended threshold)")
    ax.legend(loc="lower left")
    return ax


def reliability_diagram(rel: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Pass/fail accuracy per confidence bin against the diagonal of perfect calibration."""
    ax = ax or plt.subplots(figsize=(5, 4))[1]
    used = rel[rel["count"] > 0]
    centers = [float(b.split("-")[0]) + 0.05 for b in used["bin"]]
    ax.bar(centers, used["accuracy"], width=0.09, alpha=0.7, label="accuracy in bin")
    ax.plot([0, 1], [0, 1], ls="--", color="grey", label="perfect calibration")
    for x, (_, row) in zip(centers, used.iterrows()):
        ax.annotate(str(int(row["count"])), (x, row["accuracy"]), ha="center", va="bottom", fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("routing score: max(P(supports), 1 - P(supports)), mapped if calibrated")
    ax.set_ylabel("share of model verdicts right (pass/fail)")
    ax.set_title("Reliability (n per bar)")
    ax.legend(loc="upper left")
    return ax


def threshold_figure(grid: pd.DataFrame, rel: pd.DataFrame, threshold: float, at: pd.Series | None = None) -> Figure:
    """Both plots side by side, the current threshold marked (at `at`, its exact row, when given)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    risk_coverage(grid, threshold, left, at)
    reliability_diagram(rel, right)
    fig.tight_layout()
    return fig
