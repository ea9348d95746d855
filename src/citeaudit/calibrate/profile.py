"""Profiles: the model's map and threshold refitted on your own reviews, the calibration as prior.

An analyst who reviews produces labels on exactly their documents. `fit_profile` turns the current
reviews of audited tables (routed by the model's calibration, the *base*, with the reviews applied:
`Audit.with_reviews`) into a calibration of the same form, a **profile**, that `--profile NAME`
routes with (`decide.calibration.load_profile`).

**Prior: the base calibration's map, by a penalty toward it.** The profile's map is fitted by
maximum a posteriori logistic regression: the weighted log-loss of the reviews plus λ/2·|θ − θ₀|²,
where θ₀ is the base map, on inputs scaled to mean 0 and variance 1 over the reviews (so λ weighs
every parameter alike). Two forms are fitted (`fit_on`): `recalibrate`, an intercept and a scale
of the base map's log-odds (two parameters, θ₀ = (0, 1): the base map itself), and `refit`, the
intercept and a weight per input the base map reads (θ₀ its weights); the form whose held-out
weighted log-loss is lower is kept (ties to `recalibrate`). With few reviews the profile stays
near the base map (λ → ∞ is the base map); with many it follows them. λ is chosen among
`PRIOR_GRID` by the same held-out log-loss (ties to the larger: the prior wins when the reviews
cannot tell). The failing word's map is the base's; the largest no-to-everything share
(`Calibration.uncovered`) becomes the larger of the base's and the reviewed documents', so a
profile covers the documents it was fitted on.

**Selection: inverse-probability weights.** The reviews are not a sample of the audited citations:
waiting citations are the unsure ones, and only spot checks sample the verdicts that stand. The
audited judged citations fall in two strata by the base routing: those that wait (N_w) and those
that stand (N_s). A reviewed waiting citation stands for N_w / n_w waiting citations of its table
(n_w of them reviewed; the analyst's pick among the waiting is taken as random). A reviewed spot
check stands for N_s / n_s standing citations (over all tables: one rate draws them everywhere;
about 1/rate). Weighted so, the reviews estimate the whole audited population: the map is fitted
on it, and the threshold and every figure (standing share, share right, false `verified`) are
weighted shares. An override (a standing verdict reviewed by choice) is no sample of anything: it
informs the map with weight 1 and counts in no share. A stale review (the claim or the evidence
changed since) is left out and listed.

**The promise.** The threshold is the lowest (on `FINE_GRID`) at which the weighted standing reviews
are at least `target` right and the map expects them to be `EXPECT_MARGIN` more (`weighted_threshold`).
The figures are cross-validated on the reviews (stratified folds, repeated: the map, λ and the
threshold fitted on the other folds, the held-out reviews scored), beside the base calibration on
the same reviews. `ProfileFit.problems` says why a profile may not be saved, each with how many
more reviews of which kind it needs: too few reviews, too few passing or failing ones, drawn spot
checks not reviewed, too few cross-validated standing verdicts to check the promise, or a
cross-validated share right below the target. `save_profile` refuses such a profile
(`ProfileRefused`). With enough reviews, when only the last two stand in the way and the reviews
say the base breaks its promise here (its weighted share right below the target), the profile is
instead one that lets nothing stand (threshold None: every verdict to review), which keeps it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

from citeaudit.calibrate.maps import stratified_folds
from citeaudit.calibrate.review_sample import ReviewSample, review_sample
from citeaudit.calibrate.scoring import FINE_GRID, outcomes, pass_fail_right
from citeaudit.decide.calibration import (
    Calibration,
    _sigmoid,
    feature_values,
    log_odds,
    remembered_features,
    save_profile_file,
)
from citeaudit.decide.routing import stands_where
from citeaudit.errors import InputError
from citeaudit.table import Selection, Verdict

PRIOR_GRID = (0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0)  # prior strengths λ, in scaled inputs
PROFILE_FOLDS, PROFILE_REPEATS = 5, 5
MIN_REVIEWS = 50  # usable reviews (waiting and spot checks) before a profile is fitted at all
MIN_CLASS = 5  # reviewed passing and failing citations, each
MIN_STAND = 15  # cross-validated standing reviews (per fold assignment) needed to check the promise
BATCH = 25  # what "review another batch" means in the messages
EXPECT_MARGIN = 0.02  # how far above the target the map must expect the standing reviews to be right
# the cross-validated share right must be the target or more, and its 95% interval must not reach
# further than this below it: a point estimate from a hundred reviews alone let profiles 87-94%
# right held out be saved (`make bench-profiles`, docs/measurements/profiles.md). At the interval's honest
# effective sample size (one fold assignment's), 22 standing reviews all right pass it, or 34 with one wrong
PROMISE_SLACK = 0.10


class ProfileRefused(InputError):
    """A profile whose cross-validated promise does not hold, or whose reviews are too few."""


def _inputs(rows: pd.DataFrame, base: Calibration) -> np.ndarray:
    """The base map's inputs for each row: the log-odds of each answer it weighs, or of P(supports)."""
    if not base.weights:
        return np.asarray(log_odds(rows["p_supports"].to_numpy(dtype=float)), dtype=float)[:, None]
    values = [feature_values(base.weights, a, len(e) if isinstance(e, str) else None)
              for a, e in zip(rows["answers"], rows["evidence"])]
    return np.array(values, dtype=float).reshape(len(rows), len(base.weights))


def _prior(base: Calibration) -> np.ndarray:
    """The base map as parameters: intercept, then a slope per input."""
    slopes = list(base.weights.values()) if base.weights else [base.b]
    return np.array([base.a, *slopes], dtype=float)


def base_logit(rows: pd.DataFrame, base: Calibration) -> np.ndarray:
    """The base map's log-odds of P(pass) for each row (intercept plus weighted inputs)."""
    prior = _prior(base)
    return prior[0] + _inputs(rows, base) @ prior[1:]


def fit_toward(x: np.ndarray, y: np.ndarray, w: np.ndarray, prior: np.ndarray, strength: float,
               iterations: int = 50) -> np.ndarray:
    """Intercept and slopes of the weighted logistic regression of `y` on `x` penalized by
    strength/2·|θ − prior|² on the inputs scaled to mean 0, variance 1 (weighted); returned in the
    inputs' own units. `strength` → ∞ gives `prior`.

    >>> x = np.array([[-2.0], [-1.0], [1.0], [2.0]]); y = np.array([0.0, 0.0, 1.0, 1.0]); w = np.ones(4)
    >>> [round(float(v), 3) for v in fit_toward(x, y, w, np.array([0.5, 0.1]), 1e9)]
    [0.5, 0.1]
    >>> bool(fit_toward(x, y, w, np.array([0.0, 0.0]), 0.3)[1] > 1.0)
    True
    """
    return _fit_toward_many(x, y, w, np.ones((1, len(y)), dtype=bool), prior, np.array([float(strength)]),
                            iterations)[0]


def _fit_toward_many(x: np.ndarray, y: np.ndarray, w: np.ndarray, train: np.ndarray, prior: np.ndarray,
                     strengths: np.ndarray, iterations: int = 50) -> np.ndarray:
    """F fits of `fit_toward` at once, F × (1 + inputs) parameters: fit f on the rows where
    train[f] (an F × n mask) with strength strengths[f], each scaled by its own rows, each ending
    when its own Newton step is under 1e-10. One call for the F fits, not F calls: the strength's
    choice fits every fold at every strength of the grid, small fits whose time is numpy's per-call
    cost, not the arithmetic."""
    weight = np.where(train, w[None, :], 0.0)
    # the data weigh as many rows as there are reviews
    weight = weight * (train.sum(axis=1) / weight.sum(axis=1))[:, None]
    total = weight.sum(axis=1)[:, None]
    mean = weight @ x / total
    scale = np.sqrt(np.einsum("fn,fnd->fd", weight, (x[None] - mean[:, None]) ** 2) / total)
    scale = np.where(scale > 1e-9, scale, 1.0)
    design = np.concatenate([np.ones((len(train), len(y), 1)), (x[None] - mean[:, None]) / scale[:, None]], axis=2)
    theta0 = np.column_stack([prior[0] + mean @ prior[1:], prior[1:] * scale])  # the prior in scaled units
    theta = theta0.copy()
    identity = np.eye(theta.shape[1])
    going = np.ones(len(train), dtype=bool)
    for _ in range(iterations):
        fits = np.flatnonzero(going)
        if not len(fits):
            break
        rows, mine, used, strength = design[fits], theta[fits], weight[fits], strengths[fits]
        p = _sigmoid(np.clip(np.einsum("fnk,fk->fn", rows, mine), -500, 500))
        gradient = np.einsum("fnk,fn->fk", rows, used * (p - y)) + strength[:, None] * (mine - theta0[fits])
        hessian = np.einsum("fni,fn,fnj->fij", rows, used * p * (1 - p), rows) + strength[:, None, None] * identity
        step = np.linalg.solve(hessian, gradient[..., None])[..., 0]
        theta[fits] = mine - step
        going[fits] = np.abs(step).max(axis=1) >= 1e-10
    slopes = theta[:, 1:] / scale
    return np.column_stack([theta[:, 0] - (slopes * mean).sum(axis=1), slopes])


def _log_loss(theta: np.ndarray, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    p = np.clip(_sigmoid(np.clip(theta[0] + x @ theta[1:], -500, 500)), 1e-9, 1 - 1e-9)
    return float(-(w * (y * np.log(p) + (1 - y) * np.log(1 - p))).sum())


def choose_strength(x: np.ndarray, y: np.ndarray, w: np.ndarray, prior: np.ndarray, strata: Sequence[object],
                    grid: Sequence[float] = PRIOR_GRID, folds: int = PROFILE_FOLDS) -> tuple[float, float]:
    """The prior strength of `grid` whose fits on part of the reviews have the least weighted
    log-loss on the others (stratified folds; ties, within 1e-9, to the stronger prior), and that loss."""
    fold = stratified_folds(strata, min(folds, max(2, len(y) // 2)), seed=0)
    held = [fold == k for k in sorted(set(fold))]
    held = [test for test in held if not test.all() and (w[~test] > 0).any()]
    losses = np.zeros(len(grid))
    if held:
        tests = np.repeat(np.array(held), len(grid), axis=0)  # fold by fold, each at every strength
        thetas = _fit_toward_many(x, y, w, ~tests, prior, np.tile(np.asarray(grid, dtype=float), len(held)))
        for i, (theta, test) in enumerate(zip(thetas, tests)):
            losses[i % len(grid)] += _log_loss(theta, x[test], y[test], w[test])
    best = losses.min()
    return float(max(s for s, loss in zip(grid, losses) if loss <= best + 1e-9)), float(best)


def _recalibrated(base: Calibration, theta: np.ndarray) -> np.ndarray:
    """The parameters of the base map recalibrated: log-odds theta[0] + theta[1]·(the base's log-odds)."""
    prior = _prior(base)
    return np.concatenate([[theta[0] + theta[1] * prior[0]], theta[1] * prior[1:]])


def _as_calibration(base: Calibration, theta: np.ndarray) -> Calibration:
    if base.weights:
        return replace(base, a=float(theta[0]), weights={k: float(v) for k, v in zip(base.weights, theta[1:])},
                       threshold=None)
    return replace(base, a=float(theta[0]), b=max(0.0, float(theta[1])), threshold=None)


def scored(rows: pd.DataFrame, calibration: Calibration) -> pd.DataFrame:
    """Each reviewed row's verdict, routing score and whether it is right on pass or fail under
    `calibration` (the pipeline's scoring, `route.judge_outcome`)."""
    verdicts, scores = outcomes(rows, calibration)
    return pd.DataFrame({"verdict": pd.Series(verdicts, index=rows.index, dtype=object), "score": scores,
                         "right": pass_fail_right(verdicts, rows["gold"])}, index=rows.index)


def weighted_threshold(frame: pd.DataFrame, weight: np.ndarray, blocked: pd.Series, target: float,
                       grid: Sequence[float] = FINE_GRID) -> float | None:
    """The lowest threshold of `grid` above 0.5 at which the weighted standing reviews are at least
    `target` right and the map expects them to be at least `target` + `EXPECT_MARGIN` right (their
    weighted mean score); else None. The margin: a map refitted on about a hundred reviews scores
    its confident verdicts a point or two too high (tests/test_profile.py's synthetic judge), and
    the threshold where a noisy share first crosses the target is a lucky one."""
    right = frame["right"].to_numpy(dtype=float)
    score = frame["score"].to_numpy(dtype=float)
    # `stands_where` at the lowest threshold, once: at any higher one a row stands where it did and its score reaches t
    eligible = stands_where(frame["verdict"], frame["score"], -np.inf, blocked).to_numpy(dtype=bool) & (weight > 0)
    for t in grid:
        if t <= 0.5:
            continue
        stand = eligible & (score >= t)
        mass = weight[stand].sum()
        if mass and (weight[stand] * right[stand]).sum() / mass >= target \
                and (weight[stand] * score[stand]).sum() / mass >= target + EXPECT_MARGIN:
            return float(t)
    return None


def fit_on(rows: pd.DataFrame, base: Calibration, target: float) -> tuple[Calibration, str, float]:
    """The profile's map and weighted threshold fitted on these reviewed rows, the map's form and
    its prior strength. Two forms, each `fit_toward` the base map with the strength
    `choose_strength` picks: `recalibrate` (intercept and scale of the base map's log-odds: two
    parameters) and `refit` (intercept and every input's weight); the one whose held-out weighted
    log-loss is lower is kept (ties to `recalibrate`, the fewer parameters)."""
    y, w = rows["gold_pass"].to_numpy(dtype=float), rows["fit_weight"].to_numpy(dtype=float)
    strata = [f"{g}|{s}" for g, s in zip(rows["gold_pass"], rows["selection"])]
    logit, inputs, identity = base_logit(rows, base)[:, None], _inputs(rows, base), np.array([0.0, 1.0])
    recal_strength, recal_loss = choose_strength(logit, y, w, identity, strata)
    refit_strength, refit_loss = choose_strength(inputs, y, w, _prior(base), strata)
    if refit_loss < recal_loss - 1e-9:
        form, strength, theta = "refit", refit_strength, fit_toward(inputs, y, w, _prior(base), refit_strength)
    else:
        form, strength = "recalibrate", recal_strength
        theta = _recalibrated(base, fit_toward(logit, y, w, identity, recal_strength))
    fitted = _as_calibration(base, theta)
    frame = scored(rows, fitted)
    threshold = weighted_threshold(frame, rows["weight"].to_numpy(dtype=float), rows["blocked"], target)
    return replace(fitted, threshold=threshold), form, strength


def figures(frame: pd.DataFrame, rows: pd.DataFrame, stand: np.ndarray, copies: int = 1) -> dict:
    """Weighted shares over the sampled reviews (overrides weigh 0): `stand` (the standing share of
    the audited citations), `right` (of them, right on pass or fail), `false_verified` (of the failing
    ones, standing `verified`), and the reviews behind each (`n_*`), and `low`-`high`: the 95% Wilson
    interval of `right` at its effective sample size (Σw)²/Σw². `rows` may hold each review `copies`
    times (one per fold assignment of a repeated cross-validation): the same reviews scored again
    are no new sample, so the effective sample size is divided by `copies`."""
    from citeaudit.decide.agreements import wilson_interval

    w = rows["weight"].to_numpy(dtype=float)
    right = frame["right"].to_numpy(dtype=bool)
    failing = ~rows["gold_pass"].to_numpy(dtype=bool)
    verified = (frame["verdict"] == Verdict.VERIFIED).to_numpy()
    sampled, standing = w > 0, stand & (w > 0)
    mass, stand_mass = w[sampled].sum(), w[standing].sum()
    right_share = (w[standing & right].sum() / stand_mass) if stand_mass > 0 else float("nan")
    n_eff = stand_mass ** 2 / (w[standing] ** 2).sum() / copies if stand_mass > 0 else 0.0
    low, high = wilson_interval(round(right_share * n_eff), round(n_eff)) if n_eff >= 1 else (0.0, 1.0)
    fail_mass = w[sampled & failing].sum()
    return {
        "stand": stand_mass / mass if mass > 0 else float("nan"),
        "right": right_share,
        "false_verified": w[standing & verified & failing].sum() / fail_mass if fail_mass > 0 else float("nan"),
        "n_reviews": int(sampled.sum()), "n_stand": int(standing.sum()), "n_stand_right": int((standing & right).sum()),
        "n_false_verified": int((standing & verified & failing).sum()), "low": low, "high": high,
    }


def cross_validate_profile(rows: pd.DataFrame, base: Calibration, target: float, folds: int = PROFILE_FOLDS,
                           repeats: int = PROFILE_REPEATS) -> dict:
    """The profile procedure's figures on reviews it was not fitted on: per fold assignment (seeds
    0..repeats-1), each fold's reviews scored by the map and threshold fitted on the others; the
    figures of every assignment pooled (`figures`; counts are per assignment, averaged)."""
    strata = [f"{g}|{s}" for g, s in zip(rows["gold_pass"], rows["selection"])]
    frames, stands = [], []
    for seed in range(repeats):
        fold = stratified_folds(strata, folds, seed)
        frame = pd.DataFrame(index=rows.index, columns=["verdict", "score", "right"], dtype=object)
        stand = np.zeros(len(rows), dtype=bool)
        for k in range(folds):
            test = fold == k
            if not test.any():
                continue
            train = rows[~test]
            if (train["weight"] > 0).sum() < 2 or train["gold_pass"].nunique() < 2:
                fitted = replace(base)
            else:
                fitted, _, _ = fit_on(train, base, target)
            part = scored(rows[test], fitted)
            frame.loc[part.index] = part
            stand[test] = stands_where(part["verdict"], part["score"], fitted.threshold,
                                       rows.loc[test, "blocked"]).to_numpy(dtype=bool)
        frame["score"] = frame["score"].astype(float)
        frame["right"] = frame["right"].astype(bool)
        frames.append(frame)
        stands.append(stand)
    pooled = figures(pd.concat(frames), pd.concat([rows] * repeats), np.concatenate(stands), copies=repeats)
    for key in ("n_reviews", "n_stand", "n_stand_right", "n_false_verified"):
        pooled[key] = pooled[key] / repeats
    pooled["repeats"], pooled["folds"] = repeats, folds
    return pooled


def base_figures(rows: pd.DataFrame, base: Calibration) -> dict:
    """The base calibration on the same reviews (nothing fitted): `figures` of the verdicts as the
    audit routed them (the spot checks and overrides stood, the waiting ones did not)."""
    frame = scored(rows, base)
    return figures(frame, rows, (rows["selection"] != Selection.WAITING).to_numpy())


@dataclass(frozen=True)
class ProfileFit:
    """A fitted profile (`profile`, a `Calibration` named in `fitted_on["profile"]`), the base it
    started from, its reviews, the figures before (the base on the reviews) and after (the profile,
    cross-validated on the reviews), and `problems`: why it may not be saved (none: it may)."""

    name: str
    profile: Calibration
    base: Calibration
    sample: ReviewSample
    before: dict
    after: dict
    problems: tuple[str, ...] = ()

    @property
    def saveable(self) -> bool:
        return not self.problems

    def side_by_side(self) -> pd.DataFrame:
        """Before (the base calibration) and after (the profile, cross-validated), as shares of the
        audited citations the reviews stand for: standing share, share right, false `verified`."""
        def column(f: dict) -> list[str]:
            def share(v: float) -> str:
                return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.1%}"
            interval = f" ({f['low']:.0%}-{f['high']:.0%})" if f["n_stand"] else ""
            return [share(f["stand"]), share(f["right"]) + interval,
                    share(f["false_verified"]), f"{f['n_stand']:g}"]
        return pd.DataFrame({"": ["standing share", "share right (95% interval)", "false verified (of the failing)",
                                  "reviews standing (per fold assignment)"],
                             f"before: {self.base.model} / {self.base.strategy}": column(self.before),
                             f"after: profile {self.name} (cross-validated)": column(self.after)})

    def summary(self) -> str:
        """Which reviews the fit used and what was left out, in one line."""
        s = self.sample
        parts = [f"{s.count(Selection.WAITING)} waiting", f"{s.count(Selection.SPOT_CHECK)} spot check(s)",
                 f"{s.count(Selection.OVERRIDE)} override(s) (in the map only)"]
        text = (f"profile {self.name} of {self.base.model} / {self.base.strategy}: {len(s.rows)} current review(s) "
                f"({', '.join(parts)}) of {s.strata['waiting'] + s.strata['standing']} judged citations "
                f"({s.strata['waiting']} waiting, {s.strata['standing']} standing); "
                f"map {self.profile.fitted_on.get('form')} "
                f"(prior strength {self.profile.fitted_on.get('prior_strength')})")
        if s.stale:
            text += (f"; {len(s.stale)} stale review(s) left out (the claim or the evidence changed since: review "
                     f"them again): {', '.join(s.stale[:10])}{' ...' if len(s.stale) > 10 else ''}")
        if self.profile.fitted_on.get("nothing_stands"):
            text += f"; {self.profile.fitted_on['nothing_stands']}"
        out = {k: v for k, v in s.left_out.items() if v}
        if out:
            text += "; also left out: " + ", ".join(f"{v} {k}" for k, v in out.items())
        return text


def _needed(fit_rows: pd.DataFrame, sample: ReviewSample, after: dict, threshold: float | None,
            target: float) -> list[str]:
    """Why the profile may not be saved, each with how many more reviews of which kind."""
    problems = []
    usable, unreviewed = sample.usable, sample.unreviewed
    if usable < MIN_REVIEWS:
        problems.append(f"too few reviews: {usable} waiting or spot-checked citations reviewed, at least "
                        f"{MIN_REVIEWS} needed: review {MIN_REVIEWS - usable} more waiting citations"
                        + (f" (only {unreviewed} wait unreviewed in these inputs: add more audited citations of the "
                           "same kind of document)" if unreviewed < MIN_REVIEWS - usable else ""))
    passing = int(fit_rows["gold_pass"].sum())
    for have, kind in ((passing, "passing (verified)"), (len(fit_rows) - passing, "failing")):
        if have < MIN_CLASS:
            problems.append(f"too few {kind} citations among the reviews: {have}, at least {MIN_CLASS} needed: "
                            f"review more waiting citations until {MIN_CLASS - have} more {kind} ones are in")
    drawn_open = sample.strata["spot checks drawn"] - sample.count(Selection.SPOT_CHECK)
    if sample.strata["standing"] and not sample.count(Selection.SPOT_CHECK):
        how = (f"review the {drawn_open} spot check(s) drawn" if drawn_open > 0 else
               "none was drawn: audit with a higher --spot-check rate, then review the spot checks")
        problems.append(f"no reviewed spot check among the {sample.strata['standing']} standing verdicts, so their "
                        f"precision is unmeasured: {how}")
    if problems or threshold is None:  # nothing stands: the promise holds trivially
        return problems
    return why_unchecked(after, usable, target, unreviewed)


def _more(unreviewed: int) -> str:
    """What to review next for a closer check of the promise: waiting citations while some are left,
    then more spot checks (the one sample of the verdicts that stand)."""
    if unreviewed > 0:
        return f"review another {min(BATCH, unreviewed)} waiting citations (and the spot checks drawn) and fit again"
    return ("every waiting citation is reviewed: audit again at twice the --spot-check rate (a higher rate draws every "
            "citation a lower one drew), review the spot checks it adds and fit again")


def why_unchecked(after: dict, usable: int, target: float, unreviewed: int) -> list[str]:
    """Why the profile's threshold is not checked to keep the promise on the reviews (enough of them)."""
    if after["n_stand"] < MIN_STAND:
        share = after["n_stand"] / max(usable, 1)
        more = math.ceil(MIN_STAND / share) - usable if share > 0 else None
        how = (_more(0) if unreviewed <= 0 else
               f"review about {max(BATCH, more)} more waiting citations" if more is not None and more <= 150 else
               "few of your citations stand under any threshold that keeps it, so more reviews may not change that")
        return [f"too few standing verdicts to check the promise: {after['n_stand']:g} reviewed citations stand in "
                f"cross-validation, at least {MIN_STAND} needed: {how}"]
    if not after["right"] >= target:
        return [f"the promise does not hold: cross-validated on your reviews, {after['right']:.1%} of the standing "
                f"verdicts are right, below {target:.0%}: {_more(unreviewed)}, or keep the calibration in force "
                "(raise --threshold if its spot checks fall short too)"]
    if not after["low"] >= target - PROMISE_SLACK:
        return [f"the promise is not checked closely enough: cross-validated on your reviews, {after['right']:.1%} of "
                f"the standing verdicts are right, but its 95% interval reaches down to {after['low']:.1%}, more than "
                f"{PROMISE_SLACK:.0%} below {target:.0%}: {_more(unreviewed)}"]
    return []


@remembered_features()
def fit_profile(tables: Mapping[str, pd.DataFrame], base: Calibration | None, name: str,
                target: float | None = None, folds: int = PROFILE_FOLDS, repeats: int = PROFILE_REPEATS) -> ProfileFit:
    """Fit profile `name` on the current reviews of `tables` (settled audit tables, one per
    document, routed by `base`, the model's calibration, with the reviews applied); see the module
    doc. `target` defaults to the base's. Nothing is saved (`save_profile`)."""
    from citeaudit.settings.values import check_profile_name

    check_profile_name(name)
    if base is None:
        raise InputError("a profile starts from the model's calibration (its prior), and this model has none: fit "
                         "one first (`citeaudit judge-setup` or `citeaudit calibrate`)")
    target = base.target if target is None else target
    sample = review_sample(tables, base)
    rows = sample.rows
    before = base_figures(rows, base) if len(rows) else figures(
        rows.assign(verdict=[], score=[], right=[]), rows, np.zeros(0, dtype=bool))
    enough = (rows["weight"] > 0).sum() >= 2 and rows["gold_pass"].nunique() == 2 if len(rows) else False
    if enough:
        fitted, form, strength = fit_on(rows, base, target)
        after = cross_validate_profile(rows, base, target, folds, repeats)
    else:
        fitted, form, strength, after = base, "base", float("inf"), dict(before)
    no_share = base.no_share_max if base.no_share_max is None or sample.no_share is None else \
        max(base.no_share_max, sample.no_share)
    profile = replace(fitted, method="profile", no_share_max=no_share, target=target,
                      when=datetime.now(UTC).isoformat(timespec="seconds"),
                      fitted_on={"profile": name, "reviews": len(rows),
                                 "selection": {str(s): sample.count(s) for s in Selection},
                                 "prior": f"{base.model} / {base.strategy} ({base.when or 'shipped'})",
                                 "form": form, "prior_strength": strength, "stale": len(sample.stale),
                                 "strata": sample.strata},
                      cross_validated={"before": before, "after": after})
    problems = tuple(_needed(rows, sample, after, fitted.threshold if enough else None, target)) if enough else \
        tuple(_needed(rows, sample, after, None, target)) or ("too few reviews to fit anything",)
    if enough and problems and problems == tuple(why_unchecked(after, sample.usable, target, sample.unreviewed)) \
            and before["n_stand"] and before["right"] < target:
        # enough reviews, and they say the calibration in force breaks its promise here, but no threshold of the
        # profile is checked to keep it: the profile lets nothing stand (everything to review) until one is
        why = (f"nothing stands: the calibration in force is {before['right']:.1%} right on your reviews, below "
               f"{target:.0%}, and no threshold of the profile keeps the promise in cross-validation ({problems[0]})")
        profile = replace(profile, threshold=None, fitted_on={**profile.fitted_on, "nothing_stands": why})
        problems = ()
    return ProfileFit(name, profile, base, sample, before, after, problems)


def save_profile(fit: ProfileFit, folder: Path) -> Path:
    """Write the profile to `<folder>/profiles/<name>.json` (the user cache), or raise
    `ProfileRefused` with what it needs when its promise does not hold or its reviews are too few."""
    if fit.problems:
        raise ProfileRefused(f"profile {fit.name} not saved: " + "; ".join(fit.problems) + ".")
    return save_profile_file(fit.name, fit.profile, folder)
