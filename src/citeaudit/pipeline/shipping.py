"""What a Dask worker needs that only the client can read, shipped with the work: the bytes of the
sources a partition cites and the judge's recorded answers. A worker needs nothing but citeaudit
installed; it never reads the client's paths (the dataset's folder, the data folders) or its cache
folders, and calls the judge's endpoint as the client resolved it (`settings.options.JudgeEndpoint`).

- Sources (`Shipper.arguments`): the client finds each source a partition names as a worker in the
  same process would (`resolve_source`), reads it once (at most `MAX_FILE_BYTES`) and scatters its
  bytes to every worker once per content (SHA-256). A task gets `{(name, download): (path, sha256,
  bytes, error)}` with the bytes as a future that Dask resolves on the worker; a source that cannot
  be found or read ships its error instead, so its answers are the same error rows as on threads.
  A worker writes each content once into a private folder, under the file's own name (so its
  format is chosen as at the client), and loads and indexes it from there once
  (`ShippedSource.path`); an error that names that copy names the client's path instead.
- Recordings: when the model is asked, the client reads its call cache once and scatters the
  recorded answers of the batch's model to every worker (`CallCache.export`, `Recordings`); each
  worker's judge answers from them (`cache.ShippedCache`) and holds what it records for the client
  to append, as before.

Sources and recordings are broadcast: a worker never fetches them from another worker.
"""

from __future__ import annotations

import atexit
import hashlib
import shutil
import tempfile
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from citeaudit.citations.dataset import cited_sources
from citeaudit.errors import CiteAuditError, SourceError

if TYPE_CHECKING:
    from citeaudit.citations.dataset import Item
    from citeaudit.judge.cache import CallCache, ShippedCache


class ShippedSource(NamedTuple):
    """One source as the client found it: its path there, the SHA-256 and bytes of its content (the
    bytes a Dask future until the task runs), or the error that finding or reading it raised."""

    path: str
    sha256: str | None = None
    data: Any = None
    error: str | None = None


Sources = dict[tuple[str, bool], ShippedSource]  # (name as the dataset gives it, may download) -> source


@dataclass(frozen=True)
class Recordings:
    """The recorded answers of one batch's model, read at the client (`CallCache.export`): the cache
    mode and the client's cache folders they came from, and a token naming this batch's copy."""

    records: dict[str, str]
    mode: str
    folders: tuple[Path, ...]
    token: str

    def cache(self) -> ShippedCache:
        from citeaudit.judge.cache import ShippedCache

        return ShippedCache(self.records, self.mode, self.folders)


class Shipper:
    """The client's side: what each task is given besides its partition and the run's settings."""

    def __init__(self, client: Any, model: str, cache: CallCache | None) -> None:
        """`cache`: the client's call cache, whose answers of `model` go to every worker (None when
        no model is asked)."""
        self.client = client
        self._found: Sources = {}
        self._scattered: dict[str, Any] = {}  # sha256 -> the future of its bytes
        self.recordings = None
        if cache is not None:
            shipped = Recordings(cache.export(model), cache.mode, cache.folders, uuid.uuid4().hex)
            self.recordings = client.scatter(shipped, broadcast=True, hash=False)

    def _ship(self, name: str, download: bool) -> ShippedSource:
        from citeaudit.pipeline.loading import resolve_source
        from citeaudit.sources.reading import MAX_FILE_BYTES, read_bounded

        try:
            path = resolve_source(name, download=download)
        except CiteAuditError as exc:
            return ShippedSource(name, error=str(exc))
        try:
            data = read_bounded(path, MAX_FILE_BYTES, "source")
        except CiteAuditError as exc:
            return ShippedSource(str(path), error=str(exc))
        except OSError as exc:
            return ShippedSource(str(path), error=f"Cannot read source {path}: {exc}. Check the path and that it "
                                                  "is UTF-8.")
        digest = hashlib.sha256(data).hexdigest()
        if digest not in self._scattered:
            self._scattered[digest] = self.client.scatter(data, broadcast=True, hash=False)
        return ShippedSource(str(path), digest, self._scattered[digest])

    def arguments(self, chunk: list[Item]) -> tuple[Sources, Any]:
        """The sources `chunk` cites (each found and read once per batch) and the recordings."""
        sources: Sources = {}
        for item in chunk:
            for key in cited_sources(item.entry):
                if key not in self._found:
                    self._found[key] = self._ship(*key)
                sources[key] = self._found[key]
        return sources, self.recordings


# --- the worker's side ----------------------------------------------------------------------------

_lock = threading.Lock()
_folder: list[Path] = []  # this process's folder of shipped sources, made on first use


def _private_folder() -> Path:
    if not _folder:
        folder = Path(tempfile.mkdtemp(prefix="citeaudit-sources-"))
        atexit.register(shutil.rmtree, folder, True)
        _folder.append(folder)
    return _folder[0]


@contextmanager
def source_path(source: ShippedSource) -> Iterator[Path]:
    """The local copy of a shipped source (written once per content), for the block that loads it;
    its error, if it could not be shipped, as a `SourceError`. An error raised in the block that
    names the copy names the client's path instead."""
    if source.error is not None or source.sha256 is None:
        raise SourceError(source.error or f"{source.path} was not shipped")
    with _lock:
        path = _private_folder() / source.sha256 / Path(source.path).name
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            part = path.with_name(path.name + ".part")
            part.write_bytes(source.data)
            part.replace(path)
    try:
        yield path
    except CiteAuditError as exc:
        exc.args = tuple(a.replace(str(path), source.path) if isinstance(a, str) else a for a in exc.args)
        raise
