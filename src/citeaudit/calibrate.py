"""Threshold analysis and calibration over stored results: pure functions, no model calls.

Input: a judged table with gold verdicts in `expected` (from a labelled citation file). A row is
*auto* at threshold t when `route(table, t)` lets its verdict stand; it is *right* when that
verdict equals the gold one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import columns as C
from .route import route
from .vocab import Route

DEFAULT_TARGET = 0.95
GRID = tuple(round(t, 2) for t in np.arange(0.0, 1.0001, 0.05))


def _labelled(table: pd.DataFrame) -> pd.DataFrame:
    labelled = table[table[C.EXPECTED].notna()]
    if labelled.empty:
        raise ValueError("no row has a gold `expected` verdict; threshold analysis needs a labelled set")
    return labelled


def threshold_table(table: pd.DataFrame, thresholds=GRID) -> pd.DataFrame:
    """Per threshold: how many verdicts stand, how many of them are right, how many go to review.

    Columns: `threshold`, `auto` (verdicts that stand), `auto_share`, `auto_accuracy` (NaN when
    none stands), `review` (sent to a human), `wrong_auto` (wrong verdicts that would stand),
    `model_auto` (of the standing verdicts, those that came from the model rather than step 1).
    """
    labelled = _labelled(table)
    rows = []
    for t in thresholds:
        routed = route(labelled, float(t))
        auto = routed[routed[C.ROUTE] == Route.AUTO]
        right = int((auto[C.VERDICT] == auto[C.EXPECTED]).sum())
        rows.append({
            "threshold": float(t),
            "auto": len(auto),
            "auto_share": len(auto) / len(routed),
            "auto_accuracy": right / len(auto) if len(auto) else float("nan"),
            "review": int((routed[C.ROUTE] == Route.REVIEW).sum()),
            "wrong_auto": len(auto) - right,
            "model_auto": int(auto[C.FABRICATED_REASON].isna().sum()),
        })
    return pd.DataFrame(rows)


def _lowest_in(grid: pd.DataFrame, target: float) -> float | None:
    reached = grid[(grid["auto"] > 0) & (grid["auto_accuracy"] >= target)]
    return float(reached["threshold"].min()) if not reached.empty else None


def lowest_threshold(table: pd.DataFrame, target: float = DEFAULT_TARGET, thresholds=GRID) -> float | None:
    """The lowest threshold whose standing verdicts are at least `target` accurate, else None."""
    return _lowest_in(threshold_table(table, thresholds), target)


def _judged(table: pd.DataFrame) -> pd.DataFrame:
    labelled = _labelled(table)
    judged = labelled[labelled[C.CONFIDENCE].notna()]
    verdicts = route(judged, 0.0)[C.VERDICT] if not judged.empty else pd.Series(dtype=object)
    return pd.DataFrame({
        "confidence": judged[C.CONFIDENCE].astype(float),
        "correct": (verdicts == judged[C.EXPECTED]).astype(float),
    })


def reliability(table: pd.DataFrame, bins: int = 10) -> pd.DataFrame:
    """Model verdicts binned by confidence: mean confidence, accuracy and count per bin."""
    judged = _judged(table)
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(judged["confidence"], edges[1:-1], right=True), 0, bins - 1)
    rows = []
    for b in range(bins):
        part = judged[which == b]
        rows.append({
            "bin": f"{edges[b]:.1f}-{edges[b + 1]:.1f}",
            "count": len(part),
            "confidence": part["confidence"].mean() if len(part) else float("nan"),
            "accuracy": part["correct"].mean() if len(part) else float("nan"),
        })
    return pd.DataFrame(rows)


def expected_calibration_error(table: pd.DataFrame, bins: int = 10) -> float:
    """Sum over bins of (share of verdicts in bin) x |accuracy - mean confidence|."""
    rel = reliability(table, bins)
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
    """The lowest threshold reaching `target`, with a plain statement of what it means.

    `grid` is `threshold_table(table)` when the caller already has it.
    """
    grid = threshold_table(table) if grid is None else grid
    found = _lowest_in(grid, target)
    ece = expected_calibration_error(table)
    if found is None:
        statement = f"No threshold reaches {target:.0%} accuracy of the verdicts that stand."
    else:
        row = grid[grid["threshold"] == found].iloc[0]
        statement = (
            f"The lowest threshold reaching {target:.0%} accuracy of standing verdicts is {found:.2f}: "
            f"{int(row['auto'])} of {len(_labelled(table))} verdicts stand ({int(row['model_auto'])} of them "
            f"from the model), {int(row['review'])} go to review."
        )
        if row["model_auto"] == 0:
            statement += " No model verdict stands there: only step 1's fabricated verdicts do."
    return ThresholdAdvice(target, found, ece, statement)
