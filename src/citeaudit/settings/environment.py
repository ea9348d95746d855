"""Settings read from the environment, in one place.

| variable             | meaning                                                    | default            |
|----------------------|------------------------------------------------------------|--------------------|
| CITEAUDIT_HOME       | your folder: your cache, reviews, downloaded sources, models | see `home_dir`   |
| CITEAUDIT_DATA_DIR   | folder holding source texts (RFCs) not shipped in `data/`  | see `source_dirs`  |
| CITEAUDIT_CACHE_DIR  | folder with the shipped recordings (read-only inputs)      | see `cache_dir`    |
| CITEAUDIT_USER_CACHE | folder your own recordings, calibrations and store go to   | see `user_cache_dir`|
| CITEAUDIT_CACHE_MODE | `replay`, `record` or `refresh`                            | `replay`           |
| CITEAUDIT_THRESHOLD  | routing threshold, 0 to 1 (`AuditOptions`)                 | the calibration's  |
| CITEAUDIT_SPOT_CHECK | share of standing verdicts drawn for review, 0 to 1        | `0.1`              |
| CITEAUDIT_EVIDENCE   | what the judge reads: `section` (whole) or `focused` (a long section's passage) | `section` |
| CITEAUDIT_PROFILE    | profile (calibration fitted on your reviews) to route with | none: the model's  |
| CITEAUDIT_REVIEW_DIR | folder of the review stores notebooks write                | see `review_dir`   |
| CITEAUDIT_MODEL      | model name sent to the judge endpoint                      | the recorded Qwen  |
| CITEAUDIT_STRATEGY   | judge strategy: `choice`, `examples`, `yesno`, `panel`, `panel+examples` | `DEFAULT_STRATEGY` |
| OPENAI_BASE_URL      | OpenAI-compatible endpoint of the judge                    | the openai default |
| OPENAI_API_KEY       | its key (a local server takes any)                         | unset              |
| CITEAUDIT_GRAMMAR    | `1`/`0`: send llama.cpp's grammar forcing a one-letter answer | on for local models |
| CITEAUDIT_TIMEOUT    | seconds one judge request may take before it is retried    | `120`              |
| CITEAUDIT_RETRIES    | retries of a judge request after a transient fault         | `2`                |
| CITEAUDIT_CONCURRENCY| judge requests in flight at once                           | `4`; 1 for local models |
| CITEAUDIT_CONTRAST_CHECKS | contrast checks, comma-separated, or `none` / `all`   | `DEFAULT_CONTRAST_CHECKS` |

Two ways to run, one set of folders (`folders()`, `citeaudit where`). From a checkout (`make`, an
editable install) the shipped recordings, calibrations and data are the checkout's `cache/` and
`data/`, and what you make goes to `cache/local/` and `reviews/` (both ignored by git), as the
Makefile expects. From an installed wheel, the same files are read from the package itself
(`citeaudit/_shipped/`, through `importlib.resources`) and never written; what you make goes to your
per-user folder (`home_dir()`: `CITEAUDIT_HOME`, else the platform's user data folder). Either way
nothing is written into the working folder but the outputs a command is told to write.
"""

from __future__ import annotations

import importlib.resources
import math
import os
from pathlib import Path

import platformdirs

from citeaudit.errors import InputError
from citeaudit.registry import CONTRAST_CHECKS, STRATEGIES
from citeaudit.table import CacheMode, ContrastCheck, EvidenceMode, Strategy

CACHE_MODES = tuple(CacheMode)
DEFAULT_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
DEFAULT_THRESHOLD = 0.8
# share of standing verdicts drawn at random for review (`decide.spotcheck`): about 50 reviewed spot
# checks tell a standing precision of 86% from a promise of 95%, and at 10% they come with 500
# standing verdicts, for at most one extra review per ten that stand (docs/how-to/review.md)
DEFAULT_SPOT_CHECK = 0.1
DEFAULT_STRATEGY: Strategy = "panel"  # measured best on the labelled sets (docs/measurements/judge-quality.md)
DEFAULT_TIMEOUT = 120.0  # seconds per judge request: recorded local Qwen calls took up to 55 s on 2 cores
DEFAULT_RETRIES = 2
# the contrast checks on by default (`decide.contrast`), as measured (docs/measurements/contrast.md):
# together they flag 4.5% of the supported originals (at most 5% is the target); `entities` alone
# flags 4.2% of them (8.7% with the other three), so it is opt-in
DEFAULT_CONTRAST_CHECKS = (ContrastCheck.NORMATIVE, ContrastCheck.NUMBERS, ContrastCheck.POLARITY,
                           ContrastCheck.IDENTIFIERS)
# judge requests in flight at once: remote endpoints serve many; llama.cpp's local server serves
# one at a time (more would only queue there and eat into each request's timeout)
DEFAULT_CONCURRENCY = 4
MAX_CONCURRENCY = 64
# models served by our local llama.cpp server, which takes a grammar (localmodel.py), by their `--model` keys
LOCAL_MODELS = {"smollm2": "smollm2-135m-instruct-q4_1", "qwen": DEFAULT_MODEL}


def checkout_dir() -> Path | None:
    """The repository root when citeaudit runs from its checkout (`src/citeaudit` beside a
    `pyproject.toml`: an editable install, or `src/` on the path), else None (an installed package)."""
    here = Path(__file__).resolve().parents[3]
    return here if (here / "pyproject.toml").is_file() and (here / "src" / "citeaudit").is_dir() else None


def project_dir() -> Path:
    """The repository root when running from a checkout, else the current directory."""
    return checkout_dir() or Path.cwd()


def shipped_dir() -> Path:
    """The folder that holds what the product ships, as `cache/` (recordings, `calibration/`) and
    `data/` (the worked example, labelled sets, prompts' data): the checkout's root, else the
    installed package's `_shipped/` (the wheel carries both folders there, pyproject.toml), found
    through `importlib.resources`. Read-only: nothing is ever written under it but by `--shipped`
    maintenance commands in a checkout."""
    root = checkout_dir()
    if root is not None:
        return root
    shipped = importlib.resources.files("citeaudit") / "_shipped"
    if not isinstance(shipped, Path):  # a zip import: the stores need real files
        raise InputError(f"citeaudit is installed where its shipped files are not on disk ({shipped}); "
                         "install it with pip into a virtual environment.")
    return shipped


def shipped_data_dir() -> Path:
    """The project's own inputs (`data/`: the worked example, labelled sets, documents it owns)."""
    return shipped_dir() / "data"


def home_dir() -> Path:
    """Your folder, where what you make goes outside a checkout: `CITEAUDIT_HOME`, else the
    platform's user data folder (`platformdirs.user_data_dir("citeaudit")`, on Linux
    `~/.local/share/citeaudit`). In a checkout without `CITEAUDIT_HOME` the checkout's own ignored
    folders are used instead (`user_cache_dir`, `review_dir`, `download_dir`)."""
    value = os.environ.get("CITEAUDIT_HOME")
    return Path(value) if value else Path(platformdirs.user_data_dir("citeaudit", appauthor=False))


def _in_checkout_home() -> Path | None:
    """The checkout root when it holds the user's state (no `CITEAUDIT_HOME` set), else None."""
    return None if os.environ.get("CITEAUDIT_HOME") else checkout_dir()


def data_dir() -> Path | None:
    value = os.environ.get("CITEAUDIT_DATA_DIR")
    return Path(value) if value else None


SHARED_DATA = Path("..") / "shared" / "data" / "rfc"  # where the RFC texts sit beside a checkout


def download_dir() -> Path:
    """Where a pinned source text that was found nowhere is downloaded to (and looked for after):
    the checkout's `data/` (`data/rfc*.txt` is ignored by git and left out of the wheel), else
    `sources/` of `home_dir()`."""
    root = _in_checkout_home()
    return root / "data" if root is not None else home_dir() / "sources"


def shared_dirs() -> list[Path]:
    """`../shared/data/rfc` and `../shared/data/ja` (the Japanese Acts) beside a checkout; none outside one."""
    root = checkout_dir()
    if root is None:
        return []
    shared = (root / SHARED_DATA).resolve()
    return [shared, shared.parent / "ja"]


def source_dirs() -> list[Path]:
    """The folders a source text named without a usable path is looked for in, in order.

    `CITEAUDIT_DATA_DIR` (when set), the working directory, the shipped `data/`, the folder pinned
    sources are downloaded to, and in a checkout `../shared/data/rfc` and `../shared/data/ja` beside
    it; the same list wherever citeaudit is started (a shell in any folder, a notebook kernel in
    `notebooks/`, the test suite).
    """
    dirs = [d for d in (data_dir(), Path.cwd(), shipped_data_dir(), download_dir(), *shared_dirs()) if d is not None]
    return list(dict.fromkeys(dirs))


def find_input(path: str | Path) -> Path:
    """An input file as given (relative to the working directory), else relative to where the
    product's files are (the checkout's root, or the installed package's shipped files).

    Notebooks and examples name their inputs relative to the project root (`data/rfc7519_citations.json`),
    so they run from `notebooks/`, from the root, from papermill's working directory or, installed,
    from any folder alike. A path found nowhere is returned as given, so the loader's error names it.
    """
    given = Path(path)
    if given.exists() or given.is_absolute():
        return given
    beside = shipped_dir() / given
    return beside if beside.exists() else given


def public_dir() -> Path:
    """Where the public TRAIN sets are read from: `CITEAUDIT_PUBLIC_DIR`, else `../shared/data/public`
    beside a checkout, else `public/` of `home_dir()`."""
    value = os.environ.get("CITEAUDIT_PUBLIC_DIR")
    if value:
        return Path(value)
    root = checkout_dir()
    return root.parent / "shared" / "data" / "public" if root is not None else home_dir() / "public"


def build_dir() -> Path:
    """Where generated working files go (the public labelled sets, `build/public/`): the checkout's
    `build/` (ignored by git), else `build/` of `home_dir()`."""
    root = _in_checkout_home()
    return root / "build" if root is not None else home_dir() / "build"


def models_dir() -> Path:
    """Where a local model assembled from its packages is kept: the checkout's `models/` (ignored
    by git), else `models/` of `home_dir()`."""
    root = _in_checkout_home()
    return root / "models" if root is not None else home_dir() / "models"


def cache_dir() -> Path:
    """The shipped recordings and `calibration/` (read-only inputs): `CITEAUDIT_CACHE_DIR`, else
    `cache/` of `shipped_dir()`."""
    value = os.environ.get("CITEAUDIT_CACHE_DIR")
    return Path(value) if value else shipped_dir() / "cache"


def user_cache_dir(shipped: Path | None = None) -> Path:
    """Where new recordings, calibrations and profiles of your own and the working store go, first
    found first: `CITEAUDIT_USER_CACHE`; `local/` beside a shipped folder of your own (`shipped`,
    when it is not the default one); `local/` of `CITEAUDIT_CACHE_DIR`; `cache/` of
    `CITEAUDIT_HOME`; in a checkout its `cache/local/` (ignored by git, so recording never changes
    the checkout); else `cache/` of `home_dir()`. Never inside the installed package."""
    value = os.environ.get("CITEAUDIT_USER_CACHE")
    if value:
        return Path(value)
    if shipped is not None and Path(shipped).resolve() != cache_dir().resolve():
        return Path(shipped) / "local"
    if os.environ.get("CITEAUDIT_CACHE_DIR"):
        return cache_dir() / "local"
    root = _in_checkout_home()
    return root / "cache" / "local" if root is not None else home_dir() / "cache"


def review_dir() -> Path:
    """The review stores' folder: `CITEAUDIT_REVIEW_DIR`, else the checkout's `reviews/` (ignored by
    git; `reviews/` of `CITEAUDIT_HOME` when that is set), else `reviews/` of `home_dir()`."""
    value = os.environ.get("CITEAUDIT_REVIEW_DIR")
    if value:
        return Path(value)
    root = _in_checkout_home()
    return root / "reviews" if root is not None else home_dir() / "reviews"


def in_checkout() -> bool:
    """True when running from the checkout, where the Makefile's targets are at hand."""
    return checkout_dir() is not None


def install_extra(extra: str) -> str:
    """The pip command that adds an extra where the user is: to the checkout's editable install, else
    to the installed package."""
    return f"pip install -e '.[{extra}]'" if in_checkout() else f"pip install 'citeaudit[{extra}]'"


def _origin(variable: str, default: str) -> str:
    return variable if os.environ.get(variable) else default


def folders() -> list[tuple[str, Path, str]]:
    """Every folder in force, as (what it is for, path, where that came from): what `citeaudit
    where` prints."""
    root = checkout_dir()
    running = "checkout (pyproject.toml beside src/citeaudit)" if root else "installed package (importlib.resources)"
    home = os.environ.get("CITEAUDIT_HOME")
    own = "CITEAUDIT_HOME" if home else ("the checkout's (git ignores it)" if root else "platformdirs user data folder")
    user_cache = user_cache_dir()
    if os.environ.get("CITEAUDIT_USER_CACHE"):
        user_origin = "CITEAUDIT_USER_CACHE"
    elif os.environ.get("CITEAUDIT_CACHE_DIR"):
        user_origin = "local/ of CITEAUDIT_CACHE_DIR"
    else:
        user_origin = own
    rows = [
        ("shipped files", shipped_dir(), running),
        ("shipped recordings", cache_dir(), _origin("CITEAUDIT_CACHE_DIR", "cache/ of the shipped files")),
        ("shipped calibrations", cache_dir() / "calibration",
         _origin("CITEAUDIT_CACHE_DIR", "calibration/ of the shipped recordings")),
        ("shipped data", shipped_data_dir(), "data/ of the shipped files"),
        ("your folder", home_dir(), "CITEAUDIT_HOME" if home else "platformdirs user data folder"
         + (" (not used in a checkout: its own folders are)" if root else "")),
        ("your cache (recordings, calibrations, profiles, store)", user_cache, user_origin),
        ("review stores", review_dir(), _origin("CITEAUDIT_REVIEW_DIR", own)),
        ("downloaded sources", download_dir(), "CITEAUDIT_HOME" if home else
         ("the checkout's data/ (git ignores rfc*.txt there)" if root else "platformdirs user data folder")),
        ("local models", models_dir(), own),
        ("public sets", public_dir(), _origin("CITEAUDIT_PUBLIC_DIR", "beside the checkout" if root else own)),
    ]
    dirs = source_dirs()
    for number, folder in enumerate(dirs, 1):
        if folder == data_dir():
            origin = "CITEAUDIT_DATA_DIR"
        elif folder == Path.cwd():
            origin = "the working folder"
        elif folder == shipped_data_dir():
            origin = "the shipped data"
        elif folder == download_dir():
            origin = "downloaded sources"
        else:
            origin = "beside the checkout"
        rows.append((f"source texts ({number} of {len(dirs)})", folder, origin))
    return rows


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
    """`CITEAUDIT_MODEL`, else `DEFAULT_MODEL` (set but empty counts as unset, as for every variable)."""
    return os.environ.get("CITEAUDIT_MODEL") or DEFAULT_MODEL


def parse_strategy(value: str) -> Strategy:
    """A registered strategy's name (`registry.STRATEGIES`, plugins' included); anything else is an
    `InputError` listing the choices."""
    STRATEGIES.get(value)
    return str(value)


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
    return model_name in LOCAL_MODELS.values()


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
    return 1 if model_name in LOCAL_MODELS.values() else DEFAULT_CONCURRENCY


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


def parse_contrast_checks(value: str | tuple | list, where: str = "--contrast-checks") -> tuple[str, ...]:
    """Contrast check names, comma-separated (`numbers,normative`), `none` or `all`, as a tuple in the
    order the checks are registered (`registry.CONTRAST_CHECKS`: citeaudit's own, then plugins'); an
    unknown name is an `InputError` listing the choices.

    >>> parse_contrast_checks("numbers, normative"), parse_contrast_checks("none")
    (('normative', 'numbers'), ())
    """
    names = [n.strip().lower() for n in value.split(",")] if isinstance(value, str) else [str(n) for n in value]
    names = [n for n in names if n]
    if isinstance(value, str) and not names:  # an empty value never turns the checks off: `none` does
        raise InputError(f"{where}: {value!r} names no contrast check: give some, or all, or none to turn them off")
    if names in (["none"], []):
        return ()
    choices = CONTRAST_CHECKS.names()
    if names == ["all"]:
        return choices
    unknown = [n for n in names if n not in choices]
    if unknown:
        raise InputError(f"{where}: unknown contrast check {unknown[0]!r}: give some of {', '.join(choices)} "
                         "(comma-separated), or none, or all")
    return tuple(c for c in choices if c in names)


def contrast_checks() -> tuple[str, ...]:
    """`CITEAUDIT_CONTRAST_CHECKS` (names, `none` or `all`), else `DEFAULT_CONTRAST_CHECKS`."""
    value = (os.environ.get("CITEAUDIT_CONTRAST_CHECKS") or "").strip()
    return parse_contrast_checks(value, "CITEAUDIT_CONTRAST_CHECKS") if value else DEFAULT_CONTRAST_CHECKS


def settings_in_force() -> list[tuple[str, str, str]]:
    """Every setting read from the environment, as (name, value, where it came from: the variable,
    or `default`); what `citeaudit where` prints under the folders. An invalid value is shown as
    given, with the error that reading it raises."""

    def shown(variable: str, read: object) -> tuple[str, str]:
        try:
            value = read() if callable(read) else read
        except InputError as exc:
            return os.environ.get(variable, ""), f"{variable}, invalid: {exc}"
        if isinstance(value, tuple):
            value = ",".join(str(v) for v in value) or "none"
        return ("(calibrated)" if value is None else str(value)), _origin(variable, "default")

    rows = [
        ("model", "CITEAUDIT_MODEL", model),
        ("strategy", "CITEAUDIT_STRATEGY", strategy),
        ("cache mode", "CITEAUDIT_CACHE_MODE", cache_mode),
        ("threshold", "CITEAUDIT_THRESHOLD", threshold),
        ("spot check", "CITEAUDIT_SPOT_CHECK", spot_check),
        ("evidence", "CITEAUDIT_EVIDENCE", evidence_mode),
        ("contrast checks", "CITEAUDIT_CONTRAST_CHECKS", contrast_checks),
        ("profile", "CITEAUDIT_PROFILE", lambda: profile() or "none"),
        ("concurrency", "CITEAUDIT_CONCURRENCY", lambda: concurrency(default=default_concurrency(model()))),
        ("timeout (s)", "CITEAUDIT_TIMEOUT", timeout),
        ("retries", "CITEAUDIT_RETRIES", retries),
        ("grammar", "CITEAUDIT_GRAMMAR", lambda: use_grammar(model())),
        ("endpoint", "OPENAI_BASE_URL", lambda: base_url() or "the openai default"),
        ("API key", "OPENAI_API_KEY", lambda: "set" if api_key() else "unset"),
    ]
    return [(name, *shown(variable, read)) for name, variable, read in rows]
