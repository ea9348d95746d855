"""The call cache: a diskcache store seeded from committed JSON Lines recordings.

Key: SHA-256 of the canonical JSON (sorted keys, no spaces) of the whole request: model, messages,
every sampling parameter and the prompt version. A recording line holds the key, the model, the
parameters, the prompt version, the SHA-256 of the messages (never their text: sources may be
confidential), the response with its log-probabilities, seconds, tokens and when.

Modes: `replay` never calls and raises `CacheMissError` on a miss; `record` answers from the cache
and calls on a miss; `refresh` always calls. Calls made in `record`/`refresh` are appended to the
recording of their model in the cache's own folder through `stores.append_record` (one whole line
per write, under a lock), and the diskcache store is rebuilt whenever it no longer matches the
recordings.

Two kinds of recordings: the shipped ones (`cache/*.jsonl`, committed, real answers of the model
they name) are read-only inputs; a user's own go to the user cache (`cache/local/`, ignored by git,
or `CITEAUDIT_USER_CACHE`). An audit's cache (`pipeline.run.AuditRun.cache`) writes the user cache
and reads the shipped recordings as well (`read_also`); the project's own maintenance recordings
write the shipped folder itself (`citeaudit record --shipped`). A key
recorded with different answers in the two is reported like any conflict. A cache opened
with `hold=True` (a Dask worker's) appends nothing: it keeps its new records in memory, answers
repeated requests from them, and hands them over with `take_held()`, for the client to `append`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path

import diskcache

from citeaudit.errors import CacheMissError, InputError
from citeaudit.settings import environment as config
from citeaudit.stores import Records, append_offsets, encode_record, parse_records, read_records, read_store
from citeaudit.table import CacheMode

logger = logging.getLogger(__name__)


def canonical_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def request_key(request: dict) -> str:
    """The cache key of a request dict (`model`, `messages`, `params`, `prompt_version`)."""
    return sha256_hex(canonical_json(request))


def recording_name(model: str) -> str:
    """File name of a model's recording: `cache/<model>.jsonl`, unsafe characters replaced."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model) + ".jsonl"


RECORDING_MAX_BYTES = 4_500_000  # a committed recording stays under the project's 5 MB per file


def recording_path(directory: Path, model: str, adding: int = 0) -> Path:
    """The recording of `model` that takes the next `adding` bytes: `<model>.jsonl` while it stays
    within `RECORDING_MAX_BYTES`, then `<model>.2.jsonl`, `<model>.3.jsonl`, ... (the first one that
    has room; a file is never split, and an empty one takes any record). Every `*.jsonl` of the
    folder is read back, so which part holds a record does not matter to replay.
    """
    stem = recording_name(model).removesuffix(".jsonl")
    part = 1
    while True:
        path = directory / (f"{stem}.jsonl" if part == 1 else f"{stem}.{part}.jsonl")
        size = path.stat().st_size if path.is_file() else 0
        if size == 0 or size + adding <= RECORDING_MAX_BYTES:
            return path
        part += 1


RECORD_KEYS = ("key", "response")
MANIFEST_KEY = "manifest"  # record keys are 64 hex digits, so this one never collides
CONFLICTS_KEY = "conflicts"  # what the last rebuild found: keys recorded with different answers


def read_recording(path: Path) -> Records:
    """Records of one JSON Lines recording; torn lines (a crash mid-write) are skipped, in `.warnings`."""
    return read_records(path, RECORD_KEYS)


def _stored(record: dict) -> str:
    """A record as the store keeps it: JSON, ASCII-escaped (sqlite cannot hold a lone surrogate)."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"))


def _state(data: bytes) -> dict | None:
    """What the store knows of one recording's bytes; None for an empty one (it holds nothing)."""
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()} if data else None


class CallCache:
    """Cached model calls written under `directory`, in one of the three modes.

    `directory` is the folder new recordings are appended to and the store lives in (the settings'
    `AuditOptions.write_folder`: the user cache, or the shipped folder when recording it). `mode`
    is one of `CacheMode` (default `replay`: nothing is ever called). `read_also` are folders whose
    recordings are read as well and never written (the shipped folder, when `directory` is the
    user cache); they are read first, so an answer of the cache's own folder is the one
    replayed when both hold a key (and the two answers are reported as a conflict).

    The diskcache store in `<directory>/store` always agrees with the recordings (`*.jsonl` of
    `read_also` and `directory`): it holds a manifest (size and SHA-256 of every recording it was
    built from) and is rebuilt from the recordings when they differ (a recording added, edited or
    deleted). A corrupted store is deleted and rebuilt. Records are stored as JSON text.
    """

    def __init__(self, directory: str | Path, mode: str = CacheMode.REPLAY, hold: bool = False,
                 read_also: Iterable[str | Path] = ()):
        self.directory = Path(directory)
        self.read_also = tuple(p for p in map(Path, read_also) if p.resolve() != self.directory.resolve())
        self._start(mode, hold)
        self.store_dir = self.directory / "store"
        self._check_folders()
        self.store = self._open()

    def _start(self, mode: str, hold: bool) -> None:
        """The state of the calls themselves, whatever holds the recordings (`ShippedCache` too)."""
        self.hold = hold
        self._held: list[dict] = []
        self._fresh: dict[str, dict] = {}
        self.on_new: Callable[[dict], None] | None = None  # told of each new record (a progress bar)
        # a resumed batch's start (`parts.Parts.started`): a record made since then was asked by this
        # batch, so its first use is not `cached`, as in a run that was never interrupted
        self.own_since: str | None = None
        self._own_used: set[str] = set()
        self.mode = mode
        if self.mode not in config.CACHE_MODES:
            raise InputError(f"cache mode {self.mode!r} is not one of {', '.join(config.CACHE_MODES)}.")
        self.warnings: list[str] = []
        # appends and the manifest update that follows them, one thread at a time: out of order,
        # the manifest would fall behind the recording and the next open would rebuild the store
        self._write_lock = threading.Lock()

    def _check_folders(self) -> None:
        if self.directory.exists() and not self.directory.is_dir():
            raise InputError(
                f"The cache folder {self.directory} is a file. Point CITEAUDIT_CACHE_DIR (or the cache "
                "directory argument) at a folder holding the *.jsonl recordings, or move the file away."
            )
        if self.store_dir.exists() and not self.store_dir.is_dir():
            raise InputError(
                f"{self.store_dir} is a file, where citeaudit keeps its working store (rebuilt from "
                "the recordings). Remove or move that file."
            )
        try:
            self.store_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(
                f"Cannot create the cache store {self.store_dir} ({exc.strerror}). Point "
                "CITEAUDIT_CACHE_DIR at a writable folder holding the *.jsonl recordings."
            ) from None

    def _open(self) -> diskcache.Cache:
        """Open the store and bring it in line with the recordings; a corrupted one is rebuilt."""
        for attempt in (1, 2):
            store = None
            try:
                # values stay in sqlite (no value files), so cache.db is the whole store
                store = diskcache.Cache(str(self.store_dir), eviction_policy="none",
                                        disk_min_file_size=1 << 30)
                self._sync(store)
                return store
            except sqlite3.OperationalError as exc:  # locked, read-only, cannot open: not corruption
                if store is not None:
                    store.close()
                raise InputError(
                    f"Cannot use the cache store {self.store_dir} ({exc}). Check that the folder is "
                    "writable and no other program holds it, or delete the folder: it is rebuilt "
                    "from the recordings."
                ) from None
            except sqlite3.DatabaseError as exc:  # not a database, malformed
                if store is not None:
                    store.close()
                if attempt == 2:
                    raise InputError(
                        f"The cache store {self.store_dir} is unusable ({exc}) even after a rebuild. "
                        "Delete that folder; it is rebuilt from the recordings."
                    ) from None
                logger.warning("%s is corrupted (%s); rebuilding it from the recordings", self.store_dir, exc)
                shutil.rmtree(self.store_dir, ignore_errors=True)
                self.store_dir.mkdir(parents=True, exist_ok=True)
        raise AssertionError("unreachable")

    @property
    def folders(self) -> tuple[Path, ...]:
        """Where this cache's recordings (and calibrations) are looked for, the own folder first."""
        return (self.directory, *self.read_also)

    def _label(self, path: Path) -> str:
        """A recording's name in the manifest: its file name in the own folder, else its full path."""
        return path.name if path.parent == self.directory else str(path.resolve())

    def _recordings(self) -> dict[str, bytes]:
        paths = [p for folder in (*self.read_also, self.directory) for p in sorted(folder.glob("*.jsonl"))]
        return {self._label(path): read_store(path) for path in paths}

    def _path(self, label: str) -> Path:
        return self.directory / label if "/" not in label else Path(label)

    def _sync(self, store: diskcache.Cache) -> None:
        """Rebuild the store from the recordings unless its manifest matches them."""

        def manifest_of(contents: dict[str, bytes]) -> str:
            states = {name: _state(data) for name, data in contents.items()}
            return canonical_json({name: state for name, state in states.items() if state})

        if store.get(MANIFEST_KEY) == manifest_of(self._recordings()):
            self._report_conflicts(store.get(CONFLICTS_KEY))
            return
        with store.transact():  # one rebuild at a time; appends from record mode wait
            contents = self._recordings()
            manifest = manifest_of(contents)
            if store.get(MANIFEST_KEY) == manifest:
                return
            store.clear()
            answers: dict[str, object] = {}
            conflicts: dict[str, list[str]] = {}
            for name, data in contents.items():
                records = parse_records(data, self._path(name), RECORD_KEYS, texts=True)
                self.warnings.extend(records.warnings)
                for record, line in zip(records, records.texts):  # the newest answer of a key is used,
                    response = record["response"]  # a changed one reported; compared as parsed JSON
                    if answers.setdefault(record["key"], response) != response:
                        conflicts.setdefault(name, []).append(record["key"])
                        answers[record["key"]] = response
                    # the line as recorded, not encoded again: text decoded from UTF-8 never holds a lone
                    # surrogate (a recording writes one escaped, `stores.encode_record`), so sqlite takes it
                    store.set(record["key"], line)
            text = canonical_json({name: sorted(set(keys)) for name, keys in conflicts.items()}) if conflicts else None
            store.set(CONFLICTS_KEY, text)
            store.set(MANIFEST_KEY, manifest)
        self._report_conflicts(text)

    def _report_conflicts(self, text: str | None) -> None:
        """Say, on every open, which recordings hold two different answers for one request."""
        if not text:
            return
        for name, keys in json.loads(text).items():
            message = (f"{self._path(name)}: {len(keys)} request key(s) hold two or more different answers "
                       f"(first {keys[0][:12]}); the newest answer of each is the one replayed. If that is not "
                       "what you meant, keep one answer per key: re-record into a fresh cache folder.")
            self.warnings.append(message)
            logger.warning(message)

    def _remember(self, path: Path, record: dict, before: int, after: int) -> None:
        """Store a record just appended to `path` (bytes [before, after)); keep the manifest true.

        The manifest entry moves on only if it described exactly the bytes before ours; otherwise
        (another writer, an edit) it is left behind and the next open rebuilds.
        """
        data = read_store(path)
        with self.store.transact():
            old = self.store.get(record["key"])
            if old is not None and json.loads(old)["response"] != record["response"]:  # refresh changed it
                conflicts = json.loads(self.store.get(CONFLICTS_KEY) or "{}")
                keys = set(conflicts.get(self._label(path), [])) | {record["key"]}
                conflicts[self._label(path)] = sorted(keys)
                self.store.set(CONFLICTS_KEY, canonical_json(conflicts))
            self.store.set(record["key"], _stored(record))
            if len(data) < after:
                return
            manifest = json.loads(self.store.get(MANIFEST_KEY, "{}"))
            if manifest.get(self._label(path)) == _state(data[:before]):
                manifest[self._label(path)] = _state(data[:after])
                self.store.set(MANIFEST_KEY, canonical_json(manifest))

    def _get(self, key: str) -> dict | None:
        try:
            text = self.store.get(key)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):  # locked or unreadable: not corruption
                raise
            logger.warning("%s is corrupted (%s); rebuilding it from the recordings", self.store_dir, exc)
            self.store.close()
            shutil.rmtree(self.store_dir, ignore_errors=True)
            self.store_dir.mkdir(parents=True, exist_ok=True)
            self.store = self._open()
            text = self.store.get(key)
        return None if text is None else json.loads(text)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> CallCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        """The number of recorded keys."""
        return len(self.store) - (MANIFEST_KEY in self.store) - (CONFLICTS_KEY in self.store)

    def call(self, request: dict, send: Callable[[], tuple[dict, dict]], what: str = "") -> tuple[dict, bool]:
        """The recorded response of `request`, or `send()`'s, by mode. Returns (record, cached).

        `send` returns `(response, usage)`; the new record is stored and appended to the recording.
        """
        key = request_key(request)
        if self.mode != "refresh":
            hit = self._fresh.get(key) if self.hold else None
            hit = hit if hit is not None else self._get(key)
            if hit is not None:
                own = self.own_since is not None and str(hit.get("when", "")) >= self.own_since
                with self._write_lock:
                    first = own and key not in self._own_used
                    self._own_used.add(key)
                return hit, not first
        if self.mode == CacheMode.REPLAY:
            lookup = (f"No recorded answer for {what or 'this request'} (model {request['model']!r}, "
                      f"prompt {request['prompt_version']}, key {key[:12]}) in {' or '.join(map(str, self.folders))}")
            raise CacheMissError(
                f"{lookup}. Replay mode never calls a model. To record it, point OPENAI_BASE_URL at the "
                "model's endpoint (for the local one: `citeaudit serve-local --model qwen`) and "
                "rerun with `--cache-mode record`.", lookup)
        started = time.perf_counter()
        response, usage = send()
        record = {
            "key": key,
            "model": request["model"],
            "params": request["params"],
            "prompt_version": request["prompt_version"],
            "messages_sha256": sha256_hex(canonical_json(request["messages"])),
            "response": response,
            "seconds": round(time.perf_counter() - started, 3),
            "tokens": usage,
            "when": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        if self.hold:
            with self._write_lock:
                self._held.append(record)
                self._fresh[key] = record
        else:
            self.append([record])
        if self.on_new is not None:
            self.on_new(record)
        return record, False

    def recorded(self, request: dict) -> dict | None:
        """The record of `request`, or None; never calls."""
        key = request_key(request)
        return self._fresh.get(key) or self._get(key)

    def append(self, records: list[dict]) -> None:
        """Append records made elsewhere (a worker's `take_held()`) to their models' recordings, in
        order, as `call` appends its own; the store learns them too."""
        with self._write_lock:
            for record in records:
                path = recording_path(self.directory, record["model"], len(encode_record(record)))
                before, after = append_offsets(path, record, RECORD_KEYS)
                self._remember(path, record, before, after)

    def take_held(self) -> list[dict]:
        """The records made since the last call, each handed over once (for `append` elsewhere)."""
        with self._write_lock:
            held, self._held = self._held, []
        return held

    def export(self, model: str) -> dict[str, str]:
        """Every answer of `model` this cache replays, by request key, as its store keeps it (JSON
        text; the newest answer of a key recorded twice): what a Dask worker that cannot read the
        cache folders is given (`ShippedCache`)."""
        out: dict[str, str] = {}
        for key in self.store.iterkeys():
            if key in (MANIFEST_KEY, CONFLICTS_KEY):
                continue
            text = self.store.get(key)
            if text is not None and json.loads(text).get("model") == model:
                out[key] = text
        return out


class ShippedCache(CallCache):
    """A `CallCache` whose recorded answers were read at the client and shipped (`CallCache.export`),
    for a Dask worker that reads no cache folder: it answers from them in every mode as the client's
    cache would, and, holding (`hold=True`), keeps what it records for the client to `append`.
    `folders` are the client's (they name where its recordings are, in a replay miss's message);
    nothing is read from or written to them here."""

    def __init__(self, records: dict[str, str], mode: str, folders: tuple[Path, ...]) -> None:
        self.directory, self.read_also = folders[0], tuple(folders[1:])
        self._start(mode, hold=True)
        self._records = records

    def _get(self, key: str) -> dict | None:
        text = self._records.get(key)
        return None if text is None else json.loads(text)

    def append(self, records: list[dict]) -> None:
        raise TypeError("a shipped cache holds its new records for the client (take_held), it appends nothing")

    def close(self) -> None:
        pass

    def __len__(self) -> int:
        return len(self._records)
