"""Each row's state after step 4, and how a reviewed row came before a human.

`routed_state` is where the routing (and step 1) left a row, `row_state` the state every surface
reads (a current review first), `selection_of` what a review of the row records as its selection
(`table.Selection`): the spot checks, the waiting rows, and the standing ones a human chose to
look at. `decision.settle` writes the states into the table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from citeaudit import table as C
from citeaudit.table import WAITING_STATES, ReviewState, Route, Row, Selection, State, Verdict


def review_state(row: Row) -> ReviewState:
    """The row's `review_state` (none when the row has not had reviews applied)."""
    state = row.get(C.REVIEW_STATE)
    return ReviewState(state) if isinstance(state, str) else ReviewState.NONE


def routed_state(row: Row) -> State:
    """The row's state apart from any review: a citation that cites a source not given, a fabricated
    one, a judge error, a row no model was asked about, a model verdict that stands, and
    otherwise one that waits for a human."""
    if isinstance(row.get(C.UNCHECKED_REASON), str):
        return State.UNCHECKED
    if row[C.VERDICT] == Verdict.FABRICATED:
        return State.FABRICATED
    if isinstance(row.get(C.ERROR), str) and row[C.ERROR]:
        return State.JUDGE_ERROR
    if row[C.VERDICT] is None:
        return State.NOT_JUDGED
    return State.STANDS if row[C.ROUTE] == Route.AUTO else State.WAITING


def row_state(row: Row) -> State:
    """The one state a routed (and reviewed) row is in; see `table.State`.

    A current review decides first (it may override a verdict that stood, fabricated ones
    included); otherwise the `routed_state`.
    """
    if review_state(row) == ReviewState.CURRENT:
        return State.REVIEWED
    return routed_state(row)


def drawn(row: C.Row) -> bool:
    """Whether the row was drawn as a spot check (its `spot_check` is true; absent: no)."""
    value = row.get(C.SPOT_CHECK)
    return bool(value) if isinstance(value, (bool, np.bool_)) else False


def selection_of(row: pd.Series) -> Selection:
    """How a review of this settled row came before a human: drawn as a spot check (the row's
    `spot_check`), because it waited (a waiting `routed_state`), or by choice (an override of a
    verdict that stood)."""
    if drawn(row):
        return Selection.SPOT_CHECK
    if routed_state(row) in WAITING_STATES:
        return Selection.WAITING
    return Selection.OVERRIDE
