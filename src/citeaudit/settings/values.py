"""Checks of single setting values: pure, no environment, nothing of the stages.

They live with the settings so that `AuditOptions` checks what it is given without importing a
stage; the stages that take the same values (`decide.decision`, `decide.calibration`,
`calibrate.profile`) check them with these too.

    >>> check_rate(0.1), check_rate(1), check_threshold(0.84), check_profile_name("contracts-2026")
    (0.1, 1.0, 0.84, 'contracts-2026')
"""

from __future__ import annotations

import math
import re

from citeaudit.errors import InputError

PROFILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def check_threshold(value: float, where: str = "threshold") -> float:
    """A threshold from 0 to 1 (NaN and infinities are refused with the fix)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0.0 <= float(value) <= 1.0:
        raise InputError(f"{where} {value!r} is not a number from 0 to 1; give one like 0.84, or leave it unset "
                         "to use the calibration's recommended threshold.")
    return float(value)


def check_rate(value: object, where: str = "spot-check rate") -> float:
    """A spot-check rate from 0 (none) to 1 (every standing verdict); anything else is an `InputError`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0.0 <= float(value) <= 1.0:
        raise InputError(f"{where} {value!r} is not a number from 0 to 1: the share of standing verdicts drawn "
                         "for review, like 0.1 (0 draws none).")
    return float(value)


def check_profile_name(name: str) -> str:
    """A profile name: letters, digits, `.`, `_`, `-` (a file name of the user cache, no path)."""
    if not isinstance(name, str) or not PROFILE_NAME.match(name) or ".." in name:
        raise InputError(f"profile name {name!r} is not usable: use letters, digits, '.', '_' or '-' (up to 64, "
                         "starting with a letter or digit), like `contracts-2026`")
    return name
