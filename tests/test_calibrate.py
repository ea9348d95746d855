import itertools
import json
import math
import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from conftest import DATA, ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit import Judge, audit_quotes
from citeaudit import table as C
from citeaudit.calibrate.crossval import cross_validate, repeated_cross_validation, strategy_metrics
from citeaudit.calibrate.fit import compare_strategies, fit_calibration, fitted_on_table
from citeaudit.calibrate.maps import L2_GRID, fit_logistic, fit_platt, recommend_threshold, stratified_folds
from citeaudit.calibrate.scoring import (
    advise,
    expected_calibration_error,
    lowest_threshold,
    reliability,
    threshold_table,
)
from citeaudit.decide.calibration import (
    Calibration,
    feature_values,
    load_calibration,
    remembered_features,
    save_calibration,
)
from citeaudit.decide.routing import judge_outcome
from citeaudit.errors import InputError


def labelled(rows):
    base = {C.ID: None, C.QUOTE_STATUS: "exact", C.SECTION_MATCH: True, C.FABRICATED_REASON: None,
            C.RELATION: None, C.CONFIDENCE: None, C.ERROR: None, C.EXPECTED: None}
    return pd.DataFrame([{**base, **r} for r in rows], dtype=object)


TOY = labelled([
    {C.ID: "a", C.RELATION: "supports", C.CONFIDENCE: 0.95, C.EXPECTED: "verified"},
    {C.ID: "b", C.RELATION: "supports", C.CONFIDENCE: 0.85, C.EXPECTED: "contradicted"},
    {C.ID: "c", C.RELATION: "says_nothing", C.CONFIDENCE: 0.55, C.EXPECTED: "unsupported"},
    {C.ID: "d", C.RELATION: "contradicts", C.CONFIDENCE: 0.45, C.EXPECTED: "verified"},
    {C.ID: "e", C.QUOTE_STATUS: "missing", C.FABRICATED_REASON: "quote not found", C.EXPECTED: "fabricated"},
])


def test_threshold_table_counts():
    grid = threshold_table(TOY, thresholds=(0.0, 0.5, 0.9))
    assert list(grid["auto"]) == [5, 4, 2]
    assert list(grid["wrong_auto"]) == [2, 1, 0]
    assert list(grid["review"]) == [0, 1, 3]
    assert grid["auto_accuracy"].tolist() == [3 / 5, 3 / 4, 1.0]
    assert list(grid["model_auto"]) == [4, 3, 1]


def test_lowest_threshold_and_none_reached():
    assert lowest_threshold(TOY, 0.95, thresholds=(0.0, 0.5, 0.9, 1.0)) == 0.9
    only_wrong = labelled([{C.ID: "x", C.RELATION: "supports", C.CONFIDENCE: 0.99, C.EXPECTED: "unsupported"}])
    assert lowest_threshold(only_wrong, 0.95) is None
    assert advise(only_wrong, 0.95).statement.startswith("No threshold reaches 95%")


def test_reliability_and_ece():
    rel = reliability(TOY, bins=10).set_index("bin")
    assert rel.loc["0.9-1.0", "count"] == 1 and rel.loc["0.9-1.0", "accuracy"] == 1.0
    assert rel.loc["0.8-0.9", "accuracy"] == 0.0
    # bins: 0.95 right, 0.85 wrong, 0.55 right, 0.45 wrong -> each |acc - conf| weighted 1/4
    expected = (abs(1 - 0.95) + abs(0 - 0.85) + abs(1 - 0.55) + abs(0 - 0.45)) / 4
    assert expected_calibration_error(TOY) == pytest.approx(expected)


def test_unlabelled_table_is_refused():
    with pytest.raises(ValueError, match="labelled"):
        threshold_table(labelled([{C.ID: "a", C.RELATION: "supports", C.CONFIDENCE: 0.9}]))


@pytest.fixture(scope="module")
def recorded_labelled_set(replay_cache):
    judge = Judge(cache=replay_cache)
    return pd.concat([audit_quotes("rfc7519.txt", DATA / "eval_rfc7519.json", judge=judge).table,
                      audit_quotes("rfc6749.txt", DATA / "eval_rfc6749.json", judge=judge).table], ignore_index=True)


def test_labelled_set_is_big_enough_and_fully_recorded(recorded_labelled_set):
    table = recorded_labelled_set
    assert len(table) >= 40
    assert all(table[C.EXPECTED].value_counts()[v] >= 8 for v in ("verified", "contradicted", "unsupported", "fabricated"))
    assert table[C.ERROR].isna().all()
    assert set(table[C.QUOTE_STATUS]) >= {"exact", "elided", "near", "missing", "none"}
    assert (table[C.SECTION_MATCH] == False).any()  # noqa: E712 (a misattributed citation)


def test_auto_share_never_rises_on_the_labelled_set(recorded_labelled_set):
    grid = threshold_table(recorded_labelled_set, thresholds=[t / 100 for t in range(101)])
    shares = grid["auto_share"].tolist()
    assert all(later <= earlier for earlier, later in itertools.pairwise(shares))
    assert not math.isnan(expected_calibration_error(recorded_labelled_set))


def scored(n_right_high=20, n_wrong_low=10, seed=1):
    """A labelled judged table where high scores are right and low ones mostly wrong."""
    import random

    rng = random.Random(seed)
    rows = []
    for i in range(n_right_high):
        p = rng.uniform(0.85, 0.99)
        rows.append({C.ID: f"v{i}", C.RELATION: "supports", C.METHOD: "logprobs", C.CONFIDENCE: p,
                     C.PROBABILITIES: {"supports": p, "contradicts": (1 - p) / 2, "says_nothing": (1 - p) / 2},
                     C.EXPECTED: "verified"})
    for i in range(n_wrong_low):
        p = rng.uniform(0.5, 0.62)
        rows.append({C.ID: f"w{i}", C.RELATION: "supports", C.METHOD: "logprobs", C.CONFIDENCE: p,
                     C.PROBABILITIES: {"supports": p, "contradicts": (1 - p) / 2, "says_nothing": (1 - p) / 2},
                     C.EXPECTED: "unsupported"})
    return labelled(rows)


def test_platt_is_monotone_and_holds_a_negative_slope_at_zero():
    a, b = fit_platt([0.5, 0.6, 0.9, 1.0], [0, 0, 1, 1])  # separable: finite, steep, increasing
    assert 0 < b < 1e3 and math.isfinite(a)
    a, b = fit_platt([0.5, 0.6, 0.9, 1.0], [1, 1, 0, 0])  # higher scores wrong more: the base rate
    assert b == 0.0 and a == pytest.approx(0.0)


def test_recommended_threshold_is_the_lowest_reaching_the_target():
    assert recommend_threshold([0.55, 0.7, 0.97, 0.99], [1, 0, 1, 1], 0.95) == 0.71
    assert recommend_threshold([0.55, 0.7, 0.8, 0.9], [1, 0, 1, 1], 0.95) is None  # not expected to be right
    assert recommend_threshold([0.55, 0.7], [0, 0], 0.95) is None


def test_folds_are_stratified_and_reproducible():
    gold = ["v"] * 10 + ["c"] * 5
    folds = stratified_folds(gold, 5, seed=3)
    assert list(folds) == list(stratified_folds(gold, 5, seed=3))
    assert sorted(folds[:10].tolist()) == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    assert sorted(folds[10:].tolist()) == [0, 1, 2, 3, 4]


def test_cross_validation_scores_held_out_rows_only():
    table = scored()
    figures, held = cross_validate(table, 0.95, folds=5)
    assert figures["judged"] == 30 and len(held) == 30
    assert set(held["fold"]) == {0, 1, 2, 3, 4}
    assert figures["stand"] == int(held["stand"].astype(bool).sum()) and figures["stand_right"] <= figures["stand"]
    assert figures["coverage"] == pytest.approx(figures["stand"] / 30)
    # every standing verdict here is a high, right one
    assert figures["precision"] == 1.0 and figures["stand"] >= 15


def test_strategy_metrics_on_a_toy_table():
    metrics = strategy_metrics(TOY)
    # judged: a (verified right), b (supports vs contradicted), c (unsupported right), d (contradicts vs verified)
    assert metrics["judged"] == 4 and metrics["accuracy"] == 0.5
    assert metrics["balanced_accuracy"] == pytest.approx((1 / 2 + 0 + 1) / 3)
    assert metrics["majority_balanced_accuracy"] == pytest.approx(1 / 3)


def test_calibration_round_trips_and_is_found_by_model_and_strategy(tmp_path):
    fitted = fit_calibration(scored(), "some/model", "yesno", 0.95, folds=5, sets=["a.json"])
    assert fitted.threshold is not None and fitted.p_pass(0.95) > 0.5 > fitted.p_pass(0.55)
    path = save_calibration(fitted, tmp_path)
    assert path == tmp_path / "calibration" / "some_model.yesno.json"
    assert load_calibration("some/model", "yesno", tmp_path) == fitted
    assert load_calibration("some/model", "choice", tmp_path) is None
    path.write_text("{not json")
    with pytest.raises(InputError, match="citeaudit calibrate"):
        load_calibration("some/model", "yesno", tmp_path)


def test_an_audit_applies_the_saved_calibration_and_its_threshold(tmp_path, replay_cache):
    import shutil

    from citeaudit import CallCache

    for recording in replay_cache.directory.glob("*.jsonl"):
        shutil.copy(recording, tmp_path)
    judge = Judge(cache=CallCache(tmp_path, mode="replay"), strategy="choice")
    plain = audit_quotes("rfc7519.txt", DATA / "rfc7519_citations.json", judge=judge)
    assert plain.threshold == 0.8 and plain.table["score"].tolist() == plain.table["confidence"].tolist()
    steep = Calibration(model=judge.model, strategy="choice", a=-30.0, b=60.0, threshold=0.55)
    save_calibration(steep, tmp_path)  # beside the judge's recordings
    calibrated = audit_quotes("rfc7519.txt", DATA / "rfc7519_citations.json", judge=judge)
    assert calibrated.threshold == 0.55
    assert (calibrated.table["route"] == "auto").sum() > (plain.table["route"] == "auto").sum()
    explicit = audit_quotes("rfc7519.txt", DATA / "rfc7519_citations.json", judge=judge, threshold=0.99)
    assert explicit.threshold == 0.99 and explicit.reroute(0.55).table["route"].tolist() == \
        calibrated.table["route"].tolist()
    uncalibrated = audit_quotes("rfc7519.txt", DATA / "rfc7519_citations.json", judge=judge, calibration=False)
    assert uncalibrated.table["route"].tolist() == plain.table["route"].tolist()


def answered(n_pass=24, n_fail=24, seed=2):
    """A labelled yes/no table: P(yes) to "true" is noise, P(yes) to "false" says which pass, and
    among those that fail, P(yes) to "contradict" says which are contradicted."""
    import random

    rng = random.Random(seed)
    rows = []
    for i in range(n_pass + n_fail):
        passes, contradicted = i < n_pass, i % 2 == 0
        q_true, q_false = rng.uniform(0.3, 0.7), rng.uniform(0.55, 0.8) if passes else rng.uniform(0.2, 0.45)
        q_contradict = rng.uniform(0.6, 0.8) if contradicted else rng.uniform(0.2, 0.4)
        probabilities = {"supports": q_true, "contradicts": (1 - q_true) * q_false,
                         "says_nothing": (1 - q_true) * (1 - q_false)}
        rows.append({C.ID: f"r{i}", C.RELATION: "supports" if q_true >= 0.5 else "says_nothing",
                     C.METHOD: "logprobs", C.CONFIDENCE: max(q_true, 1 - q_true), C.PROBABILITIES: probabilities,
                     C.ANSWERS: {"true": q_true, "false": q_false, "contradict": q_contradict},
                     C.EXPECTED: "verified" if passes else "contradicted" if contradicted else "unsupported"})
    return labelled(rows)


def test_logistic_weighs_the_input_that_separates():
    x = [[0.1, -1.0], [0.4, -1.0], [0.3, -1.0], [0.1, 1.0], [0.4, 1.0], [0.3, 1.0]]  # the first says nothing
    w = fit_logistic(x, [0, 0, 0, 1, 1, 1])
    assert w.shape == (3,) and w[2] > 0 and abs(w[1]) < 1e-6 and all(math.isfinite(v) for v in w)
    shrunk = fit_logistic(x, [0, 0, 0, 1, 1, 1], l2=10.0)
    assert 0 < shrunk[2] < w[2]  # the ridge penalty pulls the weights towards 0


@pytest.mark.parametrize("l2", [0.1, 1.0, 10.0])
def test_the_logistic_fit_is_scikit_learns_on_platts_targets(l2):
    """`fit_logistic` is scikit-learn's `LogisticRegression` fitted as its docstring says: each row
    twice, a positive weighted by its smoothed target and a negative by the rest, C = 1/l2."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(7)
    x = rng.normal(size=(60, 3))
    y = (x @ [1.5, -0.5, 0.0] + rng.normal(size=60) > 0).astype(float)
    positives = y.sum()
    target = np.where(y > 0.5, (positives + 1) / (positives + 2), 1 / (len(y) - positives + 2))
    theirs = LogisticRegression(C=1 / l2, solver="newton-cholesky", tol=1e-10, max_iter=200).fit(
        np.vstack([x, x]), np.r_[np.ones(len(y)), np.zeros(len(y))], sample_weight=np.r_[target, 1 - target])
    ours = fit_logistic(x, y, l2)
    assert np.allclose(ours, np.r_[theirs.intercept_, theirs.coef_[0]], rtol=1e-6, atol=1e-8)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.fixed_dictionaries({"true": st.floats(0, 1), "false": st.floats(0, 1)}), min_size=1, max_size=5),
       st.integers(0, 10_000))
def test_remembered_features_are_the_features_of_each_answers_dict(answers, chars):
    """Within `remembered_features` a dict's inputs are looked up, never another dict's (equal
    values or not); outside it, nothing is remembered."""
    keys = ["true", "false", "true*evidence_chars"]
    fresh = [feature_values(keys, a, chars) for a in answers]
    with remembered_features():
        assert [feature_values(keys, a, chars) for a in answers] == fresh
        assert [feature_values(keys, dict(a), chars) for a in answers] == fresh  # copies: new dicts, same values
        assert [feature_values(keys[:1], a, chars) for a in answers] == [f and f[:1] for f in fresh]
    changed = answers[0]
    changed["true"] = 1 - changed["true"]
    assert feature_values(keys, changed, chars) == feature_values(keys, dict(changed), chars)


def test_a_calibration_of_the_answers_reads_each_question(tmp_path):
    fitted = fit_calibration(answered(), "m", "yesno", 0.95, folds=4, inputs="answers", repeats=2)
    assert fitted.inputs == "answers" and list(fitted.weights) == ["true", "false", "contradict"] and fitted.b == 0.0
    assert fitted.weights["false"] > abs(fitted.weights["true"]) and fitted.l2 in L2_GRID
    yes, no = {"true": 0.5, "false": 0.75, "contradict": 0.5}, {"true": 0.5, "false": 0.3, "contradict": 0.5}
    assert fitted.p_pass(0.5, yes) > 0.5 > fitted.p_pass(0.5, no)
    assert fitted.maps(yes) and not fitted.maps(None) and not fitted.maps({"true": 0.5, "false": 0.7})
    with pytest.raises(ValueError, match="answers"):
        fitted.p_pass(0.5)
    save_calibration(fitted, tmp_path)
    assert load_calibration("m", "yesno", tmp_path) == fitted
    # a calibration of P(supports) alone is still what a file without weights holds
    supports = fit_calibration(answered(), "m", "yesno", 0.95, folds=4, inputs="supports", repeats=0)
    assert supports.inputs == "supports" and supports.weights == {} and "repeated" not in supports.cross_validated
    old = json.loads(supports.to_json())
    del old["weights"]
    assert Calibration.from_json(json.dumps(old)).to_json() == supports.to_json()


def test_a_comparison_uses_a_saved_calibration_only_when_fitted_on_that_very_table(tmp_path):
    """Notebook 04 hands the saved calibrations to `compare_strategies`: one fitted on the same
    citations and answers (read back from its file) is used as it is, with the figures a fit gives;
    a changed answer, another target, another model's calibration or other repeats is fitted again."""
    table = answered()
    save_calibration(fit_calibration(table, "m", "yesno", 0.95, folds=4, repeats=2), tmp_path)
    saved = load_calibration("m", "yesno", tmp_path)
    comparison = compare_strategies({"yesno": table}, "m", 0.95, folds=4, saved=[saved, None], repeats=2)
    assert comparison.reused == ["yesno"] and comparison.calibrations["yesno"] is saved
    fresh = compare_strategies({"yesno": table}, "m", 0.95, folds=4, repeats=2)
    assert fresh.reused == [] and fresh.figures().equals(comparison.figures())
    changed = table.copy()
    changed.at[0, C.ANSWERS] = {**changed.at[0, C.ANSWERS], "false": 0.01}
    for tables, target, model, repeats in [({"yesno": changed}, 0.95, "m", 2), ({"yesno": table}, 0.9, "m", 2),
                                           ({"yesno": table}, 0.95, "other", 2), ({"yesno": table}, 0.95, "m", 0)]:
        again = compare_strategies(tables, model, target, folds=4, saved=[saved], repeats=repeats)
        assert again.reused == [] and again.calibrations["yesno"] is not saved
    # a threshold the worst-domain rule set, or a profile, is not what a fit gives back
    for other in [{**saved.fitted_on, "threshold_rule": "worst-domain"}, {**saved.fitted_on, "profile": "mine"}]:
        assert not fitted_on_table(replace(saved, fitted_on=other), table, 0.95, folds=4, repeats=2)


def test_the_calibration_names_failures_from_the_answers():
    fitted = fit_calibration(answered(), "m", "yesno", 0.95, folds=4, inputs="answers", repeats=0)
    assert fitted.name_weights["contradict"] > 0
    assert fitted.p_contradicted({"true": 0.5, "false": 0.3, "contradict": 0.75}) > 0.5
    assert fitted.p_contradicted({"true": 0.5, "false": 0.3, "contradict": 0.25}) < 0.5
    assert fitted.p_contradicted(None) is None
    # every row's raw probabilities name it unsupported (q_false < 1/2): the held-out words come from the map
    figures, held = cross_validate(answered(), 0.95, folds=4, inputs="answers")
    fails = held["verdict"] != "verified"
    assert set(held.loc[fails, "verdict"]) == {"contradicted", "unsupported"} and figures["balanced_accuracy_cv"] > 0.8
    supports = fit_calibration(answered(), "m", "yesno", 0.95, folds=4, inputs="supports", repeats=0)
    assert supports.name_weights == {} and supports.p_contradicted({"contradict": 0.9}) is None


def test_the_map_of_the_answers_sees_what_p_supports_misses():
    by_answers, _ = cross_validate(answered(), 0.9, folds=4, inputs="answers")
    by_supports, _ = cross_validate(answered(), 0.9, folds=4, inputs="supports")
    default, _ = cross_validate(answered(), 0.9, folds=4)  # the answers, when every row has them
    assert default == by_answers
    assert by_answers["pass_fail_accuracy_cv"] > 0.9 > by_supports["pass_fail_accuracy_cv"]


def lengthy(n=64, seed=3):
    """A labelled yes/no table where a yes to "true" means less after a short sentence: a passing
    citation scores about 0.6 on a long section and 0.4 on a short one, a failing one 0.45 and 0.25."""
    import random

    rng = random.Random(seed)
    rows = []
    for i in range(n):
        passes, short = i % 2 == 0, i % 4 < 2
        q_true = (0.4 if short else 0.6) if passes else (0.25 if short else 0.45)
        q_true += rng.uniform(-0.04, 0.04)
        probabilities = {"supports": q_true, "contradicts": (1 - q_true) / 2, "says_nothing": (1 - q_true) / 2}
        rows.append({C.ID: f"r{i}", C.RELATION: "supports" if q_true >= 0.5 else "says_nothing",
                     C.METHOD: "logprobs", C.CONFIDENCE: max(q_true, 1 - q_true), C.PROBABILITIES: probabilities,
                     C.ANSWERS: {"true": q_true, "false": 0.5, "contradict": 0.5},
                     C.EVIDENCE: "x" * (rng.randint(120, 200) if short else rng.randint(1500, 3000)),
                     C.EXPECTED: "verified" if passes else "unsupported"})
    return labelled(rows)


def test_the_evidence_length_lets_the_map_read_a_yes_by_the_passage_it_answers(tmp_path):
    by_length, _ = cross_validate(lengthy(), 0.9, folds=4, inputs="answers+length")
    by_answers, _ = cross_validate(lengthy(), 0.9, folds=4, inputs="answers")
    default, _ = cross_validate(lengthy(), 0.9, folds=4)  # the default reads the answers only (docs/measurements/judge-quality.md)
    assert default == by_answers
    assert by_length["pass_fail_accuracy_cv"] > 0.9 > by_answers["pass_fail_accuracy_cv"]
    fitted = fit_calibration(lengthy(), "m", "yesno", 0.9, folds=4, repeats=0, inputs="answers+length")
    assert fitted.inputs == "answers+length"
    assert list(fitted.weights) == ["true", "false", "contradict", "evidence_chars", "true*evidence_chars"]
    assert Calibration.from_json(fitted.to_json()) == fitted
    answers = {"true": 0.4, "false": 0.5, "contradict": 0.5}
    short, long = (judge_outcome({"supports": 0.4, "contradicts": 0.3, "says_nothing": 0.3}, "supports", 0.6,
                                 "logprobs", answers, fitted, "x" * chars) for chars in (150, 2000))
    assert short.verdict == "verified" and long.verdict != "verified"  # the same 0.4, read by the length
    unread = judge_outcome({"supports": 0.4, "contradicts": 0.3, "says_nothing": 0.3}, "supports", 0.6,
                           "logprobs", answers, fitted, None)
    assert unread.score is None  # no evidence to measure: no score, so it goes to review


def test_repeated_cross_validation_reports_mean_and_spread():
    repeated = repeated_cross_validation(answered(), 0.9, folds=4, repeats=3, inputs="answers")
    assert repeated["repeats"] == 3
    assert repeated["coverage_min"] <= repeated["coverage_mean"] <= repeated["coverage_max"]
    assert repeated["precision_min"] <= repeated["precision_mean"] <= repeated["precision_max"]
    first, _ = cross_validate(answered(), 0.9, folds=4, seed=0, inputs="answers")
    once = repeated_cross_validation(answered(), 0.9, folds=4, repeats=1, inputs="answers")
    assert once["coverage_mean"] == first["coverage"]


@pytest.mark.parametrize("field, value, says", [
    ("threshold", 0, "threshold"), ("threshold", 0.5, "threshold"), ("threshold", 1.5, "threshold"),
    ("threshold", float("nan"), "threshold"), ("threshold", "0.9", "threshold"),
    ("weights", {"true": float("inf")}, "weights.true"), ("weights", {"true": "high"}, "weights.true"),
    ("a", float("-inf"), "`a`"), ("name_weights", {"false": float("nan")}, "name_weights.false"),
    ("target", 2, "target"), ("l2", -1, "l2"), ("unknown", 1, "unknown"),
])
def test_a_calibration_file_with_a_number_that_cannot_be_right_is_refused(tmp_path, field, value, says):
    saved = json.loads((ROOT / "cache" / "calibration" / "qwen2.5-coder-1.5b-instruct-q4_k_m.panel.json").read_text())
    saved[field] = value
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(saved))  # JSON takes NaN and Infinity as numbers
    with pytest.raises(InputError, match=rf"{path}.*{re.escape(says)}.*citeaudit calibrate"):
        Calibration.from_json(path.read_text(), str(path))


@pytest.mark.cli
def test_a_bad_calibration_file_is_exit_2_naming_it_and_no_verdict_stands(recorded_cache, tmp_path):
    from test_cli import run

    saved = recorded_cache / "calibration" / "qwen2.5-coder-1.5b-instruct-q4_k_m.panel.json"
    data = json.loads(saved.read_text())
    data["threshold"] = 0
    saved.write_text(json.dumps(data))
    result = run("audit", "--source", "rfc7519.txt", "--citations", str(DATA / "rfc7519_citations.json"))
    assert result.returncode == 2 and str(saved) in result.stderr and "threshold" in result.stderr
    assert "ACCEPT" not in result.stdout
