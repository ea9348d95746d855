"""Checks and parsers of single setting values: pure, no environment, nothing of the stages.

They live with the settings so that `AuditOptions` checks what it is given without importing a
stage; the stages that take the same values (`decide.decision`, `decide.calibration`,
`calibrate.profile`, `judge.judge`) check them with these too. `environment` reads a variable and
parses it here, naming the variable in the error.

    >>> check_rate(0.1), check_rate(1), check_threshold(0.84), check_profile_name("contracts-2026")
    (0.1, 1.0, 0.84, 'contracts-2026')
"""

from __future__ import annotations

import math
import re

from citeaudit.errors import InputError
from citeaudit.table import CacheMode, ContrastCheck, EvidenceMode, Strategy

CACHE_MODES = tuple(CacheMode)

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


def parse_cache_mode(value: str) -> CacheMode:
    """A cache mode name as a `CacheMode`; anything else is an `InputError` listing the choices."""
    try:
        return CacheMode(value)
    except ValueError:
        raise InputError(f"unknown cache mode {value!r}: use one of {', '.join(CACHE_MODES)} "
                         "(--cache-mode or CITEAUDIT_CACHE_MODE)") from None


def parse_evidence_mode(value: str, where: str = "--evidence") -> EvidenceMode:
    """An `EvidenceMode` from its name, or `InputError` naming where it came from and the choices.

    >>> parse_evidence_mode("focused")
    <EvidenceMode.FOCUSED: 'focused'>
    """
    try:
        return EvidenceMode(str(value).strip().lower())
    except ValueError:
        raise InputError(f"{where}: {value!r} is not an evidence mode: give one of "
                         f"{', '.join(EvidenceMode)}") from None


def parse_strategy(value: str) -> Strategy:
    """A strategy name as a `Strategy`; anything else is an `InputError` listing the choices."""
    try:
        return Strategy(value)
    except ValueError:
        choices = ", ".join(s.value for s in Strategy)
        raise InputError(f"unknown judge strategy {value!r}: use one of {choices} "
                         f"(--strategy or CITEAUDIT_STRATEGY)") from None


def parse_contrast_checks(value: str | tuple | list, where: str = "--contrast-checks") -> tuple[ContrastCheck, ...]:
    """Contrast check names, comma-separated (`numbers,normative`), `none` or `all`, as a tuple in the
    order of `ContrastCheck`; an unknown name is an `InputError` listing the choices.

    >>> parse_contrast_checks("numbers, normative"), parse_contrast_checks("none")
    ((<ContrastCheck.NORMATIVE: 'normative'>, <ContrastCheck.NUMBERS: 'numbers'>), ())
    """
    names = [n.strip().lower() for n in value.split(",")] if isinstance(value, str) else [str(n) for n in value]
    names = [n for n in names if n]
    if isinstance(value, str) and not names:  # an empty value never turns the checks off: `none` does
        raise InputError(f"{where}: {value!r} names no contrast check: give some, or all, or none to turn them off")
    if names in (["none"], []):
        return ()
    if names == ["all"]:
        return tuple(ContrastCheck)
    choices = [str(c) for c in ContrastCheck]
    unknown = [n for n in names if n not in choices]
    if unknown:
        raise InputError(f"{where}: unknown contrast check {unknown[0]!r}: give some of {', '.join(choices)} "
                         "(comma-separated), or none, or all")
    return tuple(c for c in ContrastCheck if c in names)
