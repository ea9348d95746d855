"""A probe on the judge's hidden states, held out by domain, against the default strategy (issue 37).

Every labelled citation with a recorded vector (`tools/probe_vectors.py`) is scored three ways, each
domain (the project's sets, SciFact, Climate-FEVER, Check-COVID, JSICK) by models fitted on the
other domains only:

- `panel`: the default strategy's recorded answers, mapped by the calibration procedure
  (`leave_one_domain_out`, what `citeaudit calibrate` reports);
- `probe`: a logistic regression (scikit-learn, standardized inputs, multinomial over supports /
  contradicts / says nothing) on the hidden state, its P(supports) then mapped and thresholded by
  the same procedure;
- `stacked`: the probe's P(supports) as one more input beside panel's answers, in the same map.

No domain's rows are seen in fitting anything that scores it. The calibration procedure needs
scores of the training domains that their probe did not see: for each held-out domain, each other
domain is scored by a probe fitted on the remaining ones (nested leave-one-domain-out), and the
map and threshold are fitted on those scores; the held-out domain is scored by a probe fitted on
all the others. The probe's penalty is chosen the same way, on the training domains alone.

    python tools/bench_probe.py     (offline: recordings and vectors; about a minute)

Printed per domain and pooled: citations, AUROC of the held-out P(pass), balanced accuracy of
its pass/fail at 0.5, the share standing at the promise (95%) with its share right, and the
failing citations left standing as `verified` (of the failing).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from citeaudit import (
    AuditOptions,
    AuditRun,
    audit_quotes,
    domain_figures,
    find_input,
    leave_one_domain_out,
    worst_domain_threshold,
)
from citeaudit import table as C
from citeaudit.calibrate.domains import domain_of
from citeaudit.calibrate.fit import fit_calibration
from citeaudit.calibrate.probe import CLASSES, choose_c, fit_weights, gold_classes, nested_scores, out_of_group
from citeaudit.decide.calibration import DEFAULT_TARGET, save_calibration
from citeaudit.errors import CacheMissError
from citeaudit.judge.hidden_states import probe_weights_path
from citeaudit.judge.localmodel import MODELS
from citeaudit.judge.prompts import PROMPT_VERSION
from citeaudit.judge.strategies.probe import LAYER
from citeaudit.pipeline.audit import judge_questions
from citeaudit.settings import environment as config
from citeaudit.table import CacheMode, Verdict

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_vectors import every_set


def labelled_table() -> tuple[pd.DataFrame, np.ndarray, pd.Series]:
    """Every labelled set audited from the recordings (uncalibrated), its judged rows whose hidden
    state is recorded (`tools/probe_vectors.py`); with the vectors (rows in the same order) and
    each row's domain."""
    judge = AuditRun(AuditOptions.from_env(model="qwen", strategy="probe", cache_mode=CacheMode.REPLAY)).judge
    options = AuditOptions.from_env(use_calibration=False, contrast="none", cache_mode="replay")
    parts, found, domains = [], [], []
    for source, cites in every_set():
        audit = audit_quotes(source, find_input(cites), options=options)
        name = audit.document.name if audit.document is not None else "the source"
        table = audit.table
        for i, (claim, evidence, where, _) in judge_questions(table, name).items():
            if pd.isna(table.at[i, C.EXPECTED]) or pd.isna(table.at[i, C.CONFIDENCE]):
                continue
            try:
                found.append(judge.hidden_state(claim, evidence, where))
            except CacheMissError:
                continue
            parts.append(table.loc[[i]])
            domains.append(domain_of(find_input(cites)))
    joined = pd.concat(parts, ignore_index=True)
    return joined, np.vstack(found), pd.Series(domains, index=joined.index)


def with_probe(table: pd.DataFrame, p: np.ndarray, stacked: bool) -> pd.DataFrame:
    """`table` with the probe's probabilities in place of the judge's (`probe`), or its P(supports)
    as one more answer beside the judge's (`stacked`)."""
    out = table.copy()
    if stacked:
        out[C.ANSWERS] = [{**a, "probe": float(s)} for a, s in zip(table[C.ANSWERS], p[:, 0])]
    else:
        out[C.PROBABILITIES] = [dict(zip(CLASSES, map(float, row))) for row in p]
        out[C.RELATION] = [CLASSES[int(np.argmax(row))] for row in p]
        out[C.CONFIDENCE] = np.maximum(p[:, 0], 1 - p[:, 0])
        out[C.ANSWERS] = None
    return out


def held_out(table: pd.DataFrame, x: np.ndarray, domains: pd.Series, target: float) -> dict[str, pd.DataFrame]:
    """Each method's `leave_one_domain_out` rows (the probe's nested as the module says)."""
    y = gold_classes(table[C.EXPECTED])
    groups = domains.to_numpy()
    held = {"panel": leave_one_domain_out(table, domains, target, "answers")}
    for method, stacked in (("probe", False), ("stacked", True)):
        parts = []
        for name in sorted(set(groups)):
            p, c = nested_scores(x, y, groups, name)
            scored = leave_one_domain_out(with_probe(table, p, stacked), domains, target,
                                          "answers" if stacked else "supports")
            parts.append(scored[scored["domain"] == name].assign(c=c))
        held[method] = pd.concat(parts)
    return held


def figures(held: pd.DataFrame, target: float) -> pd.DataFrame:
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score

    p_pass = np.where(held["verdict"] == Verdict.VERIFIED, held["score"], 1.0 - held["score"])
    held = held.assign(p_pass=p_pass)
    counts = domain_figures(held)
    rows = []
    for name, part in [*held.groupby("domain", sort=True), ("all", held)]:
        gold = part["gold_pass"].to_numpy(dtype=bool)
        both = 0 < gold.sum() < len(gold)
        figure = counts.loc[name]
        rows.append({
            "domain": name, "judged": len(part),
            "AUROC": roc_auc_score(gold, part["p_pass"]) if both else float("nan"),
            "balanced accuracy": balanced_accuracy_score(gold, part["p_pass"] >= 0.5) if both else float("nan"),
            "stand": f"{int(figure['stand'])} ({figure['coverage']:.1%})",
            "right": f"{int(figure['stand_right'])}/{int(figure['stand'])}" + (
                f" ({figure['precision']:.1%})" if figure["stand"] else ""),
            "false verified": f"{int(figure['false_verified'])}/{int(figure['failing'])}",
        })
    return pd.DataFrame(rows).set_index("domain")


def save(table: pd.DataFrame, x: np.ndarray, domains: pd.Series, held: dict[str, pd.DataFrame],
         target: float) -> None:
    """The probe fitted on every row (its penalty chosen leaving one domain out) and the calibrations
    of `probe` and `stacked`, each map fitted on scores the probe gave rows of a domain it was not
    fitted on (as it will score a new document), with the held-out figures above attached."""
    model = MODELS["qwen"]
    y, groups = gold_classes(table[C.EXPECTED]), domains.to_numpy()
    c = choose_c(x, y, groups)
    fitted_on = {str(d): int(n) for d, n in domains.value_counts().sort_index().items()}
    weights = fit_weights(x, y, c, model.sha256, PROMPT_VERSION, LAYER, fitted_on)
    path = weights.save(probe_weights_path(model.name, config.cache_dir()))
    print(f"\nprobe fitted on {len(x)} citations (C {c:g}): {path}")
    scores = out_of_group(x, y, groups, c)
    for method, stacked in (("probe", False), ("stacked", True)):
        scored = with_probe(table, scores, stacked)
        calibration = fit_calibration(scored, model.name, method, target, inputs="answers" if stacked else "supports",
                                      documents=list(domains))
        own = domain_figures(held[method])
        worst = worst_domain_threshold(held[method], target)
        calibration = replace(calibration, fitted_on={"domains": fitted_on, "scores": "the probe's, out of domain"},
                              cross_validated={**calibration.cross_validated, "leave_one_domain_out": {
                                  "domains": own.reset_index().to_dict(orient="records"),
                                  "worst_domain_threshold": worst}})
        print(f"{method}: threshold {calibration.threshold}: {save_calibration(calibration, config.cache_dir())}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", type=float, default=DEFAULT_TARGET)
    parser.add_argument("--save", action="store_true",
                        help="write the probe and the calibrations of probe and stacked into cache/calibration/")
    args = parser.parse_args(argv)
    table, x, domains = labelled_table()
    print(f"{len(table)} judged labelled citations with a vector, by domain: "
          + ", ".join(f"{d} {n}" for d, n in domains.value_counts().sort_index().items()))
    held = held_out(table, x, domains, args.target)
    pd.set_option("display.width", 200)
    for method, rows in held.items():
        extra = "" if "c" not in rows else " (probe penalty C per held-out domain: " + ", ".join(
            f"{d} {c:g}" for d, c in rows.groupby("domain")["c"].first().items()) + ")"
        print(f"\n{method}, held out by domain{extra}:")
        print(figures(rows, args.target).to_string(float_format=lambda v: f"{v:.3f}"))
    if args.save:
        save(table, x, domains, held, args.target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
