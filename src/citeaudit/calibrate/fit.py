"""Threshold analysis and per-model calibration over stored results: pure functions, no model calls.

Input: a judged table with gold verdicts in `expected` (from a labelled citation file). A row is
*auto* at threshold t when `route(table, t)` lets its verdict stand. What decides an answer is
pass or fail, so a verdict is *right* when it passes (verified) exactly when the gold verdict
does (contradicted, unsupported and fabricated all fail); `strategy_metrics` also scores the
three-way word.

Calibration (`fit_calibration`): a monotone map from P(supports) to P(pass), the probability
that the citation passes (gold verified), fitted by Platt scaling on the log-odds of P(supports)
(a logistic curve, slope held at or above 0, Platt's smoothed targets so that a perfectly
separated set does not diverge). The verdict then passes when P(pass) ≥ 1/2, which moves the
decision boundary to where this model's P(supports) actually splits passing from failing
citations, and the routing score max(P(pass), 1 − P(pass)) is the chance that the pass-or-fail
call is right: a map from the routing score to accuracy. The recommended threshold is the lowest
one on that score at which the verdicts that stand reach the target accuracy on the set it was
fitted on. Its
figures are cross-validated (`cross_validate`): stratified folds, the map and the threshold fitted
on the other folds and scored on the held-out one, never in-sample. It is saved as JSON beside the
recordings, `cache/calibration/<model>.<strategy>.json`, one per model and strategy.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from citeaudit import table as C
from citeaudit.decide.calibration import (
    ANSWERS,
    ANSWERS_LENGTH,
    COVER_MIN,
    DEFAULT_TARGET,
    EVIDENCE_CHARS,
    PRODUCT,
    SUPPORTS,
    Calibration,
    _sigmoid,
    feature_values,
    log_odds,
    no_count,
    said_no_to_all,
)
from citeaudit.decide.route import coverage_gap, judge_outcome, model_verdict, route, stands
from citeaudit.errors import InputError
from citeaudit.settings import environment as config
from citeaudit.table import Route, Verdict

if TYPE_CHECKING:
    from matplotlib.axes import Axes

GRID = tuple(round(t, 2) for t in np.arange(0.0, 1.0001, 0.05))
FINE_GRID = tuple(round(t, 2) for t in np.arange(0.5, 1.0001, 0.01))  # where a threshold is recommended
FOLDS = 10  # each map fitted on 90% of the rows: closer to the shipped one, fitted on all of them
# ridge penalties on the weights of the answers' log-odds (correlated inputs, few labels): each fit
# takes the one whose fits on part of its rows predict the rest best (`choose_l2`)
L2_GRID = (0.0, 0.1, 0.3, 1.0, 3.0)
L2_FOLDS, L2_REPEATS = 5, 2
NAMING_MIN = 5  # a failing word is calibrated when at least this many of each failing kind were judged
REPEATS = 20  # fold assignments of the repeated cross-validation
LABELS = (Verdict.VERIFIED, Verdict.CONTRADICTED, Verdict.UNSUPPORTED)


def judge_only(table: pd.DataFrame) -> pd.DataFrame:
    """The table without the contrast checks' columns: a calibration measures the judge, so what it
    is fitted and scored on never depends on which contrast checks a run had on (`--contrast-checks`);
    they hold back verdicts after it, in routing."""
    return table.drop(columns=[C.CONTRAST, C.CONTRAST_NOTE], errors="ignore")


def _labelled(table: pd.DataFrame) -> pd.DataFrame:
    table = judge_only(table)
    labelled = table[table[C.EXPECTED].notna()]
    if labelled.empty:
        raise ValueError("no row has a gold `expected` verdict; threshold analysis needs a labelled set")
    return labelled


def _passes(verdicts: Iterable[object]) -> np.ndarray:
    return np.array([v == Verdict.VERIFIED for v in verdicts], dtype=bool)


def pass_fail_right(verdicts: Iterable[object], gold: Iterable[object]) -> np.ndarray:
    """Per row: does the verdict pass exactly when the gold verdict passes?

    >>> pass_fail_right(["verified", "contradicted", "unsupported"], ["verified", "unsupported", "verified"]).tolist()
    [True, True, False]
    """
    return _passes(verdicts) == _passes(gold)


def threshold_table(table: pd.DataFrame, thresholds: Iterable[float] = GRID,
                    calibration: Calibration | None = None) -> pd.DataFrame:
    """Per threshold: how many verdicts stand, how many of them are right, how many go to review.

    Columns: `threshold`, `auto` (verdicts that stand), `auto_share`, `auto_accuracy` (pass or
    fail right; NaN when none stands), `review` (sent to a human), `wrong_auto` (wrong verdicts
    that would stand), `model_auto` (of the standing verdicts, those that came from the model
    rather than step 1), `model_share` (`model_auto` over the rows the model judged) and
    `model_accuracy` (of those, the share right; NaN when none stands).
    """
    labelled = _labelled(table)
    judged = int(labelled[C.CONFIDENCE].notna().sum())
    rows = []
    for t in thresholds:
        routed = route(labelled, float(t), calibration)
        auto = routed[routed[C.ROUTE] == Route.AUTO]
        right_rows = pass_fail_right(auto[C.VERDICT], auto[C.EXPECTED])
        right = int(right_rows.sum())
        from_model = auto[C.FABRICATED_REASON].isna().to_numpy()
        model_auto = int(from_model.sum())
        rows.append({
            "threshold": float(t),
            "auto": len(auto),
            "auto_share": len(auto) / len(routed),
            "auto_accuracy": right / len(auto) if len(auto) else float("nan"),
            "review": int((routed[C.ROUTE] == Route.REVIEW).sum()),
            "wrong_auto": len(auto) - right,
            "model_auto": model_auto,
            "model_share": model_auto / judged if judged else float("nan"),
            "model_accuracy": float(right_rows[from_model].mean()) if model_auto else float("nan"),
        })
    return pd.DataFrame(rows)


def _lowest_in(grid: pd.DataFrame, target: float) -> float | None:
    reached = grid[(grid["auto"] > 0) & (grid["auto_accuracy"] >= target)]
    return float(reached["threshold"].min()) if not reached.empty else None


def lowest_threshold(table: pd.DataFrame, target: float = DEFAULT_TARGET,
                     thresholds: Iterable[float] = GRID) -> float | None:
    """The lowest threshold whose standing verdicts are at least `target` accurate, else None."""
    return _lowest_in(threshold_table(table, thresholds), target)


def judged_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The labelled rows the model judged: what the judge answered (raw confidence, method,
    probabilities, P(supports), relation, the yes/no answers, the judged evidence), the uncalibrated
    verdict, gold, right."""
    labelled = _labelled(table)
    judged = labelled[labelled[C.CONFIDENCE].notna()]
    nothing = pd.Series([None] * len(judged), index=judged.index, dtype=object)
    probabilities = judged.get(C.PROBABILITIES, nothing)
    verdicts = [model_verdict(p, r) for p, r in zip(probabilities, judged[C.RELATION])]
    p_supports = [p.get("supports") if isinstance(p, dict) else None for p in probabilities]
    return pd.DataFrame({
        "confidence": judged[C.CONFIDENCE].astype(float),
        "method": judged.get(C.METHOD, nothing),
        "probabilities": probabilities,
        "relation": judged[C.RELATION],
        "p_supports": pd.Series(p_supports, index=judged.index, dtype=float),
        "answers": judged.get(C.ANSWERS, nothing),
        "evidence": judged.get(C.EVIDENCE, nothing),
        "verdict": pd.Series(verdicts, index=judged.index, dtype=object),
        "gold": judged[C.EXPECTED],
        "correct": pass_fail_right(verdicts, judged[C.EXPECTED]).astype(float),
        "gold_pass": _passes(judged[C.EXPECTED]).astype(float),
    }, index=judged.index)


def outcomes(rows: pd.DataFrame, calibration: Calibration | None = None) -> tuple[list, np.ndarray]:
    """Verdict and routing score of each of `judged_rows`, by the pipeline's own rule
    (`route.judge_outcome`); a row that gets no score (a map of answers it lacks) scores 0."""
    verdicts, scores = [], []
    evidence = rows["evidence"] if "evidence" in rows else pd.Series(None, index=rows.index, dtype=object)
    for probabilities, relation, confidence, method, answers, text in zip(
            rows["probabilities"], rows["relation"], rows["confidence"], rows["method"], rows["answers"], evidence):
        verdict, score, _ = judge_outcome(probabilities, relation, confidence, method, answers, calibration, text)
        verdicts.append(verdict)
        scores.append(0.0 if score is None else score)
    return verdicts, np.array(scores, dtype=float)


def scored_rows(rows: pd.DataFrame, calibration: Calibration | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Routing score and pass-or-fail rightness of `judged_rows`, through `calibration` if given
    (`outcomes`: the pipeline's scoring, so a row never stands here that would not stand there)."""
    verdicts, scores = outcomes(rows, calibration)
    return scores, pass_fail_right(verdicts, rows["gold"]).astype(float)


def reliability(table: pd.DataFrame, bins: int = 10, calibration: Calibration | None = None) -> pd.DataFrame:
    """Model verdicts binned by (mapped) confidence: mean confidence, pass-or-fail accuracy, count."""
    scores, correct = scored_rows(judged_rows(table), calibration)
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(scores, edges[1:-1], right=True), 0, bins - 1)
    rows = []
    for b in range(bins):
        part = which == b
        count = int(part.sum())
        rows.append({
            "bin": f"{edges[b]:.1f}-{edges[b + 1]:.1f}",
            "count": count,
            "confidence": float(scores[part].mean()) if count else float("nan"),
            "accuracy": float(correct[part].mean()) if count else float("nan"),
        })
    return pd.DataFrame(rows)


def expected_calibration_error(table: pd.DataFrame, bins: int = 10, calibration: Calibration | None = None) -> float:
    """Sum over bins of (share of verdicts in bin) x |accuracy - mean confidence|."""
    rel = reliability(table, bins, calibration)
    used = rel[rel["count"] > 0]
    total = used["count"].sum()
    if total == 0:
        return float("nan")
    return float((used["count"] / total * (used["accuracy"] - used["confidence"]).abs()).sum())


@dataclass(frozen=True)
class ThresholdAdvice:
    target: float
    threshold: float | None
    ece: float
    statement: str


def advise(table: pd.DataFrame, target: float = DEFAULT_TARGET, grid: pd.DataFrame | None = None) -> ThresholdAdvice:
    """The lowest threshold reaching `target` on this set (in-sample), with a plain statement.

    `grid` is `threshold_table(table)` when the caller already has it. For a threshold to use on
    other answers, fit a `Calibration`, whose figures are cross-validated.
    """
    grid = threshold_table(table) if grid is None else grid
    found = _lowest_in(grid, target)
    ece = expected_calibration_error(table)
    if found is None:
        statement = f"No threshold reaches {target:.0%} accuracy of the verdicts that stand."
    else:
        row = grid[grid["threshold"] == found].iloc[0]
        statement = (
            f"The lowest threshold reaching {target:.0%} accuracy of standing verdicts (pass or fail) is "
            f"{found:.2f}: {int(row['auto'])} of {len(_labelled(table))} verdicts stand ({int(row['model_auto'])} of "
            f"them from the model), {int(row['review'])} go to review."
        )
        if row["model_auto"] == 0:
            statement += " No model verdict stands there: only step 1's fabricated verdicts do."
    return ThresholdAdvice(target, found, ece, statement)


# ---- the calibration map ------------------------------------------------------------------------

def _smoothed_targets(y: np.ndarray) -> np.ndarray:
    """Platt's targets: (N₊ + 1)/(N₊ + 2) for a positive, 1/(N₋ + 2) for a negative."""
    n_pos, n_neg = float(y.sum()), float(len(y) - y.sum())
    return np.where(y > 0.5, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))


def fit_logistic(features: Sequence[Sequence[float]] | np.ndarray, outcome: Sequence[float] | np.ndarray,
                 l2: float = 0.0, iterations: int = 100) -> np.ndarray:
    """Weights, intercept first, of P(y = 1 | x) = 1 / (1 + exp(-(w₀ + w·x))) for rows x of `features`.

    Newton's method on the log-loss against Platt's smoothed targets (so a perfectly separated set
    gives finite weights), plus l2·|w|²/2 on the slopes (not the intercept). Non-finite weights
    (a degenerate set) give the smoothed base rate: slopes 0.

    >>> w = fit_logistic([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [3.0, 0.0]], [0, 0, 1, 1])
    >>> w.shape, bool(w[1] > 0)
    ((3,), True)
    """
    x = np.asarray(features, dtype=float)
    x = x[:, None] if x.ndim == 1 else x
    y = np.asarray(outcome, dtype=float)
    if len(x) == 0:
        raise ValueError("no judged row to fit a calibration on")
    target = _smoothed_targets(y)
    base = float(target.mean())
    design = np.column_stack([np.ones(len(x)), x])
    penalty = l2 * np.eye(design.shape[1])
    penalty[0, 0] = 0.0
    w = np.zeros(design.shape[1])
    w[0] = math.log(base / (1 - base))
    for _ in range(iterations):
        p = _sigmoid(design @ w)
        gradient = design.T @ (p - target) + penalty @ w
        hessian = design.T @ (design * (p * (1 - p))[:, None]) + penalty + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w = w - step
        if np.abs(step).max() < 1e-10:
            break
    if not np.all(np.isfinite(w)):
        w = np.zeros(design.shape[1])
        w[0] = math.log(base / (1 - base))
    return w


def fit_platt(scores: Sequence[float] | np.ndarray, correct: Sequence[float] | np.ndarray,
              iterations: int = 100) -> tuple[float, float]:
    """(a, b) of P(y = 1 | x) = 1 / (1 + exp(-(a + b·x))), with b ≥ 0 (monotone).

    `fit_logistic` on one input, unpenalized. If the best slope is negative (higher x less often
    positive), the slope is held at 0: the map is the smoothed base rate.

    >>> a, b = fit_platt([0.5, 0.6, 0.7, 0.8, 0.9, 1.0], [0, 0, 1, 0, 1, 1])
    >>> b > 0, round(float(_sigmoid(np.array(a + b * 0.95))), 2) > round(float(_sigmoid(np.array(a + b * 0.55))), 2)
    (True, True)
    """
    a, b = (float(v) for v in fit_logistic(np.asarray(scores, dtype=float), correct, 0.0, iterations))
    if b < 0:
        base = float(_smoothed_targets(np.asarray(correct, dtype=float)).mean())
        return math.log(base / (1 - base)), 0.0
    return a, b


def recommend_threshold(mapped: Sequence[float] | np.ndarray, correct: Sequence[float] | pd.Series,
                        target: float = DEFAULT_TARGET, grid: Sequence[float] = FINE_GRID) -> float | None:
    """The lowest threshold on `grid` at which the rows whose mapped score reaches it (at least one)
    are at least `target` right, and the mean of their mapped scores (the accuracy the map expects
    of them) is at least `target` too; None when no threshold does.

    The second condition keeps a small fitted set from recommending a threshold just because the
    few rows above it happen to be right: with the map calibrated, it is what new rows would score.

    >>> recommend_threshold([0.6, 0.7, 0.96, 0.98], [0, 1, 1, 1], 0.95)  # 0.61 keeps 0.7: mean 0.88
    0.71
    >>> recommend_threshold([0.6, 0.7, 0.8, 0.9], [0, 1, 1, 1], 0.95) is None  # right, but not expected to be
    True
    """
    m = np.asarray(mapped, dtype=float)
    y = np.asarray(correct, dtype=float)
    for t in grid:
        if t <= 0.5:  # every score is at least 0.5: such a threshold is no routing (and no file takes it)
            continue
        standing = m >= t
        if standing.any() and y[standing].mean() >= target and m[standing].mean() >= target:
            return float(t)
    return None


def coverage_ceiling(scored: pd.DataFrame, target: float = DEFAULT_TARGET,
                     grid: Sequence[float] = FINE_GRID) -> dict | None:
    """The most of `scored`'s rows (columns `verdict`, `score`, `right`, `blocked`, as
    `leave_one_domain_out` returns them) that stand at least `target` right at any one threshold of
    `grid` (above 0.5; `_standing`, so a blocked row never stands): `threshold`, `judged`, `stand`,
    `stand_right`, `coverage`, `precision`, or None when no threshold reaches the target.

    The threshold is chosen with the labels in hand, so this is a ceiling, not an estimate: no
    threshold on these scores lets more stand at the target. Below the coverage an analyst needs,
    a better threshold cannot get there; better-ranked answers (a stronger judge) can.

    >>> rows = pd.DataFrame({"verdict": ["verified"] * 4, "score": [0.6, 0.7, 0.96, 0.98],
    ...                      "right": [False, True, True, True], "blocked": False})
    >>> coverage_ceiling(rows)["stand"]
    3
    """
    right = scored["right"].to_numpy(dtype=bool)
    best: dict | None = None
    for t in grid:
        if t <= 0.5:
            continue
        stand = _standing(scored, t)
        n, ok = int(stand.sum()), int((stand & right).sum())
        if n and ok / n >= target and (best is None or n > best["stand"]):
            best = {"threshold": float(t), "judged": len(right), "stand": n, "stand_right": ok,
                    "coverage": n / len(right), "precision": ok / n}
    return best


def stratified_folds(gold: Sequence[object], folds: int = FOLDS, seed: int = 0) -> np.ndarray:
    """A fold number per row, each gold class spread evenly over the folds (seeded, reproducible)."""
    rng = np.random.default_rng(seed)
    labels = np.array([str(g) for g in gold], dtype=object)
    fold = np.zeros(len(labels), dtype=int)
    for label in sorted(set(labels)):
        members = np.flatnonzero(labels == label)
        rng.shuffle(members)
        fold[members] = (np.arange(len(members)) + rng.integers(folds)) % folds
    return fold


def answer_keys(rows: pd.DataFrame) -> list[str]:
    """The yes/no questions every one of `rows` answered, in the order the judge asked them."""
    answered = [a for a in rows["answers"] if isinstance(a, dict)] if "answers" in rows else []
    if len(answered) < len(rows) or not answered:
        return []
    return [key for key in answered[0] if all(key in a for a in answered)]


def choose_l2(features: np.ndarray, outcome: Sequence[float] | np.ndarray, strata: Sequence[object],
              folds: int = L2_FOLDS, repeats: int = L2_REPEATS, grid: Sequence[float] = L2_GRID) -> float:
    """The ridge penalty of `grid` whose fits on part of these rows have the least log-loss on the
    others (`folds` stratified folds by `strata`, `repeats` fold assignments; ties to the larger):
    a choice made on the training rows alone, by how well the map predicts, not by the target.

    >>> x = np.array([[0.0], [1.0], [2.0], [3.0], [0.5], [2.5], [1.5], [3.5]])
    >>> choose_l2(x, [0, 0, 1, 1, 0, 1, 0, 1], ["f", "f", "p", "p", "f", "p", "f", "p"], folds=2) in L2_GRID
    True
    """
    y = np.asarray(outcome, dtype=float)
    losses = np.zeros(len(grid))
    for repeat in range(repeats):
        fold = stratified_folds(strata, folds, seed=repeat)
        for k in range(folds):
            test = fold == k
            if not test.any() or test.all():
                continue
            for g, l2 in enumerate(grid):
                w = fit_logistic(features[~test], y[~test], l2)
                p = np.clip(_sigmoid(w[0] + features[test] @ w[1:]), 1e-9, 1 - 1e-9)
                losses[g] -= float(np.sum(y[test] * np.log(p) + (1 - y[test]) * np.log(1 - p)))
    best = losses.min()
    return float(max(l2 for l2, loss in zip(grid, losses) if loss <= best + 1e-9))


def default_inputs(table: pd.DataFrame) -> str:
    """`answers` when the labelled rows judged from log-probabilities carry yes/no answers
    (strategies `yesno`, `panel`), else `supports`. `answers+length` (the evidence's length too) is
    chosen with `inputs=` (`citeaudit calibrate --inputs`): on the shipped sets' leave-one-domain-out
    figures it let fewer verdicts stand, fewer of them right (README, "Documents the calibration
    never saw")."""
    rows = judged_rows(table)
    return ANSWERS if answer_keys(rows[rows["method"] == "logprobs"]) else SUPPORTS


def input_keys(keys: list[str], inputs: str) -> list[str]:
    """What a map of the answers to the questions `keys` reads (`calibration.feature_value` keys):
    each question's key first; in inputs `answers+length` also the evidence's length and the first
    question's log-odds times it (a yes to "is the claim true?" may weigh differently after a short
    sentence than after a long section; not the default: README, "Documents the calibration never
    saw")."""
    if inputs == ANSWERS_LENGTH and keys:
        return [*keys, EVIDENCE_CHARS, f"{keys[0]}{PRODUCT}{EVIDENCE_CHARS}"]
    return keys


def fit_standardized(features: np.ndarray, outcome: Sequence[float] | np.ndarray,
                     strata: Sequence[object]) -> tuple[float, np.ndarray, float]:
    """(intercept, slopes, l2) of `fit_logistic` on the features scaled to mean 0 and variance 1,
    the penalty chosen there (`choose_l2`, so it weighs every input alike whatever its units),
    with the weights turned back to the features' own units."""
    mean, scale = features.mean(axis=0), features.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    z = (features - mean) / scale
    l2 = choose_l2(z, outcome, strata)
    w = fit_logistic(z, outcome, l2)
    slopes = w[1:] / scale
    return float(w[0] - slopes @ mean), slopes, l2


def _fit(rows: pd.DataFrame, target: float, model: str = "", strategy: str = "",
         inputs: str = SUPPORTS, documents: pd.Series | None = None) -> Calibration:
    """Map and threshold fitted on `rows` (judged rows read from log-probabilities); with the
    `documents` the rows cite (by index), a map of the answers also keeps the largest share of
    no-to-everything answers among them (`no_share_max`, `Calibration.uncovered`)."""
    if inputs in (ANSWERS, ANSWERS_LENGTH):
        questions = answer_keys(rows)
        keys = input_keys(questions, inputs)
        if not keys:
            raise InputError("the calibration of the yes/no answers needs rows judged by a yes/no strategy "
                             "(yesno, panel); fit this one with inputs `supports`")
        values = [feature_values(keys, a, len(e) if isinstance(e, str) else None)
                  for a, e in zip(rows["answers"], rows["evidence"])]
        if any(v is None for v in values):
            raise InputError(f"the calibration of {inputs} needs every judged row to carry {keys}")
        features = np.array(values, dtype=float)
        a, slopes, l2 = fit_standardized(features, rows["gold_pass"].to_numpy(dtype=float), rows["gold"])
        fitted = Calibration(model=model, strategy=strategy, a=a, b=0.0, threshold=None, target=target,
                             weights={k: float(v) for k, v in zip(keys, slopes)}, l2=l2)
        # the failing word: contradicted against unsupported, on the rows that fail, from the answers alone
        answers = features[:, :len(questions)]  # `input_keys` puts the questions first
        failing = (rows["gold"].isin((Verdict.CONTRADICTED, Verdict.UNSUPPORTED))).to_numpy()
        contradicted = (rows["gold"] == Verdict.CONTRADICTED).to_numpy()[failing]
        if min(contradicted.sum(), (~contradicted).sum()) >= NAMING_MIN:
            named = answers[failing]
            v = fit_logistic(named, contradicted, choose_l2(named, contradicted, contradicted))
            fitted = replace(fitted, name_a=float(v[0]),
                             name_weights={k: float(x) for k, x in zip(questions, v[1:])})
    else:
        a, b = fit_platt(log_odds(rows["p_supports"].to_numpy(dtype=float)), rows["gold_pass"])
        fitted = Calibration(model=model, strategy=strategy, a=a, b=b, threshold=None, target=target)
    if fitted.weights and documents is not None:
        fitted = replace(fitted, no_share_max=largest_no_share(rows["answers"], documents.reindex(rows.index)))
    scores, correct = scored_rows(rows, fitted)
    return replace(fitted, threshold=recommend_threshold(scores, correct, target))


def largest_no_share(answers: pd.Series, documents: pd.Series) -> float | None:
    """The largest share of answers that said no to every question, over the documents with at
    least COVER_MIN answered rows (None when no document has that many).

    >>> no, yes = {"true": 0.2, "false": 0.3}, {"true": 0.7, "false": 0.3}
    >>> largest_no_share(pd.Series([no] * 15 + [yes] * 5 + [no] * 20), pd.Series(["a"] * 20 + ["b"] * 20))
    1.0
    """
    counts = [no_count(part) for _, part in answers.groupby(documents.to_numpy(), sort=True)]
    shares = [said_no / count for said_no, count in counts if count >= COVER_MIN]
    return max(shares) if shares else None


def _blocked(table: pd.DataFrame) -> pd.Series:
    """Rows that go to review whatever their score (a blocking flag), from a routing at 0."""
    routed = route(judge_only(table), 0.0)
    return routed[C.ROUTE] == Route.REVIEW


def cross_validate(table: pd.DataFrame, target: float = DEFAULT_TARGET, folds: int = FOLDS,
                   seed: int = 0, inputs: str | None = None) -> tuple[dict, pd.DataFrame]:
    """Held-out figures of the calibration procedure, and each judged row's held-out outcome.

    For each fold, the map (of `inputs`, default `default_inputs`) and its threshold are fitted on
    the other folds (rows read from log-probabilities) and the held-out rows are routed with them.
    Figures over the judged rows: `judged`, `stand` (verdicts that stand), `coverage` (stand /
    judged), `stand_right`, `precision` (stand_right / stand, NaN when none stands),
    `pass_fail_accuracy_cv` (over every judged row, standing or not), the three-way `accuracy_cv` and
    `balanced_accuracy_cv` (the failing word named by the fold's calibration when it names
    failures) and the folds' thresholds.
    """
    labelled = _labelled(table)
    rows = judged_rows(table)
    inputs = inputs or default_inputs(table)
    blocked = _blocked(labelled).reindex(rows.index)
    fold = stratified_folds(rows["gold"], folds, seed)
    held = pd.DataFrame(index=rows.index, columns=["fold", "score", "threshold", "stand", "right", "verdict"],
                        dtype=object)
    thresholds = []
    for k in range(folds):
        test = fold == k
        if not test.any():
            continue
        train = rows[~test & (rows["method"] == "logprobs").to_numpy()]
        fitted = _fit(train, target, inputs=inputs) if not train.empty else None
        t = fitted.threshold if fitted is not None else None
        thresholds.append(t)
        verdicts, scores = outcomes(rows[test], fitted)
        right = pass_fail_right(verdicts, rows.loc[test, "gold"])
        for i, verdict, score, ok in zip(rows.index[test], verdicts, scores, right):
            held.loc[i] = [k, float(score), t, stands(verdict, score, t, bool(blocked.loc[i])), bool(ok), verdict]
    stand = held["stand"].astype(bool)
    right_rows = held["right"].astype(bool)
    stand_right = int((stand & right_rows).sum())
    figures = {
        "folds": folds,
        "judged": len(rows),
        "stand": int(stand.sum()),
        "coverage": float(stand.mean()) if len(rows) else float("nan"),
        "stand_right": stand_right,
        "precision": stand_right / int(stand.sum()) if stand.any() else float("nan"),
        "pass_fail_accuracy_cv": float(right_rows.mean()) if len(rows) else float("nan"),
        **{f"{name}_cv": value for name, value in _three_way(held["verdict"], rows["gold"]).items()},
        "fold_thresholds": [None if t is None else round(t, 2) for t in thresholds],
    }
    return figures, held


def _three_way(verdicts: pd.Series, gold: pd.Series) -> dict:
    """Accuracy and balanced accuracy (mean recall of verified, contradicted, unsupported) over the
    rows whose gold verdict is one of those three.

    >>> _three_way(pd.Series(["verified", "verified", "unsupported"]),
    ...            pd.Series(["verified", "contradicted", "unsupported"]))
    {'accuracy': 0.6666666666666666, 'balanced_accuracy': 0.6666666666666666}
    """
    keep = gold.isin(LABELS)
    v, g = verdicts[keep], gold[keep]
    recalls = [float((v[g == label] == label).mean()) for label in LABELS if (g == label).any()]
    return {"accuracy": float((v == g).mean()) if len(g) else float("nan"),
            "balanced_accuracy": float(np.mean(recalls)) if recalls else float("nan")}


def strategy_metrics(table: pd.DataFrame) -> dict:
    """How well the model's verdicts match the gold ones over the judged rows (no threshold).

    `accuracy` and `balanced_accuracy` (the mean recall of verified, contradicted and unsupported)
    are over judged rows whose gold verdict is one of those three; `majority_balanced_accuracy` is
    what always answering one class scores (1/3 with three classes present); `pass_fail_accuracy`
    over every judged row; `auroc` of P(supports) for gold verified against the rest.
    """
    rows = judged_rows(table)
    three = rows[rows["gold"].isin(LABELS)]
    recalls = [float((three[three["gold"] == label]["verdict"] == label).mean())
               for label in LABELS if (three["gold"] == label).any()]
    positive = rows.loc[rows["gold"] == Verdict.VERIFIED, "p_supports"].dropna().to_numpy()
    negative = rows.loc[rows["gold"] != Verdict.VERIFIED, "p_supports"].dropna().to_numpy()
    if len(positive) and len(negative):
        wins = (positive[:, None] > negative[None, :]).sum() + 0.5 * (positive[:, None] == negative[None, :]).sum()
        auroc = float(wins / (len(positive) * len(negative)))
    else:
        auroc = float("nan")
    return {
        "judged": len(rows),
        "accuracy": float((three["verdict"] == three["gold"]).mean()) if len(three) else float("nan"),
        "balanced_accuracy": float(np.mean(recalls)) if recalls else float("nan"),
        "majority_balanced_accuracy": 1 / len(recalls) if recalls else float("nan"),
        "pass_fail_accuracy": float(rows["correct"].mean()) if len(rows) else float("nan"),
        "auroc": auroc,
    }


def repeated_cross_validation(table: pd.DataFrame, target: float = DEFAULT_TARGET, folds: int = FOLDS,
                              repeats: int = REPEATS, inputs: str | None = None) -> dict:
    """`cross_validate` with `repeats` fold assignments (seeds 0, 1, ...): the mean, spread and
    extremes of coverage and precision over them, and their pooled precision. One assignment of
    171 rows to 5 folds moves precision by a point or two either way; this says how much."""
    runs = [cross_validate(table, target, folds, seed, inputs)[0] for seed in range(repeats)]
    coverage = np.array([r["coverage"] for r in runs], dtype=float)
    precision = np.array([r["precision"] for r in runs], dtype=float)
    balanced = np.array([r["balanced_accuracy_cv"] for r in runs], dtype=float)
    stand = sum(r["stand"] for r in runs)
    return {
        "repeats": repeats,
        "coverage_mean": float(coverage.mean()), "coverage_sd": float(coverage.std()),
        "coverage_min": float(coverage.min()), "coverage_max": float(coverage.max()),
        "precision_mean": float(np.nanmean(precision)), "precision_sd": float(np.nanstd(precision)),
        "precision_min": float(np.nanmin(precision)), "precision_max": float(np.nanmax(precision)),
        "precision_pooled": sum(r["stand_right"] for r in runs) / stand if stand else float("nan"),
        "balanced_accuracy_mean": float(balanced.mean()),
    }


def fit_calibration(table: pd.DataFrame, model: str, strategy: str, target: float = DEFAULT_TARGET,
                    folds: int = FOLDS, sets: Sequence[str] = (), inputs: str | None = None,
                    repeats: int = REPEATS, documents: Sequence[str] | None = None) -> Calibration:
    """Fit the map (of `inputs`, default `default_inputs`) and threshold on every judged row read
    from log-probabilities, with the cross-validated figures of the same procedure attached (seed 0,
    and over `repeats` fold assignments in `cross_validated["repeated"]`; 0 skips those), and in
    `cross_validated["ceiling_in_sample"]` the `coverage_ceiling` of the map on the rows it was
    fitted on (the most that any threshold could let stand at the target there).

    `documents` names the document each row of `table` cites (e.g. its citation file): given, a map
    of the answers keeps what `Calibration.uncovered` compares a new document with."""
    rows = judged_rows(table)
    fit_rows = rows[rows["method"] == "logprobs"]
    if fit_rows.empty:
        raise InputError("no labelled citation was judged from log-probabilities: nothing to calibrate. "
                         "Record the labelled sets with a judge that returns logprobs.")
    inputs = inputs or default_inputs(table)
    by_row = None if documents is None else _aligned(documents, table)
    fitted = _fit(fit_rows, target, model, str(strategy), inputs, by_row)
    figures, _ = cross_validate(table, target, folds, 0, inputs)
    verdicts, scores = outcomes(rows, fitted)  # in sample: the map scores the rows it was fitted on
    figures["ceiling_in_sample"] = coverage_ceiling(pd.DataFrame({
        "verdict": pd.Series(verdicts, index=rows.index, dtype=object), "score": scores,
        "right": pass_fail_right(verdicts, rows["gold"]), "blocked": _blocked(_labelled(table)).reindex(rows.index),
    }, index=rows.index), target)
    figures.update({k: v for k, v in strategy_metrics(table).items() if k != "judged"})
    if repeats:
        figures["repeated"] = repeated_cross_validation(table, target, folds, repeats, inputs)
    return replace(
        fitted,
        fitted_on={"citations": len(_labelled(table)), "judged": len(fit_rows), "sets": list(sets)},
        cross_validated=figures, when=datetime.now(UTC).isoformat(timespec="seconds"),
    )


@dataclass
class StrategyComparison:
    """Several strategies of one model on the same labelled sets, each with its own calibration."""

    tables: dict[str, pd.DataFrame]
    calibrations: dict[str, Calibration]
    target: float = DEFAULT_TARGET

    def figures(self) -> pd.DataFrame:
        """One row per strategy: cross-validated accuracy, balanced accuracy, AUROC of P(supports),
        coverage and precision of the verdicts that stand at the recommended threshold (the first
        fold assignment, then the means over the repeated ones when they were run)."""
        rows = []
        for name, fitted in self.calibrations.items():
            cv = fitted.cross_validated
            rows.append({
                "strategy": name,
                "judged": cv["judged"],
                "accuracy": cv["accuracy_cv"],
                "balanced_accuracy": cv["balanced_accuracy_cv"],
                "auroc": cv["auroc"],
                "threshold": fitted.threshold,
                "coverage": cv["coverage"],
                "precision": cv["precision"],
                "coverage_mean": cv.get("repeated", {}).get("coverage_mean", float("nan")),
                "precision_mean": cv.get("repeated", {}).get("precision_mean", float("nan")),
            })
        return pd.DataFrame(rows).set_index("strategy")

    def grids(self) -> dict[str, pd.DataFrame]:
        """Each strategy's threshold table on its own calibrated score (fitted on the whole set)."""
        return {name: threshold_table(self.tables[name], FINE_GRID, fitted)
                for name, fitted in self.calibrations.items()}

    def figure(self, ax: Axes | None = None) -> Axes:
        """Risk-coverage curves of every strategy on one plot, the recommended thresholds starred."""
        from citeaudit.surfaces.plots import risk_coverage_by_strategy

        marks = {name: fitted.threshold for name, fitted in self.calibrations.items()}
        return risk_coverage_by_strategy(self.grids(), marks, self.target, ax)


def compare_strategies(tables: dict[str, pd.DataFrame], model: str, target: float = DEFAULT_TARGET,
                       folds: int = FOLDS) -> StrategyComparison:
    """Fit a calibration per strategy (`fit_calibration`) over its judged labelled table."""
    calibrations = {name: fit_calibration(table, model, name, target, folds) for name, table in tables.items()}
    return StrategyComparison(dict(tables), calibrations, target)


# ---- leave one domain out -----------------------------------------------------------------------

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
    data = (project_data or config.project_dir() / "data").resolve()
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


def _aligned(labels: Sequence[str] | pd.Series, table: pd.DataFrame) -> pd.Series:
    """Per-row labels as a Series on `table`'s index (a Series is taken by index)."""
    if len(labels) != len(table):
        raise ValueError(f"{len(labels)} labels given for {len(table)} rows")
    return labels if isinstance(labels, pd.Series) else pd.Series(list(labels), index=table.index)


def leave_one_domain_out(table: pd.DataFrame, domains: Sequence[str] | pd.Series, target: float = DEFAULT_TARGET,
                         inputs: str | None = None, documents: Sequence[str] | pd.Series | None = None) -> pd.DataFrame:
    """Each judged row scored by a map and threshold fitted on the other domains only.

    `domains` names each row's domain (aligned with `table`'s rows; a Series by index). For each
    domain, the map (of `inputs`, default `default_inputs`) and its recommended threshold are fitted
    on the judged rows of every other domain read from log-probabilities (`_fit`, the procedure of
    `fit_calibration`), and the domain's rows are scored with them by `route.judge_outcome`. Returns
    one row per judged row: `domain`, `verdict`, `score`, `threshold` (the one fitted without the
    domain), `blocked` (a blocking flag: never stands), `right` (pass or fail right), `gold_pass`,
    `said_no` (1.0 when the model said no to every yes/no question, 0.0 when not, NaN without
    answers), `stand` (at that threshold, by
    `route.stands`). `domain_figures` summarises it. With `documents` (the document each row
    cites), the map fitted without the domain also checks each of the domain's documents
    (`Calibration.uncovered`): a document it does not cover is `blocked`, and `uncovered` says why
    (None otherwise).
    """
    labelled = _labelled(table)
    rows = judged_rows(table)
    row_domains = _aligned(domains, table).reindex(rows.index).astype(str)
    names = sorted(set(row_domains))
    if len(names) < 2:
        raise ValueError(f"leave-one-domain-out needs judged rows of at least two domains, not {names}")
    inputs = inputs or default_inputs(table)
    blocked = _blocked(labelled).reindex(rows.index)
    row_documents = None if documents is None else _aligned(documents, table).reindex(rows.index).astype(str)
    parts = []
    for name in names:
        held_out = (row_domains == name).to_numpy()
        train = rows[~held_out & (rows["method"] == "logprobs").to_numpy()]
        fitted = _fit(train, target, inputs=inputs, documents=row_documents) if not train.empty else None
        t = fitted.threshold if fitted is not None else None
        test = rows[held_out]
        verdicts, scores = outcomes(test, fitted)
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
            "threshold": t,
            "blocked": held_blocked,
            "right": pass_fail_right(verdicts, test["gold"]),
            "gold_pass": test["gold_pass"].astype(bool).to_numpy(),
            "said_no": [float(said_no_to_all(a)) if isinstance(a, dict) and a else float("nan")
                        for a in test["answers"]],
            "uncovered": gaps,
        }, index=test.index))
    held = pd.concat(parts)
    held["stand"] = _standing(held, held["threshold"])
    return held


def _standing(held: pd.DataFrame, thresholds: pd.Series | float | None) -> np.ndarray:
    """Whether each held-out row's verdict stands at its threshold (`route.stands`)."""
    ts = thresholds if isinstance(thresholds, pd.Series) else pd.Series(thresholds, index=held.index, dtype=object)
    return np.array([stands(v, s, None if t is None or pd.isna(t) else float(t), bool(b))
                     for v, s, t, b in zip(held["verdict"], held["score"], ts, held["blocked"])], dtype=bool)


def domain_figures(held: pd.DataFrame, threshold: float | str | None = "own") -> pd.DataFrame:
    """Per domain of `leave_one_domain_out` rows, and over all of them (`all`): `judged`, `failing`
    (gold fails), `threshold`, `stand`, `coverage` (stand / judged), `stand_right`, `precision`
    (stand_right / stand, NaN when none stands), `false_verified` (standing `verified` verdicts of
    failing citations), `false_verified_share` (of the failing citations) and `said_no_share` (of
    the judged citations, those answered no to every yes/no question; NaN without answers). `threshold` "own" uses
    each domain's threshold fitted without it; a number (or None) uses that one for every domain."""
    own = isinstance(threshold, str)
    stand = held["stand"].to_numpy() if isinstance(threshold, str) else _standing(held, threshold)
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

