"""Judge strategies and per-model calibration through the command line, offline from the recordings."""

import json

import pandas as pd
import pytest
from conftest import DATA
from test_cli import read_jsonl, run

from citeaudit import Judge, audit_quotes
from citeaudit.calibrate import cross_validate, strategy_metrics
from citeaudit.judge.strategies import STRATEGIES

EXAMPLE = DATA / "rfc7519_citations.json"
LABELLED = [("rfc7519.txt", DATA / "eval_rfc7519.json"), ("rfc6749.txt", DATA / "eval_rfc6749.json"),
            ("rfc7519.txt", EXAMPLE)]


@pytest.mark.cli
@pytest.mark.parametrize("strategy", list(STRATEGIES))  # every registered strategy ships recordings
def test_every_strategy_replays_the_worked_example(tmp_path, recorded_cache, strategy):
    out = tmp_path / "audit.jsonl"
    result = run("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--strategy", strategy,
                 "--output", str(out))
    assert result.returncode == 1, result.stderr
    rows = [r for r in read_jsonl(out) if r["verdict"] != "fabricated"]
    assert len(rows) == 7 and all(r["error"] is None and r["cached"] is True for r in rows)
    for row in rows:  # the table keeps all three probabilities; the score is what was routed on
        assert sum(row["probabilities"].values()) == pytest.approx(1.0)
        assert 0.5 <= row["score"] <= 1.0


@pytest.mark.cli
def test_strategy_from_the_environment_and_a_bad_one_exits_2(tmp_path, recorded_cache, monkeypatch):
    monkeypatch.setenv("CITEAUDIT_STRATEGY", "choice")
    out = tmp_path / "audit.jsonl"
    run("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--output", str(out), "--threshold", "0.5")
    choice = {r["id"]: r["probabilities"] for r in read_jsonl(out)}
    monkeypatch.setenv("CITEAUDIT_STRATEGY", "yesno")
    run("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--output", str(out), "--threshold", "0.5")
    assert {r["id"]: r["probabilities"] for r in read_jsonl(out)} != choice
    monkeypatch.setenv("CITEAUDIT_STRATEGY", "vote")
    result = run("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE))
    assert result.returncode == 2 and "unknown judge strategy 'vote'" in result.stderr


@pytest.mark.cli
def test_calibrate_writes_the_user_cache_and_audit_uses_it(tmp_path, recorded_cache):
    shipped = recorded_cache / "calibration" / "qwen2.5-coder-1.5b-instruct-q4_k_m.choice.json"
    shipped.unlink()
    saved = recorded_cache / "local" / "calibration" / shipped.name  # the user cache, not the shipped folder
    out = tmp_path / "audit.jsonl"
    run("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--strategy", "choice", "--output", str(out))
    assert all(r["score"] == r["confidence"] for r in read_jsonl(out))  # no calibration: the raw confidence
    args = [a for source, cites in LABELLED for a in ("--source", source, "--citations", str(cites))]
    result = run("calibrate", "--model", "qwen", "--strategy", "choice", *args)
    assert result.returncode == 0, result.stderr
    fitted = json.loads(saved.read_text())
    assert fitted["strategy"] == "choice" and fitted["cross_validated"]["judged"] == 42
    assert not shipped.exists()
    audited = run("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--strategy", "choice",
                  "--output", str(out))
    assert f"(threshold {fitted['threshold']:.2f}, recommended by the calibration of " in audited.stdout
    assert any(r["score"] != r["confidence"] for r in read_jsonl(out) if r["confidence"] is not None)


@pytest.mark.cli
def test_calibrate_refuses_unpaired_or_unlabelled_input(tmp_path, recorded_cache):
    result = run("calibrate", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--source", "rfc6749.txt")
    assert result.returncode == 2 and "one --source per --citations" in result.stderr
    unlabelled = tmp_path / "u.json"
    unlabelled.write_text(json.dumps([{"id": "a", "claim": "c", "quote": None, "section": "4.1.3"}]))
    result = run("calibrate", "--source", "rfc7519.txt", "--citations", str(unlabelled))
    assert result.returncode == 2 and "labelled" in result.stderr


@pytest.fixture(scope="module")
def labelled_tables(replay_cache):
    tables = {}
    for strategy in ("choice", "yesno"):
        judge = Judge(cache=replay_cache, strategy=strategy)
        tables[strategy] = pd.concat([audit_quotes(s, c, judge=judge, calibration=False).table for s, c in LABELLED],
                                     ignore_index=True)
    return tables


def test_cross_validation_never_scores_a_row_with_a_map_fitted_on_it(labelled_tables):
    figures, held = cross_validate(labelled_tables["yesno"], 0.95, folds=5)
    assert figures["judged"] == len(held) == 42
    assert held["fold"].nunique() == 5 and figures["stand"] <= figures["judged"]
    # a row's threshold is its fold's, fitted without the row: folds disagree
    assert held.groupby("fold")["threshold"].first().nunique() > 1


def test_yesno_measures_better_than_choice_on_the_labelled_sets(labelled_tables):
    """The reason `yesno` is the default (docs/measurements/judge-quality.md)."""
    choice, yesno = (strategy_metrics(labelled_tables[s]) for s in ("choice", "yesno"))
    assert yesno["balanced_accuracy"] > choice["balanced_accuracy"] > 1 / 3
    assert yesno["auroc"] > choice["auroc"] > 0.8


@pytest.mark.slow  # a calibration fitted with 5 folds over a labelled set: about 3 s
def test_slider_reroutes_on_the_calibrated_score(labelled_tables):
    from citeaudit import ThresholdExplorer, fit_calibration

    table = labelled_tables["yesno"]
    fitted = fit_calibration(table, "m", "yesno", 0.95, folds=5)
    explorer = ThresholdExplorer(table, fitted.route_threshold, fitted)
    view = explorer.view()
    assert list(view.columns) == ["citation", "P(supports)", "score", "verdict", "route", "flags", "gold", "right"]
    judged = view[view["P(supports)"].notna()]
    # the score is the calibrated one, and every model verdict standing at the threshold reaches it
    assert (judged["score"] != [max(p, 1 - p) for p in judged["P(supports)"]]).any()
    assert (judged.loc[judged["route"] == "auto", "score"] >= fitted.route_threshold).all()
    loose = explorer.view(0.5)
    assert (loose["route"] == "auto").sum() > (view["route"] == "auto").sum()
    assert "wrong on pass/fail" in explorer.summary(loose)
    grid = explorer.grid
    assert grid["model_auto"].is_monotonic_decreasing and grid["model_share"].max() <= 1.0


@pytest.mark.cli
def test_calibrate_maps_the_yes_no_answers_unless_told_and_repeats_the_folds(recorded_cache):
    args = [a for source, cites in LABELLED for a in ("--source", source, "--citations", str(cites))]
    answers = run("calibrate", "--model", "qwen", "--strategy", "yesno", *args, "--repeats", "3", "--no-save")
    assert answers.returncode == 0, answers.stderr
    assert "x lo(true)" in answers.stdout and "x lo(false)" in answers.stdout
    assert "over 3 fold assignments: verdicts that stand" in answers.stdout
    supports = run("calibrate", "--model", "qwen", "--strategy", "yesno", *args, "--inputs", "supports",
                   "--repeats", "0", "--no-save")
    assert supports.returncode == 0, supports.stderr
    assert "x log-odds of P(supports)" in supports.stdout and "fold assignments:" not in supports.stdout
    assert "| - | - |" in supports.stdout  # no repeated figures in the table either
    refused = run("calibrate", "--model", "qwen", "--strategy", "choice", *args, "--inputs", "answers", "--no-save")
    assert refused.returncode == 2 and "yes/no strategy" in refused.stderr
