"""Bring your own judge: record the bundled labelled sets with another model, fit its calibration,
and set it beside the shipped Qwen calibration (`citeaudit judge-setup`, notebook 09).

    plan = setup_plan(options)          # what will be asked: calls, reusable answers, prompt tokens
    tables = record_sets(options, plan) # asks what is missing (progress bar of calls), resumable
    fitted = fit_judge(tables, options) # calibrate.fit_calibration, saved in the user cache
    side = compare_with_shipped(fitted, tables, options)  # StrategyComparison: figures, curves

The endpoint is the one every surface uses (`OPENAI_BASE_URL`, `OPENAI_API_KEY`, the model of
`AuditOptions`). New answers and the calibration go to the user cache (`AuditOptions.write_folder`:
`cache/local/`, ignored by git), never the shipped folder, and the next `audit` of that model and
strategy routes with the calibration (`AuditRun.calibration`). A second run asks only what the
first did not record: every call goes through the cache. The cost estimate counts the requests
`Judge.requests` would send for every citation step 1 does not settle, less those the cache
already holds; their prompt tokens are the shipped Qwen recording's count for the same prompt
where there is one (another tokenizer counts a little differently), else characters / 4. An
endpoint without log-probabilities is sampled instead (`judge.SAMPLES` calls per question), which
the estimate does not foresee.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import pandas as pd

from citeaudit import table as C
from citeaudit.calibrate.domains import domain_of, hold_out_calibration, hold_out_sets, row_labels
from citeaudit.calibrate.fit import StrategyComparison, fit_calibration
from citeaudit.calibrate.probe import refuse_in_sample
from citeaudit.decide.calibration import DEFAULT_TARGET, Calibration, load_calibration, save_calibration
from citeaudit.errors import InputError, JudgeError
from citeaudit.judge.strategies import STRATEGIES
from citeaudit.pipeline.run import AuditRun
from citeaudit.settings import environment as config
from citeaudit.settings.options import AuditOptions
from citeaudit.table import CacheMode

if TYPE_CHECKING:
    from pathlib import Path

    from citeaudit.judge.judge import Judge

# Every bundled labelled quote-citation set as (source, citations): the Makefile's QUOTE_SETS, which
# `make record-qwen` and `make calibrate-qwen` use (tests/test_judge_setup.py keeps the two equal).
LABELLED_SETS: tuple[tuple[str, str], ...] = (
    ("rfc7519.txt", "data/rfc7519_citations.json"),
    ("rfc7519.txt", "data/eval_rfc7519.json"),
    ("rfc7519.txt", "data/eval_rfc7519_more.json"),
    ("rfc6749.txt", "data/eval_rfc6749.json"),
    ("rfc6749.txt", "data/eval_rfc6749_more.json"),
    ("data/docs/sensor_telemetry.txt", "data/eval_sensor_telemetry.json"),
    ("data/formats/lantern-sync.md", "data/formats/lantern-sync_citations.json"),
    ("data/formats/token-service.html", "data/formats/token-service_citations.json"),
    ("data/formats/reservoir-report.pdf", "data/formats/reservoir-report_citations.json"),
    ("data/formats/field-note.txt", "data/formats/field-note_citations.json"),
)
CHARS_PER_TOKEN = 4  # the estimate of a prompt no recording counted


@dataclass(frozen=True)
class LabelledSet:
    """One labelled set as step 1 leaves it: its located table and the questions for the judge."""

    source: str
    citations: str
    table: pd.DataFrame = field(repr=False)
    document_name: str = ""


@dataclass(frozen=True)
class SetupPlan:
    """What a setup run asks: `calls` requests for `judged` of `citations` labelled citations, of
    which `cached` are answered from the recordings; `prompt_tokens` of the `to_do` ones
    (estimated: `tokens_counted` of them from a recording's count of the same prompt)."""

    model: str
    strategy: str
    sets: tuple[LabelledSet, ...] = field(repr=False)
    citations: int
    judged: int
    calls: int
    cached: int
    prompt_tokens: int
    tokens_counted: int

    @property
    def to_do(self) -> int:
        return self.calls - self.cached

    def summary(self) -> str:
        """The estimate in words, printed before anything is asked."""
        per = f"{self.calls // self.judged} per judged citation" if self.judged else "none"
        counted = (f"{self.tokens_counted} of them counted by the shipped Qwen recording of the same prompt, the rest "
                   f"estimated at {CHARS_PER_TOKEN} characters a token") if self.tokens_counted else \
            f"estimated at {CHARS_PER_TOKEN} characters a token"
        return (f"{self.model} / {self.strategy}: {len(self.sets)} labelled sets, {self.citations} citations, "
                f"{self.judged} for the judge (the others are settled by step 1); {self.calls} calls ({per}), "
                f"{self.cached} already recorded, {self.to_do} to ask, about {self.prompt_tokens:,} prompt tokens "
                f"and {self.to_do} completion tokens ({counted}). An endpoint without log-probabilities is "
                "sampled instead, several calls per question.")


def labelled_sets(sets: Iterable[tuple[str, str]] | None = None, limit: int | None = None) -> tuple[LabelledSet, ...]:
    """Step 1 over each (source, citations) pair (default `LABELLED_SETS`), no model asked; `limit`
    keeps the first `limit` citations of each set (a quick trial)."""
    from citeaudit.citations.records import load_citations
    from citeaudit.pipeline.audit import audit_quotes

    located = []
    for source, citations in sets or LABELLED_SETS:
        path = config.find_input(citations)
        records = load_citations(path)
        if limit is not None:
            records = records[:limit]
        audit = audit_quotes(source, records, locate_only=True)
        if audit.table[C.EXPECTED].isna().all():
            raise InputError(f"{citations}: no citation has a gold `expected` verdict; the judge setup needs "
                             "labelled sets")
        name = audit.document.name if audit.document is not None else "the source"
        located.append(LabelledSet(source, str(citations), audit.table, name))
    return tuple(located)


@dataclass(frozen=True)
class LabelledTables:
    """Labelled sets audited by each of several strategies of one judge, one table per set
    (`labelled_tables`): what notebook 04 compares and holds out domain by domain."""

    sets: dict[str, list[tuple[str, str]]]  # per strategy, its (document, citation file) pairs
    by_set: dict[str, list[pd.DataFrame]]  # per strategy, the audited table of each pair, in order

    @cached_property
    def tables(self) -> dict[str, pd.DataFrame]:
        """Each strategy's sets as one table."""
        return {strategy: pd.concat(parts, ignore_index=True) for strategy, parts in self.by_set.items()}

    def summary(self) -> str:
        """A line per strategy: labelled citations, judged ones, gold verdicts."""
        return "\n".join(
            f"{strategy}: {len(table)} labelled citations, {table[C.CONFIDENCE].notna().sum()} judged by the "
            f"model; gold verdicts: {table[C.EXPECTED].map(str).value_counts().to_dict()}"
            for strategy, table in self.tables.items())

    def held_out(self, strategy: str, target: float = DEFAULT_TARGET) -> pd.DataFrame | None:
        """`hold_out_sets` of one strategy's sets (None when they span one domain)."""
        return hold_out_sets(self.sets[strategy], self.by_set[strategy], target)


def labelled_tables(strategies: Iterable[str], options: AuditOptions,
                    labelled: Iterable[Sequence[str]] | None = None, public: bool = True) -> LabelledTables:
    """Each of `strategies` (`options` with its strategy changed) over the labelled sets `labelled`
    ((document, citation file) pairs, default `LABELLED_SETS`) and, when `public`, the public TRAIN
    sets (`public_labelled_sets`, built on first use; none without the public data), except
    `choice`: the shipped judge answered it on the project's sets only, and `make calibrate-qwen`
    fits it there."""
    from citeaudit.calibrate.public_sets import public_labelled_sets
    from citeaudit.pipeline.audit import audit_quotes

    own = [(str(source), str(cites)) for source, cites in (labelled or LABELLED_SETS)]
    extra = public_labelled_sets(config.build_dir() / "public", config.public_dir()) if public else []
    sets = {str(s): own if str(s) == "choice" else [*own, *extra] for s in strategies}
    by_set = {strategy: [audit_quotes(source, config.find_input(cites), options=options.with_(strategy=strategy)).table
                         for source, cites in pairs] for strategy, pairs in sets.items()}
    return LabelledTables(sets, by_set)


def _shipped_tokens(options: AuditOptions) -> Callable[[dict], int | None]:
    """The prompt token count the shipped Qwen recording holds for the same prompt, when it has one."""
    qwen = AuditRun(shipped_judge(options), grammar=True).judge  # recorded through the local server's grammar

    def count(request: dict) -> int | None:
        three_way = request["prompt_version"] in {s.prompt_version for s in STRATEGIES.values() if s.letters}  # A/B/C
        twin = qwen._request(request["messages"], qwen._params(three_way=three_way), request["prompt_version"])
        record = qwen.cache.recorded(twin)
        tokens = (record or {}).get("tokens") or {}
        return tokens.get("prompt") if isinstance(tokens.get("prompt"), int) else None

    return count


def setup_plan(options: AuditOptions, sets: Sequence[LabelledSet] | None = None,
               judge: Judge | None = None) -> SetupPlan:
    """The cost estimate of recording `sets` (default every bundled one) with the judge of `options`
    (or `judge`); asks nothing."""
    from citeaudit.pipeline.audit import judge_questions

    sets = tuple(sets) if sets is not None else labelled_sets()
    own = judge is None
    judge = judge or AuditRun(options).judge
    shipped_count = _shipped_tokens(options)
    calls = cached = judged = tokens = counted = citations = 0
    for labelled in sets:
        citations += len(labelled.table)
        for claim, evidence, where, _ in judge_questions(labelled.table, labelled.document_name).values():
            judged += 1
            for request in judge.requests(claim, evidence, where):
                calls += 1
                if judge.cache.recorded(request) is not None:
                    cached += 1
                    continue
                known = shipped_count(request)
                counted += known is not None
                chars = sum(len(str(m.get("content", ""))) for m in request["messages"])
                tokens += known if known is not None else -(-chars // CHARS_PER_TOKEN)
    if own:
        judge.cache.close()
    return SetupPlan(judge.model, str(judge.strategy), sets, citations, judged, calls, cached, tokens, counted)


def record_sets(options: AuditOptions, plan: SetupPlan, progress: bool = True) -> dict[str, pd.DataFrame]:
    """Judge every citation of the plan's sets (recording what the cache lacks), with a progress bar
    of the calls (done / to do, elapsed, estimate); the judged table of each set by its citations
    file. A row that could not be judged is a `JudgeError` naming the first failure: a calibration
    fitted on part of a set would be quietly biased, and a rerun asks only what is still missing."""
    from tqdm.auto import tqdm

    from citeaudit.pipeline.audit import judge_citations

    judge = AuditRun(options).judge
    if options.cache_mode == CacheMode.REPLAY and plan.to_do:
        raise InputError(f"{plan.to_do} of {plan.calls} calls of {plan.model} / {plan.strategy} are not recorded, "
                         "and replay never calls a model: run with --cache-mode record against the model's endpoint "
                         "(OPENAI_BASE_URL, CITEAUDIT_MODEL).")
    tables = {}
    with tqdm(total=plan.to_do, desc=f"recording {plan.model}", unit="call", disable=not progress or not plan.to_do,
              file=sys.stderr) as bar:
        judge.cache.on_new = lambda _record: bar.update()
        for labelled in plan.sets:
            tables[labelled.citations] = judge_citations(labelled.table, judge, labelled.document_name,
                                                         progress=False, concurrency=options.requests_in_flight)
    judge.cache.close()
    errors = sorted({e for table in tables.values() for e in table[C.ERROR] if isinstance(e, str)})
    if errors:
        raise JudgeError(f"{len(errors)} kind(s) of judge failure, first: {errors[0]}. What was answered is recorded; "
                         "rerun the same command to ask only what is missing.")
    return tables


def fit_judge(tables: dict[str, pd.DataFrame], options: AuditOptions, target: float = 0.95, folds: int = 10,
              repeats: int = 20, save: bool = True, domains: dict[str, str] | None = None,
              threshold_rule: str = "pooled") -> Calibration:
    """The calibration of the model of `options` fitted on its judged labelled tables (keyed by
    citation file; the code `citeaudit calibrate` runs), saved in the user cache
    (`options.write_folder`) unless not `save`. When the tables span two domains or more (`domains`
    by citation file, default `domain_of`), the leave-one-domain-out figures are attached and
    `threshold_rule` applies as in `citeaudit calibrate --threshold-rule` (`hold_out_calibration`)."""
    refuse_in_sample(str(options.strategy))
    table = pd.concat(list(tables.values()), ignore_index=True)
    documents = row_labels(tables, tables.values())
    fitted = fit_calibration(table, options.model, str(options.strategy), target, folds, list(tables), None, repeats,
                             documents)
    names = [(domains or {}).get(cites) or domain_of(config.find_input(cites)) for cites in tables]
    if len(set(names)) >= 2:
        fitted = hold_out_calibration(fitted, table, row_labels(names, tables.values()), documents, target,
                                      threshold_rule).calibration
    elif threshold_rule != "pooled":
        raise InputError("threshold rule worst-domain needs labelled sets of two domains or more")
    if save:
        save_calibration(fitted, options.write_folder)
    return fitted


def shipped_judge(options: AuditOptions) -> AuditOptions:
    """The settings of the shipped Qwen judge in the same strategy: its recordings only, replayed."""
    return options.with_(model=config.DEFAULT_MODEL, cache_mode=CacheMode.REPLAY, shipped=True, threshold=None)


def compare_with_shipped(fitted: Calibration, tables: dict[str, pd.DataFrame], options: AuditOptions,
                         sets: Sequence[LabelledSet], target: float = 0.95, folds: int = 10,
                         repeats: int = 20) -> StrategyComparison:
    """The new judge beside the shipped Qwen judge, same strategy, same labelled sets: Qwen's saved
    calibration (`cache/calibration/`; fitted now from its shipped recordings when that file is
    missing) and its judged tables replayed from the shipped recordings. Keys are `model / strategy`."""
    qwen = shipped_judge(options)
    judge = AuditRun(qwen, grammar=True).judge
    qwen_tables = {s.citations: _judged(s, judge, qwen) for s in sets}
    judge.cache.close()
    shipped = load_calibration(qwen.model, str(qwen.strategy), qwen.folder)
    if shipped is None:
        shipped = fit_judge(qwen_tables, qwen, target, folds, repeats, save=False)
    mine = f"{fitted.model} / {fitted.strategy}"
    theirs = f"{shipped.model} / {shipped.strategy} (shipped)"
    return StrategyComparison({mine: pd.concat(list(tables.values()), ignore_index=True),
                               theirs: pd.concat(list(qwen_tables.values()), ignore_index=True)},
                              {mine: fitted, theirs: shipped}, target)


def _judged(labelled: LabelledSet, judge: Judge, options: AuditOptions) -> pd.DataFrame:
    from citeaudit.pipeline.audit import judge_citations

    return judge_citations(labelled.table, judge, labelled.document_name, progress=False,
                           concurrency=options.requests_in_flight)


@dataclass
class SetupResult:
    """A finished setup: the plan it ran, the fitted calibration, where it was saved, the comparison."""

    plan: SetupPlan
    calibration: Calibration
    saved: Path | None  # None: the shipped judge's own calibration stays in force (`setup_judge`)
    comparison: StrategyComparison
    seconds: float

    def saved_note(self) -> str:
        """One line: where the calibration was saved and what routes with it, or why it was not saved
        (the CLI's `judge-setup` and notebook 09 print this line)."""
        fitted = self.calibration
        if self.saved is not None:
            return (f"calibration saved to {self.saved}: `citeaudit audit --model {fitted.model} --strategy "
                    f"{fitted.strategy}` now routes with it")
        shipped = next((c for name, c in self.comparison.calibrations.items() if name.endswith("(shipped)")), None)
        sets = len(shipped.fitted_on.get("sets", [])) if shipped is not None else 0
        return (f"not saved: the shipped calibration of {fitted.model} / {fitted.strategy} stays in force. It was "
                f"fitted on {sets} labelled sets of several domains and its promise is checked with each domain "
                f"held out; this fit saw only the labelled sets above ({len(self.plan.sets)}), so its figures are "
                "cross-validated within them and read better than they would on a document unlike them. To route "
                "with a calibration of your own documents, fit one on labelled citations of them (`citeaudit "
                "calibrate --source S --citations C ...`).")


def setup_judge(options: AuditOptions, sets: Iterable[tuple[str, str]] | None = None, limit: int | None = None,
                target: float = 0.95, folds: int = 10, repeats: int = 20, progress: bool = True,
                say: Callable[[str], object] = print, plan: SetupPlan | None = None) -> SetupResult:
    """The whole setup: plan (said before anything is asked; `plan` when already made from these
    settings and sets), record, fit and save, compare.

    The calibration is saved in the user cache, except for the shipped Qwen judge when its shipped
    calibration exists: a copy in the user cache would shadow the project's later updates of it."""
    from citeaudit.decide.calibration import calibration_path

    started = time.perf_counter()
    if plan is None:
        plan = setup_plan(options, labelled_sets(sets, limit))
        say(plan.summary())
    located = plan.sets
    tables = record_sets(options, plan, progress)
    how = f"{folds}-fold cross-validation" + (f", {repeats} fold assignments" if repeats else "")
    say(f"fitting the calibration of {plan.model} / {plan.strategy} ({how}), then replaying the shipped Qwen "
        "judge beside it ...")
    keep_shipped = (options.model == config.DEFAULT_MODEL and not options.shipped
                    and load_calibration(options.model, str(options.strategy), options.folder) is not None)
    fitted = fit_judge(tables, options, target, folds, repeats, save=not keep_shipped)
    saved = None if keep_shipped else calibration_path(fitted.model, fitted.strategy, options.write_folder)
    comparison = compare_with_shipped(fitted, tables, options, located, target, folds, repeats)
    return SetupResult(plan, fitted, saved, comparison, time.perf_counter() - started)
