"""Figures for threshold tuning: the risk-coverage curve and the reliability diagram."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd


def risk_coverage(grid: pd.DataFrame, threshold: float | None = None, ax=None):
    """Accuracy of the verdicts that stand against the share that stands, as the threshold moves."""
    ax = ax or plt.subplots(figsize=(5, 4))[1]
    ax.plot(grid["auto_share"], grid["auto_accuracy"], marker="o", ms=3)
    if threshold is not None:
        at = grid.iloc[(grid["threshold"] - threshold).abs().argmin()]
        ax.plot([at["auto_share"]], [at["auto_accuracy"]], marker="o", ms=10, color="crimson",
                label=f"threshold {at['threshold']:.2f}")
        ax.legend(loc="lower left")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("share of verdicts that stand (auto)")
    ax.set_ylabel("accuracy of the verdicts that stand")
    ax.set_title("Risk-coverage")
    return ax


def reliability_diagram(rel: pd.DataFrame, ax=None):
    """Accuracy per confidence bin against the diagonal of perfect calibration."""
    ax = ax or plt.subplots(figsize=(5, 4))[1]
    used = rel[rel["count"] > 0]
    centers = [float(b.split("-")[0]) + 0.05 for b in used["bin"]]
    ax.bar(centers, used["accuracy"], width=0.09, alpha=0.7, label="accuracy in bin")
    ax.plot([0, 1], [0, 1], ls="--", color="grey", label="perfect calibration")
    for x, (_, row) in zip(centers, used.iterrows()):
        ax.annotate(str(int(row["count"])), (x, row["accuracy"]), ha="center", va="bottom", fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("model confidence")
    ax.set_ylabel("share of model verdicts that are right")
    ax.set_title("Reliability (n per bar)")
    ax.legend(loc="upper left")
    return ax


def threshold_figure(grid: pd.DataFrame, rel: pd.DataFrame, threshold: float):
    """Both plots side by side, the current threshold marked."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    risk_coverage(grid, threshold, left)
    reliability_diagram(rel, right)
    fig.tight_layout()
    return fig
