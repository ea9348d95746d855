"""Cache modes with a temporary store and fake endpoints (the real endpoint is in test_local_judge)."""

import json

import pytest

from citeaudit import AuditOptions, AuditRun, CallCache
from citeaudit.errors import CacheMissError
from citeaudit.judge.cache import RECORD_KEYS, read_recording, recording_name, request_key
from citeaudit.stores import append_record

REQUEST = {"model": "m-1", "messages": [{"role": "user", "content": "secret text"}],
           "params": {"temperature": 0.0}, "prompt_version": "v1"}


def sender(answers):
    calls = []

    def send():
        calls.append(1)
        return {"content": answers[len(calls) - 1]}, {"prompt": 3, "completion": 1}

    return send, calls


def test_key_changes_with_every_part_of_the_request():
    keys = {request_key(REQUEST)}
    for field, value in [("model", "m-2"), ("params", {"temperature": 0.5}), ("prompt_version", "v2"),
                         ("messages", [{"role": "user", "content": "other"}])]:
        keys.add(request_key({**REQUEST, field: value}))
    assert len(keys) == 5
    assert request_key(dict(reversed(list(REQUEST.items())))) == request_key(REQUEST)


def test_replay_miss_says_what_and_how_to_record(tmp_cache):
    cache = CallCache(tmp_cache, mode="replay")
    send, calls = sender(["A"])
    with pytest.raises(CacheMissError, match=r"citation 'x'.*model 'm-1'.*--cache-mode record"):
        cache.call(REQUEST, send, what="citation 'x'")
    assert calls == []


def test_record_calls_once_then_replays(tmp_cache):
    send, calls = sender(["A", "B"])
    with CallCache(tmp_cache, mode="record") as cache:
        first, cached1 = cache.call(REQUEST, send)
        second, cached2 = cache.call(REQUEST, send)
    assert (cached1, cached2, len(calls)) == (False, True, 1)
    assert second["response"] == {"content": "A"}
    # a new cache over the same folder replays from the recording alone
    import shutil

    shutil.rmtree(tmp_cache / "store")
    with CallCache(tmp_cache, mode="replay") as replay:
        record, cached = replay.call(REQUEST, send)
    assert cached and record["response"] == {"content": "A"} and len(calls) == 1


def test_a_full_recording_rolls_over_to_a_numbered_part_and_replay_reads_every_part(tmp_cache, monkeypatch):
    import citeaudit.judge.cache

    monkeypatch.setattr(citeaudit.judge.cache, "RECORDING_MAX_BYTES", 900)
    requests = [{**REQUEST, "messages": [{"role": "user", "content": f"question {i}"}]} for i in range(9)]
    send, calls = sender([f"answer {i}" for i in range(9)])
    with CallCache(tmp_cache, mode="record") as cache:
        for request in requests:
            cache.call(request, send)
    parts = sorted(tmp_cache.glob("*.jsonl"))
    assert {"m-1.jsonl", "m-1.2.jsonl", "m-1.3.jsonl"} <= {p.name for p in parts}
    assert all(0 < p.stat().st_size <= 900 for p in parts)  # none passes the limit, none is empty
    assert sum(len(read_recording(p)) for p in parts) == 9  # each answer once, nothing lost
    import shutil

    shutil.rmtree(tmp_cache / "store")
    with CallCache(tmp_cache, mode="replay") as replay:
        answers = [replay.call(request, send)[0]["response"]["content"] for request in requests]
    assert answers == [f"answer {i}" for i in range(9)] and len(calls) == 9


def test_recording_has_no_prompt_text(tmp_cache):
    send, _ = sender(["A"])
    with CallCache(tmp_cache, mode="record") as cache:
        cache.call(REQUEST, send)
    text = (tmp_cache / recording_name("m-1")).read_text()
    assert "secret text" not in text
    record = json.loads(text)
    assert {"key", "model", "params", "prompt_version", "messages_sha256", "response", "seconds",
            "tokens", "when"} <= set(record)


def test_refresh_always_calls_and_appends(tmp_cache):
    send, calls = sender(["A", "B"])
    with CallCache(tmp_cache, mode="record") as cache:
        cache.call(REQUEST, send)
    with CallCache(tmp_cache, mode="refresh") as cache:
        record, cached = cache.call(REQUEST, send)
    assert (cached, len(calls), record["response"]["content"]) == (False, 2, "B")
    assert len(read_recording(tmp_cache / recording_name("m-1"))) == 2
    with CallCache(tmp_cache, mode="replay") as cache:  # the newest answer wins
        assert cache.call(REQUEST, send)[0]["response"]["content"] == "B"


def test_torn_last_line_is_skipped_and_kept(tmp_cache):
    path = tmp_cache / "m-1.jsonl"
    append_record(path, {"key": "k1", "response": {}}, RECORD_KEYS)
    with open(path, "a") as handle:
        handle.write('{"key": "k2", "resp')  # a crash mid-write
    assert [r["key"] for r in read_recording(path)] == ["k1"]
    append_record(path, {"key": "k3", "response": {}}, RECORD_KEYS)
    records = read_recording(path)
    assert [r["key"] for r in records] == ["k1", "k3"]
    assert '{"key": "k2", "resp\n' in path.read_text()  # never cut: only a newline was added
    assert len(records.warnings) == 1 and "line 2" in records.warnings[0]


def test_unknown_mode_is_refused(tmp_cache):
    with pytest.raises(Exception, match="replay, record, refresh"):
        CallCache(tmp_cache, mode="live")


def test_two_different_answers_under_one_key_are_reported_on_every_open(tmp_cache, caplog):
    """A recording edited or merged by hand may hold two answers for one request: replay uses the
    newest, as refresh does, and says so each time the cache opens, naming the file (issue 21)."""
    recorder = CallCache(tmp_cache, mode="record")
    recorder.call(REQUEST, sender(["A"])[0])
    recorder.close()
    path = tmp_cache / recording_name("m-1")
    (first,) = path.read_text(encoding="utf-8").splitlines()
    changed = json.loads(first)
    changed["response"] = {"content": "C"}
    path.write_text(first + "\n" + json.dumps(changed) + "\n", encoding="utf-8")  # as a hand merge would
    for _ in range(2):
        caplog.clear()
        cache = CallCache(tmp_cache, mode="replay")
        record, hit = cache.call(REQUEST, sender([])[0])
        assert hit and record["response"]["content"] == "C" and len(cache) == 1
        assert any(f"{path}: 1 request key(s) hold two or more different answers" in w for w in cache.warnings)
        assert "different answers" in caplog.text
        cache.close()
    path.write_text(first + "\n" + first + "\n", encoding="utf-8")  # the same answer twice is no conflict
    assert CallCache(tmp_cache, mode="replay").warnings == []


def test_a_runs_cache_writes_the_user_cache_and_reads_the_shipped_recordings(tmp_path, monkeypatch):
    shipped = tmp_path / "cache"
    monkeypatch.setenv("CITEAUDIT_CACHE_DIR", str(shipped))
    monkeypatch.delenv("CITEAUDIT_USER_CACHE", raising=False)
    with CallCache(shipped, mode="record") as maintainers:  # `record --shipped`: the shipped folder itself
        maintainers.call(REQUEST, sender(["A"])[0])
    before = (shipped / recording_name("m-1")).read_bytes()
    other = {**REQUEST, "prompt_version": "v2"}
    send, calls = sender(["B"])
    with AuditRun(AuditOptions.from_env(cache_mode="record")).cache as cache:
        assert cache.directory == shipped / "local" and cache.read_also == (shipped,)
        assert cache.call(REQUEST, send) == (read_recording(shipped / recording_name("m-1"))[0], True)
        assert cache.call(other, send)[1] is False and len(calls) == 1
    assert (shipped / recording_name("m-1")).read_bytes() == before  # the shipped recording is untouched
    (mine,) = read_recording(shipped / "local" / recording_name("m-1"))
    assert mine["key"] == request_key(other)
    with AuditRun(AuditOptions.from_env(cache_mode="replay")).cache as replay:  # replay reads both
        assert replay.call(REQUEST, send)[1] and replay.call(other, send)[0]["response"] == {"content": "B"}
    monkeypatch.setenv("CITEAUDIT_USER_CACHE", str(tmp_path / "elsewhere"))
    with AuditRun(AuditOptions.from_env(cache_mode="record")).cache as moved:
        assert moved.directory == tmp_path / "elsewhere"
        moved.call({**REQUEST, "prompt_version": "v3"}, sender(["C"])[0])
    assert len(read_recording(tmp_path / "elsewhere" / recording_name("m-1"))) == 1


def test_a_user_answer_that_differs_from_the_shipped_one_is_reported(tmp_path, caplog):
    shipped, user = tmp_path / "cache", tmp_path / "cache" / "local"
    with CallCache(shipped, mode="record") as maintainers:
        maintainers.call(REQUEST, sender(["A"])[0])
    with CallCache(user, mode="refresh", read_also=[shipped]) as mine:  # the user asks again: another answer
        mine.call(REQUEST, sender(["B"])[0])
    with CallCache(user, mode="replay", read_also=[shipped]) as replay:
        assert replay.call(REQUEST, sender([])[0])[0]["response"] == {"content": "B"}  # the user's own wins
        (warning,) = replay.warnings
    assert str(user / recording_name("m-1")) in warning and "two or more different answers" in warning
    assert len(read_recording(shipped / recording_name("m-1"))) == 1
