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

Every layer recorded (issue 55: `hidden_states.LAYERS`, the final one and 8 blocks' outputs) and a
few combinations of them (`mean:` the layers' vectors averaged, `concat:` side by side) are each a
probe's input ("feature"); each is measured on the citations whose every layer is recorded, so all
features and `panel` are compared on the same rows.

    python tools/bench_probe.py [--features last,l_out-16,mean:l_out-12,l_out-14] [--save]
                                    (offline: recordings and vectors; minutes with every feature)

Printed per feature, method and domain (and pooled): citations, AUROC of the held-out P(pass), the
verdicts standing at the promise (95%) with those right, and the failing citations left standing
as `verified` (of the failing); then per feature whether `stacked` lets more verdicts stand than
`panel` on every domain at the same or better precision and false verified (issue 55's rule).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from citeaudit import AuditOptions, AuditRun, audit_quotes, fit_calibration, save_calibration
from citeaudit import table as C
from citeaudit.calibrate import domain_figures, domain_of, leave_one_domain_out, worst_domain_threshold
from citeaudit.calibrate.probe import CLASSES, choose_c, fit_weights, gold_classes, nested_scores, out_of_group
from citeaudit.decide import DEFAULT_TARGET
from citeaudit.errors import CacheMissError
from citeaudit.judge.hidden_states import LAYERS, block_layer, probe_weights_path
from citeaudit.judge.localmodel import MODELS
from citeaudit.judge.prompts import PROMPT_VERSION
from citeaudit.judge.strategies.probe import LAYER
from citeaudit.pipeline import judge_questions
from citeaudit.settings import environment as config
from citeaudit.settings import find_input
from citeaudit.table import CacheMode, Verdict

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_vectors import every_set

MIDDLE = tuple(block_layer(b) for b in (12, 14, 16, 18, 20))
FEATURES = (*LAYERS, "mean:" + ",".join(MIDDLE), f"concat:{block_layer(16)},{LAYER}",
            f"concat:{block_layer(14)},{block_layer(20)}")


def feature_layers(feature: str) -> tuple[str, ...]:
    """The layers a feature reads: `<layer>`, `mean:<layer>,...` or `concat:<layer>,...`."""
    kind, _, names = feature.rpartition(":")
    layers = tuple(names.split(","))
    if kind not in {"", "mean", "concat"} or not set(layers) <= set(LAYERS) or (not kind and len(layers) > 1):
        raise SystemExit(f"feature {feature!r}: not a layer of {', '.join(LAYERS)}, nor mean: or concat: of them")
    return layers


def feature_vectors(feature: str, vectors: dict[str, np.ndarray]) -> np.ndarray:
    """The probe's input for `feature`, from each layer's vectors (rows aligned)."""
    kind, _, _ = feature.rpartition(":")
    parts = [vectors[layer] for layer in feature_layers(feature)]
    return np.mean(parts, axis=0) if kind == "mean" else np.hstack(parts)


def labelled_table(layers: tuple[str, ...] = (LAYER,)) -> tuple[pd.DataFrame, dict[str, np.ndarray], pd.Series]:
    """Every labelled set audited from the recordings (uncalibrated), its judged rows whose hidden
    state of every one of `layers` is recorded (`tools/probe_vectors.py`); with the vectors of
    each layer (rows in the same order) and each row's domain."""
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
                found.append(judge.hidden_states(claim, evidence, where, layers))
            except CacheMissError:
                continue
            parts.append(table.loc[[i]])
            domains.append(domain_of(find_input(cites)))
    if not parts:
        raise SystemExit(f"no labelled citation has a recorded vector of every layer of {', '.join(layers)}: "
                         "run `make probe-vectors` first")
    joined = pd.concat(parts, ignore_index=True)
    vectors = {layer: np.vstack([row[layer] for row in found]) for layer in layers}
    return joined, vectors, pd.Series(domains, index=joined.index)


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


def held_out(table: pd.DataFrame, x: np.ndarray, domains: pd.Series, target: float,
             panel: bool = True) -> dict[str, pd.DataFrame]:
    """Each method's `leave_one_domain_out` rows (the probe's nested as the module says); `panel`
    left out when not asked for (it reads no vector)."""
    y = gold_classes(table[C.EXPECTED])
    groups = domains.to_numpy()
    held = {"panel": leave_one_domain_out(table, domains, target, "answers")} if panel else {}
    nested = {name: nested_scores(x, y, groups, name) for name in sorted(set(groups))}  # both methods read them
    for method, stacked in (("probe", False), ("stacked", True)):
        parts = []
        for name, (p, c) in nested.items():
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


def rule(panel: pd.DataFrame, stacked: pd.DataFrame) -> tuple[bool, list[str]]:
    """Issue 55's rule on two `domain_figures`: on every domain, more verdicts stand than panel's,
    at the same or better precision and no more false verified. With what fails it, per domain."""
    failed = []
    for domain in (d for d in panel.index if d != "all"):
        mine, theirs = stacked.loc[domain], panel.loc[domain]
        why = []
        if mine["stand"] <= theirs["stand"]:
            why.append(f"stand {int(mine['stand'])} ≤ {int(theirs['stand'])}")
        if mine["stand"] and theirs["stand"] and mine["precision"] < theirs["precision"]:
            why.append(f"precision {mine['precision']:.1%} < {theirs['precision']:.1%}")
        if mine["false_verified"] > theirs["false_verified"]:
            why.append(f"false verified {int(mine['false_verified'])} > {int(theirs['false_verified'])}")
        if why:
            failed.append(f"{domain}: {', '.join(why)}")
    return not failed, failed


def layer_table(table: pd.DataFrame, vectors: dict[str, np.ndarray], domains: pd.Series, features: list[str],
                target: float) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """One row per feature, method and domain (panel once: it reads no vector), and each feature's
    held-out `stacked` rows with panel's (for the rule)."""
    rows, held_of = [], {}
    panel = leave_one_domain_out(table, domains, target, "answers")
    rows.append(figures(panel, target).reset_index().assign(feature="-", method="panel"))
    for feature in features:
        held = held_out(table, feature_vectors(feature, vectors), domains, target, panel=False)
        held_of[feature] = {"panel": panel, **held}
        for method, part in held.items():
            rows.append(figures(part, target).reset_index().assign(feature=feature, method=method))
        print(f"  {feature}: measured", file=sys.stderr, flush=True)
    frame = pd.concat(rows, ignore_index=True)
    return frame.set_index(["feature", "method", "domain"])[["judged", "AUROC", "stand", "right",
                                                             "false verified"]], held_of


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", type=float, default=DEFAULT_TARGET)
    parser.add_argument("--features", default=";".join(FEATURES),
                        help="the probe inputs measured, `;` between them: a layer, mean:<layers> or concat:<layers>")
    parser.add_argument("--save", action="store_true",
                        help=f"write the probe of layer {LAYER} (the one the strategies read) and the calibrations "
                             "of probe and stacked into cache/calibration/")
    args = parser.parse_args(argv)
    features = [f for f in args.features.split(";") if f]
    layers = tuple(dict.fromkeys(layer for f in features for layer in feature_layers(f)))
    if args.save and LAYER not in layers:
        parser.error(f"--save fits the probe of layer {LAYER}: keep it among --features")
    table, vectors, domains = labelled_table(layers)
    print(f"{len(table)} judged labelled citations with a vector of every layer of {', '.join(layers)}, by domain: "
          + ", ".join(f"{d} {n}" for d, n in domains.value_counts().sort_index().items()))
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 1000)
    frame, held_of = layer_table(table, vectors, domains, features, args.target)
    print("\nheld out by domain (panel reads no vector: one block); AUROC of P(pass), verdicts standing at the "
          f"promise ({args.target:.0%}), those right, false verified of the failing:")
    print(frame.to_string(float_format=lambda v: f"{v:.3f}"))
    print("\nAUROC per feature (probe | stacked), held out by domain:")
    auroc = frame["AUROC"].unstack("domain")
    print(auroc.to_string(float_format=lambda v: f"{v:.3f}"))
    print("\nthe rule (stacked lets more stand than panel on every domain, precision and false verified no "
          "worse):")
    for feature, held in held_of.items():
        holds, failed = rule(domain_figures(held["panel"]), domain_figures(held["stacked"]))
        print(f"  {feature}: {'holds' if holds else 'does not hold: ' + '; '.join(failed)}")
    if args.save:
        save(table, vectors[LAYER], domains, held_of[LAYER], args.target)
    return 0


if __name__ == "__main__":
    import docs_figures  # --save-docs: also save what it prints for the documentation

    sys.exit(docs_figures.run(main, __file__))
