"""Benchmark `citeaudit batch` (issue 13): answers per second on the threaded scheduler and on a
LocalCluster of 1, 2 and 4 worker processes, locate-only and judged, in the same run.

The dataset (`generate_dataset`) is N answers in the three formats, with some malformed lines:

  50%  quote answers: 1-6 citations of `bench_corpus.make_citations` over the real rfc7519.txt or
       rfc6749.txt (exact, elided, one word changed, fabricated; one in ten names another section)
  25%  line answers: 1-5 facts ending in [Lx] / [Lx-Ly] over one of two plain-text notes written
       beside the dataset (lines are sentences of the RFCs); some markers run past the end, are
       reversed, or are in an unrecognized form ([line 4])
  22%  source-id answers in seed 000's shape (answer, sources, and for some a reviews document
       whose fingerprints are current or stale); one in twenty cites a source that is not listed
   3%  malformed lines, in turn: not JSON (cut short), a missing key, an unknown source file

Modes (`--modes`, default locate,judged):
  locate   step 1 alone (`--locate-only`): CPU-bound.
  judged   the first `--judged-answers` answers judged live against `citeaudit.testing.scripted_endpoint`,
           a real OpenAI-compatible HTTP server on 127.0.0.1 that answers after `--delay` seconds
           (strategy `choice`, model `scripted`), in cache mode `refresh`: every judged citation
           is an HTTP request; on workers the judge holds its new calls and the client appends
           them to the recordings (batch.py).
  replay   the same answers replayed from the recordings of the first live run (a cache read per
           citation, no HTTP; the endpoint's request count is checked).

Each live run records into a fresh cache folder: appending a record rereads its recording
(cache.py), so runs sharing one folder would pay more and more.

A `processes` row is what `citeaudit batch --scheduler processes --workers W` costs: a new
LocalCluster is started and closed in the timing. The `warm` column is the same batch sent by
address to a LocalCluster of W workers already running and already used once (`--scheduler
tcp://...` on a cluster that has imported citeaudit and loaded the sources). Each figure is the
best of `--repeat` runs; the ratio is against 1 worker process in the same run (this machine is
shared and noisy: compare ratios within a run, not absolute figures across runs).

Run: CITEAUDIT_DATA_DIR=../shared/data/rfc .venv/bin/python tools/bench_batch.py [--answers 1000]
     [--workers 1,2,4] [--repeat 2] [--delay 0.02] [--judged-answers 300] [--modes locate,judged,replay]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_corpus

from citeaudit import AuditOptions, BatchResult, load_document, read_dataset, run_batch
from citeaudit.citations import Item
from citeaudit.decide import fingerprint
from citeaudit.pipeline import local_cluster
from citeaudit.testing import scripted_endpoint

Run = dict[str, Any]  # keyword arguments of run_batch: the settings (`options`) and the run's own
SHARES = (("quote", 0.50), ("lines", 0.25), ("sources", 0.22), ("malformed", 0.03))
MALFORMED = ("bad_json", "missing_key", "unknown_source")
NOTE_LINES = 40


@dataclass(frozen=True)
class Dataset:
    """A generated dataset: its file, the kind of each line (line n is `kinds[n - 1]`) and the notes
    the line answers cite."""

    path: Path
    kinds: tuple[str, ...]
    notes: tuple[Path, ...]

    def count(self) -> Counter:
        return Counter(self.kinds)


def _one_line(sentence: str) -> str:
    return " ".join(sentence.split())


def _claim(quote: str, rng: random.Random) -> str:
    """A claim restating the start of a quote; one in five asks the scripted endpoint for B (contradicts)."""
    words = _one_line(quote).strip("\u201c\u201d").split()
    claim = "The source states that " + " ".join(words[:12]).rstrip(".,;:") + "."
    return claim + (" answer=B" if rng.random() < 0.2 else "")


def _quote_answer(answer_id: str, source: str, pool: list[bench_corpus.BenchCitation],
                  rng: random.Random) -> dict:
    start = rng.randrange(len(pool) - 6)
    picked = pool[start:start + rng.randint(1, 6)]  # consecutive: ids unique within the answer
    citations = [{"id": c.id, "claim": _claim(c.quote, rng), "quote": c.quote, "section": c.section}
                 for c in picked]
    return {"answer_id": answer_id, "source": source, "citations": citations}


def _marker(first: int, n_lines: int, rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.08:
        return f"[L{n_lines + rng.randint(1, 20)}]"  # past the end: fabricated
    if roll < 0.14:
        return f"[L{first + 2}-L{first}]"  # reversed: fabricated
    if roll < 0.20:
        return f"[line {first}]"  # not the accepted form: unrecognized, the answer goes to review
    if roll < 0.60:
        return f"[L{first}]"
    last = min(n_lines, first + rng.randint(1, 2))
    return rng.choice([f"[L{first}-L{last}]", f"[L{first}-{last}]"])


def _lines_answer(answer_id: str, note: str, lines: list[str], rng: random.Random) -> dict:
    facts = []
    for _ in range(rng.randint(1, 5)):
        first = rng.randint(1, len(lines))
        words = lines[first - 1].rstrip(".").split()
        if rng.random() < 0.2:  # a fact the line does not state
            words = [*words[: len(words) // 2], "except", "on", "weekends"]
        facts.append(" ".join(words) + " " + _marker(first, len(lines), rng) + ".")
    return {"answer_id": answer_id, "document": note, "answer": " ".join(facts) + "\n"}


def _sources_answer(answer_id: str, sentences: list[str], rng: random.Random) -> dict:
    sources = [{"id": f"S{k}", "content": rng.choice(sentences)} for k in range(1, rng.randint(1, 4) + 1)]
    claims = []
    for k in range(1, rng.randint(1, 3) + 1):
        cited = rng.choice(sources)
        text = cited["content"] if rng.random() < 0.7 else rng.choice(sentences)
        claims.append({"id": f"C{k}", "text": text, "citation_id": cited["id"]})
    if rng.random() < 0.05:
        claims[0]["citation_id"] = "S99"  # not a listed source: a contract violation, REJECT
    line: dict = {"answer_id": answer_id, "answer": {"claims": claims}, "sources": {"sources": sources}}
    if rng.random() < 0.4:
        content = {s["id"]: s["content"] for s in sources}
        reviews = []
        for claim in claims:
            text = claim["text"] if rng.random() < 0.8 else claim["text"] + " (edited)"  # else stale
            reviews.append({"claim_id": claim["id"],
                            "fingerprint": fingerprint(claim["id"], text, claim["citation_id"],
                                                       content.get(claim["citation_id"], "")),
                            "verdict": rng.choice(["supported", "supported", "unsupported"])})
        line["reviews"] = {"reviews": reviews}
    return line


def _malformed(kind: str, answer_id: str, valid: dict) -> str:
    if kind == "bad_json":
        text = json.dumps(valid, ensure_ascii=False)
        return text[: len(text) // 2]  # cut short
    if kind == "missing_key":
        return json.dumps({k: v for k, v in valid.items() if k != "source"} | {"answer_id": answer_id})
    return json.dumps(valid | {"answer_id": answer_id, "source": "rfc99999-not-here.txt"})


def generate_dataset(path: str | Path, n: int, seed: int = 7) -> Dataset:
    """Write `n` answers (one JSON object per line) to `path` and two plain-text notes beside it
    (`<stem>.notes-a.txt`, `<stem>.notes-b.txt`, named relative to the dataset); the same `n` and
    `seed` give the same bytes. Needs rfc7519.txt and rfc6749.txt (CITEAUDIT_DATA_DIR)."""
    path = Path(path)
    rng = random.Random(seed)
    counts = [round(share * n) for _, share in SHARES]
    counts[0] += n - sum(counts)
    kinds = [kind for (kind, _), count in zip(SHARES, counts) for _ in range(count)]
    rng.shuffle(kinds)

    documents = {name: load_document(name) for name in bench_corpus.SOURCES}
    need = {name: max(50, counts[0] * 4) for name in documents}
    pools = {name: bench_corpus.make_citations(doc, need[name], seed=seed + k)
             for k, (name, doc) in enumerate(documents.items())}
    sentences = sorted({_one_line(s) for doc in documents.values() for section in doc.sections.values()
                        for s in bench_corpus._sentences(section.text)})

    notes: dict[str, list[str]] = {}
    for letter in "ab":
        lines = rng.sample(sentences, NOTE_LINES)
        note = path.with_name(f"{path.stem}.notes-{letter}.txt")
        note.write_text("\n".join(lines) + "\n", encoding="utf-8")
        notes[note.name] = lines

    out: list[str] = []
    line_kinds: list[str] = []
    for i, kind in enumerate(kinds):
        answer_id = f"{kind[0]}{i:05d}"
        source = rng.choice(bench_corpus.SOURCES)
        if kind == "quote":
            line = json.dumps(_quote_answer(answer_id, source, pools[source], rng), ensure_ascii=False)
        elif kind == "lines":
            name = rng.choice(sorted(notes))
            line = json.dumps(_lines_answer(answer_id, name, notes[name], rng), ensure_ascii=False)
        elif kind == "sources":
            line = json.dumps(_sources_answer(answer_id, sentences, rng), ensure_ascii=False)
        else:
            kind = MALFORMED[sum(k in MALFORMED for k in line_kinds) % len(MALFORMED)]  # in turn
            line = _malformed(kind, f"bad{i:05d}", _quote_answer(answer_id, source, pools[source], rng))
        out.append(line)
        line_kinds.append(kind)
    path.write_text("".join(line + "\n" for line in out), encoding="utf-8")
    return Dataset(path, tuple(line_kinds), tuple(path.with_name(name) for name in sorted(notes)))


# --- timing ---------------------------------------------------------------------------------------

@dataclass
class Row:
    mode: str
    scheduler: str
    workers: int | None
    seconds: float
    warm: float | None = None


def _best(fn: Callable[[], BatchResult], repeat: int, what: str) -> tuple[float, BatchResult]:
    """The best of `repeat` runs; every run's time goes to stderr as it ends."""
    best, result = float("inf"), None
    for run in range(1, repeat + 1):
        started = time.perf_counter()
        result = fn()
        seconds = time.perf_counter() - started
        print(f"[{time.strftime('%H:%M:%S')}] {what}, run {run}: {seconds:.2f} s", file=sys.stderr, flush=True)
        best = min(best, seconds)
    assert result is not None
    return best, result


def _warm(items: list[Item], settings: Callable[[], Run], workers: int, repeat: int, what: str) -> float:
    """The best time on the LocalCluster of `workers` processes `run_batch` would start, already running
    and used once."""
    with local_cluster(workers) as cluster:
        run_batch(items, scheduler=cluster.scheduler_address, **settings())
        seconds, _ = _best(lambda: run_batch(items, scheduler=cluster.scheduler_address, **settings()), repeat, what)
    return seconds


def _check(result: BatchResult, items: list[Item], reference: BatchResult | None = None) -> None:
    """Every line has its decision, no row failed but the malformed lines, and every scheduler gives
    the threaded scheduler's rows and decisions."""
    assert len(result.outcomes) == len(items), (len(result.outcomes), len(items))
    errors = {e for e in result.rows["error"].dropna() if not str(e).startswith("line ")}
    assert not errors, f"row errors: {sorted(errors)[:3]}"
    if reference is not None:
        assert result.rows.equals(reference.rows), "rows differ from the threaded scheduler's"
        assert result.decisions.equals(reference.decisions), "decisions differ from the threaded scheduler's"


def measure(mode: str, items: list[Item], settings: Callable[[], Run], workers: list[int],
            repeat: int) -> list[Row]:
    """The threaded scheduler, then a LocalCluster of each number of worker processes; each run takes
    `settings()`, `run_batch`'s arguments (a live run records into a fresh cache folder, so none pays
    for a longer recording)."""
    seconds, reference = _best(lambda: run_batch(items, scheduler="threads", **settings()), repeat, f"{mode} threads")
    _check(reference, items)
    rows = [Row(mode, "threads", None, seconds)]
    for count in workers:
        def cold(count: int = count) -> BatchResult:
            return run_batch(items, scheduler="processes", workers=count, **settings())

        seconds, result = _best(cold, repeat, f"{mode} processes {count}")
        _check(result, items, reference)
        warm = _warm(items, settings, count, repeat, f"{mode} processes {count} warm")
        rows.append(Row(mode, "processes", count, seconds, warm))
    return rows


@contextmanager
def _judge_environment(url: str) -> Iterator[None]:
    """OPENAI_BASE_URL and a key for the judge, in this process and the worker processes it starts."""
    saved = {k: os.environ.get(k) for k in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "CITEAUDIT_GRAMMAR")}
    os.environ.update({"OPENAI_BASE_URL": url, "OPENAI_API_KEY": "scripted", "CITEAUDIT_GRAMMAR": "0"})
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def print_table(rows: list[Row], answers: dict[str, int]) -> None:
    print(f"\n{'mode':13} {'scheduler':17} {'workers':>7} {'seconds':>8} {'answers/s':>10} {'vs 1 worker':>11}"
          f" {'warm s':>7} {'warm a/s':>9} {'warm vs 1':>9}")
    for mode in dict.fromkeys(r.mode for r in rows):
        n = answers[mode]
        group = [r for r in rows if r.mode == mode]
        one = next((r for r in group if r.workers == 1), None)
        for r in group:
            ratio = f"{one.seconds / r.seconds:10.2f}x" if one else "-"
            warm = warm_rate = warm_ratio = "-"
            if r.warm is not None:
                warm, warm_rate = f"{r.warm:7.2f}", f"{n / r.warm:9.0f}"
                warm_ratio = f"{one.warm / r.warm:8.2f}x" if one and one.warm else "-"
            print(f"{mode:13} {r.scheduler:17} {r.workers or '-':>7} {r.seconds:8.2f} {n / r.seconds:10.0f} "
                  f"{ratio:>11} {warm:>7} {warm_rate:>9} {warm_ratio:>9}")


def run(n: int, workers: list[int], repeat: int, delay: float, judged_n: int, modes: list[str], seed: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="citeaudit-bench-batch-"))
    dataset = generate_dataset(folder / "answers.jsonl", n, seed)
    items = read_dataset(dataset.path)
    print(f"{n} answers ({', '.join(f'{k} {v}' for k, v in sorted(dataset.count().items()))}) in {dataset.path}; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start; best of {repeat}")
    rows: list[Row] = []
    answers: dict[str, int] = {}
    if "locate" in modes:
        answers["locate-only"] = len(items)
        rows += measure("locate-only", items, lambda: {"locate_only": True}, workers, repeat)
    if "judged" in modes or "replay" in modes:
        judged = items[:judged_n]
        caches = itertools.count()

        def live() -> Run:  # refresh: every judged citation is an HTTP request
            return {"options": AuditOptions.from_env(cache_mode="refresh", model="scripted", strategy="choice",
                                                     cache_dir=folder / f"cache-{next(caches)}")}

        def replay() -> Run:
            return {"options": AuditOptions.from_env(cache_mode="replay", model="scripted", strategy="choice",
                                                     cache_dir=folder / "cache-0")}

        with scripted_endpoint(delay=delay) as endpoint, _judge_environment(endpoint.url):
            if "judged" in modes:
                answers["judged-live"] = len(judged)
                rows += measure("judged-live", judged, live, workers, repeat)
            else:  # record once, for the replay
                _check(run_batch(judged, scheduler="threads", **live()), judged)
            requests, in_flight = endpoint.requests, endpoint.most_in_flight
            if "replay" in modes:  # the recordings of the first live run
                answers["judged-replay"] = len(judged)
                rows += measure("judged-replay", judged, replay, workers, repeat)
                assert endpoint.requests == requests, "a replay called the endpoint"
        print(f"judged: the first {len(judged)} answers, {requests} HTTP requests in all (delay "
              f"{delay * 1000:.0f} ms, at most {in_flight} in flight)")
    print_table(rows, answers)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=1000, help="answers in the dataset (default 1000)")
    parser.add_argument("--workers", default="1,2,4", help="worker processes to time (default 1,2,4)")
    parser.add_argument("--repeat", type=int, default=2, help="runs per figure, the best is kept (default 2)")
    parser.add_argument("--delay", type=float, default=0.02,
                        help="seconds the scripted endpoint waits per request (default 0.02)")
    parser.add_argument("--judged-answers", type=int, default=300,
                        help="the first N answers are judged (default 300)")
    parser.add_argument("--modes", default="locate,judged",
                        help="comma-separated: locate, judged (live), replay (default locate,judged)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    workers = [int(w) for w in args.workers.split(",")]
    if 1 not in workers:
        workers.insert(0, 1)  # the ratios are against 1 worker process
    run(args.answers, workers, max(1, args.repeat), args.delay, args.judged_answers, args.modes.split(","), args.seed)
    return 0


if __name__ == "__main__":
    import docs_figures  # --save-docs: also save what it prints for the documentation

    sys.exit(docs_figures.run(main, __file__))
