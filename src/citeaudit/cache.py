"""The call cache: a diskcache store seeded from committed JSON Lines recordings.

Key: SHA-256 of the canonical JSON (sorted keys, no spaces) of the whole request: model, messages,
every sampling parameter and the prompt version. A recording line holds the key, the model, the
parameters, the prompt version, the SHA-256 of the messages (never their text: sources may be
confidential), the response with its log-probabilities, seconds, tokens and when.

Modes: `replay` never calls and raises `CacheMissError` on a miss; `record` answers from the cache
and calls on a miss; `refresh` always calls. Calls made in `record`/`refresh` are appended to the
recording of their model, one whole line per write.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import diskcache

from . import config
from .errors import CacheMissError, InputError


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


def read_recording(path: Path) -> list[dict]:
    """Records of one JSON Lines recording. A torn last line (a crash mid-write) is skipped."""
    records = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            if n == len(lines):
                continue
            raise InputError(
                f"{path}: line {n} is not JSON ({exc}). Recordings are written by citeaudit only; "
                "restore the file from git."
            ) from exc
        if not isinstance(record, dict) or "key" not in record or "response" not in record:
            raise InputError(f"{path}: line {n} lacks 'key' or 'response'; restore the file from git.")
        records.append(record)
    return records


def append_line(path: Path, record: dict) -> None:
    """Append one JSON line in a single write, flushed to disk.

    A torn last line left by a crash (no final newline) is cut off first: it was never a record.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (canonical_json(record) + "\n").encode("utf-8")
    with open(path, "a+b") as handle:
        handle.seek(0)
        body = handle.read()
        if body and not body.endswith(b"\n"):
            handle.truncate(body.rfind(b"\n") + 1)
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


class CallCache:
    """Cached model calls under `directory` (default `cache/`), in one of the three modes."""

    def __init__(self, directory: str | Path | None = None, mode: str | None = None):
        self.directory = Path(directory) if directory else config.cache_dir()
        self.mode = mode or config.cache_mode()
        if self.mode not in config.CACHE_MODES:
            raise InputError(f"cache mode {self.mode!r} is not one of {', '.join(config.CACHE_MODES)}.")
        self.store = diskcache.Cache(str(self.directory / "store"), eviction_policy="none")
        self._seed()

    def _seed(self) -> None:
        for path in sorted(self.directory.glob("*.jsonl")):
            for record in read_recording(path):
                if self.store.get(record["key"]) != record:
                    self.store.set(record["key"], record)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "CallCache":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __len__(self) -> int:
        return len(self.store)

    def call(self, request: dict, send: Callable[[], tuple[dict, dict]], what: str = "") -> tuple[dict, bool]:
        """The recorded response of `request`, or `send()`'s, by mode. Returns (record, cached).

        `send` returns `(response, usage)`; the new record is stored and appended to the recording.
        """
        key = request_key(request)
        if self.mode != "refresh":
            hit = self.store.get(key)
            if hit is not None:
                return hit, True
        if self.mode == "replay":
            raise CacheMissError(
                f"No recorded answer for {what or 'this request'} (model {request['model']!r}, "
                f"prompt {request['prompt_version']}, key {key[:12]}) in {self.directory}. "
                "Replay mode never calls a model. To record it, point OPENAI_BASE_URL at the "
                "model's endpoint (for the local one: `citeaudit serve-local --model qwen`) and "
                "rerun with `--cache-mode record`."
            )
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
            "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        append_line(self.directory / recording_name(request["model"]), record)
        self.store.set(key, record)
        return record, False
