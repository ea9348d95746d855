"""Spot checks: a deterministic, uniform random share of the standing verdicts sent to review.

A verdict that stands is never looked at again, so nothing would check that the calibration's
promise (its `target`: the share of standing verdicts that are right) holds on the user's own
documents. A spot check is a standing verdict drawn for review at the rate in force
(`AuditOptions.spot_check`, `--spot-check`, `CITEAUDIT_SPOT_CHECK`). It holds nothing: its state
stays `stands` and the answer is decided as without it, until a current review settles it as any
review does (`decide.settle`). The reviewed spot checks are the one unbiased sample of standing
verdicts (`decide.agreement`).

The draw is the citation's review fingerprint (`reviews.row_fingerprint`: its id, claim, locator and
evidence) hashed again with a fixed label and read as a number in [0, 1) (`spot_draw`): the same
citation with the same evidence is always drawn or not, whatever else the audit holds and
whoever runs it; a citation is drawn when that number is below the rate, so a higher rate draws
every citation a lower one draws. The label keeps the draw independent of any other use of the
fingerprint's bits.
"""

from __future__ import annotations

import hashlib

import pandas as pd

from citeaudit import table as C
from citeaudit.decide.state import drawn
from citeaudit.table import State

_LABEL = b"citeaudit spot check\x00"
_SCALE = float(1 << 64)


def spot_draw(fingerprint: str) -> float:
    """The citation's uniform number in [0, 1): the first 64 bits of SHA-256(label + fingerprint).

    >>> spot_draw("0" * 64) == spot_draw("0" * 64), 0.0 <= spot_draw("f" * 64) < 1.0
    (True, True)
    """
    digest = hashlib.sha256(_LABEL + fingerprint.encode("ascii")).digest()
    return int.from_bytes(digest[:8], "big") / _SCALE


def is_spot_check(fingerprint: str | None, rate: float) -> bool:
    """Whether a standing verdict with this review fingerprint is drawn at `rate`: its `spot_draw`
    is below the rate. Rate 0 draws none, rate 1 every one; no fingerprint (no evidence to
    review) is never drawn.

    >>> is_spot_check("0" * 64, 0.0), is_spot_check("0" * 64, 1.0), is_spot_check(None, 1.0)
    (False, True, False)
    """
    return fingerprint is not None and spot_draw(fingerprint) < rate


def open_spot_checks(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of a settled table drawn as spot checks whose verdict still stands (no current
    review yet): what the review queue lists apart and the surfaces mark."""
    if C.SPOT_CHECK not in table.columns:
        return table.iloc[0:0]
    mask = [drawn(row) and row[C.STATE] == State.STANDS for row in C.row_dicts(table)]
    return table[mask]
