"""What a new user does: build the sdist and the wheel (`python -m build`), install the wheel into a
fresh virtual environment, and from an empty folder audit the worked example offline. The same
table and decision as `make demo` from the checkout, the calibrated threshold named; nothing
written in that folder or in the checkout; the working store in the user's folder.

About a minute and a half here, most of it pip installing the dependencies into the new
environment (from pip's cache when it holds them), so `make check` leaves it out (`slow`)."""

import os
import subprocess
import sys
import venv
import zipfile

import pytest
from conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.cli]

DEMO = ["audit", "--source", "rfc7519.txt", "--citations", "data/rfc7519_citations.json", "--cache-mode", "replay"]


def _run(args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, timeout=600, **kwargs)


def _tree(root):
    """Every file under the checkout's folders that a command could write (the shipped and user
    cache, data, reviews, outputs), with its size and modification time, and the names at its top:
    what a run that writes nothing there leaves as it was. (Not the whole checkout: the other tests
    of a parallel run build notebooks and tools' caches in it.)"""
    found = {"top": sorted(p.name for p in root.iterdir())}
    for dirpath, _, filenames in (step for folder in ("cache", "data", "reviews", "out")
                                  for step in os.walk(root / folder)):
        for name in filenames:
            path = os.path.join(dirpath, name)
            stat = os.lstat(path)
            found[path] = (stat.st_size, stat.st_mtime_ns)
    return found


def _table_and_decision(output):
    """The demo's output up to the review commands (those name the review store, a folder that
    differs by design: the checkout's `reviews/`, the user folder's when installed)."""
    return output.split("\nTo record a human review")[0]


@pytest.fixture(scope="module")
def wheel_env(tmp_path_factory):
    """The sdist and the wheel built from the checkout, the wheel installed into a new venv."""
    dist = tmp_path_factory.mktemp("dist")
    built = _run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)])
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    wheels, sdists = list(dist.glob("*.whl")), list(dist.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(dist.iterdir())
    env = tmp_path_factory.mktemp("venv")
    venv.create(env, with_pip=True)
    # the pins `make` installs, so that pip's cache answers; pip still resolves the wheel's own ranges
    installed = _run([str(env / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                      "-c", str(ROOT / "requirements.txt"), str(wheels[0])])
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    return wheels[0], env


def test_the_wheel_ships_the_recordings_calibrations_and_data_but_no_rfc_text(wheel_env):
    wheel, _ = wheel_env
    names = zipfile.ZipFile(wheel).namelist()
    shipped = "citeaudit/_shipped/"
    assert f"{shipped}cache/calibration/qwen2.5-coder-1.5b-instruct-q4_k_m.panel.json" in names
    assert f"{shipped}cache/calibration/qwen2.5-coder-1.5b-instruct-q4_k_m.probe-weights.json" in names
    assert f"{shipped}data/rfc7519_citations.json" in names
    recordings = {n.removeprefix(f"{shipped}cache/") for n in names if n.startswith(f"{shipped}cache/")
                  and n.endswith(".jsonl")}
    assert recordings == {p.name for p in (ROOT / "cache").glob("*.jsonl")}
    assert not [n for n in names if "/local/" in n or "/store/" in n or (n.rsplit("/", 1)[-1].startswith("rfc")
                and n.endswith(".txt"))]


def test_an_installed_wheel_audits_the_worked_example_from_an_empty_folder(wheel_env, tmp_path):
    _, env = wheel_env
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    # a new user's environment: no citeaudit setting but where the RFC texts are, a HOME of their own
    clean = {"PATH": os.environ["PATH"], "HOME": str(home), "CITEAUDIT_DATA_DIR": os.environ["CITEAUDIT_DATA_DIR"]}
    checkout_before = _tree(ROOT)

    installed = _run([str(env / "bin" / "citeaudit"), *DEMO], cwd=work, env=clean)
    where = _run([str(env / "bin" / "citeaudit"), "where"], cwd=work, env=clean)
    version = _run([str(env / "bin" / "citeaudit"), "--version"], cwd=work, env=clean)

    assert installed.returncode == 1, installed.stderr  # 1: not every citation verified (REJECT), a result
    assert list(work.iterdir()) == []
    assert _tree(ROOT) == checkout_before
    yours = home / ".local" / "share" / "citeaudit"
    assert (yours / "cache" / "store").is_dir()  # the replay store, built in the user's folder
    assert installed.stdout.startswith("threshold 0.92, recommended by the calibration of "
                                       "qwen2.5-coder-1.5b-instruct-q4_k_m / panel")
    assert "\nREJECT (threshold 0.92, recommended by the calibration" in installed.stdout
    assert "make " not in installed.stdout + installed.stderr
    lines = where.stdout.splitlines()
    assert any(line.split()[:2] == ["shipped", "files"] and str(env) in line and "[installed package" in line
               for line in lines), where.stdout
    assert any(line.startswith("  your cache") and str(yours / "cache") in line for line in lines), where.stdout
    assert version.stdout.strip() == "citeaudit, version 0.1.0"

    # the same audit from the checkout, as `make demo` runs it (its shipped recordings, a user cache of its own)
    demo_env = {**os.environ, "CITEAUDIT_CACHE_DIR": str(ROOT / "cache"), "CITEAUDIT_USER_CACHE": str(tmp_path / "uc")}
    demo = _run([sys.executable, "-m", "citeaudit.surfaces.cli", *DEMO], cwd=ROOT, env=demo_env)
    assert demo.returncode == 1, demo.stderr
    assert _table_and_decision(installed.stdout) == _table_and_decision(demo.stdout)


@pytest.mark.parametrize("args", [
    ("lines", "--document", "data/lines/field_note.txt", "--answer", "data/lines/good_answer.txt"),
    ("contract", "data/contract/answer.json", "data/contract/sources.json", "data/contract/reviews.json")])
def test_the_installed_wheel_audits_the_other_shipped_examples_as_the_checkout_does(wheel_env, tmp_path, args):
    """The line-citation and source-id examples named by their paths in the checkout, from an empty folder."""
    _, env = wheel_env
    work = tmp_path / "work"
    work.mkdir()
    clean = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home")}
    installed = _run([str(env / "bin" / "citeaudit"), *args], cwd=work, env=clean)
    demo_env = {**os.environ, "CITEAUDIT_CACHE_DIR": str(ROOT / "cache"), "CITEAUDIT_USER_CACHE": str(tmp_path / "uc")}
    checkout = _run([sys.executable, "-m", "citeaudit.surfaces.cli", *args], cwd=ROOT, env=demo_env)
    assert installed.returncode == checkout.returncode, installed.stdout + installed.stderr
    assert _table_and_decision(installed.stdout) == _table_and_decision(checkout.stdout)
    assert installed.stdout.strip() and list(work.iterdir()) == []
