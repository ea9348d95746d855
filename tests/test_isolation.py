"""The autouse `isolated_environment` fixture (conftest.py): no test sees a developer's settings, and
what a test writes by default (the cache store, recordings, reviews) lands in its own temporary
folder, never in the checkout."""

import os
import re
from pathlib import Path

from conftest import KEPT, PREFIXES, ROOT

from citeaudit import CallCache
from citeaudit.decide.reviews import review_store_path
from citeaudit.settings import environment as config

# what the fixture itself sets
SET_BY_FIXTURE = ("CITEAUDIT_CACHE_DIR", "CITEAUDIT_REVIEW_DIR")


def test_no_setting_reaches_a_test_but_the_data_folder_and_the_temporary_folders():
    left = sorted(name for name in os.environ if name.startswith(PREFIXES))
    assert set(left) <= {*KEPT, *SET_BY_FIXTURE}, left
    assert config.model() == config.DEFAULT_MODEL and config.strategy() == config.DEFAULT_STRATEGY
    assert config.cache_mode() == "replay" and config.base_url() is None and config.api_key() is None
    assert (config.timeout(), config.retries(), config.concurrency()) == (
        config.DEFAULT_TIMEOUT, config.DEFAULT_RETRIES, config.DEFAULT_CONCURRENCY)


def test_every_variable_citeaudit_reads_is_one_the_fixture_clears():
    """A new setting read anywhere in src/ is cleared too, as long as it keeps one of the prefixes."""
    text = "\n".join(path.read_text(encoding="utf-8") for path in (ROOT / "src" / "citeaudit").rglob("*.py"))
    read = set(re.findall(r"""(?:environ\.get\(|environ\[|getenv\()\s*["'](\w+)["']""", text))
    assert "CITEAUDIT_MODEL" in read and "OPENAI_BASE_URL" in read  # the scan finds them
    assert all(name.startswith(PREFIXES) for name in read), sorted(read)


def test_default_cache_and_review_folders_are_temporary_and_outside_the_checkout(isolated_environment):
    folder = Path(isolated_environment).resolve()
    assert not folder.is_relative_to(ROOT)
    assert config.cache_dir() == folder / "cache" and config.review_dir() == folder / "reviews"
    with CallCache() as cache:  # what Judge() and the CLI open when nothing names a folder
        assert cache.store_dir == folder / "cache" / "local" / "store"  # the user cache, inside the cache folder
        assert cache.read_also == (folder / "cache",)
    assert review_store_path("notebook").parent == folder / "reviews"
    assert not (folder / "cache").joinpath("store").is_relative_to(ROOT)


def test_each_test_gets_its_own_folders(isolated_environment, tmp_path):
    assert Path(isolated_environment) != tmp_path  # the test's tmp_path stays the test's own
    assert not any(Path(isolated_environment).iterdir())  # nothing there until something writes
