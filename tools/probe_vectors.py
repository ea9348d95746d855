"""Read the local Qwen judge's hidden states for the labelled sets, for the probe (issue 37).

Every labelled citation the judge is asked about (the project's sets, as `make record-qwen` has
them, and the public TRAIN sets built by `make public-sets`, JSICK included) gets one vector per
layer of `hidden_states.LAYERS` (the final layer's and the outputs of 8 middle and upper blocks,
issue 55), all read in one forward pass: the hidden states at the last token of the three-way
question (`citeaudit.judge.hidden_states`). A pass takes about 4 s for a short pair on 2 free cores
and grows with the section, so the run is resumable (each vector is recorded as it comes, in the
user cache like any answer of the judge, `cache/local/`, and a rerun skips the recorded ones) and takes
each domain's citations in a fixed random order (by the SHA-256 of their set and id), one domain
after the other in turn: stopped at any point, every domain has about as many vectors as it can.

    python tools/probe_vectors.py [--minutes 45] [--layers last,l_out-14,...] [--threads 1]

Prints, per domain, how many vectors are recorded of how many judged citations, and the seconds
per vector.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import statistics
import sys
import time

from citeaudit import AuditOptions, AuditRun, Judge
from citeaudit import table as C
from citeaudit.calibrate import domain_of
from citeaudit.calibrate.public_sets import DOMAINS, JAPANESE
from citeaudit.judge.hidden_states import LAYERS, load
from citeaudit.judge.localmodel import MODELS
from citeaudit.pipeline import judge_questions
from citeaudit.settings import environment as config
from citeaudit.table import CacheMode
from citeaudit.workflows import LABELLED_SETS, labelled_sets


def every_set() -> list[tuple[str, str]]:
    public = config.project_dir() / "build" / "public"
    extra = [(str(public / f"{d}.txt"), str(public / f"{d}_citations.json")) for d in (*DOMAINS, *JAPANESE)
             if (public / f"{d}_citations.json").is_file()]
    if len(extra) < len(DOMAINS) + len(JAPANESE):
        print("some public sets are not built: run `make public-sets` first", file=sys.stderr)
    return [*LABELLED_SETS, *extra]


def questions_by_domain(sets: list[tuple[str, str]]) -> dict[str, list[dict]]:
    """Each judged labelled citation as (set, id, claim, evidence, where), by domain, each domain in
    its fixed random order."""
    out: dict[str, list[dict]] = {}
    for labelled in labelled_sets(sets):
        domain = domain_of(config.find_input(labelled.citations))
        table = labelled.table
        for i, (claim, evidence, where, _) in judge_questions(table, labelled.document_name).items():
            out.setdefault(domain, []).append({"set": labelled.citations, "id": str(table.at[i, C.ID]),
                                               "claim": claim, "evidence": evidence, "where": where})
    for rows in out.values():
        rows.sort(key=lambda r: hashlib.sha256(f"{r['set']}\n{r['id']}".encode()).hexdigest())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=45.0, help="stop starting new vectors after this long")
    parser.add_argument("--layers", default=",".join(LAYERS), help="the layers to record (default: all of LAYERS)")
    parser.add_argument("--threads", type=int, default=None,
                        help="llama.cpp threads (default one a core; 1 when the cores are shared, under nice)")
    args = parser.parse_args(argv)
    layers = tuple(args.layers.split(","))
    unknown = sorted(set(layers) - set(LAYERS))
    if unknown:
        parser.error(f"--layers: {', '.join(unknown)} not among {', '.join(LAYERS)}")
    judge = AuditRun(AuditOptions.from_env(model="qwen", strategy="probe", cache_mode=CacheMode.RECORD)).judge
    if args.threads:
        load(MODELS["qwen"], n_threads=args.threads, models=judge.models)
    by_domain = questions_by_domain(every_set())
    rounds = itertools.chain.from_iterable(itertools.zip_longest(*by_domain.values()))
    todo = [row for row in rounds if row is not None and not recorded(judge, row, layers)]
    print(f"{sum(map(len, by_domain.values()))} judged citations in {len(by_domain)} domains; {len(todo)} vectors "
          f"to read, into {judge.cache.folders[0]}", flush=True)
    started, seconds = time.monotonic(), []
    for n, row in enumerate(todo, start=1):
        if time.monotonic() - started > args.minutes * 60:
            print(f"stopped after {args.minutes:g} minutes; run again to go on", flush=True)
            break
        t = time.monotonic()
        judge.hidden_states(row["claim"], row["evidence"], row["where"], layers, what=f"{row['set']} {row['id']}")
        seconds.append(time.monotonic() - t)
        if n % 10 == 0:
            print(f"{n} of {len(todo)}: {statistics.mean(seconds):.2f} s a pass so far", flush=True)
    for domain, rows in by_domain.items():
        print(f"{domain}: {sum(recorded(judge, row, layers) for row in rows)} of {len(rows)} recorded "
              f"(every layer of {', '.join(layers)})")
    return 0


def recorded(judge: Judge, row: dict, layers: tuple[str, ...]) -> bool:
    """Whether the hidden state of every one of `layers` is recorded for `row`."""
    requests = judge.hidden_state_requests(row["claim"], row["evidence"], row["where"], layers)
    return all(judge.cache.recorded(request) is not None for request in requests.values())


if __name__ == "__main__":
    sys.exit(main())
