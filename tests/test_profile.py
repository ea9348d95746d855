"""Profiles fitted on reviews (`calibrate.profile`), tested on a synthetic judge with known truth.

The synthetic judge answers three yes/no questions. A citation passes with probability 0.4; the
log-odds of its "true" answer is drawn from N(+2, 2²) when it passes and N(-2, 2²) when it
fails, and the other two answers carry no information beyond it. So the true map is known:
P(pass | answers) = logistic(ln(0.4/0.6) + (4 / 2²)·lo(true)), and nothing else. The base
calibration (the prior) is wrong the way a calibration fitted on other documents is: its
intercept is too pessimistic and its slope too flat, so failing verdicts stand that should not,
and its promise breaks (about 92% of its standing verdicts right; the true map at its own
threshold lets about 48% stand at 97%).
"""

import math
from typing import cast

import numpy as np
import pandas as pd
import pytest

from citeaudit import table as C
from citeaudit.calibrate.profile import (
    MIN_REVIEWS,
    ProfileRefused,
    fit_profile,
    fit_toward,
    review_sample,
    save_profile,
)
from citeaudit.decide.calibration import Calibration, load_profile
from citeaudit.decide.decision import apply_reviews
from citeaudit.decide.reviews import Review, row_fingerprint
from citeaudit.decide.routing import route
from citeaudit.errors import InputError
from citeaudit.pipeline.run import AuditRun
from citeaudit.settings.options import AuditOptions
from citeaudit.table import Selection, State

SD = 2.0
TRUE_A, TRUE_SLOPE = math.log(0.4 / 0.6), 4 / SD ** 2
BASE = Calibration(model="synthetic", strategy="panel", a=-2.0, b=0.0, threshold=0.92,
                   weights={"true": 0.6, "false": -0.3, "contradict": 0.0})


def _logistic(z):
    return 1.0 / (1.0 + np.exp(-z))


def synthetic_table(n: int, seed: int, prefix: str = "c") -> pd.DataFrame:
    """`n` judged citations of the synthetic judge, with their gold verdict in `expected`."""
    rng = np.random.default_rng(seed)
    passes = rng.random(n) < 0.4
    true = rng.normal(np.where(passes, 2.0, -2.0), SD)
    false = -0.5 * true + rng.normal(0, 1, n)
    contradict = rng.normal(0, 1, n)
    rows = []
    for i in range(n):
        supports = float(_logistic(true[i]))
        probabilities = {"supports": supports, "contradicts": (1 - supports) / 2, "says_nothing": (1 - supports) / 2}
        rows.append({
            C.ID: f"{prefix}{i}", C.KIND: "quote", C.CLAIM: f"claim {prefix}{i}", C.QUOTE: "q", C.CITED_SECTION: "1",
            C.EXPECTED: "verified" if passes[i] else ("contradicted" if i % 2 else "unsupported"),
            C.QUOTE_STATUS: "exact", C.FOUND_SECTION: "1", C.SECTION_MATCH: True, C.EVIDENCE: f"evidence {prefix}{i}",
            C.FABRICATED_REASON: None, C.RELATION: "supports" if supports >= 0.5 else "says_nothing",
            C.PROBABILITIES: probabilities,
            C.ANSWERS: {"true": float(_logistic(true[i])), "false": float(_logistic(false[i])),
                        "contradict": float(_logistic(contradict[i]))},
            C.CONFIDENCE: max(supports, 1 - supports), C.METHOD: "logprobs", C.MODEL: "synthetic", C.ERROR: None,
        })
    return pd.DataFrame(rows)


def routed(table: pd.DataFrame, calibration: Calibration, rate: float, reviews=()) -> pd.DataFrame:
    return apply_reviews(route(table, calibration.route_threshold, calibration), list(reviews), rate)


def analyst(table: pd.DataFrame, waiting_share: float = 1.0, overrides: int = 0) -> list[Review]:
    """The gold label plays the human: every spot check, a share of the waiting citations (the first
    ones), and `overrides` standing verdicts chosen by hand."""
    waiting = table[table[C.STATE] == State.WAITING]
    chosen = [*table[table[C.SPOT_CHECK].astype(bool)].index, *waiting.index[:round(len(waiting) * waiting_share)]]
    standing = table[(table[C.STATE] == State.STANDS) & ~table[C.SPOT_CHECK].astype(bool)]
    chosen += list(standing.index[:overrides])
    return [Review(citation_id=table.at[i, C.ID], fingerprint=cast(str, row_fingerprint(table.loc[i])),
                   verdict=table.at[i, C.EXPECTED]) for i in chosen]


def held_out(table: pd.DataFrame, calibration: Calibration) -> tuple[float, float]:
    """Share of judged citations that stand, and the share of those right on pass or fail."""
    out = routed(table, calibration, 0.0)
    stand = out[C.STATE] == State.STANDS
    right = (out[C.VERDICT] == "verified") == (out[C.EXPECTED] == "verified")
    return float(stand.mean()), float(right[stand].mean()) if stand.any() else float("nan")


def reviewed_table(seed: int, rate: float = 0.2, waiting_share: float = 1.0) -> pd.DataFrame:
    """400 synthetic citations routed by the base, the analyst's reviews applied."""
    first = routed(synthetic_table(400, seed), BASE, rate)
    return routed(synthetic_table(400, seed), BASE, rate, analyst(first, waiting_share))


@pytest.fixture(scope="module")
def reviewed():
    return reviewed_table(2)


@pytest.fixture(scope="module")
def fresh():
    return synthetic_table(3000, 99)


@pytest.fixture(scope="module")
def fitted(reviewed):
    """The profile fitted on `reviewed` (a second or so: the tests that read it share it)."""
    return fit_profile({"doc": reviewed}, BASE, "synthetic")


def test_the_base_is_wrong_the_way_the_test_needs():
    stand, right = held_out(synthetic_table(2000, 9), BASE)
    assert stand > 0.3 and right < 0.93  # the promise of 95% breaks on these documents


def test_weights_stand_for_the_strata(reviewed):
    sample = review_sample({"doc": reviewed}, BASE)
    rows = sample.rows
    spot = rows[rows["selection"] == Selection.SPOT_CHECK]
    waiting = rows[rows["selection"] == Selection.WAITING]
    assert len(spot) and len(waiting)
    # a spot check stands for N_s / n_s standing verdicts (about 1 / rate), a waiting review for one waiting one
    assert spot["weight"].iloc[0] == pytest.approx(sample.strata["standing"] / len(spot))
    assert 3 < spot["weight"].iloc[0] < 8
    assert (waiting["weight"] == 1.0).all()
    assert rows["weight"].sum() == pytest.approx(sample.strata["standing"] + sample.strata["waiting"])


def test_half_the_waiting_reviewed_weigh_two_each():
    first = routed(synthetic_table(200, 3), BASE, 0.2)
    sample = review_sample({"doc": routed(synthetic_table(200, 3), BASE, 0.2, analyst(first, 0.5))}, BASE)
    waiting = sample.rows[sample.rows["selection"] == Selection.WAITING]
    assert waiting["weight"].iloc[0] == pytest.approx(sample.strata["waiting"] / len(waiting))
    assert 1.9 < waiting["weight"].iloc[0] < 2.1


def test_the_profile_moves_toward_the_truth_and_keeps_the_promise_held_out(fitted, fresh):
    fit = fitted
    assert fit.saveable, fit.problems
    profile = fit.profile
    assert abs(profile.a - TRUE_A) < abs(BASE.a - TRUE_A) / 2
    stand, right = held_out(fresh, profile)
    assert stand > 0.3 and right >= 0.95
    # the cross-validated figures it was judged by are close to what new citations show
    assert fit.after["right"] >= profile.target and fit.after["stand"] == pytest.approx(stand, abs=0.1)


@pytest.mark.slow
def test_over_eight_analysts_no_saved_profile_breaks_the_promise_by_much(fresh):
    """The property behind the method, on eight independent samples of reviews: most profiles are
    saved, each saved one is right at least 93% of the time on new citations and more often than
    the base, and on average they keep the 95% promise. (Not every one does: a promise checked on
    a few hundred reviews holds on average, and the benchmark reports where it fell short.)"""
    _, base_right = held_out(fresh, BASE)
    outcomes = []
    for seed in range(1, 9):
        fit = fit_profile({"doc": reviewed_table(seed)}, BASE, "synthetic", repeats=2)
        if fit.saveable:
            outcomes.append(held_out(fresh, fit.profile))
    assert len(outcomes) >= 5
    rights = [right for stand, right in outcomes if stand > 0]
    assert all(right >= 0.93 and right > base_right for right in rights), outcomes
    assert np.mean(rights) >= 0.95, outcomes


def test_the_before_figures_are_the_base_routing_weighted(fitted, fresh):
    fit = fitted
    truth_stand, truth_right = held_out(fresh, BASE)
    # from the spot checks (weighted) and the waiting reviews: an estimate of the base's standing share
    assert fit.before["stand"] == pytest.approx(truth_stand, abs=0.06)
    assert fit.before["low"] <= truth_right <= fit.before["high"]


def test_without_weights_the_precision_estimate_is_biased():
    """What the weights are for: overrides (standing verdicts reviewed by choice, here the most
    doubtful) counted as a sample would pull the estimate of the standing precision down."""
    first = routed(synthetic_table(400, 5), BASE, 0.05)
    table = routed(synthetic_table(400, 5), BASE, 0.05, analyst(first, 1.0, overrides=0))
    fit = fit_profile({"doc": table}, BASE, "synthetic", repeats=1)  # `before` only: one fold assignment will do
    sample = fit.sample
    assert sample.count(Selection.OVERRIDE) == 0
    spot = sample.rows[sample.rows["selection"] == Selection.SPOT_CHECK]
    # unweighted, the reviews are mostly waiting ones: their standing share says little of the base's
    unweighted_stand = len(spot) / len(sample.rows)
    assert fit.before["stand"] > 2 * unweighted_stand


def test_overrides_inform_the_map_and_count_in_no_share():
    first = routed(synthetic_table(400, 1), BASE, 0.2)
    table = routed(synthetic_table(400, 1), BASE, 0.2, analyst(first, overrides=5))
    sample = review_sample({"doc": table}, BASE)
    overrides = sample.rows[sample.rows["selection"] == Selection.OVERRIDE]
    assert len(overrides) == 5
    assert (overrides["weight"] == 0).all() and (overrides["fit_weight"] == 1).all()


def test_stale_reviews_are_listed_and_left_out(reviewed):
    table = synthetic_table(400, 1)
    first = routed(table, BASE, 0.2)
    reviews = analyst(first)
    changed = table.copy()
    changed.loc[changed[C.ID] == reviews[0].citation_id, C.EVIDENCE] = "the evidence was edited since"
    fit = fit_profile({"doc": routed(changed, BASE, 0.2, reviews)}, BASE, "synthetic", repeats=1)
    assert fit.sample.stale == (reviews[0].citation_id,)
    assert len(fit.sample.rows) == len(reviews) - 1
    assert "1 stale review(s) left out" in fit.summary()


def test_too_few_reviews_are_refused_with_what_is_needed(tmp_path):
    first = routed(synthetic_table(60, 4), BASE, 0.2)
    reviews = analyst(first)[:12]
    fit = fit_profile({"doc": routed(synthetic_table(60, 4), BASE, 0.2, reviews)}, BASE, "few")
    assert not fit.saveable
    with pytest.raises(ProfileRefused, match=rf"at least {MIN_REVIEWS} needed: review \d+ more waiting citations"):
        save_profile(fit, tmp_path)
    assert not (tmp_path / "profiles").exists()


def test_unreviewed_spot_checks_are_asked_for(tmp_path):
    first = routed(synthetic_table(400, 1), BASE, 0.2)
    reviews = [r for r in analyst(first) if not first.loc[first[C.ID] == r.citation_id, C.SPOT_CHECK].iloc[0]]
    fit = fit_profile({"doc": routed(synthetic_table(400, 1), BASE, 0.2, reviews)}, BASE, "nospot", repeats=1)
    assert any("review the" in p and "spot check(s) drawn" in p for p in fit.problems)


def test_a_judge_that_cannot_separate_is_refused_or_lets_nothing_stand():
    """Answers unrelated to the label: no profile may promise anything."""
    table = synthetic_table(300, 6)
    rng = np.random.default_rng(0)
    table[C.EXPECTED] = np.where(rng.random(len(table)) < 0.5, "verified", "unsupported")
    first = routed(table, BASE, 0.2)
    fit = fit_profile({"doc": routed(table, BASE, 0.2, analyst(first))}, BASE, "noise")
    assert not fit.saveable or fit.profile.threshold is None


def test_a_saved_profile_routes_and_is_named(tmp_path, reviewed):
    fit = fit_profile({"doc": reviewed}, BASE, "synthetic-docs")
    path = save_profile(fit, tmp_path)
    assert path == tmp_path / "profiles" / "synthetic-docs.json"
    loaded = load_profile("synthetic-docs", tmp_path, "synthetic", "panel")
    assert loaded == fit.profile and loaded.profile == "synthetic-docs"
    options = AuditOptions(model="synthetic", user_dir=tmp_path, profile="synthetic-docs")
    assert "profile synthetic-docs" in AuditRun(options).routing.note()


def test_a_missing_profile_names_the_folder_and_the_fix(tmp_path):
    options = AuditOptions(user_dir=tmp_path, profile="nope")
    with pytest.raises(InputError, match=r"no profile 'nope' in .*profiles .*citeaudit calibrate --reviews"):
        AuditRun(options).routing  # noqa: B018 (looked up on first use)


def test_a_profile_name_is_a_file_name():
    with pytest.raises(InputError, match="not usable"):
        AuditOptions(profile="../etc")


def test_citeaudit_profile_is_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("CITEAUDIT_PROFILE", "mine")
    assert AuditOptions.from_env().profile == "mine"


def test_fit_toward_a_strong_prior_is_the_prior():
    x = np.random.default_rng(0).normal(size=(50, 2))
    y = (x[:, 0] > 0).astype(float)
    prior = np.array([0.2, -1.0, 0.5])
    assert fit_toward(x, y, np.ones(50), prior, 1e9) == pytest.approx(prior, abs=1e-6)
    free = fit_toward(x, y, np.ones(50), prior, 0.3)
    assert free[1] > 1.0  # the reviews win over a weak prior


def test_when_no_waiting_citation_is_left_the_refusal_asks_for_more_spot_checks():
    """A promise checked too loosely is checked closer by more reviews: waiting citations while any
    are left unreviewed, then spot checks at a higher rate (the one sample of the standing verdicts)."""
    from citeaudit.calibrate.profile import PROMISE_SLACK, why_unchecked

    loose = {"n_stand": 30, "right": 0.97, "low": 0.95 - PROMISE_SLACK - 0.01}
    waiting_left, = why_unchecked(loose, 100, 0.95, unreviewed=12)
    assert "review another 12 waiting citations" in waiting_left and "--spot-check" not in waiting_left
    none_left, = why_unchecked(loose, 100, 0.95, unreviewed=0)
    assert "every waiting citation is reviewed" in none_left and "twice the --spot-check rate" in none_left
    few, = why_unchecked({"n_stand": 8, "right": 1.0, "low": 0.7}, 100, 0.95, unreviewed=0)
    assert few.startswith("too few standing verdicts") and "twice the --spot-check rate" in few
    assert why_unchecked({"n_stand": 40, "right": 0.97, "low": 0.95 - PROMISE_SLACK}, 100, 0.95, unreviewed=0) == []


def test_reviews_scored_again_by_repeated_folds_are_no_new_sample():
    """The cross-validated interval pools five fold assignments of the same reviews: its effective
    sample size is that of the reviews, not five times it (an interval about 2.2 times too narrow)."""
    from citeaudit.calibrate.profile import figures

    n = 40
    rows = pd.DataFrame({"weight": np.ones(n), "gold_pass": np.arange(n) % 4 != 0})
    frame = pd.DataFrame({"right": np.arange(n) != 0, "verdict": ["verified"] * n})
    stand = np.ones(n, dtype=bool)
    once = figures(frame, rows, stand)
    five = figures(pd.concat([frame] * 5), pd.concat([rows] * 5), np.concatenate([stand] * 5), copies=5)
    assert (five["low"], five["high"]) == pytest.approx((once["low"], once["high"]))
    naive = figures(pd.concat([frame] * 5), pd.concat([rows] * 5), np.concatenate([stand] * 5))
    assert naive["low"] > once["low"] + 0.05
