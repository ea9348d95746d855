"""Leave-one-domain-out figures (`calibrate.leave_one_domain_out`, `domain_figures`,
`worst_domain_threshold`) on small synthetic score tables, and `citeaudit calibrate --domain` on the
project's recorded sets."""

import random
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import DATA

from citeaudit import table as C
from citeaudit.calibrate.domains import (
    PROJECT_DOMAIN,
    domain_figures,
    domain_of,
    leave_one_domain_out,
    worst_domain_threshold,
)
from citeaudit.calibrate.maps import coverage_ceiling, fit_map
from citeaudit.calibrate.scoring import judged_rows
from citeaudit.decide.calibration import load_calibration


def held_rows(rows):
    """A `leave_one_domain_out`-shaped table: (domain, verdict, score, right, gold_pass)."""
    frame = pd.DataFrame(rows, columns=["domain", "verdict", "score", "right", "gold_pass"])
    return frame.assign(threshold=0.9, blocked=False, stand=frame["score"] >= 0.9)


HELD = held_rows([
    ("a", "verified", 0.95, True, True),
    ("a", "unsupported", 0.90, True, False),
    ("a", "verified", 0.70, False, False),
    ("b", "verified", 0.97, False, False),  # a failing citation passed with a high score
    ("b", "verified", 0.80, True, True),
    ("b", "contradicted", 0.99, True, False),
])


def test_domain_figures_count_per_domain_and_over_all():
    figures = domain_figures(HELD, 0.9)
    a, b, everything = figures.loc["a"], figures.loc["b"], figures.loc["all"]
    assert (a["judged"], a["stand"], a["stand_right"], a["false_verified"]) == (3, 2, 2, 0)
    assert (b["stand"], b["stand_right"], b["failing"], b["false_verified"]) == (2, 1, 2, 1)
    assert b["precision"] == 0.5 and b["false_verified_share"] == 0.5 and a["coverage"] == pytest.approx(2 / 3)
    assert (everything["judged"], everything["stand"], everything["stand_right"]) == (6, 4, 3)
    # at 0.99 only b's contradicted verdict stands: a has none (precision NaN), b is right
    high = domain_figures(HELD, 0.99)
    assert high.loc["a", "stand"] == 0 and np.isnan(high.loc["a", "precision"]) and high.loc["b", "precision"] == 1.0


def test_the_worst_domain_rule_waits_for_the_worst_domain():
    # at 0.90-0.97 domain b's wrong 0.97 verdict stands beside one right one (50%); at 0.98 it no longer does
    assert worst_domain_threshold(HELD, 0.95) == 0.98
    # b's one right standing verdict is gone too: nothing above 0.99 stands anywhere, so no threshold
    assert worst_domain_threshold(HELD.drop(index=5), 0.95) is None
    # the blocked row never stands, whatever its score: then only a's wrong 0.70 verdict holds it up
    blocked = HELD.assign(blocked=[False, False, False, True, False, False])
    assert worst_domain_threshold(blocked, 0.95) == 0.71


def test_the_ceiling_is_the_most_that_stand_on_target_at_one_threshold():
    # every threshold to 0.97 lets b's wrong 0.97 verdict stand: at 0.51-0.70 with 4 right of 6
    # (67%), at 0.71-0.80 with 4 of 5 (80%), at 0.81-0.97 with 3 of 4 (75%); at 0.98 only the
    # contradicted 0.99 stands, right: the most on target is 1 of 6
    at_95 = coverage_ceiling(HELD, 0.95)
    assert (at_95["threshold"], at_95["stand"], at_95["stand_right"], at_95["judged"]) == (0.98, 1, 1, 6)
    at_80 = coverage_ceiling(HELD, 0.80)  # 4 of 5 from 0.71: the lowest threshold with the most
    assert (at_80["threshold"], at_80["stand"], at_80["precision"]) == (0.71, 5, 0.8)
    assert at_80["coverage"] == pytest.approx(5 / 6)
    # a blocked row never stands: without b's wrong verdict 0.71 lets 4 stand, all right
    blocked = HELD.assign(blocked=[False, False, False, True, False, False])
    assert (coverage_ceiling(blocked, 0.95)["threshold"], coverage_ceiling(blocked, 0.95)["stand"]) == (0.71, 4)
    # without the right 0.99 the wrong 0.97 tops every threshold that lets anything stand: none reaches 95%
    assert coverage_ceiling(HELD.drop(index=5), 0.95) is None


def table(domains, seed=3):
    """Judged labelled rows: in a `normal` domain P(supports) is high when the citation passes; in
    an `odd` one it is high when the citation fails (what the project's map never saw)."""
    rng = random.Random(seed)
    rows, names = [], []
    for domain, n in domains:
        for i in range(n):
            passes = i % 2 == 0
            high = passes if domain != "odd" else not passes
            p = rng.uniform(0.85, 0.99) if high else rng.uniform(0.01, 0.15)
            rows.append({C.ID: f"{domain}{i}", C.QUOTE_STATUS: "exact", C.SECTION_MATCH: True,
                         C.FABRICATED_REASON: None, C.ERROR: None, C.METHOD: "logprobs",
                         C.RELATION: "supports" if p >= 0.5 else "says_nothing", C.CONFIDENCE: max(p, 1 - p),
                         C.PROBABILITIES: {"supports": p, "contradicts": (1 - p) / 4, "says_nothing": 3 * (1 - p) / 4},
                         C.EXPECTED: "verified" if passes else "unsupported"})
            names.append(domain)
    return pd.DataFrame(rows, dtype=object), names


def test_each_domain_is_scored_by_a_map_fitted_without_it():
    frame, names = table([("normal", 40), ("plain", 40), ("odd", 20)])
    held = leave_one_domain_out(frame, names, 0.95, inputs="supports")
    figures = domain_figures(held)
    # the map of the two normal domains trusts a high P(supports): on the odd domain every standing
    # verdict is wrong, and its failing citations pass
    assert figures.loc["odd", "stand"] > 0 and figures.loc["odd", "precision"] == 0.0
    assert figures.loc["odd", "false_verified"] == 10 and figures.loc["odd", "false_verified_share"] == 1.0
    # fitted on the normal domain and the odd one, no threshold is 95% right: nothing of plain stands
    assert pd.isna(figures.loc["plain", "threshold"]) and figures.loc["plain", "stand"] == 0
    rows = judged_rows(frame)
    others = rows[[n != "odd" for n in names]]
    assert held.loc[held["domain"] == "odd", "threshold"].iloc[0] == fit_map(others, 0.95, inputs="supports").threshold
    # the held-out domain's labels never reach its own map: flipped, its scores and threshold stay
    flipped = frame.copy()
    odd = [i for i, n in enumerate(names) if n == "odd"]
    flipped.loc[odd, C.EXPECTED] = ["unsupported" if e == "verified" else "verified" for e in frame.loc[odd, C.EXPECTED]]
    again = leave_one_domain_out(flipped, names, 0.95, inputs="supports")
    assert again.loc[odd, "score"].tolist() == held.loc[odd, "score"].tolist()
    assert again.loc[odd, "threshold"].tolist() == held.loc[odd, "threshold"].tolist()
    assert domain_figures(again).loc["odd", "precision"] == 1.0
    # and no threshold makes the odd domain right: the worst-domain rule recommends none
    assert worst_domain_threshold(held, 0.95) is None
    assert worst_domain_threshold(again, 0.95) is not None


def test_one_domain_is_refused_and_files_get_their_domain(tmp_path):
    frame, names = table([("normal", 10)])
    with pytest.raises(ValueError, match="two domains"):
        leave_one_domain_out(frame, names, inputs="supports")
    with pytest.raises(ValueError, match="labels given"):
        leave_one_domain_out(frame, names[:5], inputs="supports")
    data = tmp_path / "data"
    assert domain_of(data / "formats" / "x_citations.json", data) == PROJECT_DOMAIN
    assert domain_of(tmp_path / "build" / "public" / "check-covid_citations.json", data) == "check-covid"


SETS = [("rfc7519.txt", DATA / "eval_rfc7519_more.json", "jwt"), ("rfc6749.txt", DATA / "eval_rfc6749_more.json", "oauth"),
        (DATA / "docs" / "sensor_telemetry.txt", DATA / "eval_sensor_telemetry.json", "telemetry")]


def calibrate(*extra):
    args = ["calibrate", "--model", "qwen", "--strategy", "panel", "--cache-mode", "replay", "--repeats", "0"]
    for source, citations, _ in SETS:
        args += ["--source", str(source), "--citations", str(citations)]
    return subprocess.run([sys.executable, "-m", "citeaudit.surfaces.cli", *args, *extra], capture_output=True, text=True,
                          timeout=300)


@pytest.mark.cli
def test_calibrate_prints_each_held_out_domain_and_keeps_them_in_the_file(recorded_cache):
    shipped = (recorded_cache / "calibration" / "qwen2.5-coder-1.5b-instruct-q4_k_m.panel.json").read_text()
    done = calibrate(*(x for _, _, name in SETS for x in ("--domain", name)), "--threshold-rule", "worst-domain",
                     "--shipped")  # written where the test reads it: the private copy's calibration/
    assert done.returncode == 0, done.stderr
    table = done.stdout.split("leave-one-domain-out")[1]
    for name in ("jwt", "oauth", "telemetry", "all"):
        assert f"\n| {name} | " in table
    fitted = load_calibration("qwen2.5-coder-1.5b-instruct-q4_k_m", "panel", recorded_cache)
    lodo = fitted.cross_validated["leave_one_domain_out"]
    assert [d["domain"] for d in lodo["domains"]] == ["jwt", "oauth", "telemetry", "all"]
    assert fitted.threshold == lodo["worst_domain_threshold"]  # the rule asked for
    assert f"threshold rule worst-domain: the calibration's threshold is {fitted.threshold:.2f}" in done.stdout
    assert shipped != (recorded_cache / "calibration" / "qwen2.5-coder-1.5b-instruct-q4_k_m.panel.json").read_text()
    # the pooled and held-out figures of the whole set, side by side, from what the file keeps
    everything = lodo["domains"][-1]
    pooled = fitted.cross_validated  # one fold assignment here (no --repeats)
    row = (f"| panel | {pooled['coverage']:.1%} | {pooled['precision']:.1%} "
           f"| {everything['stand']}/{everything['judged']} ({everything['coverage']:.1%}) |")
    assert row in done.stdout.split("side by side")[1]
    ceiling = lodo["ceiling"]  # and the best one threshold does in hindsight, its last column
    cell = "none reaches the target" if ceiling is None else (
        f"| {ceiling['stand']}/{ceiling['judged']} ({ceiling['coverage']:.1%}) at {ceiling['threshold']:.2f} |")
    assert cell in done.stdout.split("side by side")[1].split(row)[1].splitlines()[0]
    inside = fitted.cross_validated["ceiling_in_sample"]
    assert f"hindsight (the map scored on the rows it was fitted on): {inside['stand']}/{inside['judged']}" in done.stdout


@pytest.mark.cli
def test_calibrate_refuses_a_domain_count_that_does_not_match():
    done = calibrate("--domain", "jwt")
    assert done.returncode == 2 and "one --domain per --citations" in done.stderr


def answered_table(domains, seed=5):
    """Judged rows with yes/no answers: in a `clear` domain a passing citation gets yes to "true"
    and a failing one no; in a `murky` domain the model says no to everything, whatever the truth
    (what a small model does on text it cannot read)."""
    rng = random.Random(seed)
    rows, names = [], []
    for domain, n in domains:
        for i in range(n):
            passes = i % 2 == 0
            yes = rng.uniform(0.7, 0.9) if passes and domain != "murky" else rng.uniform(0.1, 0.3)
            rows.append({C.ID: f"{domain}{i}", C.QUOTE_STATUS: "exact", C.SECTION_MATCH: True,
                         C.FABRICATED_REASON: None, C.ERROR: None, C.METHOD: "logprobs",
                         C.RELATION: "supports" if yes >= 0.5 else "says_nothing", C.CONFIDENCE: max(yes, 1 - yes),
                         C.PROBABILITIES: {"supports": yes, "contradicts": (1 - yes) / 2, "says_nothing": (1 - yes) / 2},
                         C.ANSWERS: {"true": yes, "false": rng.uniform(0.1, 0.3)},
                         C.EXPECTED: "verified" if passes else "unsupported"})
            names.append(domain)
    return pd.DataFrame(rows, dtype=object), names


def test_a_document_answered_no_to_everything_beyond_the_fitted_ones_is_not_covered():
    from citeaudit import Audit
    from citeaudit.calibrate.fit import fit_calibration
    from citeaudit.decide.calibration import COVER_MIN, Calibration, Routing
    from citeaudit.decide.decision import settle
    from citeaudit.decide.routing import route

    frame, names = answered_table([("clear", 40), ("plain", 40), ("murky", 40)])
    # fitted on the two readable domains, each a document: half their citations fail, so half say no
    readable = frame[[n != "murky" for n in names]].reset_index(drop=True)
    fitted = fit_calibration(readable, "m", "yesno", 0.95, folds=4, repeats=0, inputs="answers",
                             documents=[n for n in names if n != "murky"])
    assert fitted.no_share_max == pytest.approx(0.5)
    assert Calibration.from_json(fitted.to_json()) == fitted
    murky = frame[[n == "murky" for n in names]].reset_index(drop=True)
    why = fitted.uncovered(murky[C.ANSWERS])
    assert why and "100.0% of this document's 40 judged citations (at least 91.2%" in why and "(at most 50.0%)" in why
    assert fitted.uncovered(readable[C.ANSWERS]) is None  # what it was fitted on is covered
    assert fitted.uncovered(murky[C.ANSWERS][:COVER_MIN - 1]) is None  # too few citations to tell
    no, yes = {"true": 0.2, "false": 0.2}, {"true": 0.8, "false": 0.2}
    assert fitted.uncovered([no] * 24 + [yes] * 16) is None  # 60% of 40: above 50%, but within sampling noise
    assert fitted.uncovered([no] * 36 + [yes] * 4) is not None  # 90% of 40: at least 77% at 95% confidence
    routed = route(murky, fitted.route_threshold, fitted)
    assert all("uncovered" in flags for flags in routed[C.FLAGS]) and set(routed[C.ROUTE]) == {"review"}
    assert not any("uncovered" in flags for flags in route(readable, fitted.route_threshold, fitted)[C.FLAGS])
    audit = Audit(table=settle(routed.assign(**{C.MODEL: "m", C.KIND: "quote", C.CITED_SECTION: "1", C.FOUND_SECTION: "1"})), routing=Routing.resolve(None, fitted, "m", "yesno"))
    assert audit.decision.status == "REVIEW" and audit.decision.reasons[-1] == f"calibration: {why}"
    assert audit.routing_note().endswith(f"; but {why}")
    assert "flagged uncovered (the calibration does not cover this document" in audit.decision.reasons[0]
    # without the check the murky domain's passing citations would stand as failing
    unchecked = route(murky, fitted.route_threshold, fitted.__class__(**{**fitted.__dict__, "no_share_max": None}))
    assert (unchecked[C.ROUTE] == "auto").any()


def test_leave_one_domain_out_applies_the_check_of_the_map_fitted_without_the_domain():
    frame, names = answered_table([("clear", 40), ("plain", 40), ("murky", 40)])
    without = domain_figures(leave_one_domain_out(frame, names, 0.95, inputs="answers"))
    checked = domain_figures(leave_one_domain_out(frame, names, 0.95, inputs="answers", documents=names))
    assert without.loc["murky", "stand"] > 0 and without.loc["murky", "precision"] < 0.95
    assert checked.loc["murky", "stand"] == 0  # its no-to-everything share is beyond every other domain's
    assert checked.loc["clear", "stand"] == without.loc["clear", "stand"]  # the others are covered


def test_the_threshold_rule_is_applied_by_the_library_as_the_cli_applies_it(tmp_path):
    """`hold_out_calibration` (what `citeaudit calibrate` prints from) and `fit_judge` (judge-setup,
    notebook 09) write the worst-domain threshold into the calibration; `pooled` keeps the fitted one."""
    from citeaudit import AuditOptions
    from citeaudit.calibrate.domains import hold_out_calibration
    from citeaudit.calibrate.fit import fit_calibration
    from citeaudit.workflows.judge_setup import fit_judge

    frame, names = table([("normal", 40), ("plain", 40)], seed=7)
    fitted = fit_calibration(frame, "m", "choice", 0.95, repeats=0, inputs="supports")
    worst = hold_out_calibration(fitted, frame, names, None, 0.95, "worst-domain")
    pooled = hold_out_calibration(fitted, frame, names, None, 0.95, "pooled")
    assert worst.calibration.threshold == worst.worst and pooled.calibration.threshold == fitted.threshold
    assert worst.calibration.cross_validated["leave_one_domain_out"]["worst_domain_threshold"] == worst.worst
    with pytest.raises(ValueError, match="two domains"):
        hold_out_calibration(fitted, frame, ["one"] * len(frame), None, 0.95)
    parts = {name: frame[[n == name for n in names]].reset_index(drop=True) for name in ("normal", "plain")}
    options = AuditOptions.from_env(model="m", strategy="choice").with_(threshold=None)
    judged = fit_judge(parts, options, repeats=0, save=False, domains={"normal": "normal", "plain": "plain"},
                       threshold_rule="worst-domain")
    assert "leave_one_domain_out" in judged.cross_validated
    assert judged.threshold == judged.cross_validated["leave_one_domain_out"]["worst_domain_threshold"]
