"""No audit, record, review, judge setup or notebook run changes the checkout (issue 18): in a
throwaway git repository holding this checkout's files, with citeaudit's default folders."""

import os
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

from citeaudit.judge.cache import read_recording, recording_name

pytestmark = [pytest.mark.cli, pytest.mark.notebooks]
MODEL = "scripted-clean"
EXAMPLE = ("--source", "rfc7519.txt", "--citations", "data/rfc7519_citations.json")


def git(folder, *args: str) -> str:
    return subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def clone(tmp_path, monkeypatch):
    """The files git would commit from this checkout (tracked and new, as they are now), committed
    in a fresh repository; citeaudit run from its sources with its default cache and review folders."""
    folder = tmp_path / "clone"
    listed = git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, folder / name)
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "-c", "user.name=test", "-c", "user.email=test@example.invalid", "commit", "-qm", "snapshot")
    for name in ("CITEAUDIT_CACHE_DIR", "CITEAUDIT_REVIEW_DIR", "CITEAUDIT_USER_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(folder / "src"), os.environ.get("PYTHONPATH")])))
    return folder


def citeaudit(clone, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "citeaudit.surfaces.cli", *args], cwd=clone, capture_output=True, text=True,
                          timeout=300)


def test_audit_record_review_setup_and_a_notebook_leave_git_status_clean(clone, scripted, tmp_path, monkeypatch):
    import papermill

    endpoint = scripted(0.0)
    monkeypatch.setenv("OPENAI_BASE_URL", endpoint.url)
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    audited = citeaudit(clone, "audit", *EXAMPLE, "--cache-mode", "record", "--model", MODEL, "--strategy", "choice")
    assert audited.returncode in (0, 1), audited.stderr
    assert len(read_recording(clone / "cache" / "local" / recording_name(MODEL))) == endpoint.requests == 7

    reviewed = citeaudit(clone, "review", "--reviews", "reviews/mine.jsonl", *EXAMPLE, "--id", "aud_reject",
                         "--verdict", "verified")
    assert reviewed.returncode == 0, reviewed.stderr
    assert (clone / "reviews" / "mine.jsonl").is_file()

    setup = citeaudit(clone, "judge-setup", "--model", MODEL, "--strategy", "choice", "--set",
                      "rfc7519.txt:data/rfc7519_citations.json", "--folds", "2", "--repeats", "0")
    assert setup.returncode == 0, setup.stderr
    assert "0 to ask" in setup.stdout and endpoint.requests == 7  # what the audit recorded is reused
    assert (clone / "cache" / "local" / "calibration" / f"{MODEL}.choice.json").is_file()

    papermill.execute_notebook(str(clone / "notebooks" / "09_bring_your_own_judge.ipynb"), str(tmp_path / "out.ipynb"),
                               parameters={"LIMIT": 2, "REPEATS": 0}, kernel_name="python3",
                               cwd=str(clone / "notebooks"), progress_bar=False)

    assert git(clone, "status", "--porcelain", "--untracked-files=all") == ""
    assert git(clone, "status", "--porcelain", "--ignored") != ""  # written, and ignored
