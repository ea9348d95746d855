"""Append-only JSON Lines stores (model recordings, human reviews) and atomic output files.

A store is a UTF-8 text file of JSON objects, one per line, each holding the store's `required`
keys. The contracts:

- `append_record` adds one record as one `write` of the whole line (O_APPEND), under an exclusive
  `flock` of the store itself, then fsyncs. It never truncates or rewrites a byte: when the file
  does not end with a newline (a write cut short by a crash, or a last record saved without its
  newline), the line written starts with a newline, so the old bytes stay as they were.
- A path that is not a store is refused with `StoreError` and left untouched: a directory or other
  non-regular file, a file named `*.json` (seed 000's `reviews.json` is read-only), and a non-empty
  file in which no line is a record (a settings file, a binary file, non-UTF-8 text). The one
  exception is a file holding nothing but cut-short records (each line starts with `{"`), which is
  what a crash during the first appends leaves.
- Readers split on `\\n` only: records keep U+2028, U+2029 and U+0085 as text (`str.splitlines`
  would split on them). Blank lines are skipped; a last record without its newline counts; a line
  that is not JSON (a torn write) is skipped and reported in `Records.warnings`; a JSON line that
  is not a record of this store raises `StoreError`.
- `atomic_write_text` writes an output file through a unique temporary file in the same folder,
  fsynced and renamed into place, so concurrent writers never collide and a reader never sees half
  a file.

Locks are POSIX `flock` locks on the store file itself: no lock files beside the recordings (or
in a reviews folder), no extra dependency, and the kernel releases the lock of a killed process,
so a crash never leaves a stale lock. POSIX only (`fcntl`, `os.pread`), like the rest of the
tooling here.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeGuard

from citeaudit import strictjson
from citeaudit.errors import InputError, StoreError

logger = logging.getLogger(__name__)

_CHUNK = 1 << 20
MAX_STORE_BYTES = 2_000_000_000  # a store is read whole: a review is about 300 bytes, a recording 2 KB


class Records(list):
    """The records of a store, in file order, plus `warnings`: one message per skipped torn line,
    and, when asked for (`parse_records(..., texts=True)`), `texts`: each record's line as read, the
    JSON text of the same value, in the same order."""

    def __init__(self, records: Iterable[dict] = (), warnings: Iterable[str] = (),
                 texts: Iterable[str] = ()) -> None:
        super().__init__(records)
        self.warnings: list[str] = list(warnings)
        self.texts: list[str] = list(texts)


def encode_record(record: dict) -> bytes:
    r"""One store line: canonical JSON (sorted keys, no spaces, UTF-8, not ASCII-escaped) and `\n`.

    A record holding a lone surrogate (half of a character, as a model's token can be) cannot be
    UTF-8: that record is written ASCII-escaped instead, which reads back the same.

    >>> encode_record({"b": "x\u2028y", "a": 1})
    b'{"a":1,"b":"x\xe2\x80\xa8y"}\n'
    >>> encode_record({"a": "\ud83d"})
    b'{"a":"\\ud83d"}\n'
    """
    if not isinstance(record, dict):
        raise TypeError(f"a store record is a dict, not {type(record).__name__}")
    try:
        text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:  # NaN, a set, an object
        raise ValueError(f"record is not storable as JSON: {exc}") from exc
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(record, sort_keys=True, separators=(",", ":"), allow_nan=False) + "\n").encode("ascii")


def _refusal(path: Path, why: str) -> StoreError:
    return StoreError(
        f"{path}: not a JSON Lines store ({why}); it was left untouched. Pass the path of a "
        "store citeaudit writes (a new or existing .jsonl file, one JSON record per line)."
    )


def _check_name(path: Path) -> None:
    if path.suffix.lower() == ".json":
        raise StoreError(
            f"{path}: a .json file is never appended to (seed 000's reviews.json is read-only). "
            f"Reviews and recordings are appended to a JSON Lines store: pass a .jsonl path, "
            f"e.g. {path.with_suffix('.jsonl')}."
        )


def _is_record(value: object, required: tuple[str, ...]) -> TypeGuard[dict]:
    return isinstance(value, dict) and all(key in value for key in required)


def _looks_torn(line: bytes) -> bool:
    """A cut-short record: our records are objects whose first key is quoted right after `{`."""
    return line.lstrip().startswith(b'{"')


def parse_records(data: bytes, path: str | Path, required: tuple[str, ...] = (), texts: bool = False) -> Records:
    """The records in `data`, the bytes of the store at `path` (named in messages and warnings);
    with `texts`, each record's line too (`Records.texts`)."""
    path = Path(path)
    _refuse_not_text(data, path)
    records, warnings, foreign, torn_only, kept = [], [], None, True, []
    lines = data.split(b"\n")
    for n, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
            value = strictjson.loads(text)
        except strictjson.RepeatedKeyError as exc:  # before ValueError: a whole line, not a torn one
            keys = ", ".join(map(repr, sorted(exc.keys)))
            raise StoreError(f"{path}: line {n} gives the key(s) {keys} twice; citeaudit never writes that. "
                             "Remove or fix that line.") from None
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # not JSON, or beyond json's limits
            torn_only = torn_only and _looks_torn(raw)
            where = "the last line, cut short" if n == len(lines) else "a line that is not JSON"
            warnings.append(f"{path}: line {n} skipped ({where}: a write torn by a crash?): {exc}")
            continue
        if _is_record(value, required):
            records.append(value)
            if texts:
                kept.append(text)
        elif foreign is None:
            foreign = n
    if not records and (foreign or not torn_only):
        raise _refusal(path, "no line is a JSON record" if foreign is None else
                       f"no line is a record; line {foreign} is JSON but not {_needs(required)}")
    if foreign is not None:
        raise StoreError(
            f"{path}: line {foreign} is JSON but not a record of this store (expected {_needs(required)}). "
            "Is this the right file? Remove that line, or pass the store citeaudit wrote."
        )
    for message in warnings:
        logger.warning(message)
    return Records(records, warnings, kept)


def _refuse_not_text(data: bytes | int, path: Path) -> None:
    """A store whose first bytes (of `data`, or read from the open file `data`) show it is
    compressed, an archive or UTF-16/32 text is refused for what it is (`reading.not_text`), not
    line by line as "not JSON"."""
    from citeaudit.sources.reading import HEAD_BYTES, not_text  # here: the sources package is not a store's concern

    found = not_text(os.pread(data, HEAD_BYTES, 0) if isinstance(data, int) else data[:HEAD_BYTES])
    if found is not None:
        kind, fix = found
        raise _refusal(path, f"it is {kind}; {fix.replace('FILE', str(path))}")


def _needs(required: tuple[str, ...]) -> str:
    return f"a JSON object with {', '.join(map(repr, required))}" if required else "a JSON object"


def _open_regular(path: Path, flags: int) -> int:
    """An fd of the regular file `path`; a directory or device is refused as not a store."""
    try:
        fd = os.open(path, flags | os.O_CLOEXEC | os.O_NONBLOCK, 0o666)
    except IsADirectoryError:
        raise _refusal(path, "it is a directory") from None
    except OSError as exc:
        raise StoreError(
            f"{path}: cannot open the store ({exc.strerror}). Check that its folder exists and is "
            "writable, or pass another path."
        ) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise _refusal(path, "it is a directory" if stat.S_ISDIR(mode) else "it is not a regular file")
    return fd


def read_store(path: str | Path) -> bytes:
    """The bytes of the store at `path` (b"" when it does not exist), read under a shared lock; a
    store over `MAX_STORE_BYTES` is refused (`StoreError`) before it is read."""
    path = Path(path)
    if not os.path.lexists(path):
        return b""
    fd = _open_regular(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        if size > MAX_STORE_BYTES:
            raise StoreError(f"{path} is {size:,} bytes; citeaudit reads a store of up to {MAX_STORE_BYTES:,} "
                             "bytes, whole. Start a new store (a new .jsonl path) and keep this one as it is.")
        fcntl.flock(fd, fcntl.LOCK_SH)
        chunks, total = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            total += len(chunk)
            if total > MAX_STORE_BYTES:  # it grew while read
                raise StoreError(f"{path} grew past {MAX_STORE_BYTES:,} bytes while read; citeaudit reads a store "
                                 "of up to that, whole. Start a new store (a new .jsonl path).")
        return b"".join(chunks)
    finally:
        os.close(fd)  # releases the lock


def read_records(path: str | Path, required: tuple[str, ...] = ()) -> Records:
    """The records of the store at `path` (empty when missing), warnings on skipped torn lines."""
    return parse_records(read_store(path), path, required)


def _classify(raw: bytes, required: tuple[str, ...]) -> str | None:
    """None for a record, "torn" for a cut-short record, else why the line is not a record."""
    try:
        value = strictjson.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return "it is not UTF-8 text"
    except ValueError:  # not JSON, nested too deeply, or a key given twice: read as `parse_records` reads it
        return "torn" if _looks_torn(raw) else "no line is a JSON record"
    if _is_record(value, required):
        return None
    if required:
        return f"no line is a JSON object holding {', '.join(map(repr, required))}"
    return "no line is a JSON object"


def _lines_of(fd: int) -> Iterator[bytes]:
    """The lines of the file open at `fd`, read in chunks; the last one may lack its newline."""
    offset, parts = 0, list[bytes]()
    while chunk := os.pread(fd, _CHUNK, offset):
        offset += len(chunk)
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            yield b"".join([*parts, chunk[start:end]])
            parts, start = [], end + 1
        parts.append(chunk[start:])
    if any(parts):
        yield b"".join(parts)


def _check_store(fd: int, path: Path, required: tuple[str, ...]) -> None:
    """Refuse `path` unless a line is a record (or all are cut short); reads up to the first record."""
    why = None
    _refuse_not_text(fd, path)
    for raw in _lines_of(fd):
        if raw.strip():
            verdict = _classify(raw, required)
            if verdict is None:
                return
            if verdict != "torn":
                why = why or verdict
    if why:
        raise _refusal(path, why)
    # empty, blank, or nothing but records cut short by a crash: still a store


def append_offsets(path: str | Path, record: dict, required: tuple[str, ...] = ()) -> tuple[int, int]:
    """`append_record`, returning the store's size before and after the write."""
    path = Path(path)
    data = encode_record(record)
    _check_name(path)
    if not _is_record(record, required):
        raise ValueError(f"record lacks one of the required keys {required}")
    created = not os.path.lexists(path)
    if created:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            blocker = _file_in_the_way(path.parent)
            why = f"{blocker} is a file, not a folder" if blocker else exc.strerror
            raise StoreError(
                f"{path}: cannot create its folder ({why}). Pass a store path in a folder you can write."
            ) from None
    fd = _open_regular(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size:
            _check_store(fd, path, required)
            if os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data  # keep the unterminated last line whole; the record starts afresh
        view = memoryview(data)
        while view:  # one write; the loop only finishes a short write, still under the lock
            view = view[os.write(fd, view):]
        os.fsync(fd)
        after = size + len(data)
    except OSError as exc:
        raise StoreError(f"{path}: appending failed ({exc.strerror}). Free disk space or check permissions.") from None
    finally:
        os.close(fd)  # releases the lock
    if created:
        _fsync_dir(path.parent)
    return size, after


def append_record(path: str | Path, record: dict, required: tuple[str, ...] = ()) -> None:
    """Append `record` to the JSON Lines store at `path` (created if missing), durably.

    `required`: the keys every record of this store holds; a non-empty file with no line holding
    them is not a store and is refused (`StoreError`), untouched.
    """
    append_offsets(path, record, required)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _umask()  # read once at import: os.umask is process-wide and not thread-safe


def _file_in_the_way(folder: Path) -> Path | None:
    """The first existing part of `folder` that is not a folder, if any."""
    for part in reversed([folder, *folder.parents]):
        if part.exists() and not part.is_dir():
            return part
    return None


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write `text` (UTF-8) to `path` all at once: readers see the old file or the new one, whole
    (`atomic_write_chunks`)."""
    return atomic_write_chunks(path, (text,))


def atomic_write_chunks(path: str | Path, chunks: Iterable[str]) -> Path:
    """Write the texts of `chunks` (UTF-8), one after the other, to `path` all at once: readers see
    the old file or the new one, whole; the chunks are written as they come, never held together.

    A unique temporary file in the same folder is written, fsynced and renamed over `path`, so
    concurrent writers never share it; it is removed on any failure. An unwritable path, or one
    that exists and is not a regular file (a device such as /dev/null, a pipe), raises
    `InputError` naming it, and the path is left as it was.
    """
    path = Path(path)
    if path.exists() and not path.is_file():
        raise InputError(f"cannot write {path}: it is not a regular file (a device, a folder, a pipe or a "
                         "socket), and citeaudit never replaces one. Choose a file path for the output.")
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except FileNotFoundError:
            mode = 0o666 & ~_UMASK
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp",
                                         delete=False) as handle:
            tmp = Path(handle.name)
            for chunk in chunks:
                handle.write(chunk.encode("utf-8"))
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        blocker = _file_in_the_way(path.parent)
        why = f"{blocker} is a file, not a folder" if blocker else (exc.strerror or str(exc))
        raise InputError(
            f"cannot write {path} ({why}). Choose an output path in a folder you can write "
            "(it is created if missing; no part of the path may be a file)."
        ) from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                tmp.unlink()
    _fsync_dir(path.parent)
    return path
