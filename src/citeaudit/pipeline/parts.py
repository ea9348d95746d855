"""The partitions of one batch, written as they finish, so that an interrupted batch resumes.

`citeaudit batch --output ROWS` keeps them in `ROWS.parts/` until the batch's outputs are written,
then removes the folder:

- `manifest.json`: what the batch is (the dataset's answers and the bytes of the sources they cite,
  the settings and the routing, the partition size, the per-run arguments), written first;
- `started`: when the batch began (UTC, to the second): the judge's answers recorded since then are
  the batch's own, not `cached`, when a resumed run replays them;
- `part-NNNNNN.jsonl`, one per finished partition: a header line (`part`, `lines`: the dataset
  lines of its answers, `sha256` of the lines after it), then one JSON object per answer, as
  `batch.Outcome.saved` gives it (its line, id, decision, source, report cards, and its JSON
  records exactly as the rows file holds them).

Each file is written whole (`stores.atomic_write_text`: a temporary file renamed into place), so a
batch killed at any moment leaves the partitions that finished complete and the others absent. A
resumed batch (`resume=True`) keeps a part only when its header names the partition it should hold,
the answers' lines are that partition's and the digest matches (checked as the partition comes
round); anything else is discarded and its partition audited again. The manifest must be the
same: a batch over changed answers, sources or settings starts again, it never mixes, and the
refusal says what changed. Where the dataset's folder is does not count (`batch.describe`): the
same files moved or copied elsewhere resume.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citeaudit.errors import CiteAuditError, InputError
from citeaudit.stores import atomic_write_text

if TYPE_CHECKING:
    from citeaudit.citations.dataset import Item

MANIFEST, STARTED = "manifest.json", "started"


def parts_folder(rows: str | Path) -> Path:
    """Where the partitions of a batch whose rows go to `rows` are kept while it runs."""
    rows = Path(rows)
    return rows.with_name(rows.name + ".parts")


def source_digest(name: str) -> str:
    """SHA-256 of the bytes of the source file `name` names (as `load_document` finds it), or
    "unreadable" (its answers are error rows)."""
    from citeaudit.pipeline.loading import resolve_source

    try:
        return hashlib.sha256(resolve_source(name, download=False).read_bytes()).hexdigest()
    except (CiteAuditError, OSError):
        return "unreadable"


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Parts:
    """The folder of one batch's finished partitions (see the module's docstring)."""

    def __init__(self, folder: str | Path, manifest: dict[str, Any]) -> None:
        self.folder = Path(folder)
        self.manifest = json.dumps(manifest, ensure_ascii=False, sort_keys=True, indent=1, allow_nan=False) + "\n"
        self.discarded: list[str] = []  # parts of an earlier run that were not kept, and why
        self.started = ""  # when the batch began (`start`)
        self._resume = False

    def _part(self, index: int) -> Path:
        return self.folder / f"part-{index:06d}.jsonl"

    def start(self, resume: bool) -> None:
        """Open the folder for a run: with `resume`, keep what an earlier run of the same batch
        finished (an `InputError` when the folder holds another batch; each part is checked when
        its partition comes, `kept`); without it, an empty folder (what an earlier run left is removed)."""
        self._resume = resume
        if resume and self.folder.is_dir():
            manifest = self.folder / MANIFEST
            held = manifest.read_text(encoding="utf-8", errors="replace") if manifest.is_file() else None
            if held != self.manifest:
                raise InputError(f"{self.folder} holds the partitions of another batch: {self._why(held)}. Run "
                                 "without --resume to start again (the folder is emptied), or delete it.")
            started = self.folder / STARTED
            self.started = started.read_text(encoding="utf-8").strip() if started.is_file() else ""
            for stray in self.folder.glob(".*"):  # a temporary file a killed write left behind
                stray.unlink(missing_ok=True)
            return
        if self.folder.exists():
            shutil.rmtree(self.folder)
        self.folder.mkdir(parents=True)
        self.started = datetime.now(UTC).isoformat(timespec="seconds")  # as the recordings' `when`
        atomic_write_text(self.folder / STARTED, self.started + "\n")
        atomic_write_text(self.folder / MANIFEST, self.manifest)

    def _why(self, held: str | None) -> str:
        """What differs between the manifest `held` in the folder and this batch's, in words."""
        if held is None:
            return "it has no manifest (it was not written by a batch, or not to the end)"
        try:
            read = json.loads(held)
        except ValueError:
            read = None
        if not isinstance(read, dict):
            return "its manifest is not readable"
        theirs: dict[str, Any] = read
        ours = json.loads(self.manifest)
        what = {"answers": "the number of answers differs", "answers_sha256": "the dataset's answers differ",
                "sources_sha256": "the sources' bytes differ",
                "routing": "the routing differs (the threshold or the calibration)",
                "locate_only": "--locate-only was given to one run only",
                "reviews_sha256": "the reviews applied differ", "cards": "--html was given to one run only"}
        reasons = []
        if theirs.get("citeaudit") != ours["citeaudit"]:
            reasons.append(f"it was made by citeaudit {theirs.get('citeaudit')}, this is {ours['citeaudit']}")
        if theirs.get("partition_size") != ours["partition_size"]:
            reasons.append(f"partition size {ours['partition_size']}, not {theirs.get('partition_size')} as in the "
                           "folder")
        held_settings = theirs.get("settings")
        settings: dict[str, Any] = held_settings if isinstance(held_settings, dict) else {}
        changed = [f"{key} {settings.get(key)!r} then, {value!r} now" for key, value in ours["settings"].items()
                   if settings.get(key) != value]
        if changed:
            reasons.append(f"the settings differ: {'; '.join(changed)}")
        reasons += [words for key, words in what.items() if theirs.get(key) != ours[key]]
        return "; ".join(reasons) or "its manifest differs"

    def kept(self, index: int, part: Sequence[Item]) -> list[dict[str, Any]] | None:
        """Partition `index`'s answers when a resumed run finds its file whole and holding exactly
        `part`'s answers; else None (a file that does not check out is removed, and why is noted)."""
        path = self._part(index)
        if not self._resume or not path.is_file():
            return None
        text = path.read_text(encoding="utf-8")
        head, _, body = text.partition("\n")
        try:
            header = json.loads(head)
            lines = [line for line in body.split("\n") if line]
            if header != {"part": index, "lines": [item.line for item in part], "sha256": _digest(body)}:
                raise ValueError("its header does not match the partition")
            answers = [json.loads(line) for line in lines]
            if [answer.get("line") for answer in answers] != [item.line for item in part]:
                raise ValueError("its answers are not the partition's")
        except (ValueError, TypeError, AttributeError) as exc:
            self.discarded.append(f"{path.name}: {exc}")
            path.unlink()
            return None
        return answers

    def write(self, index: int, lines: Sequence[int], answers: Sequence[dict[str, Any]]) -> None:
        """Keep partition `index`, whole, as it finishes: `lines` are its answers' dataset lines,
        `answers` their JSON objects."""
        body = "".join(_json(answer) + "\n" for answer in answers)
        header = _json({"part": index, "lines": list(lines), "sha256": _digest(body)})
        atomic_write_text(self._part(index), header + "\n" + body)

    def answers(self, count: int) -> Iterator[dict[str, Any]]:
        """The answers of partitions 0 to `count` - 1, in dataset order, read one partition at a time."""
        for index in range(count):
            _, _, body = self._part(index).read_text(encoding="utf-8").partition("\n")
            yield from (json.loads(line) for line in body.split("\n") if line)


def discard(folder: str | Path) -> None:
    """The batch's outputs are written: its partitions are not needed any more."""
    shutil.rmtree(folder, ignore_errors=True)
