"""JSON Lines stores, the replay store's agreement with the recordings, atomic output files.

Writers run in real processes (concurrency, SIGKILL mid-write): threads would share one process's
locks and could not be killed.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from functools import partial
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citeaudit
from citeaudit import CallCache, InputError
from citeaudit.errors import CacheMissError, StoreError
from citeaudit.judge.cache import recording_name
from citeaudit.stores import append_record, atomic_write_text, encode_record, read_records

KEYS = ("key", "response")
PACKAGE = Path(citeaudit.__file__).parent

# A child process that loads citeaudit.stores alone (not the whole package with pandas), so that
# many of them start fast, then runs `argv[1]` with `append_record` in scope.
CHILD = f"""
import sys, types
package = types.ModuleType("citeaudit")
package.__path__ = [{str(PACKAGE)!r}]
sys.modules["citeaudit"] = package
from citeaudit.stores import append_record
exec(sys.argv[1])
"""


def child(code: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", CHILD, code, *args])


# -- refusal ------------------------------------------------------------------------------------

def settings_file(folder: Path) -> Path:
    path = folder / "settings.cfg"
    with open(path, "w") as handle:
        json.dump({"model": "m", "threshold": 0.8, "reviewers": ["a", "b"], "paths": {"cache": "c"}},
                  handle, indent=2)
    return path


def one_line_object(folder: Path) -> Path:
    path = folder / "other.jsonl"
    path.write_text('{"citation_id": "c1", "verdict": "verified"}\n')
    return path


def json_named(folder: Path) -> Path:
    path = folder / "reviews.json"  # even holding valid records: .json is read-only
    path.write_bytes(encode_record({"key": "k", "response": 1}))
    return path


def non_utf8(folder: Path) -> Path:
    path = folder / "latin1.jsonl"
    path.write_bytes("{\"key\": \"caf\u00e9\"}\n".encode("latin-1") + b"\xff\xfe\x00\x01")
    return path


@pytest.mark.parametrize("make, why", [
    (settings_file, "no line is a JSON record"),
    (one_line_object, "no line is a JSON object holding 'key', 'response'"),
    (json_named, r"\.json file is never appended to.*\.jsonl"),
    (non_utf8, "not UTF-8"),
])
def test_a_file_that_is_not_a_store_is_refused_and_untouched(tmp_path, make, why):
    path = make(tmp_path)
    before = path.read_bytes()
    with pytest.raises(StoreError, match=why) as caught:
        append_record(path, {"key": "k", "response": "r"}, KEYS)
    assert str(path) in str(caught.value)
    assert path.read_bytes() == before
    assert sorted(tmp_path.iterdir()) == [path]


def test_a_review_append_refuses_the_reported_settings_file(tmp_path):
    from citeaudit.decide.reviews import REVIEW_FIELDS

    def append_line(path, record):
        append_record(path, record, REVIEW_FIELDS)

    path = tmp_path / "settings.json"
    with open(path, "w") as handle:
        json.dump({"name": "x" * 2000, "nested": {"a": [1, 2, 3]}}, handle, indent=2)
    before = path.read_bytes()
    with pytest.raises(StoreError, match=r"\.jsonl"):
        append_line(path, {"citation_id": "c", "fingerprint": "f", "verdict": "verified"})
    assert path.read_bytes() == before
    path = path.rename(tmp_path / "settings.jsonl")  # the name is no guard: the content is checked
    with pytest.raises(StoreError, match="not a JSON Lines store"):
        append_line(path, {"citation_id": "c", "fingerprint": "f", "verdict": "verified"})
    assert path.read_bytes() == before


def test_a_directory_is_refused(tmp_path):
    folder = tmp_path / "store.jsonl"
    folder.mkdir()
    with pytest.raises(StoreError, match="is a directory"):
        append_record(folder, {"key": "k", "response": "r"}, KEYS)
    with pytest.raises(StoreError, match="is a directory"):
        read_records(folder, KEYS)
    assert list(folder.iterdir()) == []


def test_a_store_under_a_file_is_refused_with_the_fix(tmp_path):
    (tmp_path / "plain").write_text("x")
    with pytest.raises(StoreError, match=r"plain is a file, not a folder.*folder you can write"):
        append_record(tmp_path / "plain" / "r.jsonl", {"key": "k", "response": 1}, KEYS)


def test_reading_a_file_that_is_not_a_store_is_an_error(tmp_path):
    with pytest.raises(StoreError, match="settings.cfg: not a JSON Lines store"):
        read_records(settings_file(tmp_path), KEYS)
    with pytest.raises(StoreError, match="not a JSON Lines store.*line 1 is JSON but not a JSON object with 'key'"):
        read_records(one_line_object(tmp_path), KEYS)
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text('{"key": "k", "response": 1}\n{"key": "k"}\n')
    with pytest.raises(StoreError, match="line 2 is JSON but not a record of this store"):
        read_records(mixed, KEYS)


def test_a_missing_or_empty_store_reads_empty(tmp_path):
    assert read_records(tmp_path / "none.jsonl", KEYS) == []
    (tmp_path / "blank.jsonl").write_text("\n \n")
    assert read_records(tmp_path / "blank.jsonl", KEYS) == []


# -- the last line ------------------------------------------------------------------------------

def test_a_last_record_without_its_newline_survives_an_append(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"key": "k1", "response": 1}')
    append_record(path, {"key": "k2", "response": 2}, KEYS)
    assert path.read_text() == '{"key": "k1", "response": 1}\n{"key":"k2","response":2}\n'
    records = read_records(path, KEYS)
    assert [r["key"] for r in records] == ["k1", "k2"] and records.warnings == []


def test_a_torn_last_line_stays_on_disk_and_is_skipped_with_a_warning(tmp_path):
    path = tmp_path / "r.jsonl"
    append_record(path, {"key": "k1", "response": 1}, KEYS)
    torn = encode_record({"key": "k2", "response": "é" * 10})[:-9]  # cut inside a character
    with open(path, "ab") as handle:
        handle.write(torn)
    records = read_records(path, KEYS)
    assert [r["key"] for r in records] == ["k1"]
    assert len(records.warnings) == 1 and str(path) in records.warnings[0] and "line 2" in records.warnings[0]
    append_record(path, {"key": "k3", "response": 3}, KEYS)
    assert path.read_bytes().split(b"\n")[1] == torn
    records = read_records(path, KEYS)
    assert [r["key"] for r in records] == ["k1", "k3"] and "line 2" in records.warnings[0]


def test_a_store_holding_only_a_torn_first_record_is_still_a_store(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"key": "k1", "resp')
    append_record(path, {"key": "k2", "response": 2}, KEYS)
    assert [r["key"] for r in read_records(path, KEYS)] == ["k2"]


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\x85", "\r", "\x0b", "\x0c", "\x1c"])
def test_line_separators_inside_a_field_round_trip(tmp_path, char):
    path = tmp_path / "r.jsonl"
    records = [{"key": f"k{n}", "response": {"content": f"a{char}b", "note": char * n}} for n in range(3)]
    for record in records:
        append_record(path, record, KEYS)
    assert read_records(path, KEYS) == records
    assert path.read_bytes().count(b"\n") == 3


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
# st.characters() includes lone surrogates, which a model's token can hold too
TEXT = st.text(st.sampled_from("\n\r\u2028\u2029\x85\x00\"\\{}é字🙂 \ud83d") | st.characters(), max_size=40)
RECORD = st.fixed_dictionaries({"key": TEXT, "response": JSON}, optional={"note": TEXT, "extra": JSON})


@settings(max_examples=60, deadline=None)
@given(st.lists(RECORD, max_size=6))
def test_append_then_read_returns_the_records_in_order(records):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "r.jsonl"
        for record in records:
            append_record(path, record, KEYS)
        back = read_records(path, KEYS)
        assert back == records and back.warnings == []


# -- processes ----------------------------------------------------------------------------------

WRITER = """
import os, sys, time
path, writer, count, size = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
open(f"{path}.ready{writer}", "w").close()
while not os.path.exists(path + ".go"):
    time.sleep(0.001)
for n in range(count):
    body = (f"{writer}:{n}:\\u2028é" * size)[:size]
    append_record(path, {"key": f"{writer}-{n}", "response": body}, ("key", "response"))
"""


@pytest.mark.slow  # starts writer processes
def test_many_processes_appending_lose_nothing(tmp_path):
    path = tmp_path / "r.jsonl"
    writers, count, size = 16, 20, 20_000
    procs = [child(WRITER, str(path), str(w), str(count), str(size)) for w in range(writers)]
    deadline = time.monotonic() + 20
    while len(list(tmp_path.glob("r.jsonl.ready*"))) < writers and time.monotonic() < deadline:
        time.sleep(0.01)
    (tmp_path / "r.jsonl.go").touch()  # all start appending at once
    assert [proc.wait(timeout=60) for proc in procs] == [0] * writers
    records = read_records(path, KEYS)
    assert records.warnings == []
    assert sorted(r["key"] for r in records) == sorted(f"{w}-{n}" for w in range(writers) for n in range(count))
    assert all(len(r["response"]) == size and r["response"].startswith(r["key"].replace("-", ":") + ":")
               for r in records)
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == writers * count + 1 and b"\x00" not in path.read_bytes()
    # each writer's records are in its own order
    for w in range(writers):
        mine = [int(r["key"].split("-")[1]) for r in records if r["key"].startswith(f"{w}-")]
        assert mine == list(range(count))


LOOPER = """
import sys
path = sys.argv[2]
body = "x" * int(sys.argv[3])
n = 0
while True:
    append_record(path, {"key": f"k{n}", "response": body}, ("key", "response"))
    n += 1
"""


@pytest.mark.slow  # writer processes
def test_a_writer_killed_mid_write_leaves_a_readable_store(tmp_path):
    size = 8 << 20
    for attempt in range(12):
        path = tmp_path / f"r{attempt}.jsonl"
        line = len(encode_record({"key": "k0", "response": "x" * size}))
        proc = child(LOOPER, str(path), str(size))
        deadline = time.monotonic() + 20
        # kill as soon as the file shows part of a record past the first one: the write is under way
        while time.monotonic() < deadline:
            grown = path.stat().st_size if path.exists() else 0
            if grown > line and grown % line:
                break
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        if not path.read_bytes().endswith(b"\n"):
            break
    else:
        pytest.skip("the writer was never caught mid-write")
    records = read_records(path, KEYS)
    assert len(records) >= 1 and all(r["response"] == "x" * size for r in records)
    assert len(records.warnings) == 1 and f"line {len(records) + 1}" in records.warnings[0]
    torn = path.read_bytes()
    append_record(path, {"key": "after", "response": "ok"}, KEYS)
    assert path.read_bytes().startswith(torn)  # nothing cut
    again = read_records(path, KEYS)
    assert [r["key"] for r in again][-1] == "after" and len(again) == len(records) + 1
    assert len(again.warnings) == 1


# -- the replay store agrees with the recordings ------------------------------------------------

REQUEST = {"model": "m-1", "messages": [{"role": "user", "content": "q"}], "params": {}, "prompt_version": "v1"}


def _reply(answer: str) -> tuple[dict, dict]:
    return {"content": answer}, {}


def record(folder: Path, *answers: str) -> list[dict]:
    requests = [{**REQUEST, "messages": [{"role": "user", "content": f"q{n}"}]} for n in range(len(answers))]
    with CallCache(folder, mode="record") as cache:
        for request, answer in zip(requests, answers):
            cache.call(request, partial(_reply, answer))
    return requests


def never():
    raise AssertionError("replay must not call")


def test_a_deleted_recording_is_no_longer_replayed(tmp_cache):
    (request,) = record(tmp_cache, "A")
    with CallCache(tmp_cache, mode="replay") as cache:
        assert cache.call(request, never)[0]["response"] == {"content": "A"}
    (tmp_cache / recording_name("m-1")).unlink()
    with CallCache(tmp_cache, mode="replay") as cache:
        with pytest.raises(CacheMissError):
            cache.call(request, never)
        assert len(cache) == 0


def test_an_edited_recording_is_replayed_as_edited(tmp_cache):
    first, second = record(tmp_cache, "A", "B")
    path = tmp_cache / recording_name("m-1")
    stat = path.stat()
    path.write_text(path.read_text().replace('"content":"A"', '"content":"Z"'))  # same size
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # and same time: only the bytes differ
    with CallCache(tmp_cache, mode="replay") as cache:
        assert cache.call(first, never)[0]["response"] == {"content": "Z"}
        assert cache.call(second, never)[0]["response"] == {"content": "B"}


def test_recording_keeps_the_store_in_step_so_reopening_does_not_rebuild(tmp_cache):
    record(tmp_cache, "A", "B", "C")
    with CallCache(tmp_cache, mode="replay") as cache:
        cache.store.set("sentinel", "1")  # a rebuild would clear it
    with CallCache(tmp_cache, mode="replay") as cache:
        assert cache.store.get("sentinel") == "1" and len(cache) == 4
    with open(tmp_cache / recording_name("m-1"), "a") as handle:
        handle.write("\n")  # any change to a recording rebuilds
    with CallCache(tmp_cache, mode="replay") as cache:
        assert cache.store.get("sentinel") is None and len(cache) == 3


def test_concurrent_recording_threads_all_replay(tmp_cache):
    requests = [{**REQUEST, "messages": [{"role": "user", "content": f"t{n}"}]} for n in range(12)]
    with CallCache(tmp_cache, mode="record") as cache:
        threads = [threading.Thread(target=cache.call, args=(r, lambda n=n: ({"content": n}, {})))
                   for n, r in enumerate(requests)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    with CallCache(tmp_cache, mode="replay") as cache:
        assert [cache.call(r, never)[0]["response"]["content"] for r in requests] == list(range(12))


def test_a_token_holding_half_a_character_is_recorded_and_replayed(tmp_cache):
    (request,) = record(tmp_cache, "\ud83d\u2028")
    with CallCache(tmp_cache, mode="replay") as cache:
        assert cache.call(request, never)[0]["response"] == {"content": "\ud83d\u2028"}


def test_a_corrupted_store_is_rebuilt(tmp_cache):
    (request,) = record(tmp_cache, "A")
    (tmp_cache / "store" / "cache.db").write_bytes(b"garbage, not sqlite " * 200)
    with CallCache(tmp_cache, mode="replay") as cache:
        assert cache.call(request, never)[0]["response"] == {"content": "A"}


def test_a_cache_folder_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "cache").write_text("not a folder")
    with pytest.raises(InputError, match="CITEAUDIT_CACHE_DIR"):
        CallCache(tmp_path / "cache", mode="replay")


def test_a_recording_that_is_not_a_store_is_refused_on_open(tmp_cache):
    tmp_cache.mkdir()
    (tmp_cache / "notes.jsonl").write_text('{"hello": "world"}\n')
    with pytest.raises(StoreError, match="notes.jsonl: not a JSON Lines store.*line 1 is JSON but not"):
        CallCache(tmp_cache, mode="replay")


# -- atomic output files ------------------------------------------------------------------------

def test_concurrent_atomic_writes_never_mix_and_leave_no_temporary_files(tmp_path):
    path = tmp_path / "out.html"
    texts = ["a" * 300_000, "b" * 200_000 + "é"]
    seen, errors = set(), []

    def write(text):
        try:
            for _ in range(40):
                atomic_write_text(path, text)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def read():
        while any(t.is_alive() for t in writers):
            if path.exists():
                seen.add(path.read_text(encoding="utf-8"))

    writers = [threading.Thread(target=write, args=(text,)) for text in texts]
    reader = threading.Thread(target=read)
    for thread in writers:
        thread.start()
    reader.start()
    for thread in [*writers, reader]:
        thread.join()
    assert errors == []
    assert path.read_text(encoding="utf-8") in texts and seen <= set(texts)
    assert [p.name for p in tmp_path.iterdir()] == ["out.html"]


def test_atomic_write_under_a_file_says_which_part_is_a_file(tmp_path):
    (tmp_path / "report").write_text("x")
    with pytest.raises(InputError, match=r"report is a file, not a folder"):
        atomic_write_text(tmp_path / "report" / "out.html", "<html>")
    assert [p.name for p in tmp_path.iterdir()] == ["report"]


def test_a_failed_atomic_write_removes_its_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "out.jsonl"
    path.write_text("old")

    def fail(*args):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(InputError, match="out.jsonl.*Permission denied"):
        atomic_write_text(path, "new")
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"] and path.read_text() == "old"


def test_atomic_write_keeps_the_mode_of_the_file_it_replaces(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    path.chmod(0o640)
    atomic_write_text(path, "new")
    assert path.read_text() == "new" and path.stat().st_mode & 0o777 == 0o640


def test_a_record_with_a_repeated_key_is_refused_not_read_last_wins(tmp_path):
    path = tmp_path / "reviews.jsonl"
    path.write_text('{"citation_id": "c1", "fingerprint": "' + "a" * 64 + '", "verdict": "unsupported", '
                    '"verdict": "verified"}\n')
    with pytest.raises(StoreError, match=r"line 1 gives the key\(s\) 'verdict' twice"):
        read_records(path, ("citation_id", "fingerprint", "verdict"))


def test_an_output_that_is_not_a_regular_file_is_refused_and_left_alone(tmp_path):
    """--output /dev/null as root would replace the device with a file; a fifo would become one too."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for target in (Path("/dev/null"), fifo, tmp_path):
        before = target.lstat()
        with pytest.raises(InputError, match="not a regular file"):
            atomic_write_text(target, "x")
        after = target.lstat()
        assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
