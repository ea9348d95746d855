"""Concurrent judging against a scripted endpoint on 127.0.0.1 that answers after a delay: rows in
input order, one row's failure stays in its row, an unusable endpoint stops the run, and the cache
and recordings come out as a one-at-a-time run would leave them."""

import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from citeaudit import CallCache, Judge, audit_citations
from citeaudit.citations import Citation, SourceRef
from citeaudit.errors import InputError, JudgeUnavailableError
from citeaudit.judge.cache import MANIFEST_KEY, read_recording
from citeaudit.settings import environment as config
from citeaudit.surfaces.cli import main

SOURCES = {"s1": "The JWT MUST be rejected when the audience does not match."}
LETTERS = {"A": "supports", "B": "contradicts", "C": "says_nothing"}


def citations(n, extra=lambda i: ""):
    return [Citation(f"c{i:02d}", f"Claim {i} answer={'ABC'[i % 3]} {extra(i)}", None, SourceRef("s1"))
            for i in range(n)]


def judge_for(endpoint, folder, mode="record"):
    return Judge(model="scripted", base_url=endpoint.url, api_key="x", grammar=False, max_retries=0, strategy="choice",
                 cache=CallCache(folder, mode=mode))


def test_rows_keep_their_order_and_requests_overlap(scripted, tmp_path):
    """Overlap is read from the endpoint (how many requests it held at once), not from the wall
    clock, which a loaded machine stretches: one at a time would hold one, and never more than the
    concurrency asked for."""
    endpoint = scripted(0.2)
    judge = judge_for(endpoint, tmp_path / "cache")
    table = audit_citations(citations(12), None, SOURCES, judge=judge, concurrency=6).table
    assert list(table["id"]) == [f"c{i:02d}" for i in range(12)]
    assert list(table["relation"]) == [LETTERS["ABC"[i % 3]] for i in range(12)]
    assert table["error"].isna().all()
    assert 1 < endpoint.most_in_flight <= 6 and endpoint.requests == 12


def test_a_failed_row_keeps_its_error_and_the_others_are_judged(scripted, tmp_path):
    endpoint = scripted(0.05)
    judge = judge_for(endpoint, tmp_path / "cache")
    table = audit_citations(citations(8, lambda i: "status=400" if i == 3 else ""), None, SOURCES,
                            judge=judge, concurrency=4).table
    assert table["error"].notna().tolist() == [i == 3 for i in range(8)]
    assert "400" in table.at[3, "error"]
    assert table["relation"].notna().sum() == 7


def test_an_unusable_endpoint_stops_the_run_and_cancels_the_rest(scripted, tmp_path):
    endpoint = scripted(0.1)
    judge = judge_for(endpoint, tmp_path / "cache")
    with pytest.raises(JudgeUnavailableError, match="refused the API key"):
        audit_citations(citations(40, lambda i: "status=401"), None, SOURCES, judge=judge, concurrency=4)
    time.sleep(0.3)
    assert endpoint.requests < 40  # what was not yet sent never was


def test_recordings_and_store_are_as_one_at_a_time_would_leave_them(scripted, tmp_path):
    cites = citations(16)
    endpoint = scripted(0.05)
    for folder, level in ((tmp_path / "serial", 1), (tmp_path / "parallel", 8)):
        judge = judge_for(endpoint, folder)
        audit_citations(cites, None, SOURCES, judge=judge, concurrency=level)
        judge.cache.close()
    serial, parallel = (read_recording(tmp_path / f / "scripted.jsonl") for f in ("serial", "parallel"))
    assert sorted(r["key"] for r in parallel) == sorted(r["key"] for r in serial)  # same cache keys
    assert len(parallel) == 16 and not parallel.warnings
    with CallCache(tmp_path / "parallel", mode="replay") as cache:
        manifest = cache.store.get(MANIFEST_KEY)
    with CallCache(tmp_path / "parallel", mode="replay") as cache:  # no rebuild: the manifest was kept true
        assert cache.store.get(MANIFEST_KEY) == manifest and len(cache) == 16
        replayed = audit_citations(cites, None, SOURCES, judge=Judge(model="scripted", cache=cache, strategy="choice"),
                                   concurrency=8).table
    assert replayed["cached"].all() and list(replayed["relation"]) == [LETTERS["ABC"[i % 3]] for i in range(16)]


def test_the_store_manifest_matches_the_recording_after_threads(scripted, tmp_path):
    endpoint = scripted(0.0)
    judge = judge_for(endpoint, tmp_path / "cache")
    audit_citations(citations(30), None, SOURCES, judge=judge, concurrency=16)
    before = judge.cache.store.get(MANIFEST_KEY)
    judge.cache.close()
    reopened = CallCache(tmp_path / "cache", mode="replay")
    assert reopened.store.get(MANIFEST_KEY) == before  # it matched the recordings: nothing to rebuild
    reopened.close()


def test_concurrency_setting(monkeypatch, tmp_path):
    monkeypatch.delenv("CITEAUDIT_CONCURRENCY", raising=False)
    assert config.concurrency() == config.DEFAULT_CONCURRENCY and config.concurrency(default=1) == 1
    monkeypatch.setenv("CITEAUDIT_CONCURRENCY", "8")
    assert config.concurrency(default=1) == 8
    for bad in ("0", "-2", "many", "65"):
        monkeypatch.setenv("CITEAUDIT_CONCURRENCY", bad)
        with pytest.raises(InputError, match="CITEAUDIT_CONCURRENCY"):
            config.concurrency()
    with pytest.raises(InputError, match="concurrency"):
        audit_citations(citations(2), None, SOURCES, judge=Judge(model="scripted", cache=CallCache(tmp_path)),
                        concurrency=0)


def test_cli_takes_concurrency(tmp_path):
    runner = CliRunner()
    args = ["audit", "--source", "rfc7519.txt", "--citations", str(Path(__file__).resolve().parents[1] / "data" / "rfc7519_citations.json"), "--locate-only"]
    assert runner.invoke(main, [*args, "--concurrency", "0"]).exit_code == 2
    result = runner.invoke(main, [*args, "--concurrency", "8"])
    assert result.exit_code == 1 and "sig_reporting" in result.output


@pytest.mark.parametrize(("model", "most"), [(config.DEFAULT_MODEL, 1), ("scripted", config.DEFAULT_CONCURRENCY)])
def test_a_local_model_is_asked_one_request_at_a_time_by_default(scripted, tmp_path, monkeypatch, model, most):
    """llama.cpp's server reuses the previous prompt's tokens: interleaving citations would waste it
    (tools/bench_local_judge.py); another endpoint gets several requests at once."""
    monkeypatch.delenv("CITEAUDIT_CONCURRENCY", raising=False)
    endpoint = scripted(0.1)
    judge = Judge(model=model, base_url=endpoint.url, api_key="x", grammar=False, max_retries=0, strategy="choice",
                  cache=CallCache(tmp_path / "cache", mode="record"))
    audit_citations(citations(8), None, SOURCES, judge=judge)
    assert endpoint.most_in_flight == most


def test_ctrl_c_delivered_to_a_worker_thread_stops_the_wait_at_once():
    """The kernel may deliver Ctrl-C's SIGINT to any thread; Python raises KeyboardInterrupt in the
    main thread only when it next runs Python code. A main thread blocked until a request answers
    would sit there for the whole request."""
    import signal
    import threading

    from tqdm import tqdm

    from citeaudit.pipeline.audit import ask_concurrently

    release = threading.Event()

    def ask(i):
        release.wait(30)  # a request that answers after 30 s
        raise AssertionError("the wait should have been interrupted")

    def interrupt_a_worker():
        time.sleep(0.3)
        worker = next(t for t in threading.enumerate() if t.name.startswith("citeaudit-judge"))
        signal.pthread_kill(worker.ident, signal.SIGINT)

    # Python's own Ctrl-C handler, whatever an earlier test in this process (or the test runner's
    # worker) installed: what a user's interpreter has
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Thread(target=interrupt_a_worker, daemon=True).start()
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            ask_concurrently(ask, [1, 2], 2, tqdm(disable=True))
        assert time.monotonic() - started < 5
    finally:
        release.set()
        signal.signal(signal.SIGINT, previous)
