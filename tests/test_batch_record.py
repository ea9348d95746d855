"""Recording a batch on Dask workers (batch.py, `CallCache(hold=True)`): workers never write the
recordings, the client appends what they return, and the result is what one process records."""

import json
from pathlib import Path

import pandas as pd
import pytest

from citeaudit import AuditOptions
from citeaudit.judge.cache import CallCache, read_recording
from citeaudit.pipeline.batch import audit_dataset

ROOT = Path(__file__).resolve().parents[1]

QUOTES = json.loads((ROOT / "data" / "rfc7519_citations.json").read_text(encoding="utf-8"))


@pytest.fixture
def dataset(tmp_path) -> Path:
    """Nine answers of two quote citations each; every claim is different (no request repeats),
    and the scripted endpoint answers supports, contradicts or says nothing by the claim."""
    lines = []
    for i in range(9):
        citations = [{**QUOTES[(2 * i + k) % len(QUOTES)], "id": f"c{k}",
                      "claim": f"{QUOTES[(2 * i + k) % len(QUOTES)]['claim']} (answer {i}) answer={'ABC'[(i + k) % 3]}"}
                     for k in range(2)]
        lines.append(json.dumps({"answer_id": f"a{i}", "source": "rfc7519.txt", "citations": citations}))
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _record(dataset: Path, folder: Path, scheduler: str, monkeypatch, url: str):
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    monkeypatch.setenv("CITEAUDIT_GRAMMAR", "0")
    settings = AuditOptions.from_env(model="scripted", strategy="choice", cache_mode="record", cache_dir=folder)
    return audit_dataset(dataset, settings, scheduler=scheduler, partition_size=2)


@pytest.mark.cluster
def test_workers_return_their_calls_and_the_client_records_them(scripted, dataset, tmp_path, monkeypatch):
    endpoint = scripted(0.0)
    threads = _record(dataset, tmp_path / "threads", "threads", monkeypatch, endpoint.url)
    calls_in_one_process = endpoint.requests
    processes = _record(dataset, tmp_path / "processes", "processes", monkeypatch, endpoint.url)
    calls_on_workers = endpoint.requests - calls_in_one_process
    judged = processes.rows[processes.rows["verdict"] != "fabricated"]  # a fabricated quote asks no model
    assert calls_in_one_process == calls_on_workers == len(judged) == 16
    pd.testing.assert_frame_equal(processes.rows, threads.rows)
    assert not judged["cached"].any() and judged["relation"].notna().all()
    assert set(judged["relation"]) == {"supports", "contradicts", "says_nothing"}

    # new answers go to the user cache inside the cache folder (cache/local/), never the shipped files
    assert not list((tmp_path / "processes").glob("*.jsonl"))
    one, many = (read_recording(tmp_path / name / "local" / "scripted.jsonl") for name in ("threads", "processes"))
    assert len(many) == len({r["key"] for r in many}) == 16  # each call appended exactly once
    assert sorted(r["key"] for r in many) == sorted(r["key"] for r in one)
    assert {r["key"]: r["response"] for r in many} == {r["key"]: r["response"] for r in one}

    # what the client appended replays, on any scheduler, with no endpoint
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    settings = AuditOptions.from_env(model="scripted", strategy="choice", cache_mode="replay",
                                     cache_dir=tmp_path / "processes")
    replayed = audit_dataset(dataset, settings, scheduler="processes", partition_size=3)
    assert replayed.rows["cached"].dropna().all() and replayed.rows["cached"].notna().sum() == 16
    columns = [c for c in threads.rows.columns if c != "cached"]
    pd.testing.assert_frame_equal(replayed.rows[columns], threads.rows[columns])


def test_a_holding_cache_keeps_its_calls_until_taken(tmp_path):
    cache = CallCache(tmp_path, mode="record", hold=True)
    request = {"model": "m", "messages": [{"role": "user", "content": "q"}], "params": {}, "prompt_version": "v"}
    sent = []

    def send():
        sent.append(1)
        return {"choices": []}, {"total_tokens": 1}

    record, cached = cache.call(request, send)
    again, cached_again = cache.call(request, send)
    assert (cached, cached_again, len(sent)) == (False, True, 1) and again == record
    assert not (tmp_path / "m.jsonl").exists()  # nothing written by the holder
    held = cache.take_held()
    assert held == [record] and cache.take_held() == []
    writer = CallCache(tmp_path, mode="replay")
    writer.append(held)
    assert writer.call(request, send) == (record, True) and len(sent) == 1


def test_a_shipped_cache_answers_as_the_cache_it_was_exported_from(tmp_path):
    """What a worker that reads no cache folder is given (`CallCache.export`, `ShippedCache`): the
    answers of one model, replayed as the client's cache replays them, a miss said with the
    client's folders, and new calls held for the client."""
    from citeaudit.errors import CacheMissError
    from citeaudit.judge.cache import ShippedCache

    def ask(model, text):
        return {"model": model, "messages": [{"role": "user", "content": text}], "params": {}, "prompt_version": "v"}

    writer = CallCache(tmp_path, mode="record")
    for model, text in (("m", "q1"), ("m", "q2"), ("other", "q1")):
        writer.call(ask(model, text), lambda: ({"choices": [{"text": "a"}]}, {"total_tokens": 1}))
    exported = writer.export("m")
    assert len(exported) == 2 and len(writer.export("other")) == 1
    shipped = ShippedCache(exported, "replay", writer.folders)
    for text in ("q1", "q2"):
        assert shipped.call(ask("m", text), lambda: pytest.fail("replay never calls")) == writer.call(ask("m", text), list)
    with pytest.raises(CacheMissError, match=str(tmp_path)):
        shipped.call(ask("other", "q1"), lambda: pytest.fail("replay never calls"))
    recording = ShippedCache(exported, "record", writer.folders)
    record, cached = recording.call(ask("m", "q3"), lambda: ({"choices": []}, {"total_tokens": 1}))
    assert not cached and recording.take_held() == [record]
    assert recording.call(ask("m", "q3"), lambda: pytest.fail("held: asked once")) == (record, True)
    assert not (tmp_path / "local").exists() and len(read_recording(tmp_path / "m.jsonl")) == 2
