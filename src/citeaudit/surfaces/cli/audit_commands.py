"""Commands that audit: `audit`, `lines`, `contract`, `report` and `batch` (`review` is in `review_commands`)."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from citeaudit import table as C
from citeaudit.errors import InputError
from citeaudit.printable import printable, printable_lines
from citeaudit.surfaces.cli.app import _fail, _show, main
from citeaudit.surfaces.cli.params import (
    RESPONSE_FORMAT,
    format_option,
    input_options,
    judge_options,
    locate_only_option,
    routing_options,
    sections_option,
    settings_options,
)
from citeaudit.table import (
    WAITING_STATES,
    ErrorKind,
    State,
)

# The pipeline (pandas, the judge, the report) is imported by each command when it runs, so the
# command line starts without it (`citeaudit --help`).
if TYPE_CHECKING:
    from citeaudit.decide.reviews import ReviewCommand
    from citeaudit.pipeline.audit import Audit
    from citeaudit.settings.options import AuditOptions

_INPUTS = ("citations", "document", "answer", "answer_json", "sources_json")


def _audit_inputs(*, source: tuple[str, ...], response: str | None = None, response_format: str | None = None,
                  sections: str = "auto", **kwargs: Any) -> Audit:
    """`audit_files` for the commands that take any input (`input_options`), or a vendor response
    over its sources (`vendor_audit.audit_response`) when `--response` is given."""
    from citeaudit.pipeline.audit import audit_files

    if response is not None:
        from citeaudit.pipeline.vendor_audit import audit_response

        if any(kwargs.get(name) for name in _INPUTS):
            raise InputError("give one input: a --response and its --source files, or one of the other pairs")
        options = {k: v for k, v in kwargs.items() if k not in _INPUTS}
        return audit_response(response, source, response_format=response_format, sections=sections, **options)
    if response_format is not None:
        raise InputError("--response-format names the format of a --response")
    if len(source) > 1:
        raise InputError("quote citations are checked against one --source; several go with a --response")
    return audit_files(source=source[0] if source else None, sections=sections, **kwargs)


def _review_command(inputs: Iterable[tuple[str, str | None]], reviews: str | None) -> ReviewCommand:
    """The `citeaudit review` command of the audit's inputs (the options given, in order). A
    `--reviews` store that is not there yet is said so: the audit applied no review (a first audit
    names a store the printed commands then start, and a typo is seen at once)."""
    from citeaudit.decide.reviews import ReviewCommand, default_store
    from citeaudit.settings.environment import review_dir

    if reviews is not None and not Path(reviews).exists():
        click.echo(f"\nno review store at {printable(reviews)} yet: no review was applied (the review commands below "
                   "start it)")
    given = tuple((option, value) for option, value in inputs if value)
    return ReviewCommand(given, default_store(given, reviews, review_dir()))


def _finish(audit: Audit, output: str | None, html_path: str | None, review: ReviewCommand) -> NoReturn:
    """Print the quotes that are not verbatim, the row errors and the decision (each waiting
    citation's reason says why it waits), then the review command of each waiting citation; write
    the outputs, exit by the decision."""
    from citeaudit.decide.agreements import precision_warning
    from citeaudit.decide.spotcheck import open_spot_checks
    from citeaudit.surfaces.report import write_report
    from citeaudit.surfaces.views import how_to_record, quote_notes

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
        write_report(audit, html_path, review=review)
        click.echo(f"wrote {html_path}")
    decision = audit.decision
    click.echo(f"\n{decision.status} ({audit.routing_note()})")
    for reason in decision.reasons:
        click.echo(f"  - {reason}")
    warning = precision_warning({audit.name: audit.table}, audit.routing)
    if warning:
        click.echo(f"warning: {warning}")
    waiting = audit.table[audit.table[C.STATE].isin(WAITING_STATES) & audit.table[C.EVIDENCE].notna()]
    if len(waiting):
        click.echo("\nTo record a human review of a waiting citation, run its command with VERDICT replaced:")
        for citation in waiting[C.ID]:
            click.echo(f"  {printable(citation)}: {printable(review.command(str(citation)))}")
    spots = open_spot_checks(audit.table)
    if len(spots):
        rate = audit.routing.spot_check if audit.routing is not None else 0.0
        click.echo(f"\nSpot checks ({len(spots)}): standing verdicts drawn at random ({rate:.0%} of those that stand) "
                   "to measure how often standing verdicts are right; they hold nothing unless a review disagrees:")
        for citation in spots[C.ID]:
            click.echo(f"  {printable(citation)}: {printable(review.command(str(citation)))}")
    if len(waiting) or len(spots):
        click.echo(review.legend())
    sys.exit(decision.exit_code)


def _show_audit(audit: Audit) -> None:
    """The table under one line that says what routed it; the `why` of a verdict that differs from
    the model's answer and what the contrast checks found follow the table, one line per citation,
    never cut."""
    import pandas as pd

    from citeaudit.surfaces.views import audit_view

    view = audit_view(audit, text=False)
    if audit.table[C.REVIEW_STATE].ne("none").any():
        # with reviews, the step-3 columns are the model's and the last column what holds now
        view = view.rename(columns={"verdict": "model verdict", "route": "model route"})
        view["review"] = [f"{v} ({s})" if v else "-" for v, s in zip(audit.table[C.REVIEW_VERDICT],
                                                                      audit.table[C.REVIEW_STATE])]
        view["final"] = [f"{final} (human)" if state == State.REVIEWED else final if isinstance(final, str)
                         else "waits" for final, state in zip(audit.table[C.FINAL_VERDICT], audit.table[C.STATE])]
    if audit.table[C.SPOT_CHECK].eq(True).any():  # a standing verdict drawn for review (decide.spotcheck)
        view["spot check"] = ["yes" if drawn is True else "-" for drawn in audit.table[C.SPOT_CHECK]]
    notes = view.pop("why") if "why" in view.columns else pd.Series(dtype=object)
    contrast = view.pop("contrast") if "contrast" in view.columns else pd.Series(dtype=object)
    click.echo(audit.routing_note())
    if audit.document is not None and audit.document.reading:  # which sections step 1 read, and why
        click.echo(f"sections of {printable(audit.document.name)}: {audit.document.reading}")
    _show(view)
    for citation, note in zip(view["citation"], notes):
        if note != "-":
            click.echo(f"  {printable(citation)}: {note}")
    for citation, note in zip(view["citation"], contrast):
        if note != "-":
            click.echo(f"  {printable(citation)}: contrast: {printable(note)}")


@main.command()
@click.option("--source", "sources", required=True, multiple=True,
              help="Source document (RFC or plain text, Markdown, HTML, PDF): a path, or a name found in "
                   "CITEAUDIT_DATA_DIR or data/. Repeat it for the documents a --response cites, in the order "
                   "they were sent.")
@click.option("--citations", type=click.Path(dir_okay=False), default=None, help="Quote-citation JSON file.")
@click.option("--response", type=click.Path(dir_okay=False), default=None,
              help="Instead of --citations: a saved API response whose own citations are audited (Anthropic, "
                   "OpenAI Responses or Chat Completions, Gemini, Cohere, LangChain/LlamaIndex).")
@click.option("--response-format", type=RESPONSE_FORMAT, default=None,
              help="The --response's format (default: by the JSON's shape).")
@click.option("--require-coverage/--allow-uncited", default=None,
              help="With --response: answer text outside every citation keeps the answer in REVIEW (the "
                   "default: fail closed); --allow-uncited lists that text but lets the citations decide.")
@format_option
@sections_option
@judge_options
@locate_only_option
def audit(sources: tuple[str, ...], citations: str | None, response: str | None, response_format: str | None,
          require_coverage: bool | None, doc_format: str | None, sections: str, settings: AuditOptions,
          output: str | None, html_path: str | None, reviews: str | None, locate_only: bool) -> NoReturn:
    """Audit quote citations (id, claim, quote, section) over one source document, or the citations
    of a saved API response (--response) over the sources it cites."""
    from citeaudit.pipeline.audit import audit_quotes

    if response is not None:
        if citations is not None:
            raise click.UsageError("give --citations (quote citations) or --response (an API response), not both")
        _audit_response(response, sources, response_format, require_coverage is not False, doc_format, sections,
                        settings, output, html_path, reviews, locate_only)
    if citations is None:
        raise click.UsageError("give --citations (a quote-citation file) or --response (a saved API response)")
    if response_format is not None or require_coverage is not None:
        raise click.UsageError("--response-format and --require-coverage/--allow-uncited go with --response")
    if len(sources) != 1:
        raise click.UsageError("quote citations are checked against one --source")
    source = sources[0]
    result = audit_quotes(source, citations, format=doc_format, sections=sections, options=settings,
                          locate_only=locate_only, reviews=reviews)
    _show_audit(result)
    _finish(result, output, html_path, _review_command((("--source", source), ("--citations", citations),
                                                        ("--sections", sections if sections != "auto" else None)),
                                                       reviews))


def _audit_response(response: str, sources: tuple[str, ...], response_format: str | None, require_coverage: bool,
                    doc_format: str | None, sections: str, settings: AuditOptions, output: str | None,
                    html_path: str | None, reviews: str | None, locate_only: bool) -> NoReturn:
    """`audit --response`: the vendor's citations, each vendor finding, the uncited text, the decision."""
    from citeaudit.pipeline.vendor_audit import audit_response

    result = audit_response(response, sources, response_format=response_format, format=doc_format,
                            sections=sections, require_coverage=require_coverage, options=settings,
                            locate_only=locate_only, reviews=reviews)
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
    inputs = (("--response", response), *(("--source", source) for source in sources),
              ("--sections", sections if sections != "auto" else None))
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
    from citeaudit.pipeline.audit import audit_lines, unrecognized_reasons
    from citeaudit.pipeline.loading import load_line_answer
    from citeaudit.surfaces.views import lines_view

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
@routing_options
@click.option("--output", type=click.Path(dir_okay=False), default=None, help="Write one JSON object per claim.")
def contract(answer: str, sources: str, reviews: str, use_judge: bool, settings: AuditOptions,
             output: str | None) -> NoReturn:
    """Check a source-id answer against its sources and human reviews; print {"status", "reasons"}.

    By default the reviews decide (seed 000's acceptance contract); `--judge` lets confident
    model verdicts stand for claims nobody has reviewed.
    """
    from citeaudit.pipeline.audit import audit_source_files

    result = audit_source_files(answer, sources, reviews, options=settings, locate_only=not use_judge)
    if output:
        result.write_jsonl(output)
    click.echo(json.dumps(result.decision.to_dict(), ensure_ascii=False, indent=2))
    sys.exit(result.decision.exit_code)


@main.command()
@input_options
@format_option
@click.option("--html", "html_path", required=True, type=click.Path(dir_okay=False), help="Where to write the report.")
@settings_options
@routing_options
@click.option("--output", type=click.Path(dir_okay=False), default=None,
              help="Also write one JSON object per citation.")
@click.option("--reviews", type=click.Path(dir_okay=False), default=None, help="Review store to apply.")
@locate_only_option
def report(source: tuple[str, ...], citations: str | None, document: str | None, answer: str | None,
           answer_json: str | None, sources_json: str | None, response: str | None, response_format: str | None,
           sections: str, doc_format: str | None, html_path: str, settings: AuditOptions, output: str | None,
           reviews: str | None, locate_only: bool) -> NoReturn:
    """Write a self-contained HTML report of an audit (no scripts, no network fetches)."""
    from citeaudit.surfaces.report import write_report

    result = _audit_inputs(source=source, citations=citations, document=document, answer=answer,
                           answer_json=answer_json, sources_json=sources_json, response=response,
                           response_format=response_format, sections=sections, format=doc_format,
                           options=settings, locate_only=locate_only, reviews=reviews)
    inputs = (*(("--source", one) for one in source), ("--citations", citations), ("--document", document),
              ("--answer", answer), ("--answer-json", answer_json), ("--sources-json", sources_json),
              ("--response", response), ("--response-format", response_format),
              ("--sections", sections if sections != "auto" else None))
    write_report(result, html_path, review=_review_command(inputs, reviews))
    if output:
        result.write_jsonl(output)
    click.echo(f"wrote {html_path}: {len(result.table)} citations, {result.decision.status}")
    sys.exit(result.decision.exit_code)


@main.command()
@click.argument("dataset", type=click.Path(dir_okay=False))
@settings_options
@routing_options
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
@click.option("--resume", is_flag=True,
              help="Continue an interrupted batch of the same dataset and settings: keep the partitions it "
                   "finished (kept in OUTPUT.parts/ while a batch with --output runs) and audit the rest.")
@click.option("--allow-outside-sources", is_flag=True,
              help="Let the dataset's lines name sources outside its folder and the data folders (by default "
                   "such a line is an error: a dataset often comes from the system under audit).")
def batch(dataset: str, settings: AuditOptions, locate_only: bool, reviews: str | None, output: str | None,
          decisions: str | None, scheduler: str, workers: int | None, html_path: str | None, resume: bool,
          allow_outside_sources: bool) -> NoReturn:
    """Audit a JSON Lines dataset of answers (any citation format, one answer per line) on Dask."""
    import tempfile

    from citeaudit.decide.reviews import load_reviews
    from citeaudit.pipeline.batch import brief
    from citeaudit.pipeline.parts import discard, parts_folder
    from citeaudit.pipeline.scheduling import check_scheduler, check_workers
    from citeaudit.pipeline.stream import restore_result, stream_batch, write_outputs
    from citeaudit.surfaces.dashboard import answer_cards, write_dashboard

    if resume and output is None:
        raise click.UsageError("--resume continues the partitions a batch keeps beside its --output: give the same "
                               "--output as the interrupted run")
    check_scheduler(scheduler)
    check_workers(workers, scheduler)
    stored = load_reviews(reviews) if reviews else None
    if not locate_only:
        from citeaudit.pipeline.run import AuditRun

        click.echo(AuditRun(settings).routing.note(), err=True)
    # a bad argument has stopped the command by now: the scratch folder is made only for a batch that runs
    parts = parts_folder(output) if output is not None else Path(tempfile.mkdtemp(prefix="citeaudit-batch-")) / "parts"
    if output is not None and parts.exists() and not resume:
        click.echo(f"{parts} holds the partitions of an interrupted batch: starting again (--resume continues it)",
                   err=True)
    try:
        summary = stream_batch(dataset, settings, scheduler, parts=parts, locate_only=locate_only, reviews=stored,
                               cards=answer_cards if html_path is not None else None, progress=True, workers=workers,
                               resume=resume, allow_outside_sources=allow_outside_sources)
        if not summary.answers:
            _fail(f"{dataset} has no answers: give one JSON object per line")
        if summary.resumed:
            click.echo(f"resumed: {summary.resumed} finished partitions kept from {parts}", err=True)
        click.echo(f"{summary.answers} answers, {summary.rows} rows: "
                   + ", ".join(f"{summary.counts[s]} {s}" for s in ("ACCEPT", "REVIEW", "REJECT"))
                   + (f" ({summary.invalid} invalid lines)" if summary.invalid else ""))
        for answer in summary.saved():
            if answer["status"] != "ACCEPT":
                click.echo(f"  {answer['status']:6} {printable(answer['answer_id'])} (line {answer['line']}): "
                           f"{brief(answer['reasons'], 160)}")
        errors = sorted(summary.errors)
        for error in errors[:5]:
            click.echo(f"error: {printable_lines(error)}", err=True)
        if len(errors) > 5:
            click.echo(f"error: ... and {len(errors) - 5} more kinds of row error (see the rows' `error`)", err=True)
        if summary.replay_miss:
            click.echo("Record the missing answers with --cache-mode record (an OpenAI-compatible endpoint: "
                       "OPENAI_BASE_URL, CITEAUDIT_MODEL), then replay them offline.", err=True)
        write_outputs(summary, output, decisions)
        if output:
            click.echo(f"wrote {summary.rows} records to {output}")
        if decisions:
            click.echo(f"wrote {summary.answers} decisions to {decisions}")
        if html_path:
            write_dashboard(restore_result(summary), html_path, title=f"Citation audit of {Path(dataset).name}")
            click.echo(f"wrote the dashboard to {html_path}")
    except BaseException:
        if output is None:
            discard(parts.parent)  # a scratch folder: nothing to resume from
        raise
    discard(parts if output is not None else parts.parent)  # every output is written whole
    sys.exit(summary.exit_code)
