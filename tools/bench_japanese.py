"""The local judge on Japanese claims (issue 35): JSICK's TRAIN pairs, held out as a domain.

JSICK (`../shared/data/public/jsick/`, built into `build/public/jsick*` by `make public-sets`) is
audited from the recordings (replay, no model is called) as an analyst's audit would be: the
default strategy, the shipped calibration and the threshold it recommends, the default checks.
The shipped calibration is fitted on the English domains only (`public_sets.DOMAINS`), so JSICK
is held out as a domain by construction. It prints JSICK's figures, then the same figures beside
each English domain held out (fitted on the other three, as `citeaudit calibrate` holds them out):

- balanced accuracy of pass/fail (the verdict `verified` against the gold pass), and of the
  three-way verdict;
- AUROC of P(pass) (the calibrated score of the pass/fail call) and of the judge's own P(supports);
- the share of citations that stand at the threshold in force, and of those the share right on
  pass or fail (what the calibration's promise is about).

The prompt's instructions stay English for Japanese text: the claim and the passage are data in
any language, and the calibration was fitted on the English instructions.

    python tools/bench_japanese.py          (seconds, once recorded)
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from citeaudit import Audit, AuditOptions, audit_quotes, load_citations
from citeaudit.calibrate.public_sets import JAPANESE, build
from citeaudit.settings import environment as config
from citeaudit.table import Verdict


def jsick_audit(out: str | None = None) -> Audit:
    """JSICK's citations audited from the recordings with the default settings."""
    folder = config.project_dir() / "build" / "public" if out is None else config.project_dir() / out
    source, cited = folder / "jsick.txt", folder / "jsick_citations.json"
    if not cited.is_file():
        build(config.public_dir(), folder, domains=JAPANESE)
    return audit_quotes(str(source), load_citations(cited), options=AuditOptions.from_env(cache_mode="replay"))


def figures(table: pd.DataFrame) -> dict[str, float | int]:
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score  # here: a second to import

    judged = table[table["confidence"].notna()]
    gold = judged["expected"].astype(str).to_numpy()
    verdict = judged["verdict"].astype(str).to_numpy()
    gold_pass, said_pass = gold == Verdict.VERIFIED, verdict == Verdict.VERIFIED
    p_pass = judged["p_pass"].astype(float)
    p_supports = [p.get("supports", np.nan) for p in judged["probabilities"]]
    stand = (judged["route"] == "auto").to_numpy()
    return {
        "judged": len(judged),
        "balanced accuracy, pass/fail": balanced_accuracy_score(gold_pass, said_pass),
        "balanced accuracy, three-way": balanced_accuracy_score(gold, verdict),
        "AUROC of P(pass)": roc_auc_score(gold_pass, p_pass),
        "AUROC of P(supports)": roc_auc_score(gold_pass, p_supports),
        "stand": int(stand.sum()),
        "stand right": int((stand & (said_pass == gold_pass)).sum()),  # right on pass or fail, as promised
    }


def show(values: dict[str, float | int], threshold: float | None) -> str:
    judged, stand, right = values["judged"], values["stand"], values["stand right"]
    lines = [f"JSICK (Japanese, {judged} judged citations, held out: the calibration never saw Japanese)"]
    for name in ("balanced accuracy, pass/fail", "balanced accuracy, three-way", "AUROC of P(pass)",
                 "AUROC of P(supports)"):
        lines.append(f"  {name}: {values[name]:.3f}")
    at = "no threshold" if threshold is None else f"threshold {threshold:.2f}"
    share = f"{right}/{stand} ({right / stand:.1%})" if stand else "-"
    lines.append(f"  stand at the {at} in force: {stand}/{judged} ({stand / judged:.1%}); right on pass/fail: {share}")
    return "\n".join(lines)


def english_held_out(out: str | None = None) -> pd.DataFrame:
    """The English domains' labelled sets (the project's and the public TRAIN sets) judged in the
    default strategy, each domain scored by the map and threshold fitted on the other three
    (`calibrate.domains.hold_out_sets`, as `citeaudit calibrate` holds them out)."""
    from citeaudit.calibrate import hold_out_sets
    from citeaudit.calibrate.public_sets import DOMAINS
    from citeaudit.workflows import LABELLED_SETS

    folder = config.project_dir() / "build" / "public" if out is None else config.project_dir() / out
    if not all((folder / f"{domain}_citations.json").is_file() for domain in DOMAINS):
        build(config.public_dir(), folder, domains=DOMAINS)
    pairs = [*LABELLED_SETS, *((str(folder / f"{d}.txt"), str(folder / f"{d}_citations.json")) for d in DOMAINS)]
    options = AuditOptions.from_env(cache_mode="replay")
    tables = [audit_quotes(str(source), load_citations(config.find_input(cited)), options=options).table
              for source, cited in pairs]
    held = hold_out_sets(pairs, tables)
    assert held is not None
    return held


def side_by_side(held: pd.DataFrame, jsick: pd.DataFrame, threshold: float | None) -> str:
    """Each English domain held out (fitted on the other three) and JSICK (fitted on the four, the
    shipped calibration): balanced accuracy of pass/fail, AUROC of P(pass), the threshold fitted
    without the domain, the share that stands and of it the share right."""
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score

    def row(name: str, fitted_on: str, gold_pass: np.ndarray, said_pass: np.ndarray, p_pass: np.ndarray,
            t: float | None, stand: np.ndarray) -> str:
        known = ~np.isnan(p_pass)
        right = int((stand & (said_pass == gold_pass)).sum())
        n = int(stand.sum())
        return (f"{name:<14} {fitted_on:<33} {len(gold_pass):>6} {balanced_accuracy_score(gold_pass, said_pass):>9.3f} "
                f"{roc_auc_score(gold_pass[known], p_pass[known]):>6.3f} {'none' if t is None else f'{t:.2f}':>9} "
                f"{f'{n} ({n / len(gold_pass):.1%})':>13} {f'{right}/{n} ({right / n:.1%})' if n else '-':>16}")

    lines = [f"{'held out':<14} {'fitted on':<33} {'judged':>6} {'bal. acc.':>9} {'AUROC':>6} {'threshold':>9} "
             f"{'stand':>13} {'right':>16}"]
    for name, part in held.groupby("domain", sort=True):
        ts = {None if pd.isna(t) else float(t) for t in part["threshold"]}
        lines.append(row(str(name), "the other three English domains", part["gold_pass"].to_numpy(bool),
                         (part["verdict"] == Verdict.VERIFIED).to_numpy(), part["p_pass"].to_numpy(float),
                         ts.pop() if len(ts) == 1 else None, part["stand"].to_numpy(bool)))
    judged = jsick[jsick["confidence"].notna()]
    lines.append(row("jsick", "the four English domains (shipped)",
                     (judged["expected"].astype(str) == Verdict.VERIFIED).to_numpy(),
                     (judged["verdict"].astype(str) == Verdict.VERIFIED).to_numpy(),
                     judged["p_pass"].astype(float).to_numpy(), threshold, (judged["route"] == "auto").to_numpy()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=None, help="the built public sets' folder (default build/public)")
    args = parser.parse_args(argv)
    audit = jsick_audit(args.out)
    print(show(figures(audit.table), audit.threshold))
    print()
    print("Held out as a domain, beside the English domains (the default strategy, replayed):")
    print(side_by_side(english_held_out(args.out), audit.table, audit.threshold))
    return 0


if __name__ == "__main__":
    import docs_figures  # --save-docs: also save what it prints for the documentation

    sys.exit(docs_figures.run(main, __file__))
