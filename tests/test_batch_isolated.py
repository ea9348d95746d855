"""A batch on workers that share nothing with the client (batch.py, shipping.py): a real `dask
scheduler` and two `dask worker` processes, each worker in a network namespace of its own (a veth
pair to this test's namespace) and a mount namespace in which the dataset's folder, the data
folders and the client's cache folders are empty, with a working directory and cache of its own.
Replay, and record against the scripted endpoint, give the rows, decisions and recordings of
`scheduler="threads"`.

Needs root, `ip` and `unshare` (util-linux); skipped, saying which is missing, where namespaces
cannot be made.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from citeaudit import AuditOptions, read_dataset
from citeaudit.judge.cache import read_recording
from citeaudit.pipeline import resolve_source
from citeaudit.pipeline.batch import run_batch
from citeaudit.testing import scripted_endpoint

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[1]
DASK = str(Path(sys.executable).with_name("dask"))
TAG = f"ca{os.getpid() % 100000}"  # names of this run's namespaces and links (at most 15 characters)
NET = f"10.{200 + os.getpid() % 50}"  # a /16 of private addresses for this run's links


def _ip() -> str | None:
    return shutil.which("ip") or next((p for p in ("/usr/sbin/ip", "/sbin/ip") if os.access(p, os.X_OK)), None)


def _run(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True, text=True, timeout=30)


def _why_not() -> str | None:
    """Why this machine cannot make network and mount namespaces here, or None."""
    if not sys.platform.startswith("linux"):
        return "network namespaces are Linux's"
    if os.geteuid() != 0:
        return "making network namespaces and veth pairs needs root"
    ip = _ip()
    if ip is None or shutil.which("unshare") is None:
        return "needs `ip` (iproute2) and `unshare` (util-linux)"
    probe = f"{TAG}probe"
    try:
        _run(ip, "netns", "add", probe)
        _run(ip, "netns", "exec", probe, "unshare", "--mount", "true")
    except (OSError, subprocess.SubprocessError) as exc:
        return f"cannot make a network and mount namespace here ({exc})"
    finally:
        subprocess.run([ip, "netns", "delete", probe], capture_output=True)
    return None


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _wait_for(predicate, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


@pytest.fixture
def dataset(tmp_path) -> Path:
    """The worked example's answers (quotes of RFC 7519, line citations of the field note, a
    source-id answer) in a folder of their own with the sources they cite."""
    folder = tmp_path / "dataset"
    folder.mkdir()
    shutil.copy(resolve_source("rfc7519.txt", download=False), folder / "rfc7519.txt")
    shutil.copy(ROOT / "data" / "lines" / "field_note.txt", folder / "field_note.txt")
    lines = []
    for line in (ROOT / "data" / "batch" / "example.jsonl").read_text(encoding="utf-8").splitlines():
        answer = json.loads(line)
        if "document" in answer:
            answer["document"] = "field_note.txt"
        lines.append(json.dumps(answer, ensure_ascii=False))
    path = folder / "answers.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def cluster(tmp_path, dataset, recorded_cache) -> Iterator[dict]:
    """A scheduler here and two workers in namespaces of their own; yields its address, the
    address this side of the links, and what each worker saw of the client's folders."""
    why = _why_not()
    if why is not None:
        pytest.skip(why)
    ip = _ip()
    assert ip is not None
    # every folder a worker could find the sources or recordings in: the dataset's, the client's cache
    # folders, the data folders (`config.source_dirs`; not the working directory, which holds the venv)
    folders = [dataset.parent, recorded_cache, ROOT / "cache", ROOT / "data", ROOT.parent / "shared" / "data",
               *(Path(p) for p in [os.environ.get("CITEAUDIT_DATA_DIR")] if p)]
    found = {f.resolve() for f in folders if f.is_dir()}
    hidden = sorted(str(f) for f in found if not any(other in f.parents for other in found))  # outermost only
    # this side's ends of the two links join a bridge (NET.0.1), so the workers (NET.0.2, NET.0.3)
    # reach the scheduler, the endpoint and each other (Dask copies data between workers)
    host, bridge = f"{NET}.0.1", f"{TAG}br"
    made: list[str] = []
    processes: list[subprocess.Popen] = []
    try:
        _run(ip, "link", "add", bridge, "type", "bridge")
        _run(ip, "addr", "add", f"{host}/24", "dev", bridge)
        _run(ip, "link", "set", bridge, "up")
        for i in (1, 2):
            ns, outside, inside = f"{TAG}n{i}", f"{TAG}h{i}", f"{TAG}w{i}"
            _run(ip, "netns", "add", ns)
            made.append(ns)
            _run(ip, "link", "add", outside, "type", "veth", "peer", "name", inside)
            _run(ip, "link", "set", inside, "netns", ns)
            _run(ip, "link", "set", outside, "master", bridge)
            _run(ip, "link", "set", outside, "up")
            for step in (("addr", "add", f"{NET}.0.{i + 1}/24", "dev", inside), ("link", "set", inside, "up"),
                         ("link", "set", "lo", "up")):
                _run(ip, "netns", "exec", ns, ip, *step)
        port = _free_port(host)
        address = f"tcp://{host}:{port}"
        quiet = {**os.environ, "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"}
        processes.append(subprocess.Popen([DASK, "scheduler", "--host", host, "--port", str(port), "--no-dashboard"],
                                          env=quiet, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for i in (1, 2):
            home = tmp_path / f"worker{i}"
            for sub in ("cache/local", "data", "tmp"):
                (home / sub).mkdir(parents=True)
            env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "TMPDIR": str(home / "tmp"),
                   "CITEAUDIT_CACHE_DIR": str(home / "cache"), "CITEAUDIT_USER_CACHE": str(home / "cache" / "local"),
                   "CITEAUDIT_DATA_DIR": str(home / "data"), "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"}
            mounts = " && ".join(f"mount -t tmpfs citeaudit-hidden '{path}'" for path in hidden)
            script = (f"{mounts} && cd '{home}' && exec '{DASK}' worker {address} --host {NET}.0.{i + 1} --nthreads 2 "
                      f"--no-nanny --no-dashboard --local-directory '{home / 'tmp'}'")
            processes.append(subprocess.Popen(
                [ip, "netns", "exec", f"{TAG}n{i}", "unshare", "--mount", "--propagation", "private",
                 "sh", "-c", script], env=env, stdout=subprocess.DEVNULL, stderr=(tmp_path / f"worker{i}.log").open("w")))
        from distributed import Client

        with Client(address, timeout="30s") as client:
            try:
                client.wait_for_workers(2, timeout=90)
            except Exception:
                raise AssertionError("the workers did not start:\n" + "\n".join(
                    (tmp_path / f"worker{i}.log").read_text()[-2000:] for i in (1, 2))) from None
            # by value (a lambda): the workers cannot import this test module
            seen = client.run(lambda paths: {"cwd": os.getcwd(), "listed": {p: os.listdir(p) for p in paths}}, hidden)
        yield {"address": address, "host": host, "seen": seen, "homes": [tmp_path / f"worker{i}" for i in (1, 2)]}
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        for ns in made:
            subprocess.run([ip, "netns", "delete", ns], capture_output=True)  # takes its end of the link along
        for link in (f"{TAG}h1", f"{TAG}h2", bridge):
            subprocess.run([ip, "link", "delete", link], capture_output=True)


def _same(a, b) -> None:
    pd.testing.assert_frame_equal(a.rows, b.rows)
    pd.testing.assert_frame_equal(a.decisions, b.decisions)
    assert [o.records for o in a.outcomes] == [o.records for o in b.outcomes]


def test_workers_that_share_nothing_replay_and_record_as_threads(cluster, dataset, tmp_path, monkeypatch):
    # the workers are where we put them and see nothing of the client's folders
    assert sorted(s["cwd"] for s in cluster["seen"].values()) == sorted(str(h) for h in cluster["homes"])
    assert all(not listed for s in cluster["seen"].values() for listed in s["listed"].values())
    assert {address.split("//")[1].rsplit(":", 1)[0] for address in cluster["seen"]} == {f"{NET}.0.2", f"{NET}.0.3"}

    items = read_dataset(dataset)
    replay = AuditOptions.from_env(cache_mode="replay")
    remote = run_batch(items, replay, cluster["address"], partition_size=1)
    _same(remote, run_batch(items, replay, "threads", partition_size=1))
    assert remote.rows["model"].notna().any()  # the recorded answers were replayed on the workers

    # record: the scripted endpoint listens on this side of the links; only the client knows its URL
    with scripted_endpoint(host=cluster["host"]) as endpoint:
        monkeypatch.setenv("OPENAI_BASE_URL", endpoint.url)
        monkeypatch.setenv("OPENAI_API_KEY", "x")
        monkeypatch.setenv("CITEAUDIT_GRAMMAR", "0")
        results, recordings, asked = {}, {}, {}
        for scheduler in ("threads", cluster["address"]):
            folder = tmp_path / ("threads" if scheduler == "threads" else "cluster")
            settings = AuditOptions.from_env(model="scripted", strategy="choice", cache_mode="record", cache_dir=folder)
            before = endpoint.requests
            results[scheduler] = run_batch(items, settings, scheduler, partition_size=1)
            asked[scheduler] = endpoint.requests - before
            recordings[scheduler] = {r["key"]: r["response"] for r in read_recording(folder / "local" / "scripted.jsonl")}
    threads, remote = results["threads"], results[cluster["address"]]
    _same(remote, threads)
    assert asked["threads"] == asked[cluster["address"]] == len(recordings["threads"]) > 0
    assert recordings[cluster["address"]] == recordings["threads"]
    assert set(remote.rows["relation"].dropna()) >= {"supports"}
    for home in cluster["homes"]:  # nothing written to a worker's own cache either
        assert not list((home / "cache").rglob("*.jsonl"))
