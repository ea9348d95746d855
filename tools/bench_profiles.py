"""Simulated analyst: do profiles fitted on reviews let more verdicts stand, and keep the promise?

For each domain (the project's labelled sets, `LABELLED_SETS`, as one domain; each public TRAIN set
as one: `public_labelled_sets()`, built into build/public/ from CITEAUDIT_PUBLIC_DIR), replayed
from the recordings of the default strategy with the shipped calibration:

1. the domain's judged citations are split by a seeded shuffle into a first part (reviewed) and a
   held-out part (never reviewed), half each;
2. the first part is routed by the shipped calibration, spot checks drawn at the default rate;
3. an analyst (the gold label plays the human) reviews the spot checks, then the waiting citations in
   the shuffled order, in batches of 25, up to --max-reviews; after each batch a profile is fitted
   on the reviews so far (`fit_profile`) and kept if it may be saved (else the last saved one, or
   the shipped calibration, stays); when the queue is empty and the last fit was refused or lets
   nothing stand, the analyst does what the refusal says: audits the first part again at twice the
   spot-check rate and reviews the spot checks that adds, while reviews remain;
4. the held-out part is routed by the shipped calibration and by the profile in force: the share of
   its judged citations that stand, the share of those right on pass or fail, and the failing
   citations left standing as `verified`.

It also says whether the spot checks' 95% interval (shipped calibration, first part) covers the
shipped calibration's held-out precision, and whether the profile's cross-validated interval covers
the profile's. Offline, about 3 minutes: `python tools/bench_profiles.py` (`make bench-profiles`).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from citeaudit import AuditOptions, AuditRun, Calibration, Review, apply_reviews, audit_quotes
from citeaudit import table as C
from citeaudit.calibrate import fit_map, judged_rows, pass_fail_right
from citeaudit.calibrate.profile import BATCH, fit_profile
from citeaudit.calibrate.public_sets import public_labelled_sets
from citeaudit.decide import bound_review, route, wilson_interval
from citeaudit.settings import environment as config
from citeaudit.table import State, Verdict
from citeaudit.workflows import LABELLED_SETS

MAX_REVIEWS = 150


def _key(citations: str, citation_id: object, seed: int) -> str:
    return hashlib.sha256(f"{seed}\x00{citations}\x00{citation_id}".encode()).hexdigest()


@dataclass
class Part:
    """One citation file's rows of a part, judged (not yet routed)."""

    citations: str
    table: pd.DataFrame


def audit_domain(pairs: list[tuple[str, str]], options: AuditOptions) -> list[Part]:
    """Each pair audited once (replay), its judged rows (step 1's fabricated ones are no one's to review)."""
    judge = AuditRun(options).judge
    parts = []
    for source, citations in pairs:
        table = audit_quotes(source, citations, options=options, judge=judge).table
        parts.append(Part(citations, table[table[C.FABRICATED_REASON].isna()]))
    judge.cache.close()
    return parts


def split_domain(parts: list[Part], seed: int) -> tuple[list[Part], list[Part]]:
    """Each part's rows split by the seeded shuffle: the first half, and the held-out half."""
    first, held = [], []
    for part in parts:
        table = part.table
        keys = [_key(part.citations, i, seed) for i in table[C.ID]]
        cut = np.zeros(len(table), dtype=bool)
        cut[sorted(range(len(keys)), key=keys.__getitem__)[:(len(table) + 1) // 2]] = True
        first.append(Part(part.citations, table[cut]))
        held.append(Part(part.citations, table[~cut]))
    return first, held


def routed(part: Part, calibration: Calibration, rate: float, reviews: list[Review] = ()) -> pd.DataFrame:  # type: ignore[assignment]
    return apply_reviews(route(part.table, calibration.route_threshold, calibration), reviews, rate)


def held_out(parts: list[Part], calibration: Calibration, rate: float) -> dict:
    """Stand, right, false verified over the held-out parts routed by `calibration`."""
    tables = [routed(p, calibration, rate) for p in parts]
    table = pd.concat(tables)
    stand = (table[C.STATE] == State.STANDS).to_numpy()
    right = pass_fail_right(table[C.VERDICT], table[C.EXPECTED])
    failing = (table[C.EXPECTED] != Verdict.VERIFIED).to_numpy()
    verified = (table[C.VERDICT] == Verdict.VERIFIED).to_numpy()
    return {"judged": len(table), "stand": int(stand.sum()), "right": int((stand & right).sum()),
            "failing": int(failing.sum()), "false_verified": int((stand & verified & failing).sum())}


def cells(f: dict) -> list[str]:
    """Stand, right (with its Wilson 95% interval: the promise is judged on the splits' pooled counts),
    and false verified."""
    s, n = f["stand"], f["judged"]
    low, high = wilson_interval(f["right"], s)
    return [f"{s}/{n} ({s / n:.1%})",
            f"{f['right']}/{s} ({f['right'] / s:.1%}; {low:.1%}-{high:.1%})" if s else "-",
            f"{f['false_verified']}/{f['failing']} ({f['false_verified'] / f['failing']:.1%})" if f["failing"] else "-"]


def base_without(domain: str, parts: dict[str, tuple[list[Part], list[Part]]], shipped: Calibration) -> Calibration:
    """The shipped procedure's map and threshold fitted on every other domain's labelled citations
    (`fit_map`, inputs of the shipped map), as a calibration of a domain it never saw."""
    tables, documents = [], []
    for name, (first, held) in parts.items():
        if name != domain:
            for part in [*first, *held]:
                tables.append(part.table)
                documents += [part.citations] * len(part.table)
    table = pd.concat(tables, ignore_index=True)
    rows = judged_rows(table)
    rows = rows[rows["method"] == "logprobs"]
    fitted = fit_map(rows, shipped.target, shipped.model, shipped.strategy, shipped.inputs,
                     pd.Series(documents, index=table.index))
    return replace(fitted, when=f"fitted without {domain}")


def _drawn(tables: dict[str, pd.DataFrame], kind: str, seed: int) -> list[tuple[str, str, str]]:
    """The rows to review of one kind, (citations, id, gold), in the seeded shuffle's order: the
    spot checks drawn, or the waiting citations."""
    rows = []
    for citations, t in tables.items():
        mask = t[C.SPOT_CHECK].astype(bool) if kind == "spot" else t[C.STATE] == State.WAITING
        rows += [(_key(citations, i, seed), citations, str(i), str(g))
                 for i, g in zip(t.loc[mask, C.ID], t.loc[mask, C.EXPECTED])]
    return [(c, i, g) for _, c, i, g in sorted(rows)]


def simulate(domain: str, first: list[Part], held: list[Part], options: AuditOptions, shipped: Calibration,
             max_reviews: int, seed: int, say=lambda line: print(line, file=sys.stderr, flush=True)) -> dict:
    rate = start_rate = options.spot_check
    routed_first = {p.citations: routed(p, shipped, rate) for p in first}
    # spot checks first, then the waiting ones
    queue = _drawn(routed_first, "spot", seed) + _drawn(routed_first, "waiting", seed)
    spot_rows = pd.concat([t[t[C.SPOT_CHECK].astype(bool)] for t in routed_first.values()])
    spot_right = int(pass_fail_right(spot_rows[C.VERDICT], spot_rows[C.EXPECTED]).sum())
    before = held_out(held, shipped, start_rate)
    reviews: dict[str, list[Review]] = {p.citations: [] for p in first}
    in_force, fit, history = None, None, []
    done = 0
    while True:
        while done < min(len(queue), max_reviews):
            for citations, cid, gold in queue[done:min(done + BATCH, len(queue), max_reviews)]:
                reviews[citations].append(bound_review(routed_first[citations], cid, gold))
            done = min(done + BATCH, len(queue), max_reviews)
            tables = {p.citations: routed(p, shipped, rate, reviews[p.citations]) for p in first}
            fit = fit_profile(tables, shipped, f"bench-{domain}")
            if fit.saveable:
                in_force = fit
            after = held_out(held, in_force.profile, start_rate) if in_force else before
            history.append((done, fit.saveable, fit.profile.threshold, after, fit.problems))
            cv = fit.after
            say(f"  {domain}: {done} reviews (spot-check rate {rate:g}), profile "
                f"{'saved' if fit.saveable else 'refused'} (threshold {fit.profile.threshold}; cross-validated "
                f"{cv['n_stand']:g} stand, {cv['right']:.1%} right, {cv['low']:.0%}-{cv['high']:.0%}); in force: "
                f"{'profile' if in_force else 'shipped'}; held out {' | '.join(cells(after))}"
                + ("" if fit.saveable else f"; refused: {fit.problems[0][:140]}"))
        # the queue is empty and the last fit was refused, or lets nothing stand: the analyst does what the
        # refusal says when no waiting citation is left, audits again at twice the spot-check rate (a higher
        # rate draws every citation a lower one drew) and reviews the spot checks it adds, while reviews remain
        settled = fit is not None and fit.saveable and not fit.profile.fitted_on.get("nothing_stands")
        if fit is None or settled or done >= max_reviews or rate >= 1.0:
            break
        rate = min(1.0, 2 * rate)
        routed_first = {p.citations: routed(p, shipped, rate) for p in first}
        queued = {(c, i) for c, i, _ in queue}
        queue += [row for row in _drawn(routed_first, "spot", seed) if row[:2] not in queued]
    low, high = wilson_interval(spot_right, len(spot_rows))
    shipped_precision = before["right"] / before["stand"] if before["stand"] else None
    after = held_out(held, in_force.profile, start_rate) if in_force else before
    profile_precision = after["right"] / after["stand"] if in_force and after["stand"] else None
    in_force_cv = in_force.after if in_force else None
    return {
        "domain": domain, "reviews": done, "queue": len(queue), "before": before, "after": after,
        "profile": in_force.profile if in_force else None, "history": history,
        "spot": (spot_right, len(spot_rows), low, high),
        "spot_covers": None if shipped_precision is None or not len(spot_rows) else low <= shipped_precision <= high,
        "cv": in_force_cv,
        "cv_covers": None if profile_precision is None or in_force_cv is None else
        in_force_cv["low"] <= profile_precision <= in_force_cv["high"],
    }


def pooled(runs: list[dict]) -> dict:
    """One domain's runs over several splits, their held-out counts summed."""
    def total(key: str) -> dict:
        return {k: sum(r[key][k] for r in runs) for k in runs[0][key]}

    def covered(key: str) -> str:
        known = [r[key] for r in runs if r[key] is not None]
        return f"{sum(known)} of {len(known)}" if known else "-"

    thresholds = ["none saved" if r["profile"] is None else "none" if r["profile"].threshold is None
                  else f"{r['profile'].threshold:.2f}" for r in runs]
    return {"domain": runs[0]["domain"], "reviews": sum(r["reviews"] for r in runs) / len(runs),
            "queue": sum(r["queue"] for r in runs) / len(runs), "before": total("before"), "after": total("after"),
            "thresholds": ", ".join(thresholds), "spot": tuple(sum(r["spot"][i] for r in runs) for i in (0, 1)),
            "spot_covers": covered("spot_covers"), "cv_covers": covered("cv_covers"), "splits": len(runs)}


def report(results: list[dict], base: str = "shipped") -> None:
    splits = results[0]["splits"]
    print(f"\nheld-out parts of {splits} split(s) per domain, counts summed (right: share and Wilson 95% interval):\n")
    print(f"| domain | reviews used per split (queue) | {base}: stand | right | false verified | profile: stand "
          "| right | false verified | profile threshold per split |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['domain']} | {r['reviews']:.0f} ({r['queue']:.0f}) | {' | '.join(cells(r['before']))} | "
              f"{' | '.join(cells(r['after']))} | {r['thresholds']} |")
    print(f"\n| domain | spot checks right (first parts, {base}) | spot-check 95% interval covers the {base} "
          "held-out share right (splits) | profile's cross-validated 95% interval covers its held-out share right "
          "(splits) |")
    print("|---|---|---|---|")
    for r in results:
        ok, n = r["spot"]
        print(f"| {r['domain']} | {ok}/{n} | {r['spot_covers']} | {r['cv_covers']} |")


def _yes(value: bool | None) -> str:
    return "-" if value is None else "yes" if value else "no"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-reviews", type=int, default=MAX_REVIEWS)
    parser.add_argument("--splits", type=int, default=5, help="seeded splits per domain (seeds 0, 1, ...)")
    parser.add_argument("--domain", action="append", help="only these domains (project, scifact, ...)")
    parser.add_argument("--base", choices=("shipped", "held-out-domain"), default="shipped",
                        help="the calibration the analyst starts from: the shipped one (fitted on every domain, this "
                             "one's held-out part included), or the same procedure fitted on the other domains only")
    args = parser.parse_args(argv)
    options = AuditOptions.from_env(cache_mode="replay").with_(profile=None)
    shipped = AuditRun(options).calibration
    if shipped is None:
        print(f"no calibration for {options.model} / {options.strategy}", file=sys.stderr)
        return 2
    domains = [("project", list(LABELLED_SETS))]
    for source, citations in public_labelled_sets(config.build_dir() / "public", config.public_dir()):
        domains.append((citations.rsplit("/", 1)[-1].removesuffix("_citations.json"), [(source, citations)]))
    audited = {name: audit_domain(pairs, options) for name, pairs in domains}
    results = []
    for name in audited:
        if args.domain and name not in args.domain:
            continue
        runs = []
        for seed in range(args.splits):
            parts = {n: split_domain(p, seed) for n, p in audited.items()}
            base = shipped if args.base == "shipped" else base_without(name, parts, shipped)
            print(f"{name}, split {seed}: base {base.model} / {base.strategy} ({base.when or 'shipped'}), "
                  f"threshold {base.threshold}", file=sys.stderr, flush=True)  # progress: the report is stdout
            runs.append(simulate(name, *parts[name], options, base, args.max_reviews, seed))
        results.append(pooled(runs))
    report(results, "shipped" if args.base == "shipped" else "fitted without the domain")
    np.seterr(all="warn")
    return 0


if __name__ == "__main__":
    import docs_figures  # --save-docs: also save what it prints for the documentation

    sys.exit(docs_figures.run(main, __file__))
