"""Judge versus human: what the current reviews say about the judge, in one set of numbers.

`agreement` reads settled, reviewed tables (`decision.apply_reviews`), one per source or
collection, and computes what the command line (`citeaudit agreement`), notebook 05, the report,
the dashboard and the review queue show:

- `confusion`: every citation with a current review, the model's verdict (rows; `no verdict` for
  a judge error or a row no model was asked about) against the human's (columns);
- `groups`: per source or collection, how many judged verdicts the humans reviewed and how many
  they agree with on pass or fail (what decides the answer, as the calibration counts right),
  with a 95% Wilson interval;
- `spot`: the precision of the standing verdicts estimated from the reviewed spot checks alone
  (`spotcheck`), the one sample of standing verdicts drawn without regard to their content, with
  its 95% Wilson interval, beside the calibration's promise (`Routing.promise`).

A stale review (the claim or the evidence changed since) counts nowhere: it is listed apart. When
the spot checks' interval lies wholly below the promise, `Agreement.warning` says so in one line
with what to do; every surface shows that line (`precision_warning`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from citeaudit import table as C
from citeaudit.decide.calibration import Routing
from citeaudit.decide.state import drawn, review_state
from citeaudit.judge.answers import Z_95
from citeaudit.table import REVIEW_VERDICTS, ReviewState, Verdict

NO_VERDICT = "no verdict"  # the confusion table's row of reviewed citations the model gave no verdict


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a proportion, 95% two-sided by default; (0, 1) when n is 0.

    Unlike the normal approximation it stays inside [0, 1] and is not empty at 0 or n successes:
    one wrong verdict out of one says the share right is at most about 79%.

    >>> [round(x, 3) for x in wilson_interval(0, 1)], [round(x, 3) for x in wilson_interval(45, 50)]
    ([0.0, 0.793], [0.786, 0.957])
    >>> wilson_interval(0, 0), wilson_interval(3, 3)[1]
    ((0.0, 1.0), 1.0)
    """
    if n <= 0:
        return 0.0, 1.0
    if not 0 <= successes <= n:
        raise ValueError(f"{successes} successes out of {n}")
    share = successes / n
    z2 = z * z
    centre = share + z2 / (2 * n)
    margin = z * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n))
    low, high = (centre - margin) / (1 + z2 / n), (centre + margin) / (1 + z2 / n)
    # at 0 or n successes the bound is exactly 0 or 1; rounding must not put it a hair inside
    return (0.0 if successes == 0 else max(0.0, low)), (1.0 if successes == n else min(1.0, high))


def passes(verdict: object) -> bool:
    """Pass or fail, as the decision reads a verdict: only `verified` passes."""
    return verdict == Verdict.VERIFIED


@dataclass(frozen=True)
class SpotChecks:
    """The precision of standing verdicts from the reviewed spot checks: `reviewed` of the `drawn`
    ones have a current review, `right` of those agree with the standing verdict on pass or fail;
    `low`-`high` is the 95% Wilson interval of right / reviewed (0-1 when none is reviewed);
    `promise` the calibration's (None: no promise); `rate` the share drawn."""

    drawn: int
    reviewed: int
    right: int
    low: float
    high: float
    promise: float | None
    rate: float

    @property
    def precision(self) -> float | None:
        return self.right / self.reviewed if self.reviewed else None

    @property
    def below_promise(self) -> bool:
        """The interval's upper end is below the promise: the promise does not hold here."""
        return self.promise is not None and self.reviewed > 0 and self.high < self.promise

    def line(self) -> str:
        """One line: the estimate, its interval and the promise beside it."""
        pending = self.drawn - self.reviewed
        waiting = f"; {pending} drawn not yet reviewed" if pending else ""
        promise = f", against the calibration's promise of {self.promise:.0%}" if self.promise is not None else \
            " (no calibration: nothing was promised)"
        if not self.reviewed:
            return (f"spot checks: {self.drawn} standing verdict(s) drawn at {self.rate:.0%}, none reviewed yet: no "
                    f"estimate of the standing precision{promise}")
        return (f"spot checks: {self.right} of {self.reviewed} standing verdicts right ({self.precision:.0%}, 95% "
                f"interval {self.low:.0%}-{self.high:.0%}){promise}{waiting}")


@dataclass(frozen=True)
class Agreement:
    """The judge against the humans over the current reviews; see the module doc."""

    confusion: pd.DataFrame
    groups: pd.DataFrame
    spot: SpotChecks
    stale: tuple[str, ...] = ()
    threshold: float | None = None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def warning(self) -> str | None:
        """One line when the spot checks' interval lies below the promise, with what to do; else None."""
        return _warning(self.spot, self.threshold)

    def confusion_view(self) -> pd.DataFrame:
        """The confusion table as a plain frame: the model's verdict in the first column."""
        return self.confusion.rename_axis("model \\ human").reset_index()

    def groups_view(self) -> pd.DataFrame:
        """Agreement per source in words: reviewed, agreeing, the share and its 95% interval."""
        groups = self.groups
        return pd.DataFrame({
            "source": groups["source"],
            "reviewed": groups["reviewed"],
            "agree": groups["agree"],
            "share": [f"{v:.0%}" if isinstance(v, float) else "-" for v in groups["share"]],
            "95% interval": [f"{lo:.0%}-{hi:.0%}" if n else "-"
                             for lo, hi, n in zip(groups["low"], groups["high"], groups["reviewed"])],
        })

    def to_dict(self) -> dict[str, object]:
        """The numbers as plain JSON (`citeaudit agreement --json`)."""
        spot = self.spot
        return {
            "confusion": {str(k): {str(c): int(v) for c, v in row.items()}
                          for k, row in self.confusion.to_dict(orient="index").items()},
            "groups": [{k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
                       for row in self.groups.to_dict(orient="records")],
            "spot_checks": {"rate": spot.rate, "drawn": spot.drawn, "reviewed": spot.reviewed, "right": spot.right,
                            "precision": spot.precision, "low": spot.low, "high": spot.high,
                            "promise": spot.promise, "below_promise": spot.below_promise},
            "stale": list(self.stale),
            "warning": self.warning,
            **self.counts,
        }


def _warning(spot: SpotChecks, threshold: float | None) -> str | None:
    if not spot.below_promise:
        return None
    above = f" above {threshold:.2f}" if threshold is not None else ""
    return (f"standing verdicts are {spot.precision:.0%} right on your spot checks (at most {spot.high:.0%} at 95% "
            f"confidence, {spot.right} of {spot.reviewed}), below the calibration's promise of {spot.promise:.0%}: "
            f"raise the threshold (--threshold{above}) or fit a profile on your reviews")


def agreement(tables: Mapping[str, pd.DataFrame], routing: Routing | None = None) -> Agreement:
    """Judge versus human over settled, reviewed tables, one per source or collection (its name
    the key); a vendor response's rows count under the source each cites (`source_file`).
    `routing` gives the calibration's promise, the spot-check rate and the threshold."""
    rows = []
    for name, table in tables.items():
        for _, row in table.iterrows():
            source = row.get(C.SOURCE_FILE)
            rows.append((source if isinstance(source, str) and source else str(name), row))
    current = [(g, r) for g, r in rows if review_state(r) == ReviewState.CURRENT]
    stale = tuple(str(r[C.ID]) for _, r in rows if review_state(r) == ReviewState.STALE)
    # the model's verdict: its own (standing or waiting) or step 1's; none for a judge error or step 1 only
    said = [str(r[C.VERDICT]) if isinstance(r[C.VERDICT], str) and not _errored(r) else NO_VERDICT for _, r in current]
    human = [str(r[C.REVIEW_VERDICT]) for _, r in current]
    judged = [v in REVIEW_VERDICTS for v in said]  # the judge's verdicts (step 1's fabricated ones apart)
    confusion = _confusion(said, human)
    groups = _groups([g for g, _ in current], said, human, judged)
    spot = _spot([r for _, r in rows], routing)
    counts = {"citations": len(rows), "reviewed": len(current)}
    return Agreement(confusion, groups, spot, stale, routing.threshold if routing is not None else None, counts)


def _errored(row: pd.Series) -> bool:
    return isinstance(row.get(C.ERROR), str) and bool(row[C.ERROR])


def _confusion(said: list[str], human: list[str]) -> pd.DataFrame:
    columns = [str(v) for v in REVIEW_VERDICTS]
    index = [v for v in [*columns, str(Verdict.FABRICATED), NO_VERDICT] if v in said or v in columns]
    frame = pd.DataFrame(0, index=pd.Index(index, name="model says"), columns=pd.Index(columns, name="human says"))
    for s, h in zip(said, human, strict=True):
        frame.loc[s, h] += 1
    return frame


def _groups(names: list[str], said: list[str], human: list[str], judged: list[bool]) -> pd.DataFrame:
    """Per group: judged verdicts reviewed, agreeing on pass or fail, the share and its interval."""
    out = []
    for name in dict.fromkeys(names):
        pairs = [(s, h) for g, s, h, j in zip(names, said, human, judged, strict=True) if g == name and j]
        agree = sum(passes(s) == passes(h) for s, h in pairs)
        low, high = wilson_interval(agree, len(pairs))
        out.append({"source": name, "reviewed": len(pairs), "agree": agree,
                    "share": agree / len(pairs) if pairs else None, "low": low, "high": high})
    return pd.DataFrame(out, columns=["source", "reviewed", "agree", "share", "low", "high"])


def _spot(rows: list[pd.Series], routing: Routing | None) -> SpotChecks:
    checks = [r for r in rows if drawn(r)]
    reviewed = [r for r in checks if review_state(r) == ReviewState.CURRENT]
    right = sum(passes(r[C.VERDICT]) == passes(r[C.REVIEW_VERDICT]) for r in reviewed)
    low, high = wilson_interval(right, len(reviewed))
    promise = routing.promise if routing is not None else None
    rate = routing.spot_check if routing is not None else 0.0
    return SpotChecks(len(checks), len(reviewed), right, low, high, promise, rate)


def precision_warning(tables: Mapping[str, pd.DataFrame], routing: Routing | None) -> str | None:
    """`agreement(...).warning` without the rest: the one line every surface shows when the spot
    checks say the calibration's promise does not hold here."""
    rows = [row for table in tables.values() for _, row in table.iterrows()]
    return _warning(_spot(rows, routing), routing.threshold if routing is not None else None)
