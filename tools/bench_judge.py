"""Benchmark step 2's concurrency: N citations judged against a local scripted OpenAI-compatible
endpoint that answers after a fixed delay (`citeaudit.testing.scripted_endpoint`), at concurrency 1, 2,
4, 8, 16.

Every run records into a fresh cache (mode `record`), so every citation is a real HTTP request:
one request per citation, the `choice` strategy (the scripted endpoint answers A, B or C).
Prints the seconds of judging, citations per second and the speed-up over one at a time.

Run: .venv/bin/python tools/bench_judge.py [--citations 40] [--delay 0.2] [--levels 1,2,4,8,16]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from citeaudit import CallCache, Judge, audit_citations
from citeaudit.citations import Citation, SourceRef
from citeaudit.testing import scripted_endpoint


def run(n: int, delay: float, levels: list[int]) -> None:
    sources = {"s1": "The JWT MUST be rejected when the audience does not match."}
    citations = [Citation(f"c{i:03d}", f"Claim number {i} about the audience.", None, SourceRef("s1"))
                 for i in range(n)]
    print(f"{n} citations, endpoint delay {delay * 1000:.0f} ms, ideal one-at-a-time {n * delay:.1f} s")
    print(f"{'concurrency':>11} {'seconds':>8} {'per second':>11} {'speed-up':>9} {'in flight':>10}")
    with scripted_endpoint(delay=delay) as endpoint:
        base = None
        for level in levels:
            with tempfile.TemporaryDirectory() as folder:
                judge = Judge(model="scripted", base_url=endpoint.url, api_key="x", grammar=False, strategy="choice",
                              cache=CallCache(Path(folder), mode="record"))
                endpoint.most_in_flight = 0
                started = time.perf_counter()
                audit = audit_citations(citations, None, sources, judge=judge, concurrency=level, progress=False)
                seconds = time.perf_counter() - started
                judge.cache.close()
            errors = audit.table["error"].notna().sum()
            assert errors == 0, f"{errors} rows failed"
            base = base or seconds
            speedup = base / seconds
            print(f"{level:>11} {seconds:>8.2f} {n / seconds:>11.1f} {speedup:>8.1f}x {endpoint.most_in_flight:>10}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--citations", type=int, default=40)
    parser.add_argument("--delay", type=float, default=0.2, help="seconds the endpoint waits before answering")
    parser.add_argument("--levels", default="1,2,4,8,16", help="comma-separated concurrency levels")
    args = parser.parse_args(argv)
    run(args.citations, args.delay, [int(v) for v in args.levels.split(",")])
    return 0


if __name__ == "__main__":
    import docs_figures  # --save-docs: also save what it prints for the documentation

    sys.exit(docs_figures.run(main, __file__))
