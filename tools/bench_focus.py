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

    python tools/bench_focus.py             (about two minutes)

A focused question nobody recorded is a judge error, counted in `unrecorded` and left out of
both modes' figures, so the two columns always compare the same citations.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np
import pandas as pd

from citeaudit import AuditOptions, audit_quotes, find_input, hold_out_sets, public_labelled_sets
from citeaudit.calibrate.judge_setup import LABELLED_SETS
from citeaudit.decide.calibration import DEFAULT_TARGET
from citeaudit.pipeline.focus import FOCUS_CHARS
from citeaudit.table import EvidenceMode, Verdict


def audited(sets: list[tuple[str, str]], mode: EvidenceMode) -> list[pd.DataFrame]:
    """Every set audited from the recordings, uncalibrated (the maps are fitted held out below)."""
    options = AuditOptions.from_env(use_calibration=False, evidence=str(mode), contrast="none")
    return [audit_quotes(source, find_input(cites), options=options).table for source, cites in sets]


def held_out(sets: list[tuple[str, str]], mode: EvidenceMode, target: float) -> pd.DataFrame:
    """`leave_one_domain_out` rows of one mode, each with its P(pass), whether its section is long,
    and whether the judge answered (a row with no recorded answer has `answered` False)."""
    tables = audited(sets, mode)
    table = pd.concat(tables, ignore_index=True)
    held = hold_out_sets(sets, tables, target)
    if held is None:
        raise SystemExit("the labelled sets span one domain only: run `make public-sets` first")
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


def compare(section: pd.DataFrame, focused: pd.DataFrame) -> pd.DataFrame:
    """Per domain, and over the long sections of each domain and of all: both modes' figures on the
    same citations."""
    rows = []
    parts = [(name, "all", section.index[section["domain"] == name]) for name in sorted(set(section["domain"]))]
    parts += [(name, "long", section.index[(section["domain"] == name) & section["long"]])
              for name in sorted(set(section["domain"]))]
    parts += [("every domain", "long", section.index[section["long"]])]
    for domain, which, index in parts:
        if len(index) == 0:
            continue
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


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.1%})" if whole else "-"


def main(argv: list[str] | None = None, public: list[tuple[str, str]] | None = None) -> int:
    """Print the comparison; `public` (document, citation file) pairs replace `public_labelled_sets()`."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", type=float, default=DEFAULT_TARGET, help="the promise (share right)")
    args = parser.parse_args(argv)
    public = public if public is not None else public_labelled_sets()
    sets = [(str(s), str(c)) for s, c in LABELLED_SETS] + [(str(s), str(c)) for s, c in public]
    section = held_out(sets, EvidenceMode.SECTION, args.target)
    focused = held_out(sets, EvidenceMode.FOCUSED, args.target)
    both = section.index.intersection(focused.index)
    unrecorded = len(section.index.difference(focused.index))
    long = section.loc[both, "long"]
    print(f"{len(both)} judged citations in {section['domain'].nunique()} domains, {int(long.sum())} of them with a "
          f"section over {FOCUS_CHARS} characters (asked differently by the two modes); unrecorded focused "
          f"answers: {unrecorded}\n")
    print(compare(section.loc[both], focused.loc[both]).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
