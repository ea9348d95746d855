"""The reviews a profile is fitted on (`calibrate.profile`): each current review of settled audit
tables with how it was selected and the inverse-probability weight that selection gives it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from citeaudit import table as C
from citeaudit.calibrate.maps import largest_no_share
from citeaudit.calibrate.scoring import judged_rows
from citeaudit.decide.calibration import Calibration
from citeaudit.decide.routing import is_sampled
from citeaudit.decide.state import drawn, review_state, routed_state
from citeaudit.errors import InputError
from citeaudit.table import ReviewState, Selection, State


@dataclass(frozen=True)
class ReviewSample:
    """The usable current reviews of audited tables, one row each (`judged_rows` columns, the human's
    verdict as `gold`), with `selection`, `weight` (see the module doc; 0 for an override in every
    share), `fit_weight` (the map's: overrides 1), `blocked` (a flag that sends it to review
    whatever its score), `document`; and what was counted around them."""

    rows: pd.DataFrame
    strata: dict[str, int]
    stale: tuple[str, ...] = ()
    left_out: dict[str, int] = field(default_factory=dict)
    no_share: float | None = None  # the largest no-to-everything share among the audited documents

    def count(self, selection: Selection) -> int:
        return int((self.rows["selection"] == selection).sum())

    @property
    def usable(self) -> int:
        """Reviews that sample something (waiting citations and spot checks; overrides weigh 0)."""
        return int((self.rows["weight"] > 0).sum())

    @property
    def unreviewed(self) -> int:
        """Waiting citations of the audited tables that no current review settles yet."""
        return self.strata["waiting"] - self.count(Selection.WAITING)


def _blocked(row: pd.Series) -> bool:
    """A blocking flag other than `uncovered` (the coverage check is the calibration's own)."""
    flags = row.get(C.FLAGS)
    return isinstance(flags, list) and any(f in C.BLOCKING_FLAGS and f != C.Flag.UNCOVERED for f in flags)


def review_sample(tables: Mapping[str, pd.DataFrame], base: Calibration) -> ReviewSample:
    """The reviews a profile is fitted on, from settled tables (routed by `base`, reviews applied),
    keyed by document name; see the module doc for the weights."""
    parts, stale = [], []
    left_out = {"fabricated or not judged": 0, "no answers the map reads": 0}
    strata = {"standing": 0, "waiting": 0, "spot checks drawn": 0}
    waiting_by_table: list[tuple[pd.Index, int]] = []
    answers_by_doc: list[tuple[str, pd.Series]] = []
    for name, table in tables.items():
        if C.REVIEW_STATE not in table.columns or C.STATE not in table.columns:
            raise InputError(f"{name}: the table has no reviews applied; audit it with the review store")
        keep, labels, selections, blocked = [], [], [], []
        waiting = 0
        for i, row in table.iterrows():
            state = review_state(row)
            if state == ReviewState.STALE:
                stale.append(str(row[C.ID]))
            routed = routed_state(row)
            judged = routed in (State.STANDS, State.WAITING) and not is_sampled(row.get(C.METHOD)) \
                and base.maps(row.get(C.ANSWERS), len(row[C.EVIDENCE]) if isinstance(row[C.EVIDENCE], str) else None)
            if judged:
                strata["standing" if routed == State.STANDS else "waiting"] += 1
                waiting += routed == State.WAITING
                strata["spot checks drawn"] += drawn(row)
            if state != ReviewState.CURRENT:
                continue
            if not judged:
                left_out["fabricated or not judged" if routed not in (State.STANDS, State.WAITING)
                         else "no answers the map reads"] += 1
                continue
            keep.append(i)
            labels.append(row[C.REVIEW_VERDICT])
            selections.append(Selection.SPOT_CHECK if drawn(row) else
                              Selection.WAITING if routed == State.WAITING else Selection.OVERRIDE)
            blocked.append(_blocked(row))
        if C.ANSWERS in table.columns:
            answers_by_doc.append((name, table[C.ANSWERS]))
        if not keep:
            continue
        labelled = table.loc[keep].copy()
        labelled[C.EXPECTED] = labels
        rows = judged_rows(labelled)
        rows["selection"] = [str(s) for s in selections]
        rows["blocked"] = blocked
        rows["document"] = name
        rows.index = pd.Index([f"{name}\x00{i}" for i in rows.index])
        parts.append(rows)
        waiting_by_table.append((rows.index[rows["selection"] == Selection.WAITING], waiting))
    rows = pd.concat(parts) if parts else pd.DataFrame(columns=["gold", "gold_pass", "selection", "blocked"])
    weight = pd.Series(0.0, index=rows.index)
    for index, waiting in waiting_by_table:
        if len(index):
            weight[index] = waiting / len(index)
    spot = rows.index[rows["selection"] == Selection.SPOT_CHECK] if len(rows) else rows.index
    if len(spot):
        weight[spot] = strata["standing"] / len(spot)
    rows["weight"] = weight
    rows["fit_weight"] = np.where(rows["selection"] == Selection.OVERRIDE, 1.0, weight) if len(rows) else []
    no_share = None
    if answers_by_doc:
        every = pd.concat([a for _, a in answers_by_doc], ignore_index=True)
        names = pd.Series([n for n, a in answers_by_doc for _ in range(len(a))])
        no_share = largest_no_share(every, names)
    return ReviewSample(rows, strata, tuple(stale), left_out, no_share)
