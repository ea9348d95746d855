"""Focused evidence against whole-section judging, held out by domain (issue 34).

For the default strategy, every labelled set (the project's, as one domain, and each public TRAIN
set built by `make public-sets`) is audited twice from the recordings (replay, no model is
called): asking the judge about the whole cited section (`--evidence section`) and about a long
section's passage (`--evidence focused`, `citeaudit.pipeline.focus`). Each mode's answers are then
scored the way `citeaudit calibrate` scores strategies held out by domain: each domain's map and
threshold fitted on the other domains only (`leave_one_domain_out`). Printed per domain, and over
the citations whose section is longer than `FOCUS_CHARS` (the only ones the modes ask differently):
the AUROC of the held-out P(pass) (and of the judge's own P(supports), no map), the share that
stands at the promise, its share right, and the failing citations left standing as `verified`.

    python tools/bench_focus.py             (about two minutes; 20 s once the replay store is built)

A focused question nobody recorded is a judge error, counted in `unrecorded` and left out of
both modes' figures, so the two columns always compare the same citations.

The long web pages (`WEB_SETS`, the project's own: articles of 10,000-15,000 characters with the
clutter a page's text keeps) are a domain of their own, `web`, in no calibration: its rows are
held out the same way, its map and threshold fitted on the four other domains, and the other
domains' rows are fitted without it.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np
import pandas as pd

from citeaudit import AuditOptions, audit_quotes
from citeaudit.calibrate import domain_of, hold_out_sets, public_labelled_sets
from citeaudit.decide import DEFAULT_TARGET
from citeaudit.pipeline import FOCUS_CHARS
from citeaudit.settings import environment as config
from citeaudit.settings import find_input
from citeaudit.table import EvidenceMode, Verdict
from citeaudit.workflows import LABELLED_SETS

WEB = "web"
WEB_SETS = [("data/web/harbor-ferry-guide.html", "data/web/harbor-ferry-guide_citations.json"),
            ("data/web/allotment-water-policy.html", "data/web/allotment-water-policy_citations.json")]


def audited(sets: list[tuple[str, str]], mode: EvidenceMode) -> list[pd.DataFrame]:
    """Every set audited from the recordings, uncalibrated (the maps are fitted held out below)."""
    options = AuditOptions.from_env(use_calibration=False, evidence=str(mode), contrast="none")
    return [audit_quotes(source, find_input(cites), options=options).table for source, cites in sets]


def held_out(sets: list[tuple[str, str]], mode: EvidenceMode, target: float,
             web: list[tuple[str, str]] | None = None) -> pd.DataFrame:
    """`leave_one_domain_out` rows of one mode, each with its P(pass), whether its section is long,
    and whether the judge answered (a row with no recorded answer has `answered` False). The `web`
    sets' rows, domain `web`, come from a second hold-out over every set, so that the rows of the
    other domains are fitted without them."""
    web = WEB_SETS if web is None else web
    tables = audited(sets + web, mode)
    table = pd.concat(tables, ignore_index=True)
    held = hold_out_sets(sets, tables[:len(sets)], target)
    if held is None:
        raise SystemExit("the labelled sets span one domain only: run `make public-sets` first")
    if web:
        names = [domain_of(find_input(cites)) for _, cites in sets] + [WEB] * len(web)
        with_web = hold_out_sets(sets + web, tables, target, domains=names)
        assert with_web is not None
        held = pd.concat([held, with_web[with_web["domain"] == WEB]])
    p_pass = np.where(held["verdict"] == Verdict.VERIFIED, held["score"], 1.0 - held["score"])
    probabilities = table.loc[held.index, "probabilities"]
    p_supports = [p.get("supports", np.nan) if isinstance(p, dict) else np.nan for p in probabilities]
    return held.assign(p_pass=p_pass, p_supports=p_supports, id=table.loc[held.index, "id"],
                       long=table.loc[held.index, "evidence"].str.len() > FOCUS_CHARS)


def figures(held: pd.DataFrame) -> dict[str, Any]:
    from sklearn.metrics import roc_auc_score  # here: importing scikit-learn takes seconds

    gold = held["gold_pass"].to_numpy(dtype=bool)
    stand = held["stand"].to_numpy(dtype=bool)
    right = held["right"].to_numpy(dtype=bool)
    false_verified = stand & (held["verdict"] == Verdict.VERIFIED).to_numpy() & ~gold
    both = 0 < gold.sum() < len(gold)
    auroc = roc_auc_score(gold, held["p_pass"]) if both else float("nan")
    raw = roc_auc_score(gold, held["p_supports"]) if both and held["p_supports"].notna().all() else float("nan")
    return {"judged": len(held), "AUROC": auroc, "raw": raw, "stand": int(stand.sum()),
            "right": int((stand & right).sum()), "false verified": int(false_verified.sum()),
            "failing": int((~gold).sum())}


def parts(section: pd.DataFrame) -> list[tuple[str, str, pd.Index]]:
    """The citations each row of the comparison is about, as (domain, "all" or "long", index), non-empty:
    each domain's, then each domain's long sections, then the long sections of every domain."""
    names = sorted(set(section["domain"]))
    found = [(name, "all", section.index[section["domain"] == name]) for name in names]
    found += [(name, "long", section.index[(section["domain"] == name) & section["long"]]) for name in names]
    found += [("every domain", "long", section.index[section["long"]])]
    return [(domain, which, index) for domain, which, index in found if len(index)]


def compare(section: pd.DataFrame, focused: pd.DataFrame) -> pd.DataFrame:
    """Per domain, and over the long sections of each domain and of all: both modes' figures on the
    same citations."""
    rows = []
    for domain, which, index in parts(section):
        whole, focus = figures(section.loc[index]), figures(focused.loc[index])
        rows.append({"domain": domain, "sections": which, "judged": whole["judged"],
                     "AUROC whole": f"{whole['AUROC']:.3f}", "AUROC focused": f"{focus['AUROC']:.3f}",
                     "P(supports) AUROC whole": f"{whole['raw']:.3f}",
                     "P(supports) AUROC focused": f"{focus['raw']:.3f}",
                     "stand whole": f"{whole['stand']} ({whole['stand'] / whole['judged']:.1%})",
                     "stand focused": f"{focus['stand']} ({focus['stand'] / focus['judged']:.1%})",
                     "right whole": _share(whole["right"], whole["stand"]),
                     "right focused": _share(focus["right"], focus["stand"]),
                     "false verified whole": f"{whole['false verified']}/{whole['failing']}",
                     "false verified focused": f"{focus['false verified']}/{focus['failing']}"})
    return pd.DataFrame(rows)


def auroc_difference(section: pd.DataFrame, focused: pd.DataFrame, resamples: int = 2000,
                     seed: int = 0) -> tuple[float, float, float]:
    """AUROC of the held-out P(pass), focused minus whole, on the same citations, with its 95%
    paired bootstrap interval (citations resampled with replacement, `resamples` times, seeded).
    Each resample's AUROC is the Mann-Whitney statistic of its ranks (ties averaged: what
    `roc_auc_score` gives), all resamples at once."""
    from scipy.stats import rankdata
    from sklearn.metrics import roc_auc_score

    gold = section["gold_pass"].to_numpy(dtype=bool)
    whole, focus = section["p_pass"].to_numpy(dtype=float), focused["p_pass"].to_numpy(dtype=float)
    picks = np.random.default_rng(seed).integers(0, len(gold), (resamples, len(gold)))
    labels = gold[picks]
    passing = labels.sum(axis=1)
    keep = (passing > 0) & (passing < len(gold))  # a resample with one class has no AUROC
    labels, picks, passing = labels[keep], picks[keep], passing[keep]

    def auroc(scores: np.ndarray) -> np.ndarray:
        ranks = rankdata(scores[picks], axis=1)
        return ((ranks * labels).sum(axis=1) - passing * (passing + 1) / 2) / (passing * (len(gold) - passing))

    low, high = np.percentile(auroc(focus) - auroc(whole), [2.5, 97.5])
    return float(roc_auc_score(gold, focus) - roc_auc_score(gold, whole)), float(low), float(high)


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.1%})" if whole else "-"


def main(argv: list[str] | None = None, public: list[tuple[str, str]] | None = None) -> int:
    """Print the comparison; `public` (document, citation file) pairs replace `public_labelled_sets()`."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", type=float, default=DEFAULT_TARGET, help="the promise (share right)")
    args = parser.parse_args(argv)
    public = public if public is not None else public_labelled_sets(config.build_dir() / "public", config.public_dir())
    sets = [(str(s), str(c)) for s, c in LABELLED_SETS] + [(str(s), str(c)) for s, c in public]
    section = held_out(sets, EvidenceMode.SECTION, args.target)
    focused = held_out(sets, EvidenceMode.FOCUSED, args.target)
    both = section.index.intersection(focused.index)
    unrecorded = len(section.index.difference(focused.index))
    long = section.loc[both, "long"]
    print(f"{len(both)} judged citations in {section['domain'].nunique()} domains, {int(long.sum())} of them with a "
          f"section over {FOCUS_CHARS} characters (asked differently by the two modes); unrecorded focused "
          f"answers: {unrecorded}\n")
    section, focused = section.loc[both], focused.loc[both]
    print(compare(section, focused).to_string(index=False))
    print("\nAUROC of the held-out P(pass) on the long sections, focused minus whole, with its 95% paired bootstrap "
          "interval:")
    for name, which, index in parts(section):
        if which == "long" and 0 < section.loc[index, "gold_pass"].sum() < len(index):
            difference, low, high = auroc_difference(section.loc[index], focused.loc[index])
            print(f"  {name}: {difference:+.3f} ({low:+.3f} to {high:+.3f}), {len(index)} citations")
    return 0


if __name__ == "__main__":
    import docs_figures  # --save-docs: also save what it prints for the documentation

    sys.exit(docs_figures.run(main, __file__))
