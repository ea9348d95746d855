"""Shared fixtures. Source texts come from CITEAUDIT_DATA_DIR (CI points it at ../shared/data/rfc)."""

import contextlib
import os
from pathlib import Path

import pytest
from scripted_endpoint import scripted_endpoint

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"

if not os.environ.get("CITEAUDIT_DATA_DIR") and (ROOT.parent / "shared/data/rfc").is_dir():
    os.environ["CITEAUDIT_DATA_DIR"] = str(ROOT.parent / "shared/data/rfc")


@pytest.fixture(scope="session")
def rfc7519():
    from citeaudit import load_rfc

    return load_rfc("rfc7519.txt")


@pytest.fixture(scope="session")
def index7519(rfc7519):
    from citeaudit import index_document

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


@pytest.fixture
def recorded_cache(tmp_path, monkeypatch):
    """A private copy of the committed recordings and calibrations (what a user's checkout has), so
    tests never touch the working store."""
    cache = tmp_path / "cache"
    cache.mkdir()
    import shutil

    for path in (ROOT / "cache").glob("*.jsonl"):
        shutil.copy(path, cache)
    shutil.copytree(ROOT / "cache" / "calibration", cache / "calibration")
    monkeypatch.setenv("CITEAUDIT_CACHE_DIR", str(cache))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return cache


@pytest.fixture
def scripted():
    """Starts the OpenAI-compatible endpoint of scripted_endpoint.py on 127.0.0.1: `scripted(delay)`
    returns its `Endpoint` (url, request counts), serving until the test ends."""
    with contextlib.ExitStack() as running:
        yield lambda delay=0.2: running.enter_context(scripted_endpoint(delay))
