"""Settings read from the environment, in one place.

| variable             | meaning                                                    | default            |
|----------------------|------------------------------------------------------------|--------------------|
| CITEAUDIT_DATA_DIR   | folder holding source texts (RFCs) not shipped in `data/`  | see `source_dirs`  |
| CITEAUDIT_CACHE_DIR  | folder with the shipped recordings (read-only inputs)      | `<project>/cache`  |
| CITEAUDIT_USER_CACHE | folder your own recordings, calibrations and store go to   | `<cache dir>/local`|
| CITEAUDIT_CACHE_MODE | `replay`, `record` or `refresh`                            | `replay`           |
| CITEAUDIT_THRESHOLD  | routing threshold, 0 to 1 (`AuditOptions`)                 | the calibration's  |
| CITEAUDIT_SPOT_CHECK | share of standing verdicts drawn for review, 0 to 1        | `0.1`              |
| CITEAUDIT_EVIDENCE   | what the judge reads: `section` (whole) or `focused` (a long section's passage) | `section` |
| CITEAUDIT_PROFILE    | profile (calibration fitted on your reviews) to route with | none: the model's  |
| CITEAUDIT_REVIEW_DIR | folder of the review stores notebooks write                | `<project>/reviews`|
| CITEAUDIT_MODEL      | model name sent to the judge endpoint                      | the recorded Qwen  |
| CITEAUDIT_STRATEGY   | judge strategy: `choice`, `examples`, `yesno`, `panel`, `panel+examples` | `DEFAULT_STRATEGY` |
| OPENAI_BASE_URL      | OpenAI-compatible endpoint of the judge                    | the openai default |
| OPENAI_API_KEY       | its key (a local server takes any)                         | unset              |
| CITEAUDIT_GRAMMAR    | `1`/`0`: send llama.cpp's grammar forcing a one-letter answer | on for local models |
| CITEAUDIT_TIMEOUT    | seconds one judge request may take before it is retried    | `120`              |
| CITEAUDIT_RETRIES    | retries of a judge request after a transient fault         | `2`                |
| CITEAUDIT_CONCURRENCY| judge requests in flight at once                           | `4`; 1 for local models |
| CITEAUDIT_CONTRAST_CHECKS | contrast checks, comma-separated, or `none` / `all`   | `DEFAULT_CONTRAST_CHECKS` |
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from citeaudit.errors import InputError
from citeaudit.table import CacheMode, ContrastCheck, EvidenceMode, Strategy

CACHE_MODES = tuple(CacheMode)
DEFAULT_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
DEFAULT_THRESHOLD = 0.8
# share of standing verdicts drawn at random for review (`decide.spotcheck`): about 50 reviewed spot
# checks tell a standing precision of 86% from a promise of 95%, and at 10% they come with 500
# standing verdicts, for at most one extra review per ten that stand (README "Spot checks and agreement")
DEFAULT_SPOT_CHECK = 0.1
DEFAULT_STRATEGY = Strategy.PANEL  # measured best on the labelled sets (README "Choosing the threshold")
DEFAULT_TIMEOUT = 120.0  # seconds per judge request: recorded local Qwen calls took up to 55 s on 2 cores
DEFAULT_RETRIES = 2
# the contrast checks on by default (`decide.contrast`), as measured on the contrast set (README "Contrast
# checks", tools/contrast_set.py --measure): together they flag 4.5% of the supported originals (at most
# 5% is the target); `entities` alone flags 4.2% of them (8.7% with the other three), so it is opt-in
DEFAULT_CONTRAST_CHECKS = (ContrastCheck.NORMATIVE, ContrastCheck.NUMBERS, ContrastCheck.POLARITY,
                           ContrastCheck.IDENTIFIERS)
# judge requests in flight at once: remote endpoints serve many; llama.cpp's local server serves
# one at a time (more would only queue there and eat into each request's timeout)
DEFAULT_CONCURRENCY = 4
MAX_CONCURRENCY = 64
# models served by our local llama.cpp server, which takes a grammar (see localmodel.py)
LOCAL_MODEL_NAMES = ("smollm2-135m-instruct-q4_1", DEFAULT_MODEL)


def project_dir() -> Path:
    """The repository root when running from a checkout, else the current directory."""
    here = Path(__file__).resolve().parents[3]
    return here if (here / "pyproject.toml").is_file() else Path.cwd()


def data_dir() -> Path | None:
    value = os.environ.get("CITEAUDIT_DATA_DIR")
    return Path(value) if value else None


SHARED_DATA = Path("..") / "shared" / "data" / "rfc"  # where the RFC texts sit beside a checkout


def source_dirs() -> list[Path]:
    """The folders a source text named without a usable path is looked for in, in order.

    `CITEAUDIT_DATA_DIR` (when set), the working directory, the project's `data/`, and
    `../shared/data/rfc` and `../shared/data/ja` (the Japanese Acts) beside the checkout; the same
    list wherever citeaudit is started (a shell in any folder, a notebook kernel in `notebooks/`,
    the test suite).
    """
    root = project_dir()
    shared = (root / SHARED_DATA).resolve()
    dirs = [d for d in (data_dir(), Path.cwd(), root / "data", shared, shared.parent / "ja") if d is not None]
    return list(dict.fromkeys(dirs))


def find_input(path: str | Path) -> Path:
    """An input file as given (relative to the working directory), else relative to the project root.

    Notebooks name their inputs relative to the project root (`data/rfc7519_citations.json`), so
    they run from `notebooks/`, from the root or from papermill's working directory alike. A path
    found nowhere is returned as given, so the loader's error names it.
    """
    given = Path(path)
    if given.exists() or given.is_absolute():
        return given
    beside = project_dir() / given
    return beside if beside.exists() else given


def public_dir() -> Path:
    """Where the public TRAIN sets are read from: `CITEAUDIT_PUBLIC_DIR`, else `../shared/data/public`
    beside the project."""
    value = os.environ.get("CITEAUDIT_PUBLIC_DIR")
    return Path(value) if value else project_dir().parent / "shared" / "data" / "public"


def cache_dir() -> Path:
    value = os.environ.get("CITEAUDIT_CACHE_DIR")
    return Path(value) if value else project_dir() / "cache"


def user_cache_dir(shipped: Path | None = None) -> Path:
    """`CITEAUDIT_USER_CACHE`, else `local/` inside the shipped cache folder (`shipped`, default
    `cache_dir()`): where new recordings, calibrations of your own and the working store go. The
    checkout's `cache/local/` is ignored by git, so recording never changes the checkout."""
    value = os.environ.get("CITEAUDIT_USER_CACHE")
    return Path(value) if value else (shipped or cache_dir()) / "local"


def review_dir() -> Path:
    value = os.environ.get("CITEAUDIT_REVIEW_DIR")
    return Path(value) if value else project_dir() / "reviews"


def parse_cache_mode(value: str) -> CacheMode:
    """A cache mode name as a `CacheMode`; anything else is an `InputError` listing the choices."""
    try:
        return CacheMode(value)
    except ValueError:
        raise InputError(f"unknown cache mode {value!r}: use one of {', '.join(CACHE_MODES)} "
                         "(--cache-mode or CITEAUDIT_CACHE_MODE)") from None


def cache_mode(default: CacheMode = CacheMode.REPLAY) -> CacheMode:
    """`CITEAUDIT_CACHE_MODE`, else `default` (`replay`; `record` for the commands that record)."""
    return parse_cache_mode(os.environ.get("CITEAUDIT_CACHE_MODE") or default)


def threshold() -> float | None:
    """`CITEAUDIT_THRESHOLD` (0 to 1), else None: the model's calibrated threshold."""
    value = (os.environ.get("CITEAUDIT_THRESHOLD") or "").strip()
    if not value:
        return None
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not 0.0 <= number <= 1.0:
        raise InputError(f"CITEAUDIT_THRESHOLD={value!r} is not a number from 0 to 1; set it like "
                         "CITEAUDIT_THRESHOLD=0.84, or unset it to use the calibration's recommended threshold.")
    return number


def spot_check() -> float:
    """`CITEAUDIT_SPOT_CHECK` (0 to 1: the share of standing verdicts drawn for review), else
    `DEFAULT_SPOT_CHECK`."""
    value = (os.environ.get("CITEAUDIT_SPOT_CHECK") or "").strip()
    if not value:
        return DEFAULT_SPOT_CHECK
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not 0.0 <= number <= 1.0:
        raise InputError(f"CITEAUDIT_SPOT_CHECK={value!r} is not a number from 0 to 1; set it like "
                         f"CITEAUDIT_SPOT_CHECK={DEFAULT_SPOT_CHECK} (0 draws no spot check), or unset it.")
    return number


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


def evidence_mode() -> EvidenceMode:
    """`CITEAUDIT_EVIDENCE` (`section` or `focused`), else `section`."""
    value = (os.environ.get("CITEAUDIT_EVIDENCE") or "").strip()
    return parse_evidence_mode(value, "CITEAUDIT_EVIDENCE") if value else EvidenceMode.SECTION


def profile() -> str | None:
    """`CITEAUDIT_PROFILE`: the name of a profile of the user cache that routes instead of the
    model's calibration, else None."""
    value = (os.environ.get("CITEAUDIT_PROFILE") or "").strip()
    return value or None


def model() -> str:
    return os.environ.get("CITEAUDIT_MODEL", DEFAULT_MODEL)


def parse_strategy(value: str) -> Strategy:
    """A strategy name as a `Strategy`; anything else is an `InputError` listing the choices."""
    try:
        return Strategy(value)
    except ValueError:
        choices = ", ".join(s.value for s in Strategy)
        raise InputError(f"unknown judge strategy {value!r}: use one of {choices} "
                         f"(--strategy or CITEAUDIT_STRATEGY)") from None


def strategy() -> Strategy:
    """`CITEAUDIT_STRATEGY`, else `DEFAULT_STRATEGY`."""
    return parse_strategy(os.environ.get("CITEAUDIT_STRATEGY") or DEFAULT_STRATEGY)


def base_url() -> str | None:
    return os.environ.get("OPENAI_BASE_URL") or None


def api_key() -> str | None:
    return os.environ.get("OPENAI_API_KEY") or None


def use_grammar(model_name: str) -> bool:
    """`CITEAUDIT_GRAMMAR` if set, else True for the models our llama.cpp server runs."""
    value = os.environ.get("CITEAUDIT_GRAMMAR")
    if value is not None and value != "":
        return value.lower() in ("1", "true", "yes")
    return model_name in LOCAL_MODEL_NAMES


def timeout() -> float:
    """`CITEAUDIT_TIMEOUT`: seconds one judge request may take (a positive number)."""
    value = os.environ.get("CITEAUDIT_TIMEOUT") or ""
    if not value:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not (math.isfinite(seconds) and seconds > 0):
        raise InputError(f"CITEAUDIT_TIMEOUT={value!r} is not a number of seconds above 0; "
                         f"set it like CITEAUDIT_TIMEOUT={DEFAULT_TIMEOUT:.0f}, or unset it.")
    return seconds


def retries() -> int:
    """`CITEAUDIT_RETRIES`: how often a judge request is retried after a transient fault (0 or more)."""
    value = os.environ.get("CITEAUDIT_RETRIES") or ""
    if not value:
        return DEFAULT_RETRIES
    if not value.strip().isdigit():
        raise InputError(f"CITEAUDIT_RETRIES={value!r} is not a whole number of retries (0 or more); "
                         f"set it like CITEAUDIT_RETRIES={DEFAULT_RETRIES}, or unset it.")
    return int(value)


def default_concurrency(model_name: str) -> int:
    """Requests in flight by default: 1 for the models our llama.cpp server runs, else 4.

    The server answers one request at a time and keeps the last prompt's evaluated tokens: a
    citation's yes/no questions sent one after the other share all but their last line, while
    interleaved citations pay for every prompt in full (tools/bench_local_judge.py: 35% less time
    per judged citation at 1 than at 4, the same answers).
    """
    return 1 if model_name in LOCAL_MODEL_NAMES else DEFAULT_CONCURRENCY


def concurrency(default: int = DEFAULT_CONCURRENCY) -> int:
    """`CITEAUDIT_CONCURRENCY`: judge requests in flight at once (1 to 64); `default` when unset."""
    value = os.environ.get("CITEAUDIT_CONCURRENCY") or ""
    if not value:
        return default
    if not value.strip().isdigit() or not 1 <= int(value) <= MAX_CONCURRENCY:
        raise InputError(f"CITEAUDIT_CONCURRENCY={value!r} is not a whole number from 1 to {MAX_CONCURRENCY}; "
                         f"set it like CITEAUDIT_CONCURRENCY={DEFAULT_CONCURRENCY} (1 for a local llama.cpp "
                         "server), or unset it.")
    return int(value)


def parse_contrast_checks(value: str | tuple | list, where: str = "--contrast-checks") -> tuple[ContrastCheck, ...]:
    """Contrast check names, comma-separated (`numbers,normative`), `none` or `all`, as a tuple in the
    order of `ContrastCheck`; an unknown name is an `InputError` listing the choices.

    >>> parse_contrast_checks("numbers, normative"), parse_contrast_checks("none")
    ((<ContrastCheck.NORMATIVE: 'normative'>, <ContrastCheck.NUMBERS: 'numbers'>), ())
    """
    names = [n.strip().lower() for n in value.split(",")] if isinstance(value, str) else [str(n) for n in value]
    names = [n for n in names if n]
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


def contrast_checks() -> tuple[ContrastCheck, ...]:
    """`CITEAUDIT_CONTRAST_CHECKS` (names, `none` or `all`), else `DEFAULT_CONTRAST_CHECKS`."""
    value = (os.environ.get("CITEAUDIT_CONTRAST_CHECKS") or "").strip()
    return parse_contrast_checks(value, "CITEAUDIT_CONTRAST_CHECKS") if value else DEFAULT_CONTRAST_CHECKS
