"""Benchmark: seconds per judged citation against the local llama.cpp server, by concurrency.

The `panel` strategy asks three yes/no questions over the same passage and claim; the prompts
differ only in their last line. llama.cpp's server keeps the previous prompt's evaluated tokens,
so when one citation's three questions arrive one after the other, the second and third pay only
for their last line. With several requests in flight, the server (one slot) interleaves the
citations, and every question pays for the whole prompt again. This judges the same labelled
citations at each concurrency level, each into a fresh cache (mode `refresh`: every question is
asked), and prints seconds per judged citation, the ratio to the first level, and how far the
answers moved (the P(pass) of every citation, against the first level's).

Run (about 3 minutes on 2 free cores; the model is installed on first use):
    .venv/bin/python tools/bench_local_judge.py [--citations 8] [--levels 4,1] [--strategy panel]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from citeaudit import AuditOptions, CallCache, audit_quotes, load_citations
from citeaudit import columns as C
from citeaudit.localmodel import local_server, model_path
from citeaudit.vocab import CacheMode

SOURCE, CITATIONS = "rfc7519.txt", Path(__file__).resolve().parents[1] / "data" / "eval_rfc7519.json"


def run(n: int, levels: list[int], strategy: str) -> None:
    records = load_citations(CITATIONS)
    located = audit_quotes(SOURCE, records, locate_only=True).table
    judged_ids = set(located.loc[located[C.EVIDENCE].notna(), C.ID])
    chosen = [r for r in records if r.id in judged_ids][:n]
    model_path("qwen", install=True, progress=print)
    print(f"{len(chosen)} judged citations of {CITATIONS.name}, strategy {strategy}; starting the local server ...")
    with local_server("qwen") as server:
        first: dict | None = None
        base = None
        print(f"{'concurrency':>11} {'seconds':>8} {'s per citation':>15} {'ratio':>6} {'max |dP(pass)|':>15}")
        for level in levels:
            with tempfile.TemporaryDirectory() as folder:
                options = AuditOptions.from_env(model=server.model, strategy=strategy, cache_mode=CacheMode.REFRESH,
                                                concurrency=level, use_calibration=False)
                judge = options.judge(base_url=server.base_url, cache=CallCache(Path(folder), mode=CacheMode.REFRESH))
                started = time.perf_counter()
                table = audit_quotes(SOURCE, chosen, options=options, judge=judge, progress=False).table
                seconds = time.perf_counter() - started
                judge.cache.close()
            errors = int(table[C.ERROR].notna().sum())
            if errors:
                raise SystemExit(f"{errors} citations failed at concurrency {level}: {table[C.ERROR].dropna().iloc[0]}")
            p_pass = dict(zip(table[C.ID], table[C.P_PASS], strict=True))
            first = first or p_pass
            moved = max(abs(p_pass[k] - first[k]) for k in first)
            base = base or seconds
            print(f"{level:>11} {seconds:>8.1f} {seconds / len(chosen):>15.2f} {seconds / base:>6.2f} {moved:>15.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--citations", type=int, default=8)
    parser.add_argument("--levels", default="4,1", help="comma-separated concurrency levels, the first is the base")
    parser.add_argument("--strategy", default="panel")
    args = parser.parse_args()
    run(args.citations, [int(v) for v in args.levels.split(",")], args.strategy)


if __name__ == "__main__":
    main()
