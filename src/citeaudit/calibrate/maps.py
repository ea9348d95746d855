"""Fitting the calibration map: Platt scaling on the log-odds of P(supports), or a ridge logistic
regression on the log-odds of every answer, and the recommended threshold on the mapped score. Pure
functions, no model calls; `calibrate.fit.fit_calibration` is the entry point.

Written here although scikit-learn has them: the logistic fit (`fit_logistic`: its
`LogisticRegression` fits the same map, too slowly for the thousands of small fits the penalty's
choice takes) and the folds (`stratified_folds`: `StratifiedKFold` draws other ones, which would
move the documented figures); and what it has no counterpart for: the threshold search
(`recommend_threshold`), the ceiling (`coverage_ceiling`), the penalty chosen by held-out log-loss
against the labels (`choose_l2`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from citeaudit import table as C
from citeaudit.calibrate.scoring import FINE_GRID, judge_only, judged_rows, scored_rows, standing_mask
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
)
from citeaudit.decide.routing import route
from citeaudit.errors import InputError
from citeaudit.table import Route, Verdict

FOLDS = 10  # each map fitted on 90% of the rows: closer to the shipped one, fitted on all of them
# ridge penalties on the weights of the answers' log-odds (correlated inputs, few labels): each fit
# takes the one whose fits on part of its rows predict the rest best (`choose_l2`)
L2_GRID = (0.0, 0.1, 0.3, 1.0, 3.0)
L2_FOLDS, L2_REPEATS = 5, 2
NAMING_MIN = 5  # a failing word is calibrated when at least this many of each failing kind were judged


def _smoothed_targets(y: np.ndarray, train: np.ndarray | None = None) -> np.ndarray:
    """Platt's targets, F × n: (N₊ + 1)/(N₊ + 2) for a positive, 1/(N₋ + 2) for a negative, N
    counted over the rows of each fit (`train`, an F × n mask; default one fit on every row)."""
    train = np.ones((1, len(y)), dtype=bool) if train is None else train
    n_pos = (train * y).sum(axis=1, keepdims=True)
    n_neg = train.sum(axis=1, keepdims=True) - n_pos
    return np.where(y > 0.5, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))


def fit_logistic(features: Sequence[Sequence[float]] | np.ndarray, outcome: Sequence[float] | np.ndarray,
                 l2: float = 0.0, iterations: int = 100) -> np.ndarray:
    """Weights, intercept first, of P(y = 1 | x) = 1 / (1 + exp(-(w₀ + w·x))) for rows x of `features`.

    Newton's method on the log-loss against Platt's smoothed targets (so a perfectly separated set
    gives finite weights), plus l2·|w|²/2 on the slopes (not the intercept). Non-finite weights
    (a degenerate set) give the smoothed base rate: slopes 0.

    Not scikit-learn's `LogisticRegression`, though it fits the same map: each row twice (a
    positive weighted by its target t, a negative weighted by 1 - t), C = 1/l2 (C = inf when l2 = 0),
    solver `newton-cholesky` (intercept unpenalized), tol 1e-10, gave P within 4e-10 of these fits
    and refitted the shipped calibrations with every threshold and figure unchanged (weights within
    1e-9 relative). But it spends a few milliseconds checking its inputs on each fit, and a strategy
    of yes/no answers takes about 20,000 (`choose_l2` in every fold of 21 fold assignments): here
    `calibrate` of `yesno` took 219 s instead of 68 (past the 120 s the documentation's tests allow a
    command), `make calibrate-qwen` 14 minutes instead of 5.5.

    >>> w = fit_logistic([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [3.0, 0.0]], [0, 0, 1, 1])
    >>> w.shape, bool(w[1] > 0)
    ((3,), True)
    """
    x = np.asarray(features, dtype=float)
    x = x[:, None] if x.ndim == 1 else x
    y = np.asarray(outcome, dtype=float)
    if len(x) == 0:
        raise ValueError("no judged row to fit a calibration on")
    every = np.ones((1, len(x)), dtype=bool)  # one fit, on every row
    design = np.column_stack([np.ones(len(x)), x])
    return _newton(design, every, _smoothed_targets(y, every), l2, None, iterations)[0]


def _newton(design: np.ndarray, train: np.ndarray, target: np.ndarray, l2: float, start: np.ndarray | None,
            iterations: int = 100) -> np.ndarray:
    """F fits of `fit_logistic` at once, one per row of `train` (F × n booleans): fit f on the rows
    of `design` (a column of ones, then the features) where train[f] is true, against its smoothed
    targets target[f]. Each starts from start[f] (the weights of a fit with another penalty on the
    same rows) or from its base rate; Newton's method converges to the same weights from either,
    and a fit ends when its step is under 1e-10 (the others go on). A fit with non-finite weights
    (a degenerate set) gives its base rate: slopes 0. Returns F × (1 + features) weights.

    One call for the F fits, not F calls: the penalty's choice (`choose_l2`) fits 10 fold
    assignments of the same rows at each penalty, thousands of fits of a few rows and inputs each,
    where numpy's per-call cost, not the arithmetic, is the time."""
    weights = train.astype(float)
    base = (weights * target).sum(axis=1) / weights.sum(axis=1)
    prior = np.zeros((len(train), design.shape[1]))
    prior[:, 0] = np.log(base / (1 - base))
    penalty = np.full(design.shape[1], float(l2))
    penalty[0] = 0.0
    ridge = np.diag(penalty + 1e-9)  # the Hessian's constant part
    w = prior.copy() if start is None else start.copy()
    going = np.ones(len(train), dtype=bool)
    n, d = design.shape
    pairs = (design[:, :, None] * design[:, None, :]).reshape(n, d * d)  # x_i·x_j of each row: the Hessian's terms
    for _ in range(iterations):
        fits = np.flatnonzero(going)
        if not len(fits):
            break
        mine, used = w[fits], weights[fits]
        p = _sigmoid(mine @ design.T)
        gradient = (used * (p - target[fits])) @ design + penalty * mine
        hessian = ((used * p * (1 - p)) @ pairs).reshape(len(fits), d, d) + ridge  # one product for the F fits
        step = np.linalg.solve(hessian, gradient[..., None])[..., 0]
        w[fits] = mine - step
        going[fits] = np.abs(step).max(axis=1) >= 1e-10
    broken = ~np.all(np.isfinite(w), axis=1)
    w[broken] = prior[broken]
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
        stand = standing_mask(scored, t)
        n, ok = int(stand.sum()), int((stand & right).sum())
        if n and ok / n >= target and (best is None or n > best["stand"]):
            best = {"threshold": float(t), "judged": len(right), "stand": n, "stand_right": ok,
                    "coverage": n / len(right), "precision": ok / n}
    return best


def stratified_folds(gold: Sequence[object], folds: int = FOLDS, seed: int = 0) -> np.ndarray:
    """A fold number per row, each gold class spread evenly over the folds (seeded, reproducible).

    Not `sklearn.model_selection.StratifiedKFold`: its folds are stratified the same way, but it
    draws another assignment (and gives each class's leftover rows to the first folds, where this
    starts each class at a random fold), and the documented cross-validated figures are those of
    these assignments. Refitted with StratifiedKFold(shuffle=True, random_state=seed), the first
    assignment moved by up to 2 points (choice: 25 of 171 verdicts stand, 28; examples: 93.7% of
    the standing verdicts right, 95.7%), one assignment's noise rather than a better estimate
    (the means over 20 assignments moved by a third of a point at most), so the figures stay these.

    >>> stratified_folds(["v"] * 4 + ["c"] * 2, folds=2).tolist()
    [0, 1, 1, 0, 1, 0]
    """
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
    held = np.array([fold == k for fold in (stratified_folds(strata, folds, seed=r) for r in range(repeats))
                     for k in range(folds)]).reshape(-1, len(y))
    held = held[held.any(axis=1) & ~held.all(axis=1)]  # a fold that holds no row, or every row, scores nothing
    if not len(held):
        return float(max(grid))
    train = ~held
    design = np.column_stack([np.ones(len(y)), features])
    target = _smoothed_targets(y, train)
    losses = np.zeros(len(grid))
    w = None
    for g, l2 in enumerate(grid):  # each fit starts from the last: fewer steps to the same weights
        w = _newton(design, train, target, l2, w)
        p = np.clip(_sigmoid(w @ design.T), 1e-9, 1 - 1e-9)
        loss = -(y * np.log(p) + (1 - y) * np.log(1 - p))
        losses[g] = sum(float(np.sum(loss[f][held[f]])) for f in range(len(held)))
    best = losses.min()
    return float(max(l2 for l2, loss in zip(grid, losses) if loss <= best + 1e-9))


def default_inputs(table: pd.DataFrame) -> str:
    """`answers` when the labelled rows judged from log-probabilities carry yes/no answers
    (strategies `yesno`, `panel`), else `supports`. `answers+length` (the evidence's length too) is
    chosen with `inputs=` (`citeaudit calibrate --inputs`): on the shipped sets' leave-one-domain-out
    figures it let fewer verdicts stand, fewer of them right (docs/measurements/judge-quality.md, "Documents
    the calibration never saw")."""
    rows = judged_rows(table)
    return ANSWERS if answer_keys(rows[rows["method"] == "logprobs"]) else SUPPORTS


def input_keys(keys: list[str], inputs: str) -> list[str]:
    """What a map of the answers to the questions `keys` reads (`calibration.feature_value` keys):
    each question's key first; in inputs `answers+length` also the evidence's length and the first
    question's log-odds times it (a yes to "is the claim true?" may weigh differently after a short
    sentence than after a long section; not the default: docs/measurements/judge-quality.md,
    "Documents the calibration never saw")."""
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


def fit_map(rows: pd.DataFrame, target: float, model: str = "", strategy: str = "",
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


def blocked_rows(table: pd.DataFrame) -> pd.Series:
    """Rows that go to review whatever their score (a blocking flag), from a routing at 0."""
    routed = route(judge_only(table), 0.0)
    return routed[C.ROUTE] == Route.REVIEW
