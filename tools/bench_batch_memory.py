"""Benchmark `citeaudit batch` as a dataset grows (issue 36): the command's peak memory and its
throughput for 1,000, 10,000 and 50,000 answers, locate-only and replayed from the recordings, on
the threaded scheduler (one process: the client is the worker).

The dataset is the bundled example (`data/batch/example.jsonl`: five answers, three formats,
every judged citation recorded) repeated with unique answer_ids, so a replayed batch asks no
model and finds every answer in the shipped recordings. Each run is its own process
(`citeaudit batch DATASET --output ROWS --decisions DECISIONS`); its peak resident memory is
the kernel's (`os.wait4`'s ru_maxrss), its time the wall clock. `--kept` also times the batch
that keeps every outcome in memory (`run_batch`, the library's `BatchResult`), the baseline the
streamed command replaced.

Memory growth and throughput are compared with the smallest size in the same run (this machine
is shared and noisy: compare ratios within a run, not absolute figures across runs).

Run: CITEAUDIT_DATA_DIR=../shared/data/rfc .venv/bin/python tools/bench_batch_memory.py
     [--sizes 1000,10000,50000] [--modes locate,replay] [--kept]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "batch" / "example.jsonl"
KEPT = """
import sys
from citeaudit import AuditOptions, read_dataset
from citeaudit.pipeline.batch import run_batch
result = run_batch(read_dataset(sys.argv[1]), AuditOptions.from_env(cache_mode="replay"),
                   locate_only=sys.argv[2] == "locate")
result.write_rows(sys.argv[3])
result.write_decisions(sys.argv[4])
"""


def make_dataset(path: Path, answers: int) -> None:
    """`answers` lines: the example's answers in turn, each with an answer_id of its own."""
    lines = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    with path.open("w", encoding="utf-8") as out:
        for n in range(answers):
            record = dict(lines[n % len(lines)])
            record["answer_id"] = f"{record['answer_id']}-{n}"
            out.write(json.dumps(record) + "\n")
    # the sources are named relative to the dataset's folder or the data folders: copy none, the
    # example names rfc7519.txt and files under data/, which the data folders resolve


def measure(command: list[str]) -> tuple[float, float]:
    """(peak resident memory in MB, seconds) of one run of `command`, which must succeed (exit 0 or 1)."""
    with tempfile.TemporaryFile() as stderr:  # a file, not a pipe: a long run's progress bar would fill one
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=stderr)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            stderr.seek(0)
            raise SystemExit(f"{' '.join(command)} exited {code}: {stderr.read().decode()[-2000:]}")
    return usage.ru_maxrss / 1024, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--modes", default="locate,replay")
    parser.add_argument("--kept", action="store_true", help="also time run_batch, which keeps every outcome")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    modes = args.modes.split(",")
    citeaudit = str(Path(sys.executable).with_name("citeaudit"))
    kinds = ["batch"] + (["kept"] if args.kept else [])
    print(f"| what | mode | answers | peak memory (MB) | vs {sizes[0]:,} | seconds | answers/s | vs {sizes[0]:,} |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="bench-batch-memory-", dir=ROOT / "data" / "batch") as scratch:
        folder = Path(scratch)
        for kind in kinds:
            for mode in modes:
                first: tuple[float, float] | None = None
                for size in sizes:
                    dataset = folder / f"answers-{size}.jsonl"
                    if not dataset.exists():
                        make_dataset(dataset, size)
                    rows, decisions = folder / "rows.jsonl", folder / "decisions.jsonl"
                    if kind == "batch":
                        command = [citeaudit, "batch", str(dataset), "--output", str(rows), "--decisions",
                                   str(decisions), *(["--locate-only"] if mode == "locate" else
                                                     ["--cache-mode", "replay"])]
                    else:
                        command = [sys.executable, "-c", KEPT, str(dataset), mode, str(rows), str(decisions)]
                    memory, seconds = measure(command)
                    rate = size / seconds
                    first = first or (memory, rate)
                    print(f"| {kind} | {mode} | {size:,} | {memory:,.0f} | {memory / first[0] - 1:+.0%} | "
                          f"{seconds:,.1f} | {rate:,.0f} | {rate / first[1]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
