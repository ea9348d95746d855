"""Benchmark step 1 on a synthetic RFC-shaped corpus: citeaudit against seed 003's method and bare
`str.find`, in the same run.

The corpus and citations come from `bench_corpus.py` (copies of RFC 7519 and 6749, renumbered,
page furniture kept; 60% exact quotes with wraps and typography, 10% elided, 15% one word
changed, 15% fabricated). For each method it prints the setup time (load and index), the time
per quote by kind, the peak memory of the setup (tracemalloc, in a pass of its own) and, for
citeaudit against the seed's method, the end-to-end ratio and how often their statuses agree
(citeaudit's `exact` is the seed's `found`; anything else is its `missing`).

The seed's method costs a scan of the corpus per quote (minutes for 1,000 quotes over 10 MB), so
by default it is timed on a sample of the citations, stratified by kind, and its whole run is
extrapolated from the per-kind means (`--seed-sample 0` times every citation).

Run: CITEAUDIT_DATA_DIR=../shared/data/rfc .venv/bin/python tools/bench_locate.py --mb 10 --citations 1000
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_corpus
import seed_method

from citeaudit import load_rfc
from citeaudit.locate import index_document
from citeaudit.locate import locate_quote as locate
from citeaudit.sources import canonical_section_id


def _peak(fn) -> tuple[int, object]:
    """Peak traced bytes while `fn` runs, and its result."""
    gc.collect()
    tracemalloc.start()
    try:
        result = fn()
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()


def _citeaudit_setup(path: Path):
    return index_document(load_rfc(path))


def _seed_setup(path: Path):
    return seed_method.split_sections(seed_method.load_source(path))


def _sample(cites, size: int):
    if size <= 0 or size >= len(cites):
        return list(cites)
    by_kind = defaultdict(list)
    for c in cites:
        by_kind[c.kind].append(c)
    picked = []
    for group in by_kind.values():
        share = max(1, round(size * len(group) / len(cites)))
        picked += group[:: max(1, len(group) // share)][:share]
    return picked


def _cli_seconds(path: Path, cites, runs: int) -> tuple[float, float]:
    """The best of `runs` wall times of `citeaudit audit --locate-only` over the corpus and the
    citations (interpreter start, imports, load, index, every quote, the table and the JSON Lines
    output), and of `citeaudit --help` (start-up alone)."""
    citations = path.with_name("citations.json")
    citations.write_text(json.dumps([{"id": c.id, "claim": c.quote, "quote": c.quote, "section": c.section}
                                     for c in cites]), encoding="utf-8")
    exe = str(Path(sys.executable).with_name("citeaudit"))
    audit = [exe, "audit", "--source", str(path), "--citations", str(citations), "--locate-only",
             "--output", str(path.with_name("rows.jsonl"))]
    env = {**os.environ, "CITEAUDIT_USER_CACHE": str(path.with_name("cache"))}

    def best(command: list[str]) -> float:
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
            times.append(time.perf_counter() - started)
        return min(times)

    return best(audit), best([exe, "--help"])


def run(megabytes: float, n: int, seed_sample: int, seed: int, cli_runs: int = 0) -> None:
    folder = Path(tempfile.mkdtemp(prefix="citeaudit-bench-"))
    path = bench_corpus.write_corpus(folder / "corpus.txt", megabytes)
    size = path.stat().st_size
    cites = bench_corpus.make_citations(load_rfc(path), n, seed=seed)
    kinds = Counter(c.kind for c in cites)
    print(f"corpus {size / 1e6:.1f} MB ({size:,} bytes), {n} citations: "
          + ", ".join(f"{k} {v}" for k, v in kinds.items()))

    # citeaudit: setup, then every quote
    index_document.cache_clear()
    gc.collect()
    started = time.perf_counter()
    index = _citeaudit_setup(path)
    ca_setup = time.perf_counter() - started
    ca_times: dict[str, list[float]] = defaultdict(list)
    ca_status = {}
    by_status: dict[str, list[float]] = defaultdict(list)
    for c in cites:
        t = time.perf_counter()
        found = locate(index, c.quote, canonical_section_id(c.section))
        dt = time.perf_counter() - t
        ca_times[c.kind].append(dt)
        by_status[str(found.quote_status)].append(dt)
        ca_status[c.id] = str(found.quote_status)
    ca_quotes = sum(sum(v) for v in ca_times.values())
    del index
    index_document.cache_clear()

    # bare str.find over the raw text
    started = time.perf_counter()
    raw = path.read_text(encoding="utf-8")
    find_setup = time.perf_counter() - started
    find_times: dict[str, list[float]] = defaultdict(list)
    for c in cites:
        t = time.perf_counter()
        raw.find(c.quote)
        find_times[c.kind].append(time.perf_counter() - t)
    find_quotes = sum(sum(v) for v in find_times.values())

    # seed 003's method on a sample
    started = time.perf_counter()
    sections = _seed_setup(path)
    seed_setup = time.perf_counter() - started
    sample = _sample(cites, seed_sample)
    seed_times: dict[str, list[float]] = defaultdict(list)
    seed_status = {}
    for c in sample:
        t = time.perf_counter()
        status, _ = seed_method.locate(sections, c.quote, c.section)
        seed_times[c.kind].append(time.perf_counter() - t)
        seed_status[c.id] = status
    seed_quotes = sum(statistics.mean(seed_times[k]) * kinds[k] for k in kinds if seed_times[k])
    del sections

    # peak memory of each setup, in passes of their own (tracing slows everything down)
    ca_peak, kept = _peak(lambda: _citeaudit_setup(path))
    del kept
    index_document.cache_clear()
    seed_peak, kept = _peak(lambda: _seed_setup(path))
    del kept
    find_peak, kept = _peak(lambda: path.read_text(encoding="utf-8"))
    del kept

    def ms(values: list[float]) -> str:
        return f"{statistics.mean(values) * 1000:8.2f}" if values else "       -"

    print(f"\n{'':22}{'citeaudit':>12}{'seed 003':>12}{'str.find':>12}")
    print(f"{'setup (load + index)':22}{ca_setup:11.2f}s{seed_setup:11.2f}s{find_setup:11.2f}s")
    print(f"{'setup peak memory':22}{ca_peak / 1e6:10.0f}MB{seed_peak / 1e6:10.0f}MB{find_peak / 1e6:10.0f}MB")
    print(f"{'  bytes per source byte':22}{ca_peak / size:12.1f}{seed_peak / size:12.1f}{find_peak / size:12.1f}")
    print("per quote (ms), by what the generator made:")
    for kind in kinds:
        print(f"  {kind:20}{ms(ca_times[kind]):>12}{ms(seed_times[kind]):>12}{ms(find_times[kind]):>12}")
    all_ca = [t for v in ca_times.values() for t in v]
    all_find = [t for v in find_times.values() for t in v]
    print(f"  {'all':20}{ms(all_ca):>12}{seed_quotes / n * 1000:12.2f}{ms(all_find):>12}")
    print("citeaudit per quote (ms), by the status it gave:")
    for status, values in sorted(by_status.items()):
        print(f"  {status:20}{ms(values):>12}  ({len(values)})")
    ca_total = ca_setup + ca_quotes
    seed_total = seed_setup + seed_quotes
    note = "" if len(sample) == n else f" (seed 003 timed on {len(sample)} citations, extrapolated by kind)"
    print(f"\nwhole run: citeaudit {ca_total:.2f} s, seed 003 {seed_total:.1f} s, "
          f"str.find {find_setup + find_quotes:.2f} s{note}")
    print(f"  citeaudit vs seed 003, setup included: {seed_total / ca_total:.0f}x faster")
    print(f"  citeaudit vs seed 003, quotes only:    {seed_quotes / ca_quotes:.0f}x faster")
    print(f"  citeaudit per quote / str.find per quote: {statistics.mean(all_ca) / statistics.mean(all_find):.2f}x")
    print(f"  citeaudit setup peak: {ca_peak / size:.1f} bytes per source byte")

    if cli_runs:
        cli_total, help_total = _cli_seconds(path, cites, cli_runs)
        print(f"\nthrough the command line (best of {cli_runs}): `citeaudit audit --locate-only --output` "
              f"{cli_total:.2f} s (of it start-up, `citeaudit --help`: {help_total:.2f} s)")
        print(f"  citeaudit's command line vs seed 003 in-process, setup included: "
              f"{seed_total / cli_total:.0f}x faster")

    agree = sum((ca_status[c.id] == "exact") == (seed_status[c.id] == "found") for c in sample)
    print(f"\nstatus agreement on the {len(sample)} citations both ran: {agree}/{len(sample)} "
          f"({agree / len(sample):.0%}); by generated kind, citeaudit status / seed status:")
    table = Counter((c.kind, ca_status[c.id], seed_status[c.id]) for c in sample)
    for (kind, ca, sd), count in sorted(table.items()):
        print(f"  {kind:12}{ca:10}{sd:10}{count:5}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=10.0, help="corpus size in MB (default 10)")
    parser.add_argument("--citations", type=int, default=1000, help="number of citations (default 1000)")
    parser.add_argument("--seed-sample", type=int, default=150,
                        help="citations the seed's method is timed on (0: all; default 150)")
    parser.add_argument("--seed", type=int, default=7, help="random seed of the citations")
    parser.add_argument("--cli", type=int, default=0, metavar="RUNS",
                        help="also time citeaudit's command line on the same corpus and citations (best of RUNS)")
    args = parser.parse_args(argv)
    run(args.mb, args.citations, args.seed_sample, args.seed, args.cli)
    return 0


if __name__ == "__main__":
    import docs_figures  # --save-docs: also save what it prints for the documentation

    sys.exit(docs_figures.run(main, __file__))
