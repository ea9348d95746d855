"""Leave one domain out: each domain's citations routed by a calibration fitted on the other
domains only, the per-domain figures, and the worst-domain rule that caps a saved threshold."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from citeaudit.calibrate.maps import blocked_rows, coverage_ceiling, default_inputs, fit_map
from citeaudit.calibrate.scoring import (
    FINE_GRID,
    judged_rows,
    labelled_rows,
    outcomes_with_p_pass,
    pass_fail_right,
    standing_mask,
)
from citeaudit.decide.calibration import (
    DEFAULT_TARGET,
    Calibration,
    remembered_features,
    said_no_to_all,
)
from citeaudit.decide.routing import coverage_gap
from citeaudit.settings import environment as config
from citeaudit.table import THRESHOLD_RULES, Verdict

PROJECT_DOMAIN = "project"  # the project's own labelled sets (every citation file under data/)


def domain_of(citation_file: str | Path, project_data: Path | None = None) -> str:
    """The domain a labelled citation file belongs to when none is given: `project` for a file
    under the project's `data/` folder (its own sets), else the file's name without `.json` and
    without a `_citations` suffix or an `eval_` prefix (`build/public/scifact_citations.json` ->
    `scifact`).

    >>> domain_of("elsewhere/scifact_citations.json"), domain_of("x/eval_contracts.json")
    ('scifact', 'contracts')
    """
    path = Path(citation_file).resolve()
    data = (project_data or config.shipped_data_dir()).resolve()
    if path.is_relative_to(data):
        return PROJECT_DOMAIN
    return path.stem.removesuffix("_citations").removeprefix("eval_")


def row_labels(labels: Iterable[str], tables: Iterable[pd.DataFrame]) -> list[str]:
    """Each label once per row of its table (labels and tables in the same order): the per-row
    `domains` or `documents` of tables that `pd.concat` joins.

    >>> row_labels(["a", "b"], [pd.DataFrame({"x": [1, 2]}), pd.DataFrame({"x": [3]})])
    ['a', 'a', 'b']
    """
    return [str(label) for label, table in zip(labels, tables, strict=True) for _ in range(len(table))]


def aligned(labels: Sequence[str] | pd.Series, table: pd.DataFrame) -> pd.Series:
    """Per-row labels as a Series on `table`'s index (a Series is taken by index)."""
    if len(labels) != len(table):
        raise ValueError(f"{len(labels)} labels given for {len(table)} rows")
    return labels if isinstance(labels, pd.Series) else pd.Series(list(labels), index=table.index)


@remembered_features()
def leave_one_domain_out(table: pd.DataFrame, domains: Sequence[str] | pd.Series, target: float = DEFAULT_TARGET,
                         inputs: str | None = None, documents: Sequence[str] | pd.Series | None = None) -> pd.DataFrame:
    """Each judged row scored by a map and threshold fitted on the other domains only.

    `domains` names each row's domain (aligned with `table`'s rows; a Series by index). For each
    domain (`sklearn.model_selection.LeaveOneGroupOut`, the domains its groups), the map (of
    `inputs`, default `default_inputs`) and its recommended threshold are fitted on the judged rows
    of every other domain read from log-probabilities (`fit_map`, the procedure of
    `fit_calibration`), and the domain's rows are scored with them by `route.judge_outcome`. Returns
    one row per judged row: `domain`, `verdict`, `score`, `p_pass` (P(pass) by the map fitted without
    the domain; NaN where it gives none), `threshold` (the one fitted without the
    domain), `blocked` (a blocking flag: never stands), `right` (pass or fail right), `gold_pass`,
    `said_no` (1.0 when the model said no to every yes/no question, 0.0 when not, NaN without
    answers), `stand` (at that threshold, by
    `route.stands`). `domain_figures` summarises it. With `documents` (the document each row
    cites), the map fitted without the domain also checks each of the domain's documents
    (`Calibration.uncovered`): a document it does not cover is `blocked`, and `uncovered` says why
    (None otherwise).
    """
    from sklearn.model_selection import LeaveOneGroupOut  # here: importing scikit-learn takes seconds

    labelled = labelled_rows(table)
    rows = judged_rows(table)
    row_domains = aligned(domains, table).reindex(rows.index).astype(str)
    names = sorted(set(row_domains))
    if len(names) < 2:
        raise ValueError(f"leave-one-domain-out needs judged rows of at least two domains, not {names}")
    inputs = inputs or default_inputs(table)
    blocked = blocked_rows(labelled).reindex(rows.index)
    row_documents = None if documents is None else aligned(documents, table).reindex(rows.index).astype(str)
    parts = []
    for _, test_rows in LeaveOneGroupOut().split(rows, groups=row_domains.to_numpy()):  # domains in sorted order
        held_out = np.zeros(len(rows), dtype=bool)
        held_out[test_rows] = True
        name = str(row_domains.iloc[test_rows[0]])
        train = rows[~held_out & (rows["method"] == "logprobs").to_numpy()]
        fitted = fit_map(train, target, inputs=inputs, documents=row_documents) if not train.empty else None
        t = fitted.threshold if fitted is not None else None
        test = rows[held_out]
        verdicts, scores, p_pass = outcomes_with_p_pass(test, fitted)
        held_blocked = blocked[held_out].astype(bool).to_numpy()
        gaps = np.full(len(test), None, dtype=object)
        if fitted is not None and row_documents is not None:
            held_documents = row_documents[held_out]
            for document in sorted(set(held_documents)):
                mine = (held_documents == document).to_numpy()
                gap = coverage_gap(test[mine], fitted)  # the pipeline's own check (`route`)
                if gap is not None:
                    held_blocked, gaps[mine] = held_blocked | mine, f"{document}: {gap}"
        parts.append(pd.DataFrame({
            "domain": name,
            "verdict": pd.Series(verdicts, index=test.index, dtype=object),
            "score": scores,
            "p_pass": p_pass,
            "threshold": t,
            "blocked": held_blocked,
            "right": pass_fail_right(verdicts, test["gold"]),
            "gold_pass": test["gold_pass"].astype(bool).to_numpy(),
            "said_no": [float(said_no_to_all(a)) if isinstance(a, dict) and a else float("nan")
                        for a in test["answers"]],
            "uncovered": gaps,
        }, index=test.index))
    held = pd.concat(parts)
    held["stand"] = standing_mask(held, held["threshold"])
    return held


def domain_figures(held: pd.DataFrame, threshold: float | str | None = "own") -> pd.DataFrame:
    """Per domain of `leave_one_domain_out` rows, and over all of them (`all`): `judged`, `failing`
    (gold fails), `threshold`, `stand`, `coverage` (stand / judged), `stand_right`, `precision`
    (stand_right / stand, NaN when none stands), `false_verified` (standing `verified` verdicts of
    failing citations), `false_verified_share` (of the failing citations) and `said_no_share` (of
    the judged citations, those answered no to every yes/no question; NaN without answers). `threshold` "own" uses
    each domain's threshold fitted without it; a number (or None) uses that one for every domain."""
    own = isinstance(threshold, str)
    stand = held["stand"].to_numpy() if isinstance(threshold, str) else standing_mask(held, threshold)
    frame = held.assign(stand=stand, false_verified=stand & (held["verdict"] == Verdict.VERIFIED).to_numpy()
                        & ~held["gold_pass"].to_numpy())
    out = []
    for name, part in [*frame.groupby("domain", sort=True), ("all", frame)]:
        n_stand, right = int(part["stand"].sum()), int((part["stand"] & part["right"]).sum())
        failing, false_verified = int((~part["gold_pass"]).sum()), int(part["false_verified"].sum())
        ts = {None if pd.isna(t) else round(float(t), 2) for t in part["threshold"]} if own else {threshold}
        out.append({
            "domain": name, "judged": len(part), "failing": failing,
            "threshold": ts.pop() if len(ts) == 1 else None,
            "stand": n_stand, "coverage": n_stand / len(part) if len(part) else float("nan"),
            "stand_right": right, "precision": right / n_stand if n_stand else float("nan"),
            "false_verified": false_verified,
            "false_verified_share": false_verified / failing if failing else float("nan"),
            "said_no_share": float(part["said_no"].mean()) if "said_no" in part else float("nan"),
        })
    return pd.DataFrame(out).set_index("domain")


def worst_domain_threshold(held: pd.DataFrame, target: float = DEFAULT_TARGET,
                           grid: Sequence[float] = FINE_GRID) -> float | None:
    """The lowest threshold of `grid` (above 0.5) at which, every domain scored by the map fitted on
    the others (`leave_one_domain_out`), the standing verdicts of the WORST domain are still at least
    `target` right (a domain where none stands passes), and at least one verdict stands; else None.

    It reads the held-out domains' labels, so the figures at it are a selection on them, not a
    further held-out estimate.
    """
    for t in grid:
        if t <= 0.5:
            continue
        figures = domain_figures(held, float(t)).drop(index="all")
        standing = figures[figures["stand"] > 0]
        if not standing.empty and (standing["precision"] >= target).all():
            return float(t)
    return None


def hold_out_sets(sets: Sequence[tuple[str, str]], tables: Sequence[pd.DataFrame], target: float = DEFAULT_TARGET,
                  domains: Sequence[str] | None = None, inputs: str | None = None) -> pd.DataFrame | None:
    """`leave_one_domain_out` over labelled sets audited one table each: `sets` are (document,
    citation file) pairs in the order of `tables`, each set's domain is `domains` (default
    `domain_of` its citation file), and each citation file is the document the coverage check
    compares. None when the sets span fewer than two domains (nothing to hold out)."""
    names = list(domains) if domains is not None else [domain_of(config.find_input(cites)) for _, cites in sets]
    if len(set(names)) < 2:
        return None
    table = pd.concat(list(tables), ignore_index=True)
    return leave_one_domain_out(table, row_labels(names, tables), target, inputs,
                                row_labels([cites for _, cites in sets], tables))


def side_by_side(comparison: pd.DataFrame, held_out: dict[str, pd.DataFrame],
                 target: float = DEFAULT_TARGET) -> pd.DataFrame:
    """Per strategy, the columns of `citeaudit calibrate`'s side-by-side table as shares: the pooled
    figures (mean over the fold assignments, from `StrategyComparison.figures()`), the held-out ones
    over all domains, the share of failing citations left standing as verified, and the ceiling of
    one threshold chosen in hindsight on the held-out labels (`coverage_ceiling`)."""
    rows = {}
    for strategy, held in held_out.items():
        everything = domain_figures(held).loc["all"]
        rows[strategy] = {
            "pooled: stand": comparison.at[strategy, "coverage_mean"],
            "pooled: right": comparison.at[strategy, "precision_mean"],
            "held out by domain: stand": everything["coverage"],
            "held out by domain: right": everything["precision"],
            "false verified (of the failing)": everything["false_verified_share"],
            "held out, best threshold in hindsight: stand":
                (coverage_ceiling(held, target) or {"coverage": float("nan")})["coverage"],
        }
    return pd.DataFrame(rows).T


@dataclass(frozen=True)
class DomainHoldOut:
    """A calibration's leave-one-domain-out figures and what the threshold rule made of them.

    `held`: `leave_one_domain_out`'s rows; `own`: `domain_figures` at each domain's own threshold;
    `worst`: `worst_domain_threshold` (None: none reaches the target); `at_worst`: the figures at it;
    `calibration`: the fitted one with the summary in `cross_validated["leave_one_domain_out"]` and,
    under rule `worst-domain`, `worst` as its threshold (the pooled one is `pooled_threshold`)."""

    held: pd.DataFrame
    own: pd.DataFrame
    worst: float | None
    at_worst: pd.DataFrame | None
    calibration: Calibration
    pooled_threshold: float | None
    rule: str


def hold_out_calibration(fitted: Calibration, table: pd.DataFrame, domains: Sequence[str] | pd.Series,
                         documents: Sequence[str] | pd.Series | None, target: float = DEFAULT_TARGET,
                         rule: str = "pooled") -> DomainHoldOut:
    """Score `fitted`'s procedure leaving each domain out (`leave_one_domain_out` with its inputs),
    attach the summary that `citeaudit calibrate` prints and saves, and apply the threshold `rule`:
    `pooled` keeps the threshold fitted on all the sets, `worst-domain` takes the lowest one at which
    the worst held-out domain still reaches the target. Needs two domains or more (ValueError)."""
    if rule not in THRESHOLD_RULES:
        raise ValueError(f"threshold rule {rule!r}: use one of {', '.join(THRESHOLD_RULES)}")
    if len(set(aligned(domains, table))) < 2:
        raise ValueError("holding out a domain needs labelled sets of two domains or more")
    held = leave_one_domain_out(table, domains, target, fitted.inputs, documents)
    own = domain_figures(held)
    worst = worst_domain_threshold(held, target)
    at_worst = None if worst is None else domain_figures(held, worst)
    summary: dict = {"domains": own.reset_index().to_dict(orient="records"), "worst_domain_threshold": worst,
                     "ceiling": coverage_ceiling(held, target)}
    if at_worst is not None:
        summary["at_worst_domain_threshold"] = at_worst.reset_index().to_dict(orient="records")
    calibration = replace(fitted, cross_validated={**fitted.cross_validated, "leave_one_domain_out": summary})
    if rule == "worst-domain":  # named in fitted_on: the threshold is not the pooled fit's (`fitted_on_table`)
        calibration = replace(calibration, threshold=worst, fitted_on={**calibration.fitted_on, "threshold_rule": rule})
    return DomainHoldOut(held, own, worst, at_worst, calibration, fitted.threshold, rule)
