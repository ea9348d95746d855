"""Shared fixtures. Source texts come from CITEAUDIT_DATA_DIR (CI points it at ../shared/data/rfc)."""

import contextlib
import multiprocessing.process
import os
import platform
import subprocess
from pathlib import Path

import matplotlib
import matplotlib.font_manager
import pytest
from hypothesis import settings

from citeaudit.testing import scripted_endpoint

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
DOCS = ROOT / "docs"


def docs_text(*pages: str) -> str:
    """The documentation's Markdown pages (paths under docs/), joined; with none, every page in path
    order: where the tests find the figures, commands and examples the documentation shows."""
    paths = [DOCS / page for page in pages] or sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)
    return "\n\n".join(path.read_text(encoding="utf-8") for path in paths)


def saved_measurement(name: str) -> dict:
    """A measuring tool's saved figures, `docs/measurements/data/NAME.json` (tools/docs_figures.py)."""
    import json

    return json.loads((DOCS / "measurements" / "data" / f"{name}.json").read_text(encoding="utf-8"))
# The llama.cpp servers the tests start share the machine's cores with the other pytest-xdist
# workers' tests (and servers): llama.cpp's threads wait by spinning, so a server with more threads
# than its share slows everything that runs beside it. On 2 cores and 2 workers, one thread each:
# tests/test_local_judge.py took 200 s instead of 248 with a thread per core.
SERVER_THREADS = max(1, (os.cpu_count() or 2) // int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))

# Property tests assert behaviour, not speed (speed lives in benchmarks): no per-example deadline.
# Hypothesis's default of 200 ms failed a parser test in CI whose first example took 290 ms on a
# loaded machine and 0.85 ms when rerun. A test's own @settings keep every other default.
settings.register_profile("citeaudit", deadline=None)
settings.load_profile("citeaudit")

if not os.environ.get("CITEAUDIT_DATA_DIR") and (ROOT.parent / "shared/data/rfc").is_dir():
    os.environ["CITEAUDIT_DATA_DIR"] = str(ROOT.parent / "shared/data/rfc")

# Variables that change what citeaudit does (config.py's table, and the openai client's own). Every
# test starts without them, whatever the developer's shell holds. Kept: CITEAUDIT_DATA_DIR (where the
# source texts are) and CITEAUDIT_KEEP_SCREENSHOT (test_report.py: where to keep its screenshots).
KEPT = ("CITEAUDIT_DATA_DIR", "CITEAUDIT_KEEP_SCREENSHOT")
PREFIXES = ("CITEAUDIT_", "OPENAI_")


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path_factory, monkeypatch):
    """Every test: no CITEAUDIT_* (but CITEAUDIT_DATA_DIR) or OPENAI_* variable, and the cache and
    review folders in a temporary folder of its own, empty, so that nothing a test does reads a
    developer's settings or writes into the checkout (cache/store, reviews/). Subprocesses (the
    CLI, notebook kernels, Dask workers) inherit this environment. `recorded_cache` and
    `replay_cache` give a test the committed recordings."""
    for name in list(os.environ):
        if name.startswith(PREFIXES) and name not in KEPT:
            monkeypatch.delenv(name)
    folder = tmp_path_factory.mktemp("isolated")  # not tmp_path: a test's own folders stay its own
    monkeypatch.setenv("CITEAUDIT_CACHE_DIR", str(folder / "cache"))
    monkeypatch.setenv("CITEAUDIT_REVIEW_DIR", str(folder / "reviews"))
    return folder


# `uname -p`, run once per process by the platform module and cached: the openai client asks for it
# (its request headers), so it runs here, before `processes_only_where_marked` refuses processes.
platform.processor()

# matplotlib's font cache, built on its first import on a machine by running `fc-list`: here, once
# per process before the guard, and written to MPLCONFIGDIR so that later runs only read it. Under the
# guard the build was refused, nothing was written, and the plotting tests failed on every run of a
# new machine (issue 50). The Agg backend: no display, and no GUI toolkit probed.
matplotlib.use("Agg")
matplotlib.font_manager.fontManager  # noqa: B018 (the attribute access is the build)

# The kinds `make check` leaves out (pyproject.toml); a test that starts a process carries one of them.
SPAWNING = ("integration", "notebooks", "browser", "cluster", "cli", "slow")


class UnmarkedProcessError(RuntimeError):
    """Raised where a test without one of the `SPAWNING` markers starts a process."""


@pytest.fixture(autouse=True)
def processes_only_where_marked(request, monkeypatch):
    """The fast tier starts no process: a test that starts one (a subprocess: the command line, a
    notebook kernel, Chromium, git; a multiprocessing or Dask worker; a fork) without one of the
    `SPAWNING` markers fails, naming what it started and the markers. The start itself is refused
    with `UnmarkedProcessError`, and the test fails at teardown even if the code under test caught
    that error. Threads (the scripted endpoint of `citeaudit.testing`) are not processes."""
    if any(request.node.get_closest_marker(name) for name in SPAWNING):
        yield
        return
    started = request.node.refused_processes = []

    def refuse(what):
        def refused(*args, **kwargs):
            shown = args[1] if what == "subprocess.Popen" and len(args) > 1 else args[:1] or kwargs.get("args")
            started.append(f"{what}({shown!r:.120})")
            raise UnmarkedProcessError(f"{request.node.nodeid} starts a process ({started[-1]}) but carries none of "
                                       f"the markers {', '.join(SPAWNING)}: mark it, or `make check` is not the fast tier")
        return refused

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse("subprocess.Popen"))
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", refuse("multiprocessing start"))
    for name in ("fork", "forkpty", "system", "posix_spawn", "posix_spawnp"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, refuse(f"os.{name}"))
    yield
    if started:
        pytest.fail(f"{request.node.nodeid} starts a process ({'; '.join(started)}) but carries none of the markers "
                    f"{', '.join(SPAWNING)} (pyproject.toml): mark it with the kind it is, so that `make check` "
                    "stays the fast tier", pytrace=False)


@pytest.fixture(scope="session")
def smollm2_server():
    """One llama.cpp server with SmolLM2 for the whole run (for each pytest-xdist worker that runs an
    integration test), for the integration tests that only ask it questions; a test of a server's
    own life, or of another configuration, starts its own."""
    from citeaudit.judge import local_server

    with local_server("smollm2", timeout=180, n_threads=SERVER_THREADS) as running:
        yield running


@pytest.fixture(scope="session")
def rfc7519():
    from citeaudit import load_rfc

    return load_rfc("rfc7519.txt")


@pytest.fixture(scope="session")
def index7519(rfc7519):
    from citeaudit.locate import index_document

    return index_document(rfc7519)


@pytest.fixture
def tmp_cache(tmp_path):
    """A fresh cache directory per test (recordings and store)."""
    return tmp_path / "cache"


@pytest.fixture(scope="session")
def replay_cache(tmp_path_factory):
    """A replay-mode cache over a private copy of the committed recordings."""
    import shutil

    from citeaudit import CallCache

    folder = tmp_path_factory.mktemp("recordings")
    for recording in (ROOT / "cache").glob("*.jsonl"):
        shutil.copy(recording, folder)
    return CallCache(folder, mode="replay")  # the recordings alone: no calibration maps the scores


@pytest.fixture(scope="session")
def recorded_copy(tmp_path_factory):
    """`recorded_copy(calibrations=True)`: a fresh copy of the committed recordings (and calibrations)
    for one test, in a folder of its own that every test of this process gets again. A test pointing
    CITEAUDIT_CACHE_DIR at it finds the working store (`local/store`) already built from those
    recordings, as the first open of a copy at that path builds it, instead of rebuilding it from
    7 MB of JSON Lines (a few seconds) in every test: the store's manifest names the recordings by
    path, so a copy elsewhere would be rebuilt. Everything a test wrote there is gone for the next."""
    import shutil

    from citeaudit import AuditOptions, AuditRun

    base = tmp_path_factory.mktemp("recorded")
    pristine = {}

    def fresh(calibrations: bool = True) -> Path:
        folder = base / f"cache{'' if calibrations else '-no-calibrations'}"
        if calibrations not in pristine:
            folder.mkdir()
            for path in (ROOT / "cache").glob("*.jsonl"):
                shutil.copy(path, folder)
            if calibrations:
                shutil.copytree(ROOT / "cache" / "calibration", folder / "calibration")
            with pytest.MonkeyPatch.context() as env:  # the variables a test sees (isolated_environment)
                for name in [n for n in os.environ if n.startswith(PREFIXES) and n not in KEPT]:
                    env.delenv(name)
                env.setenv("CITEAUDIT_CACHE_DIR", str(folder))
                AuditRun(AuditOptions.from_env()).cache.close()  # builds local/store, as a test's first open would
            pristine[calibrations] = base / f"pristine{'' if calibrations else '-no-calibrations'}"
            shutil.copytree(folder, pristine[calibrations])
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(pristine[calibrations], folder)
        return folder

    return fresh


@pytest.fixture
def recorded_cache(recorded_copy, monkeypatch):
    """A private copy of the committed recordings and calibrations (what a user's checkout has), so
    tests never touch the working store (`recorded_copy`: the copy's store is built once per run)."""
    cache = recorded_copy()
    monkeypatch.setenv("CITEAUDIT_CACHE_DIR", str(cache))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return cache


@pytest.fixture
def scripted():
    """Starts `citeaudit.testing`'s scripted OpenAI-compatible endpoint on 127.0.0.1: `scripted(delay)`
    returns its `Endpoint` (url, request counts), serving until the test ends."""
    with contextlib.ExitStack() as running:
        yield lambda delay=0.2: running.enter_context(scripted_endpoint(delay=delay))
