"""Benchmark step 1: locating quotes against a document indexed once, versus re-normalizing the
document for every quote (the baseline the index replaces). Prints seconds per quote and the ratio.

Run: CITEAUDIT_DATA_DIR=../shared/data/rfc .venv/bin/python tools/bench_locate.py [repeats]
"""

import statistics
import sys
import time
from pathlib import Path

from citeaudit import canonical_section_id, index_document, load_citations, load_rfc, locate
from citeaudit.locate import _normalize_chars

ROOT = Path(__file__).resolve().parents[1]
SETS = [("rfc7519.txt", "eval_rfc7519.json"), ("rfc6749.txt", "eval_rfc6749.json")]


def run(repeats: int) -> None:
    for source, name in SETS:
        doc = load_rfc(source)
        cites = load_citations(ROOT / "data" / name)
        started = time.perf_counter()
        index = index_document(doc)
        build = time.perf_counter() - started

        def indexed(cites=cites, index=index) -> None:
            for c in cites:
                locate(index, c.quote, canonical_section_id(str(c.locator)))

        def renormalized(cites=cites, index=index, doc=doc) -> None:
            for c in cites:
                _normalize_chars(doc.clean, range(len(doc.clean)))  # what each quote would pay unindexed
                locate(index, c.quote, canonical_section_id(str(c.locator)))

        times = {}
        for label, fn in (("indexed", indexed), ("re-normalized", renormalized)):
            samples = []
            for _ in range(repeats):
                t = time.perf_counter()
                fn()
                samples.append((time.perf_counter() - t) / len(cites))
            times[label] = statistics.median(samples)
        print(f"{source}: {len(doc.clean):,} chars, {len(cites)} quotes, index built once in {build * 1000:.0f} ms")
        for label, seconds in times.items():
            print(f"  {label:>14}: {seconds * 1000:8.2f} ms per quote (median of {repeats})")
        print(f"  ratio re-normalized / indexed: {times['re-normalized'] / times['indexed']:.1f}x")


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
