"""Batches of answers: a JSON Lines dataset (its format and reader are `dataset.py`) audited in one
run, on Dask. A line that is not valid, or names a source that cannot be loaded, is an error row
for that answer (decision REJECT, the reason naming the line) and the other lines go on.

The result is one table, one row per citation with an `answer_id` and `line` column before the
audit table's columns, and one decision per answer. Partitions of answers run on Dask: the
in-process threaded scheduler (default), a `LocalCluster` of worker processes, or an existing
scheduler's address. Each worker loads and indexes a source document once. On a cluster the
workers read nothing of the client's: the sources' bytes and the recorded answers are shipped to
them (`shipping`). Workers never write the recordings: in `record` and `refresh` mode a worker's
judge holds the calls it makes and returns them with its partition, and the client appends them,
so record and replay behave as in one process on every scheduler.

The settings are one `AuditOptions`, read once at the client (`AuditOptions.pinned`) and shipped
to every worker; what is per run (`locate_only`, `reviews`, `cards`) are arguments of `run_batch`.
The batch imports no surface: the dashboard's cards come from the `cards` renderer the caller
passes (`dashboard.answer_cards`), called on the worker that holds the document.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from citeaudit import table as C
from citeaudit.citations.dataset import (
    ANSWER_ID,
    LINE,
    Entry,
    Item,
    LinesLine,
    QuoteLine,
    ResponseLine,
    cited_sources,
)
from citeaudit.citations.lines import LineAnswer, extract_line_citations
from citeaudit.decide.calibration import Calibration, Routing
from citeaudit.decide.reviews import Review, load_reviews
from citeaudit.errors import CiteAuditError, JudgeUnavailableError
from citeaudit.judge.judge import Judge
from citeaudit.pipeline.audit import Audit, audit_lines, audit_quotes, audit_sources
from citeaudit.pipeline.jsonl import records
from citeaudit.pipeline.loading import load_document, load_text, read_dataset
from citeaudit.pipeline.parts import Parts, source_digest
from citeaudit.pipeline.run import AuditRun
from citeaudit.pipeline.scheduling import check_scheduler, check_workers, run_distributed, run_threads
from citeaudit.pipeline.shipping import Recordings, Shipper, Sources, source_path
from citeaudit.settings.options import AuditOptions, JudgeEndpoint
from citeaudit.sources.document import Document
from citeaudit.table import CacheMode, Status

ROW_COLUMNS = [ANSWER_ID, LINE, *C.AUDIT_COLUMNS]
DECISION_COLUMNS = [ANSWER_ID, LINE, "status", "reasons"]
DOCUMENT_CACHE_SIZE = 64
# the row columns an answer's JSON records leave out (evidence, fingerprint) or give in another form
# (`jsonl.records`: span as start and end, closest as whole words, no probabilities as three Nones)
NOT_IN_RECORDS = (C.EVIDENCE, C.FINGERPRINT, C.SPAN, C.CLOSEST, C.PROBABILITIES)
WRITING_MODES = (CacheMode.RECORD, CacheMode.REFRESH)


# --- one worker's audit ---------------------------------------------------------------------------

Cards = Callable[[Audit, int], str]  # an answer's audit and its line -> its report cards as HTML


@dataclass(frozen=True)
class _Job:
    """What every task of one run needs besides its answers (picklable): the settings, read once at
    the client (`AuditOptions.pinned`), and the run's own arguments of `run_batch`. `hold`: the
    judge's new calls are returned to the client, not appended (Dask workers)."""

    options: AuditOptions
    locate_only: bool = False
    reviews: tuple[Review, ...] = ()
    cards: Cards | None = None
    hold: bool = False
    own_since: str | None = None  # a resumed batch's start (`judge.cache.CallCache.own_since`)
    endpoint: JudgeEndpoint | None = None  # the judge's endpoint, resolved at the client (None: locate-only)
    calibration: Calibration | None = None  # the routing's, looked up at the client (`AuditRun.calibration`)


_lock = threading.Lock()
_documents: OrderedDict[tuple[str, str, str | None], Document] = OrderedDict()
_judges: OrderedDict[tuple, Judge] = OrderedDict()
JUDGE_CACHE_SIZE = 4  # a long-lived worker keeps the judges (and shipped recordings) of its last few runs


def cached_document(kind: str, source: str, format: str | None = None) -> Document:
    """A source document loaded and indexed once per worker process (by path, format and loader)."""
    key = (kind, source, format)
    with _lock:
        if key in _documents:
            _documents.move_to_end(key)
            return _documents[key]
        document = load_text(source) if kind == "lines" else load_document(source, format)
        _documents[key] = document
        while len(_documents) > DOCUMENT_CACHE_SIZE:
            _documents.popitem(last=False)
        return document


def _judge(job: _Job, recordings: Recordings | None = None) -> Judge | None:
    """One judge per worker process, settings and run, shared by its threads; with `recordings`
    (shipped by the client: `shipping`), it answers from them and reads no cache folder."""
    if job.locate_only:
        return None
    key = (job.options, job.hold, job.own_since, job.endpoint, recordings.token if recordings is not None else None)
    with _lock:
        if key not in _judges:
            overrides: dict[str, Any] = job.endpoint.overrides() if job.endpoint is not None else {}
            if recordings is not None:
                overrides["cache"] = recordings.cache()
            _judges[key] = AuditRun(job.options, hold=job.hold, **overrides).judge
            _judges[key].cache.own_since = job.own_since
            while len(_judges) > JUDGE_CACHE_SIZE:
                _judges.popitem(last=False)
        _judges.move_to_end(key)
        return _judges[key]


def _document(kind: str, name: str, format: str | None, sources: Sources | None) -> Document:
    """A source the answer names: read by path in this process, or the copy the client shipped."""
    if sources is None:
        return cached_document(kind, name, format)
    with source_path(sources[(name, kind != "lines")]) as path:
        return cached_document(kind, str(path), format)


def audit_entry(entry: Entry, job: _Job, sources: Sources | None = None, recordings: Recordings | None = None) -> Audit:
    """One answer, through the library's entry point for its format; `sources` and `recordings`:
    what the client shipped to a Dask worker (`shipping`; None: read here)."""
    options: dict[str, Any] = dict(options=job.options, judge=_judge(job, recordings), locate_only=job.locate_only,
                                   reviews=list(job.reviews) or None, progress=False)
    if not job.locate_only:
        options["calibration"] = job.calibration  # the client's: a worker looks up no calibration
    if isinstance(entry, QuoteLine):
        document = _document("quote", entry.source, entry.format, sources)
        return audit_quotes(document, [c.to_citation() for c in entry.citations], **options)
    if isinstance(entry, LinesLine):
        document = _document("lines", entry.document, None, sources)
        return audit_lines(LineAnswer(document, entry.answer, extract_line_citations(entry.answer)), **options)
    if isinstance(entry, ResponseLine):
        from citeaudit.pipeline.vendor_audit import audit_response

        documents = [_document("quote", d, entry.format, sources) for d in entry.documents]
        return audit_response(entry.response, documents, response_format=entry.response_format,
                              require_coverage=entry.require_coverage, **options)
    options.pop("reviews")  # a source-id answer's reviews are its line's "reviews" document
    return audit_sources(entry.answer, entry.sources, entry.reviews, **options)


def _source_name(entry: Entry | None) -> str | None:
    # none for a source-id answer: it carries its sources, and each row names its own
    return ", ".join(Path(name).name for name, _ in cited_sources(entry)) or None


def brief(reasons: Sequence[str], width: int) -> str:
    """The first line of the first reason, cut to `width` characters, and how many reasons follow."""
    first = reasons[0].splitlines()[0] if reasons else ""
    more = f" (+{len(reasons) - 1} more)" if len(reasons) > 1 else ""
    return first[:width] + more


def decision_record(answer_id: str, line: int, status: str, reasons: Sequence[str]) -> dict[str, object]:
    """One answer's line of the decisions file (`DECISION_COLUMNS`)."""
    return {ANSWER_ID: answer_id, LINE: line, "status": status, "reasons": list(reasons)}


@dataclass(frozen=True)
class Outcome:
    """One answer's result: its rows (the audit table with answer_id and line), its JSON records,
    its decision, the document it cites (None for source-ids), and, when `run_batch` was given a
    `cards` renderer and the answer is not ACCEPT, its report cards as HTML."""

    line: int
    answer_id: str
    rows: pd.DataFrame
    records: list[dict]
    status: str
    reasons: tuple[str, ...]
    invalid: bool = False  # the line could not be audited: its one row is the error
    source: str | None = None
    cards: str | None = None

    def brief(self, width: int) -> str:
        return brief(self.reasons, width)

    @property
    def decision(self) -> dict[str, object]:
        return decision_record(self.answer_id, self.line, self.status, self.reasons)

    def saved(self) -> dict[str, Any]:
        """The outcome as a finished partition keeps it (`parts.Parts`, JSON): its decision, source,
        cards and records, and of its rows the columns the records do not give as they are."""
        rows = {} if self.invalid else {column: [[int(v[0]), int(v[1])] if column == C.SPAN and v is not None else v
                                                 for v in self.rows[column]] for column in NOT_IN_RECORDS}
        return {"line": self.line, "answer_id": self.answer_id, "status": self.status, "reasons": list(self.reasons),
                "invalid": self.invalid, "source": self.source, "cards": self.cards, "records": self.records,
                "rows": rows}

    @classmethod
    def restored(cls, saved: dict[str, Any]) -> Outcome:
        """The outcome `saved` kept: its rows rebuilt from its records and the columns kept beside them."""
        records: list[dict[str, Any]] = saved["records"]
        if saved["invalid"]:  # one error row, as `_error_outcome` makes it
            rows = C.frame([{column: record.get(column) for column in ROW_COLUMNS} for record in records], ROW_COLUMNS)
        else:  # as `audit_item` makes them: the audit's columns, then the answer's id and line
            kept = saved["rows"]
            kept[C.SPAN] = [tuple(span) if span is not None else None for span in kept[C.SPAN]]
            columns = ROW_COLUMNS[2:]
            rows = C.frame([{column: kept[column][n] if column in kept else record.get(column) for column in columns}
                            for n, record in enumerate(records)], columns)
            rows.insert(0, LINE, saved["line"])
            rows.insert(0, ANSWER_ID, saved["answer_id"])
        return cls(saved["line"], saved["answer_id"], rows, records, saved["status"], tuple(saved["reasons"]),
                   invalid=saved["invalid"], source=saved["source"], cards=saved["cards"])


def _error_outcome(item: Item, reason: str) -> Outcome:
    row = dict.fromkeys(ROW_COLUMNS)
    row.update({ANSWER_ID: item.answer_id, LINE: item.line, C.ERROR: reason})
    record = {ANSWER_ID: item.answer_id, LINE: item.line, **dict.fromkeys(C.OUTPUT_FIELDS), C.ERROR: reason}
    return Outcome(item.line, item.answer_id, C.frame([row], ROW_COLUMNS), [record], str(Status.REJECT), (reason,),
                   invalid=True, source=_source_name(item.entry))


def audit_item(item: Item, job: _Job, sources: Sources | None = None, recordings: Recordings | None = None) -> Outcome:
    """One line of the dataset; an input problem is that answer's error row, never an exception.
    `JudgeUnavailableError` (the judge cannot be used at all) propagates and stops the batch."""
    if item.entry is None:
        return _error_outcome(item, item.error or f"line {item.line}: invalid")
    try:
        audit = audit_entry(item.entry, job, sources, recordings)
    except JudgeUnavailableError:
        raise
    except CiteAuditError as exc:  # unreadable or unknown source, bad document, invalid answer text
        return _error_outcome(item, f"line {item.line}: {exc}")
    except OSError as exc:
        return _error_outcome(item, f"line {item.line}: {exc.filename or 'a file'}: {exc.strerror or exc}")
    table = audit.table.reset_index(drop=True)
    rows = table.reindex(columns=[c for c in ROW_COLUMNS if c not in (ANSWER_ID, LINE)])
    rows.insert(0, LINE, item.line)
    rows.insert(0, ANSWER_ID, item.answer_id)
    out = [{ANSWER_ID: item.answer_id, LINE: item.line, **r} for r in records(table, audit.document)]
    decision = audit.decision
    cards = job.cards(audit, item.line) if job.cards is not None and decision.status != Status.ACCEPT else None
    return Outcome(item.line, item.answer_id, rows, out, str(decision.status), tuple(decision.reasons),
                   source=_source_name(item.entry), cards=cards)


def audit_partition(items: Sequence[Item], job: _Job, sources: Sources | None = None,
                    recordings: Recordings | None = None) -> tuple[list[Outcome], list[dict]]:
    """What one Dask task does: the answers of one partition, in order, and (with `job.hold`)
    the judge's new recordings for the client to append. A record made while this partition ran
    may come back with another partition of the same worker; each comes back exactly once.
    `sources` and `recordings`: what the client shipped to a worker of a cluster (`shipping`)."""
    outcomes = [audit_item(item, job, sources, recordings) for item in items]
    judge = _judge(job, recordings) if job.hold else None
    return outcomes, (judge.cache.take_held() if judge is not None else [])


# --- the batch ------------------------------------------------------------------------------------

@dataclass
class BatchResult:
    """Every answer's outcome, in dataset order, and the routing they were judged by (None when
    no model was asked)."""

    outcomes: list[Outcome] = field(default_factory=list)
    routing: Routing | None = None
    resumed: int = 0  # partitions kept from an interrupted run of the same batch (`parts.Parts`)

    @property
    def rows(self) -> pd.DataFrame:
        """One row per citation (and one per invalid line), `answer_id` and `line` first."""
        if not self.outcomes:
            return C.frame([], ROW_COLUMNS)
        return pd.concat([o.rows for o in self.outcomes], ignore_index=True)

    @property
    def decisions(self) -> pd.DataFrame:
        return pd.DataFrame([o.decision for o in self.outcomes], columns=DECISION_COLUMNS)

    @property
    def accepted(self) -> bool:
        return bool(self.outcomes) and all(o.status == Status.ACCEPT for o in self.outcomes)

    @property
    def exit_code(self) -> int:
        return 0 if self.accepted else 1

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for o in self.outcomes:
            counts[o.status] = counts.get(o.status, 0) + 1
        return counts

    def write_rows(self, path: str | Path) -> Path:
        from citeaudit.stores import atomic_write_text

        return atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n"
                                               for o in self.outcomes for r in o.records))

    def write_decisions(self, path: str | Path) -> Path:
        from citeaudit.stores import atomic_write_text

        return atomic_write_text(path, "".join(json.dumps(o.decision, ensure_ascii=False) + "\n"
                                               for o in self.outcomes))


def partitions(items: Iterable[Item], size: int) -> Iterator[list[Item]]:
    """`items` in lists of `size` (the last may be shorter), taken as they come (a dataset read line by line)."""
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


def prepare(options: AuditOptions | None, scheduler: str, workers: int | None, locate_only: bool,
            reviews: Iterable[Review] | str | Path | None, cards: Cards | None) -> tuple[_Job, Routing | None]:
    """What every partition of a batch is audited with, its settings read once (`AuditOptions.pinned`),
    and the routing in force (None when no model is asked); `InputError` for a bad scheduler or count."""
    if options is not None and not isinstance(options, AuditOptions):
        raise TypeError(f"run_batch takes the settings as one AuditOptions, not {type(options).__name__}: "
                        "run_batch(items, AuditOptions.from_env(...), locate_only=..., reviews=..., cards=...)")
    check_scheduler(scheduler)
    check_workers(workers, scheduler)
    options = (options or AuditOptions.from_env()).pinned()
    stored = load_reviews(reviews) if isinstance(reviews, (str, Path)) else (reviews or ())
    if locate_only:
        return _Job(options, locate_only, tuple(stored), cards), None
    routing = AuditRun(options).routing  # looked up once here: every worker routes by it
    return (_Job(options, locate_only, tuple(stored), cards, endpoint=options.endpoint(),
                 calibration=routing.calibration), routing)


def default_partition_size(answers: int) -> int:
    """Answers per partition unless given: about 16 partitions, 1 to 50 answers each."""
    return max(1, min(50, -(-answers // 16)))


def run_batch(items: Sequence[Item], options: AuditOptions | None = None, scheduler: str = "threads", *,
              locate_only: bool = False, reviews: Iterable[Review] | str | Path | None = None,
              cards: Cards | None = None, partition_size: int | None = None,
              progress: bool | Callable[[int], None] | None = None, workers: int | None = None,
              parts: str | Path | None = None, resume: bool = False) -> BatchResult:
    """Audit every item on Dask with one set of settings, `options` (default
    `AuditOptions.from_env()`), read once here (`AuditOptions.pinned`), and keep every outcome
    (`stream.stream_batch` writes them instead, for a dataset of any size).

    Per run: `locate_only` (no model calls), `reviews` (a store path or reviews, applied to all
    the quote, line and response answers), `cards` (a renderer called on the worker for every
    answer that is not ACCEPT, e.g. `dashboard.answer_cards`: its HTML is `Outcome.cards`).
    `progress=True` draws a bar (`progress.BatchProgress`: answers and partitions done of the total,
    answers per second, time left); a callable `progress(n)` is called instead as each partition of n
    answers finishes (a partition kept by `resume` too); `workers` is the number of
    worker processes of `scheduler="processes"` (default `scheduling.LOCAL_WORKERS`). `parts`: a folder where
    each partition is written as it finishes (`parts.Parts`); with `resume`, the partitions an
    interrupted run of the same batch finished there are kept, not audited again.

    Results are in dataset order and the same whatever the scheduler, and resumed or not.
    """
    job, routing = prepare(options, scheduler, workers, locate_only, reviews, cards)
    items = list(items)
    if not items:
        return BatchResult(routing=routing)
    size = partition_size or default_partition_size(len(items))
    chunks = list(partitions(items, size))
    if progress is True:
        from citeaudit.pipeline.progress import BatchProgress

        with BatchProgress(len(items), len(chunks)) as bar:
            return run_batch(items, job.options, scheduler, locate_only=locate_only, reviews=job.reviews, cards=cards,
                             partition_size=size, progress=bar, workers=workers, parts=parts, resume=resume)
    report = progress if callable(progress) else None
    store = None
    if parts is not None:
        store = Parts(parts, manifest(describe(items), job, size, routing))
        store.start(resume)
        job = replace(job, own_since=store.started) if resume else job
    results: dict[int, list[Outcome]] = {}

    def finished(index: int, outcomes: list[Outcome] | None, saved: list[dict[str, Any]] | None) -> None:
        results[index] = outcomes if outcomes is not None else [Outcome.restored(a) for a in saved or []]
        if report is not None:
            report(len(results[index]))

    kept = drive(chunks, job, scheduler, workers, store, finished)
    return BatchResult([outcome for index in range(len(chunks)) for outcome in results[index]], routing,
                       resumed=kept)


def describe(items: Iterable[Item]) -> dict[str, Any]:
    """How many answers, a digest of them and one of the bytes of the sources they cite (read once
    each), for `manifest`, in one pass over `items` (which may be a dataset read line by line).

    Neither digest depends on where the files are: in the answers' digest each source an answer
    names (made absolute beside the dataset) stands as the digest of its bytes, and the sources'
    digest is over those digests. A dataset folder moved or copied elsewhere, the same files in
    it, is the same batch, and resumes."""
    digest, count, contents = hashlib.sha256(), 0, dict[str, str]()
    for item in items:
        count += 1
        text = repr(item)
        for name in sorted({name for name, _ in cited_sources(item.entry)}, key=len, reverse=True):
            if name not in contents:
                contents[name] = source_digest(name)
            text = text.replace(name, f"<source {contents[name]}>")
        digest.update(text.encode("utf-8") + b"\n")
    sources = hashlib.sha256("".join(f"{d}\n" for d in sorted(contents.values())).encode("ascii")).hexdigest()
    return {"answers": count, "answers_sha256": digest.hexdigest(), "sources_sha256": sources}


def manifest(described: dict[str, Any], job: _Job, size: int, routing: Routing | None) -> dict[str, Any]:
    """What a batch is, for `parts.Parts`: a resumed run must audit the same answers (`describe`)
    over the same source bytes with the same settings, routing and arguments, in the same partitions."""
    from importlib.metadata import version

    options = job.options
    return {"citeaudit": version("citeaudit"), **described, "partition_size": size,
            "settings": {"model": options.model, "strategy": str(options.strategy), "threshold": options.threshold,
                         "use_calibration": options.use_calibration, "spot_check": options.spot_check,
                         "contrast": [str(c) for c in options.contrast], "profile": options.profile,
                         "evidence": str(options.evidence)},
            "routing": routing.note() if routing is not None else None, "locate_only": job.locate_only,
            "reviews_sha256": hashlib.sha256(repr(job.reviews).encode("utf-8")).hexdigest(),
            "cards": job.cards is not None}


Done = Callable[[int, "list[Outcome] | None", "list[dict[str, Any]] | None"], None]


def drive(chunks: Iterable[list[Item]], job: _Job, scheduler: str, workers: int | None, store: Parts | None,
          finished: Done) -> int:
    """Audit the partitions `chunks` on `scheduler`, a few at a time (`scheduling`), skipping those
    `store` kept from an interrupted run; each finished one is written to `store` and then given to
    `finished(index, outcomes, saved)` (outcomes None for a kept one, saved None without a store).
    Returns how many partitions were kept."""

    kept = 0

    def todo() -> Iterator[tuple[int, list[Item]]]:
        nonlocal kept
        for index, chunk in enumerate(chunks):
            saved = store.kept(index, chunk) if store is not None else None
            if saved is None:
                yield index, chunk
            else:
                kept += 1
                finished(index, None, saved)

    def ran(index: int, outcomes: list[Outcome]) -> None:
        saved = None
        if store is not None:
            saved = [outcome.saved() for outcome in outcomes]
            store.write(index, [outcome.line for outcome in outcomes], saved)
        finished(index, outcomes, saved)

    if scheduler == "threads":
        run_threads(todo(), audit_partition, job, ran)
        return kept
    pending = todo()
    first = next(pending, None)
    if first is None:  # every partition was kept: no cluster to start, nothing to ship
        return kept
    pending = itertools.chain([first], pending)
    # a cluster's workers read nothing of the client's: the sources and recordings go with the tasks
    cache = None if job.locate_only else AuditRun(job.options).cache
    try:
        writing = cache is not None and job.options.cache_mode in WRITING_MODES
        run_distributed(pending, audit_partition, replace(job, hold=cache is not None), scheduler, ran, workers,
                        cache if writing else None,  # the workers' new calls come back to be appended here
                        lambda client: Shipper(client, job.options.model, cache).arguments)
    finally:
        if cache is not None:
            cache.close()
    return kept


def audit_dataset(path: str | Path, options: AuditOptions | None = None, scheduler: str = "threads",
                  allow_outside_sources: bool = False, **run: Any) -> BatchResult:
    """`read_dataset` (sources confined to the dataset's folder and the data folders unless
    `allow_outside_sources`) then `run_batch` (`run`: its keyword arguments)."""
    return run_batch(read_dataset(path, allow_outside_sources), options, scheduler, **run)
