"""Step 3: verdicts, flags and routing at a confidence threshold.

A pure function over the audit table: changing the threshold re-routes stored results and never
calls a model.
"""

from __future__ import annotations

import math

import pandas as pd

from . import columns as C
from .config import DEFAULT_THRESHOLD
from .vocab import RELATION_TO_VERDICT, Flag, QuoteStatus, Relation, Route, Verdict


def _fabricated(row: pd.Series) -> bool:
    return isinstance(row[C.FABRICATED_REASON], str)


def flags_of(row: pd.Series) -> list[Flag]:
    """Reasons a citation needs a human whatever the confidence."""
    flags = []
    if row[C.QUOTE_STATUS] == QuoteStatus.NEAR:
        flags.append(Flag.NEAR_QUOTE)
    if not _fabricated(row) and row[C.SECTION_MATCH] is False:
        flags.append(Flag.SECTION_MISMATCH)
    if isinstance(row[C.ERROR], str) and row[C.ERROR]:
        flags.append(Flag.JUDGE_ERROR)
    return flags


def _confident(confidence: object, threshold: float) -> bool:
    return isinstance(confidence, (int, float)) and math.isfinite(confidence) and confidence >= threshold


def route(table: pd.DataFrame, threshold: float = DEFAULT_THRESHOLD) -> pd.DataFrame:
    """Add `verdict`, `flags`, `route` (`auto` or `review`) and `threshold` to a located table.

    A fabricated citation (nothing found, decided in step 1) stands as `auto`. Otherwise the
    verdict follows the relation, and the route is `auto` when confidence >= threshold and no
    flag is raised; a row not judged (locate-only, or an error) has no verdict and goes to review.
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be between 0 and 1, not {threshold}")
    out = table.copy()
    verdicts: list[Verdict | None] = []
    routes: list[Route] = []
    flags: list[list[Flag]] = []
    for _, row in out.iterrows():
        row_flags = flags_of(row)
        verdict: Verdict | None
        if _fabricated(row):
            verdict, where = Verdict.FABRICATED, Route.AUTO
        else:
            relation = row[C.RELATION]
            verdict = RELATION_TO_VERDICT[Relation(relation)] if isinstance(relation, str) else None
            confident = _confident(row[C.CONFIDENCE], threshold)
            where = Route.AUTO if verdict and confident and not row_flags else Route.REVIEW
        verdicts.append(verdict)
        routes.append(where)
        flags.append(row_flags)
    out[C.VERDICT] = pd.Series(verdicts, index=out.index, dtype=object)
    out[C.ROUTE] = pd.Series(routes, index=out.index, dtype=object)
    out[C.FLAGS] = pd.Series(flags, index=out.index, dtype=object)
    out[C.THRESHOLD] = threshold
    return out
