"""A batch of any size in flat memory: `citeaudit batch` audits a dataset read line by line, writes
each partition as it finishes (`parts.Parts`), keeps only counts (`BatchSummary`), and writes its
outputs from the partitions at the end, in dataset order, one partition at a time.

`batch.run_batch` is the same audit keeping every outcome in memory (the library's `BatchResult`,
the notebooks); the two give the same rows, decisions and exit code (`tests/test_batch_stream.py`).
The dashboard shows every answer to look at with its cards, so `restore_result` reads every
partition back for it: its memory grows with the dataset, as the page does.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citeaudit import table as C
from citeaudit.pipeline.batch import (
    BatchResult,
    Cards,
    Outcome,
    decision_record,
    default_partition_size,
    describe,
    drive,
    manifest,
    partitions,
    prepare,
)
from citeaudit.pipeline.loading import iter_dataset
from citeaudit.pipeline.parts import Parts
from citeaudit.stores import atomic_write_chunks
from citeaudit.table import ErrorKind, Status

if TYPE_CHECKING:
    from citeaudit.decide.calibration import Routing
    from citeaudit.decide.reviews import Review
    from citeaudit.settings.options import AuditOptions


@dataclass
class BatchSummary:
    """What a streamed batch keeps in memory: counts, the distinct row errors, whether a recorded
    answer was missing, and where its partitions are (`answers()` reads them back in order)."""

    parts: Parts | None = None
    partitions: int = 0
    routing: Routing | None = None
    answers: int = 0
    rows: int = 0
    invalid: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    errors: set[str] = field(default_factory=set)  # the row errors of the answers that could be audited
    replay_miss: bool = False
    resumed: int = 0  # partitions kept from an interrupted run of the same batch

    def add(self, answer: dict[str, Any]) -> None:
        self.answers += 1
        self.rows += len(answer["records"])
        self.counts[answer["status"]] += 1
        if answer["invalid"]:
            self.invalid += 1
            return
        for record in answer["records"]:
            if isinstance(record.get(C.ERROR), str):
                self.errors.add(record[C.ERROR])
            self.replay_miss |= record.get(C.ERROR_KIND) == ErrorKind.REPLAY_MISS

    @property
    def exit_code(self) -> int:
        """0 only when there are answers and every one is ACCEPT, as `BatchResult.exit_code`."""
        return 0 if self.answers and self.counts[str(Status.ACCEPT)] == self.answers else 1

    def saved(self) -> Iterator[dict[str, Any]]:
        """Every answer as its partition keeps it (`batch.Outcome.saved`), in dataset order."""
        return self.parts.answers(self.partitions) if self.parts is not None else iter(())


def stream_batch(path: str | Path, options: AuditOptions | None = None, scheduler: str = "threads", *,
                 parts: str | Path, locate_only: bool = False, reviews: Iterable[Review] | str | Path | None = None,
                 cards: Cards | None = None, partition_size: int | None = None,
                 progress: bool | Callable[[int], None] | None = None, workers: int | None = None,
                 resume: bool = False, allow_outside_sources: bool = False) -> BatchSummary:
    """`run_batch` over the dataset at `path`, read line by line (twice: once to describe the batch
    for `parts.Parts`, once to audit it), each partition written to the folder `parts` as it
    finishes; the arguments are `run_batch`'s. Returns the counts; `write_outputs` writes the rows
    and decisions from the partitions, and `restore_result` reads them back whole."""
    job, routing = prepare(options, scheduler, workers, locate_only, reviews, cards)
    described = describe(iter_dataset(path, allow_outside_sources))
    total = described["answers"]
    size = partition_size or default_partition_size(total)
    store = Parts(parts, manifest(described, job, size, routing))
    summary = BatchSummary(store, -(-total // size), routing)
    if not total:
        return summary
    store.start(resume)
    job = replace(job, own_since=store.started) if resume else job
    bar = None
    if progress is True:
        from citeaudit.pipeline.progress import BatchProgress

        bar = BatchProgress(total, summary.partitions)
    report = bar if bar is not None else progress if callable(progress) else None

    def finished(index: int, outcomes: list[Outcome] | None, saved: list[dict[str, Any]] | None) -> None:
        for answer in saved or []:
            summary.add(answer)
        if report is not None:
            report(len(saved or []))

    try:
        summary.resumed = drive(partitions(iter_dataset(path, allow_outside_sources), size), job, scheduler, workers,
                                store, finished)
    finally:
        if bar is not None:
            bar.close()
    return summary


def write_outputs(summary: BatchSummary, rows: str | Path | None = None,
                  decisions: str | Path | None = None) -> None:
    """The batch's rows (every answer's records) and decisions as JSON Lines, in dataset order, the
    same bytes as `BatchResult.write_rows` and `write_decisions`; each file written whole."""
    if rows is not None:
        atomic_write_chunks(rows, (json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"
                                   for answer in summary.saved() for record in answer["records"]))
    if decisions is not None:
        lines = (decision_record(a["answer_id"], a["line"], a["status"], a["reasons"]) for a in summary.saved())
        atomic_write_chunks(decisions, (json.dumps(line, ensure_ascii=False) + "\n" for line in lines))


def restore_result(summary: BatchSummary) -> BatchResult:
    """Every outcome read back from the partitions (for the dashboard: memory grows with the dataset)."""
    return BatchResult([Outcome.restored(answer) for answer in summary.saved()], summary.routing,
                       resumed=summary.resumed)
