"""Benchmark: seconds per judged citation against the local llama.cpp server, by concurrency and server.

Two things set the local judge's speed, and each run of this benchmark names both:

- Concurrency. The `panel` strategy asks three yes/no questions over the same passage and claim;
  the prompts differ only in their last line. llama.cpp's server keeps the previous prompt's
  evaluated tokens, so when one citation's three questions arrive one after the other, the second
  and third pay only for their last line. With several requests in flight, the server (one slot)
  interleaves the citations, and every question pays for the whole prompt again.
- The order of the requests (`panel+examples`). Its `examples` request opens with about 1,600 tokens
  of worked examples, `panel`'s with the passage: sent citation by citation (`/by-citation`), each
  request evaluates its head again; the pipeline (`Judge.judge_all`) sends every citation's
  `examples` request first, then each citation's `panel` requests, so each head is evaluated once.
- The server's log-probabilities. `stock` is llama-cpp-python's own way (`logits_all=True`: the
  logits of every prompt token are computed, stored and turned into log-probabilities, and the
  vocabulary is sorted in Python, for each request); `one-token` is the server `citeaudit` starts
  (`citeaudit.judge.llamaserver.one_token_logprobs`: the answer token's row alone).

Each run judges the same labelled citations, each into a fresh cache (mode `refresh`: every question
is asked), and prints seconds per judged citation, the ratio to the first run, and how far the
answers moved (the largest difference of any question's P(yes), or of P(pass), against the first run).

Run (about 5 minutes on 2 free cores; the model is installed on first use):
    .venv/bin/python tools/bench_local_judge.py [--citations 8] [--runs 4/stock,1/stock,1/one-token]
        [--strategy panel] [--source rfc7519.txt --citations-file data/eval_rfc7519.json]
    .venv/bin/python tools/bench_local_judge.py --strategy panel+examples --runs 1/one-token/by-citation,1/one-token
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from citeaudit import AuditOptions, AuditRun, CallCache, audit_quotes, load_citations
from citeaudit import table as C
from citeaudit.judge.localmodel import local_server, model_path
from citeaudit.settings import environment as config
from citeaudit.table import CacheMode

ROOT = Path(__file__).resolve().parents[1]
SERVERS = {"stock": True, "one-token": False}  # the server's `logits_all`
BY_CITATION = "by-citation"


def parse_runs(text: str) -> list[tuple[int, str, bool]]:
    """"4/stock,1/one-token/by-citation" -> [(4, "stock", False), (1, "one-token", True)]."""
    runs = []
    for item in text.split(","):
        level, server, *order = item.split("/")
        if server not in SERVERS or order not in ([], [BY_CITATION]):
            raise SystemExit(f"--runs: {item!r}: the server is one of {', '.join(SERVERS)}, optionally followed by "
                             f"/{BY_CITATION} (as in 1/one-token or 1/one-token/{BY_CITATION})")
        runs.append((int(level), server, bool(order)))
    return runs


def judge_once(source: str, chosen: list, strategy: str, level: int, server_kind: str,
               by_citation: bool = False) -> tuple[float, dict, dict]:
    """Seconds, P(pass) by citation id and the answers by citation id, for one run on a fresh server;
    `by_citation`: each citation's requests one after the other, not in the pipeline's order."""
    with local_server("qwen", logits_all=SERVERS[server_kind], models=config.models_dir()) as server, \
            tempfile.TemporaryDirectory() as folder:
        options = AuditOptions.from_env(model=server.model, strategy=strategy, cache_mode=CacheMode.REFRESH,
                                        concurrency=level, use_calibration=False)
        judge = AuditRun(options, base_url=server.base_url,
                         cache=CallCache(Path(folder), mode=CacheMode.REFRESH)).judge
        judge.judge("A warm-up claim.", "A warm-up passage.")  # the first request pays for loading, not timed
        if by_citation:  # what the pipeline did before `Judge.judge_all`
            judge.judge_all = lambda items, done=None: [judge.judge(*item) for item in items]  # type: ignore[method-assign]
        started = time.perf_counter()
        table = audit_quotes(source, chosen, options=options, judge=judge, progress=False).table
        seconds = time.perf_counter() - started
        judge.cache.close()
    errors = table[C.ERROR].dropna()
    if len(errors):
        raise SystemExit(f"{len(errors)} citations failed at {level}/{server_kind}: {errors.iloc[0]}")
    return (seconds, dict(zip(table[C.ID], table[C.P_PASS], strict=True)),
            dict(zip(table[C.ID], table[C.ANSWERS], strict=True)))


def largest_move(first: dict, now: dict) -> float:
    """The largest difference of any value between two runs' {id: value or {question: value}}."""
    moves = [0.0]
    for key, value in first.items():
        if isinstance(value, dict):
            moves += [abs(value[q] - now[key][q]) for q in value]
        elif value is not None:
            moves.append(abs(value - now[key]))
    return max(moves)


def run(source: str, citations: Path, n: int, runs: list[tuple[int, str, bool]], strategy: str) -> None:
    records = load_citations(citations)
    located = audit_quotes(source, records, locate_only=True).table
    judged_ids = set(located.loc[located[C.EVIDENCE].notna(), C.ID])
    chosen = [r for r in records if r.id in judged_ids][:n]
    model_path("qwen", install=True, progress=print, folder=config.models_dir())
    print(f"{len(chosen)} judged citations of {citations.name}, strategy {strategy}; a fresh server per run")
    print(f"{'concurrency/server':>24} {'seconds':>8} {'s per citation':>15} {'ratio':>6} "
          f"{'max |dP(pass)|':>15} {'max |dP(yes)|':>14}")
    first: tuple[float, dict, dict] | None = None
    for level, server_kind, by_citation in runs:
        seconds, p_pass, answers = judge_once(source, chosen, strategy, level, server_kind, by_citation)
        name = f"{level}/{server_kind}" + (f"/{BY_CITATION}" if by_citation else "")
        first = first or (seconds, p_pass, answers)
        moved_yes = largest_move(first[2], answers) if strategy != "choice" else float("nan")
        print(f"{name:>24} {seconds:>8.1f} {seconds / len(chosen):>15.2f} "
              f"{seconds / first[0]:>6.2f} {largest_move(first[1], p_pass):>15.4f} {moved_yes:>14.4f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--citations", type=int, default=8, help="how many judged citations (the first ones)")
    parser.add_argument("--runs", default="4/stock,1/stock,1/one-token",
                        help="comma-separated concurrency/server[/by-citation] runs (stock or one-token); the first "
                             "is the base")
    parser.add_argument("--strategy", default="panel")
    parser.add_argument("--source", default="rfc7519.txt")
    parser.add_argument("--citations-file", type=Path, default=ROOT / "data" / "eval_rfc7519.json")
    args = parser.parse_args()
    run(args.source, args.citations_file, args.citations, parse_runs(args.runs), args.strategy)


if __name__ == "__main__":
    main()
