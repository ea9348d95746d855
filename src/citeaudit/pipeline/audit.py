"""The pipeline over one table, and its result: `Audit`.

    citations ──► locate (step 1) ──► judge (step 2) ──► route (step 3) ──► reviews, decide (step 4)

Every stage takes the table and returns it with more columns, same index, one row per citation.
A failure in one row is written to that row's `error` and never aborts the batch. The entry
points, one per citation format, all return an `Audit`:

  audit_quotes(source, citations)      quote citations over one source document
  audit_lines(line_answer)             an answer with [L2-L3] markers over a numbered document
  audit_sources(answer, sources, ...)  seed 000's source-id answer (by default reviews decide)
  audit_files(...)                     whichever of the three a set of file paths names

The pipeline imports no surface: an `Audit` is data, and the surfaces render it (`views.styled`,
`report.explain`, `report.write_report`, ...). What it writes itself is its JSON Lines records
(`write_jsonl`, `jsonl.py`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from citeaudit import table as C
from citeaudit.citations.kinds import kind_of
from citeaudit.citations.lines import LineAnswer
from citeaudit.citations.records import Citation, SourceRef, load_citations
from citeaudit.decide.calibration import Calibration, Routing
from citeaudit.decide.contrast import check_contrast
from citeaudit.decide.decision import Decision, apply_reviews, decide, settle
from citeaudit.decide.reviews import SEED_VERDICTS, Review, load_reviews
from citeaudit.decide.routing import coverage_gap, route
from citeaudit.errors import InputError
from citeaudit.judge.judge import Judge, Judgement
from citeaudit.locate.locators import with_cited_regions
from citeaudit.locate.quotes import locate_citations
from citeaudit.pipeline.focus import focused_evidence, focused_where
from citeaudit.pipeline.jsonl import write_jsonl
from citeaudit.pipeline.loading import load_document, load_line_answer
from citeaudit.pipeline.run import AuditRun
from citeaudit.settings import environment as config
from citeaudit.settings.options import AuditOptions
from citeaudit.sources.document import Document
from citeaudit.table import CacheMode, EvidenceMode

PROGRESS_MIN = 5  # show a progress bar when more model calls than this are due
SIGNAL_POLL_SECONDS = 0.2  # how often the main thread wakes while judge requests are in flight (for Ctrl-C)


def _where(row: pd.Series, document_name: str) -> str:
    """How the prompt names the evidence: a section, lines, or a source of the answer (its kind's
    `where`: part of the request, so of its cache key)."""
    return kind_of(row).where(row, document_name)


def judge_questions(table: pd.DataFrame, document_name: str = "the source",
                    evidence: EvidenceMode = EvidenceMode.SECTION) -> dict[Any, tuple[str, str, str, str]]:
    """What step 2 asks the judge, by row: (claim, evidence, where, what) of every row that has
    evidence (a fabricated row has none and is never asked). With `EvidenceMode.FOCUSED` a long
    section is asked about by its passage that matters (`focus.focused_evidence`), named as such."""
    questions = {}
    for i in table.index:
        text = table.at[i, C.EVIDENCE]
        if text is None:
            continue
        claim, where = table.at[i, C.CLAIM], _where(table.loc[i], document_name)
        if evidence == EvidenceMode.FOCUSED:
            quote = table.at[i, C.QUOTE] if C.QUOTE in table.columns else None
            passage = focused_evidence(claim, text, quote if isinstance(quote, str) else None)
            if passage is not None:
                text, where = passage, focused_where(where)
        questions[i] = (claim, text, where, f"citation {table.at[i, C.ID]!r}")
    return questions


def judge_citations(table: pd.DataFrame, judge: Judge, document_name: str = "the source",
                    progress: bool | None = None, concurrency: int = 1,
                    evidence: EvidenceMode = EvidenceMode.SECTION) -> pd.DataFrame:
    """Step 2: ask the judge about every row that has evidence; fabricated rows are skipped.

    Up to `concurrency` requests are in flight at once (the settings' `requests_in_flight`);
    rows keep their order whatever order the answers come in, and one row's failure is that row's
    `error`. `JudgeUnavailableError` (no row can be judged) cancels the requests not yet sent and
    propagates. Cache keys do not depend on it: each request is the same as one at a time.
    """
    workers = concurrency
    if not 1 <= workers <= config.MAX_CONCURRENCY:
        raise InputError(f"concurrency must be a whole number from 1 to {config.MAX_CONCURRENCY}, not {workers!r}")
    out = table.copy()
    for column in C.JUDGE_COLUMNS:
        out[column] = pd.Series([None] * len(out), index=out.index, dtype=object)
    # the questions are read from the table here, in this thread; workers only call the judge
    questions = judge_questions(out, document_name, evidence)
    todo = list(questions)
    show = progress if progress is not None else (len(todo) > PROGRESS_MIN and judge.cache.mode != CacheMode.REPLAY)

    def ask(i: object) -> Judgement:
        claim, evidence, where, what = questions[i]
        return judge.judge(claim, evidence, where=where, what=what)

    with tqdm(total=len(todo), desc="judge", unit="citation", disable=not show) as bar:
        if workers == 1 or len(todo) <= 1:  # in the order that lets a local server reuse prompt heads
            results = dict(zip(todo, judge.judge_all([questions[i] for i in todo], bar.update), strict=True))
        else:
            results = ask_concurrently(ask, todo, min(workers, len(todo)), bar)
    for i in todo:
        for column in C.JUDGE_COLUMNS:  # each judge column is the `Judgement` field of its name
            out.at[i, column] = getattr(results[i], column)
    return out


def ask_concurrently(ask: Callable[[object], Judgement], todo: list, workers: int, bar: tqdm) -> dict:
    """`ask` for every row from `workers` threads; the first exception cancels what is not yet sent."""
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="citeaudit-judge")
    futures = {pool.submit(ask, i): i for i in todo}
    results = {}
    pending = set(futures)
    try:
        while pending:
            # a short wait, not one blocking wait: Ctrl-C's signal may be delivered to a worker thread,
            # and the main thread only raises KeyboardInterrupt once it runs Python again
            done, pending = wait(pending, timeout=SIGNAL_POLL_SECONDS, return_when=FIRST_COMPLETED)
            for future in done:
                results[futures[future]] = future.result()  # JudgeUnavailableError (or a bug) raises here
                bar.update()
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)  # requests already sent finish on their own
        raise
    pool.shutdown()
    return results


@dataclass(frozen=True)
class Audit:
    """One audited answer: the table, what it was checked against, how it was routed, the decision.

    `table` has one row per citation (columns in `table.py`), routed by `routing` (the
    threshold and the calibration; None for a locate-only audit, where no threshold is used),
    with the reviews applied and each row's `state` and `final_verdict` settled. `document` is
    the source of quote and line citations; `sources` maps source ids to content for source-id
    citations. `needs_review` holds what a human must look at beyond the rows (unrecognized
    markers); `input_errors` the input's contract violations (each one REJECTs). Methods return
    a new `Audit`; nothing calls a model again. The surfaces show it: `views.audit_view` and
    `views.styled`, `report.explain`, `report.render_html` and `report.write_report`.
    """

    table: pd.DataFrame
    document: Document | None = None
    sources: Mapping[str, str] | None = None
    needs_review: tuple[str, ...] = ()
    input_errors: tuple[str, ...] = ()
    summary: Mapping[str, int] = field(default_factory=dict)
    routing: Routing | None = None
    uncited: tuple[str, ...] = ()  # a vendor response's answer text outside every citation (`vendor_audit`)

    @functools.cached_property
    def decision(self) -> Decision:
        """ACCEPT / REVIEW / REJECT with its reasons (`decide.decide`); when judged rows were
        routed without a calibration, the last reason says so (`Routing.note`), and when the
        calibration does not cover the document, the last reason says why (`route.coverage_gap`)."""
        decision = decide(self.table, self.input_errors, self.needs_review, self.threshold)
        if self.routing is not None and not self.routing.calibrated and self.judged:
            decision = replace(decision, reasons=(*decision.reasons, self.routing.note()))
        gap = self.coverage_gap
        if gap is not None:
            decision = replace(decision, reasons=(*decision.reasons, f"calibration: {gap}"))
        return decision

    @functools.cached_property
    def coverage_gap(self) -> str | None:
        """Why the calibration does not cover this document (every model verdict then waits, flagged
        `uncovered`), or None (`route.coverage_gap`)."""
        return coverage_gap(self.table, self.calibration) if self.judged else None

    @property
    def name(self) -> str:
        """The document's name, or `sources` for a source-id answer."""
        return self.document.name if self.document is not None else "sources"

    @property
    def threshold(self) -> float | None:
        """The threshold the table was routed at (None: locate-only, no threshold used)."""
        return self.routing.threshold if self.routing is not None else None

    @property
    def calibration(self) -> Calibration | None:
        """The calibration that scored the rows, or None (the model's own probabilities)."""
        return self.routing.calibration if self.routing is not None else None

    def routing_note(self) -> str:
        """One line on what routed the table: the threshold and where it comes from."""
        if self.routing is None or not self.judged:
            return "step 1 only: no model asked, no threshold used"
        gap = self.coverage_gap
        return self.routing.note() + (f"; but {gap}" if gap else "")

    @property
    def judged(self) -> bool:
        """Whether any row was put to the judge (False for a locate-only audit)."""
        return bool(self.table[C.MODEL].notna().any())

    def reroute(self, threshold: float) -> Audit:
        """The same results routed at another threshold, with the same calibration; reviews still apply."""
        routing = self.routing or Routing.resolve(threshold, None)
        routing = replace(routing, threshold=float(threshold), given=True)
        return replace(self, table=settle(route(self.table, threshold, routing.calibration), routing.spot_check),
                       routing=routing)

    def with_reviews(self, reviews: Iterable[Review] | str | Path | None) -> Audit:
        """Apply reviews (a list, or a review store path); they replace the previous ones."""
        if isinstance(reviews, (str, Path)):
            reviews = load_reviews(reviews)
        rate = self.routing.spot_check if self.routing is not None else 0.0  # step 1 only: nothing stands
        return replace(self, table=apply_reviews(self.table, reviews or [], rate))

    def write_jsonl(self, path: str | Path) -> Path:
        """One JSON object per citation with the command line's fields (`jsonl.records`)."""
        return write_jsonl(self.table, path, self.document)


def run_for(options: AuditOptions | None = None, judge: Judge | None = None, *,
            threshold: float | None = None, concurrency: int | None = None,
            calibration: Calibration | bool | None = True) -> AuditRun:
    """The one run an audit judges and routes by: `options` (default `AuditOptions.from_env()`),
    as `judge` runs them when one is given (`AuditRun(judge=...)`), with the overrides of the entry
    points: `threshold`, `concurrency`, and `calibration` (True: the saved one; False or None:
    none; or a given `Calibration`)."""
    options = options or AuditOptions.from_env()
    changes = {name: value for name, value in (("threshold", threshold), ("concurrency", concurrency))
               if value is not None}
    options = options.with_(**changes) if changes else options
    if calibration is True:
        return AuditRun(options, judge=judge)
    return AuditRun(options, judge=judge, calibration=calibration if isinstance(calibration, Calibration) else None)


def audit_citations(citations: Iterable[Citation], document: Document | None = None,
                    sources: Mapping[str, str] | None = None, *, options: AuditOptions | None = None,
                    judge: Judge | None = None, threshold: float | None = None, concurrency: int | None = None,
                    calibration: Calibration | bool | None = True, locate_only: bool = False,
                    **per_call: Any) -> Audit:
    """Steps 1-4 for citations of any kind.

    `options` (default `AuditOptions.from_env()`: arguments, then the environment) gives the
    judge, the threshold, the concurrency and the calibration; the keyword arguments override
    it one by one (`run_for`): `judge` (a `Judge`), `threshold` (None: the calibration's
    recommended one, else `DEFAULT_THRESHOLD`), `concurrency` (judge requests in flight at once),
    `calibration` (True: the saved calibration of the judge's model and strategy,
    `<cache>/calibration/`; False or None: none; or a given `Calibration`). With `locate_only` no
    model is asked: relation, probabilities and confidence stay None, only fabricated citations
    get a verdict, and no threshold is used. The rest (`progress`, `reviews`, `needs_review`,
    `summary`) is `audit_table`'s.
    """
    table = locate_citations(citations, document, sources)
    run = options if locate_only else run_for(options, judge, threshold=threshold, concurrency=concurrency,
                                              calibration=calibration)
    return audit_table(table, document, sources, run, locate_only=locate_only, **per_call)


def audit_table(table: pd.DataFrame, document: Document | None = None, sources: Mapping[str, str] | None = None,
                run: AuditRun | AuditOptions | None = None, *, judge: Judge | None = None, locate_only: bool = False,
                progress: bool | None = None, reviews: Iterable[Review] | str | Path | None = None,
                needs_review: Iterable[str] = (), summary: Mapping[str, int] | None = None) -> Audit:
    """Steps 2-4 over a table step 1 already made (`locate_citations`, or
    `vendor_audit.locate_response` for a vendor response), judged and routed by `run` (an
    `AuditRun`, or the `AuditOptions` to make one of; default `AuditOptions.from_env()`; with
    `locate_only` only its contrast checks are used). The contrast checks (`options.contrast`,
    `decide.contrast.check_contrast`) run between step 2 and routing.

    `judge` is a judge the caller holds already (a worker's, or one pointed at a local server) when
    `run` is settings (`AuditRun(judge=...)` runs as it does), else the run's judge. Per call:
    `progress` (a progress bar; default when many calls are due), `reviews` (a list, or a review
    store path), `needs_review` (what a human must look at beyond the rows) and `summary` (counts to
    keep with the audit).
    """
    routing: Routing | None = None
    options = run.options if isinstance(run, AuditRun) else run
    if locate_only:  # the contrast checks need no model: they run in step 1 only as well
        for column in C.JUDGE_COLUMNS:
            table[column] = pd.Series([None] * len(table), index=table.index, dtype=object)
        table = check_contrast(table, options.contrast if options is not None else config.contrast_checks())
        table = route(table, 1.0)
    else:
        run = run if isinstance(run, AuditRun) else AuditRun(options or AuditOptions.from_env(), judge=judge)
        options = run.options
        name = document.name if document is not None else "the sources"
        table = judge_citations(table, run.judge, name, progress, options.requests_in_flight, options.evidence)
        table = check_contrast(table, options.contrast)
        routing = run.routing
        table = route(table, routing.threshold, routing.calibration)
    audit = Audit(table, document, sources, tuple(needs_review), (), summary or {}, routing)
    return audit.with_reviews(reviews)


def audit_quotes(source: str | Path | Document, citations: str | Path | list[Citation], format: str | None = None,
                 sections: str = "auto", **options: Any) -> Audit:
    """Quote citations (a file or records) over one source (a path, a name, or a `Document`) of any
    format (`formats.load_document`: by extension, or `format`; `sections`: how a plain-text,
    Markdown, HTML or PDF source is divided, `auto`, `numbered` or `paragraphs`)."""
    document = source if isinstance(source, Document) else load_document(source, format, sections)
    records = citations if isinstance(citations, list) else load_citations(config.find_input(citations))
    return audit_citations(records, with_cited_regions(document, records), **options)


def unrecognized_reasons(answer: LineAnswer) -> list[str]:
    """Review reasons for the answer's markers in a form other than [Lx] / [Lx-Ly]."""
    return [f"unrecognized citation marker {m[:60]!r}: write it as [Lx] or [Lx-Ly]"
            for m in answer.extracted.unrecognized]


def audit_lines(answer: LineAnswer, **options: Any) -> Audit:
    """A line-cited answer: the cited lines are each claim's evidence.

    Markers in an unrecognized form keep the answer in REVIEW (`Audit.needs_review`).
    """
    return audit_citations(answer.extracted.citations, answer.document, needs_review=unrecognized_reasons(answer),
                           summary=answer.summary, **options)


def audit_sources(answer: object, sources: object, reviews: object | None = None, *,
                  locate_only: bool = True, store: Iterable[Review] | str | Path | None = None,
                  **options: Any) -> Audit:
    """Seed 000's source-id answer, from its parsed JSON documents.

    By default no model is asked and the human reviews decide (the acceptance contract); with
    `locate_only=False` the judge reads each cited source, and a current review still replaces
    its verdict. `store` (a review store, or reviews) applies on top of `reviews` (the seed's
    reviews.json), later entries winning. A contract violation of the input gives an `Audit` with
    no rows that REJECTs.
    """
    from citeaudit.citations.sourceid import ContractViolation, validate_source_id

    try:
        parsed = validate_source_id(answer, sources, {"reviews": []} if reviews is None else reviews)
    except ContractViolation as violation:
        empty = audit_citations([], locate_only=True)
        return replace(empty, input_errors=(str(violation),))
    citations = [Citation(c.id, c.text, None, SourceRef(c.citation_id)) for c in parsed.claims]
    content = {s.id: s.content for s in parsed.sources}
    stored = [Review(citation_id=r.claim_id, fingerprint=r.fingerprint, verdict=SEED_VERDICTS[r.verdict])
              for r in parsed.reviews]
    if store is not None:  # a review store on top of the seed's reviews.json: later entries win
        stored += list(load_reviews(store) if isinstance(store, (str, Path)) else store)
    return audit_citations(citations, None, content, locate_only=locate_only, reviews=stored, **options)


def audit_source_files(answer: str | Path, sources: str | Path, reviews: str | Path | None = None,
                       **options: Any) -> Audit:
    """`audit_sources` over the three JSON files (UTF-8; a relative path not in the working folder is
    looked for among the shipped files too, `config.find_input`); an unreadable file raises `InputError`."""
    from citeaudit.citations.sourceid import load_json

    def read(path: str | Path, what: str) -> Any:
        return load_json(config.find_input(path), what)

    return audit_sources(read(answer, "answer"), read(sources, "sources"),
                         None if reviews is None else read(reviews, "reviews"), **options)


def audit_files(*, source: str | None = None, citations: str | Path | None = None,
                document: str | Path | None = None, answer: str | Path | None = None,
                answer_json: str | Path | None = None, sources_json: str | Path | None = None,
                reviews_json: str | Path | None = None, **options: Any) -> Audit:
    """Audit whichever input the paths name: `source` + `citations` (quotes), `document` +
    `answer` (lines), or `answer_json` + `sources_json` [+ `reviews_json`] (source ids). A relative
    path that is not in the working folder is looked for among the shipped files too
    (`config.find_input`: `data/rfc7519_citations.json`, the worked example, from any folder)."""
    given = [bool(source or citations), bool(document or answer), bool(answer_json or sources_json)]
    format_ = options.pop("format", None)
    sections = options.pop("sections", "auto")
    if sum(given) != 1:
        raise InputError("give one input: --source and --citations (quotes), --document and --answer "
                         "(line citations), or --answer-json and --sources-json (source ids)")
    if format_ is not None and not given[0]:
        raise InputError("--format names the format of a --source document; line and source-id inputs are text")
    if sections != "auto" and not given[0]:
        raise InputError("--sections names how a --source document is divided; line and source-id inputs are not")
    if given[0]:
        if not (source and citations):
            raise InputError("quote citations need both --source and --citations")
        return audit_quotes(source, citations, format=format_, sections=sections, **options)
    if given[1]:
        if not (document and answer):
            raise InputError("line citations need both --document and --answer")
        return audit_lines(load_line_answer(document, answer), **options)
    if not (answer_json and sources_json):
        raise InputError("source-id citations need both --answer-json and --sources-json")
    # `reviews` (a review store, as for the other formats) goes on top of the seed's reviews.json
    return audit_source_files(answer_json, sources_json, reviews_json, store=options.pop("reviews", None), **options)
