import pandas as pd
import pytest

from citeaudit import table as C
from citeaudit.decide import decide_answer as decide
from citeaudit.decide import route


def table(rows):
    base = {C.ID: None, C.KIND: "quote", C.CITED_SECTION: "2", C.FOUND_SECTION: "2", C.VERDICT: None,
            C.QUOTE_STATUS: "exact", C.SECTION_MATCH: True, C.FABRICATED_REASON: None,
            C.RELATION: None, C.CONFIDENCE: None, C.ERROR: None}
    return pd.DataFrame([{**base, **r} for r in rows], dtype=object)


ROWS = [
    {C.ID: "a", C.RELATION: "supports", C.CONFIDENCE: 0.95},
    {C.ID: "b", C.RELATION: "contradicts", C.CONFIDENCE: 0.85},
    {C.ID: "c", C.RELATION: "says_nothing", C.CONFIDENCE: 0.60},
    {C.ID: "d", C.QUOTE_STATUS: "missing", C.SECTION_MATCH: None, C.FABRICATED_REASON: "quote not found"},
]


@pytest.mark.parametrize("threshold, routes", [
    (0.0, ["auto", "auto", "auto", "auto"]),
    (0.6, ["auto", "auto", "auto", "auto"]),
    (0.8, ["auto", "auto", "review", "auto"]),
    (0.9, ["auto", "review", "review", "auto"]),
    (1.0, ["review", "review", "review", "auto"]),
])
def test_routes_at_several_thresholds(threshold, routes):
    routed = route(table(ROWS), threshold)
    assert list(routed[C.ROUTE]) == routes
    assert list(routed[C.VERDICT]) == ["verified", "contradicted", "unsupported", "fabricated"]


def test_auto_share_never_rises_with_the_threshold():
    shares = [(route(table(ROWS), t / 20)[C.ROUTE] == "auto").mean() for t in range(21)]
    assert shares == sorted(shares, reverse=True)


@pytest.mark.parametrize("row, flag", [
    ({C.QUOTE_STATUS: "near"}, "near_quote"),
    ({C.SECTION_MATCH: False}, "section_mismatch"),
    ({C.ERROR: "boom", C.RELATION: None, C.CONFIDENCE: None}, "judge_error"),
])
def test_flags_send_confident_rows_to_review(row, flag):
    routed = route(table([{C.ID: "x", C.RELATION: "supports", C.CONFIDENCE: 0.99, **row}]), 0.5)
    assert routed[C.ROUTE][0] == "review" and flag in routed[C.FLAGS][0]


def test_bad_threshold_is_refused():
    with pytest.raises(ValueError, match="between 0 and 1"):
        route(table(ROWS), 1.5)


def test_decide_reject_beats_review():
    decision = decide(route(table(ROWS), 0.8), threshold=0.8)
    assert decision.status == "REJECT"
    assert decision.reasons == ("b: contradicted (model verdict stands: score 0.85 ≥ threshold 0.80)",
                                "d: fabricated (quote not found)",
                                "c: no review yet; have its support by section 2 reviewed (model says unsupported, "
                                "score 0.60 < threshold 0.80)")


def test_decide_review_then_accept():
    rows = [{C.ID: "a", C.RELATION: "supports", C.CONFIDENCE: 0.95},
            {C.ID: "b", C.RELATION: "contradicts", C.CONFIDENCE: 0.5}]
    decision = decide(route(table(rows), 0.8))  # no threshold given: the score alone
    assert decision.status == "REVIEW" and decision.reasons == (
        "b: no review yet; have its support by section 2 reviewed (model says contradicted, score 0.50)",)
    assert decide(route(table(rows[:1]), 0.8)).status == "ACCEPT"


def test_decide_contract_errors_reject():
    assert decide(route(table(ROWS[:1]), 0.8), ["answer.claims[0]: bad"]).status == "REJECT"


def test_decide_nothing_checked_is_review_never_accept():
    empty = route(table([]).reindex(columns=table(ROWS).columns), 0.8)
    decision = decide(empty)
    assert decision.status == "REVIEW" and "nothing was checked" in decision.reasons[0]


def test_decide_needs_review_keeps_an_all_verified_answer_in_review():
    routed = route(table(ROWS[:1]), 0.8)
    assert decide(routed).status == "ACCEPT"
    assert decide(routed, needs_review=["unrecognized citation marker '[L1,L2]'"]).status == "REVIEW"


def probs(s, c, n):
    return {"supports": s, "contradicts": c, "says_nothing": n}


def judged(rows):
    return table([{C.METHOD: "logprobs", **r} for r in rows])


def test_routing_is_on_pass_or_fail():
    rows = judged([
        # supports wins the argmax but fails on pass/fail: 0.60 against it
        {C.ID: "a", C.RELATION: "contradicts", C.PROBABILITIES: probs(0.40, 0.35, 0.25), C.CONFIDENCE: 0.60},
        {C.ID: "b", C.RELATION: "supports", C.PROBABILITIES: probs(0.85, 0.10, 0.05), C.CONFIDENCE: 0.85},
        {C.ID: "c", C.RELATION: "says_nothing", C.PROBABILITIES: probs(0.10, 0.10, 0.80), C.CONFIDENCE: 0.90},
    ])
    routed = route(rows, 0.6)
    assert list(routed[C.VERDICT]) == ["contradicted", "verified", "unsupported"]
    assert list(routed[C.ROUTE]) == ["auto", "auto", "auto"]
    # the close call between contradicts and says nothing is flagged but does not block
    assert list(routed[C.FLAGS]) == [["contradicted_or_unsupported"], [], []]
    assert list(route(rows, 0.86)[C.ROUTE]) == ["review", "review", "auto"]
    assert decide(routed).status == "REJECT"


def test_verdict_follows_p_supports_even_when_the_relation_was_recorded_otherwise():
    row = judged([{C.ID: "x", C.RELATION: "supports", C.PROBABILITIES: probs(0.45, 0.30, 0.25), C.CONFIDENCE: 0.55}])
    assert route(row, 0.5)[C.VERDICT][0] == "contradicted"


def test_informational_flag_never_outweighs_a_blocking_one():
    row = judged([{C.ID: "x", C.RELATION: "contradicts", C.PROBABILITIES: probs(0.05, 0.50, 0.45),
                   C.CONFIDENCE: 0.95, C.QUOTE_STATUS: "near"}])
    routed = route(row, 0.5)
    assert routed[C.ROUTE][0] == "review" and routed[C.FLAGS][0] == ["near_quote", "contradicted_or_unsupported"]


def test_a_sampled_answer_never_stands_from_half_up():
    row = table([{C.ID: "x", C.RELATION: "supports", C.PROBABILITIES: probs(1.0, 0.0, 0.0),
                  C.CONFIDENCE: 0.43, C.METHOD: "sampling (n=5, Wilson 99% lower bound)"}])
    assert all(route(row, t / 100)[C.ROUTE][0] == "review" for t in range(50, 101))


def test_calibration_maps_p_supports_and_is_an_argument_of_routing():
    from citeaudit.decide.calibration import Calibration

    # this model's P(supports) runs low: 0.4 already means "passes" (P(pass) = 0.83)
    shifted = Calibration(model="m", strategy="choice", a=2.0, b=1.0, threshold=0.8)
    rows = judged([{C.ID: "a", C.RELATION: "contradicts", C.PROBABILITIES: probs(0.4, 0.35, 0.25), C.CONFIDENCE: 0.6},
                   {C.ID: "s", C.RELATION: "supports", C.PROBABILITIES: probs(1.0, 0.0, 0.0), C.CONFIDENCE: 0.43,
                    C.METHOD: "sampling (n=5, Wilson 99% lower bound)"}])
    plain = route(rows, 0.8)
    assert list(plain[C.VERDICT]) == ["contradicted", "verified"] and list(plain[C.ROUTE]) == ["review", "review"]
    calibrated = route(rows, 0.8, shifted)
    assert list(calibrated[C.VERDICT]) == ["verified", "verified"]
    assert list(calibrated[C.ROUTE]) == ["auto", "review"]  # a sampled bound is never mapped up
    # the calibration is an argument (an Audit holds it), never an attribute the table carries along
    assert list(route(calibrated, 0.8)[C.ROUTE]) == ["review", "review"]
    assert not calibrated.attrs and "threshold" not in calibrated.columns
    assert list(route(calibrated, 0.9)[C.ROUTE]) == ["review", "review"]


def test_a_calibration_of_the_answers_maps_them_and_sends_a_row_without_them_to_review():
    from citeaudit.decide.calibration import Calibration

    # P(pass) from "is it false?" alone: this model says yes to it for the claims that pass
    by_answers = Calibration(model="m", strategy="yesno", a=0.0, b=0.0, threshold=0.8, weights={"false": 4.0})
    rows = judged([
        {C.ID: "y", C.RELATION: "says_nothing", C.PROBABILITIES: probs(0.45, 0.3, 0.25), C.CONFIDENCE: 0.55,
         C.ANSWERS: {"true": 0.45, "false": 0.6}},
        {C.ID: "n", C.RELATION: "says_nothing", C.PROBABILITIES: probs(0.45, 0.1, 0.45), C.CONFIDENCE: 0.55,
         C.ANSWERS: {"true": 0.45, "false": 0.2}},
        {C.ID: "x", C.RELATION: "supports", C.PROBABILITIES: probs(0.9, 0.05, 0.05), C.CONFIDENCE: 0.9},
    ])
    routed = route(rows, 0.8, by_answers)
    assert list(routed[C.VERDICT]) == ["verified", "unsupported", "verified"]
    assert list(routed[C.ROUTE]) == ["auto", "auto", "review"]
    assert routed[C.SCORE][0] == pytest.approx(1 / (1 + 0.4 ** 4 / 0.6 ** 4)) and routed[C.SCORE][2] is None


def test_a_calibration_that_names_failures_picks_the_word_and_the_unsure_flag():
    from citeaudit.decide.calibration import Calibration

    naming = Calibration(model="m", strategy="panel", a=-2.0, b=0.0, threshold=0.8, weights={"true": 1.0},
                         name_a=0.0, name_weights={"contradict": 3.0})
    rows = judged([  # the raw probabilities would say unsupported for all three
        {C.ID: id_, C.RELATION: "says_nothing", C.PROBABILITIES: probs(0.2, 0.1, 0.7), C.CONFIDENCE: 0.8,
         C.ANSWERS: {"true": 0.2, "false": 0.1, "contradict": q}} for id_, q in (("c", 0.8), ("u", 0.2), ("?", 0.52))])
    routed = route(rows, 0.8, naming)
    assert list(routed[C.VERDICT]) == ["contradicted", "unsupported", "contradicted"]
    assert list(routed[C.FLAGS]) == [[], [], ["contradicted_or_unsupported"]]
    assert list(routed[C.ROUTE]) == ["auto", "auto", "auto"]  # the answer fails either way


def test_waiting_reasons_name_what_kept_a_citation_from_standing():
    rows = [{C.ID: "near", C.RELATION: "contradicts", C.CONFIDENCE: 0.95, C.QUOTE_STATUS: "near"},
            {C.ID: "moved", C.RELATION: "supports", C.CONFIDENCE: 0.9, C.SECTION_MATCH: False},
            {C.ID: "miss", C.ERROR: "No recorded answer for citation 'miss'", C.ERROR_KIND: "replay_miss"},
            {C.ID: "down", C.ERROR: "APIConnectionError: refused", C.ERROR_KIND: "endpoint"}]
    reasons = decide(route(table(rows), 0.8), threshold=0.8).reasons
    assert reasons == (
        "near: no review yet; have its support by section 2 reviewed (model says contradicted, score 0.95 ≥ "
        "threshold 0.80, but flagged near_quote (the quote is not verbatim))",
        "moved: no review yet; have its support by section 2 reviewed (model says verified, score 0.90 ≥ "
        "threshold 0.80, but flagged section_mismatch (the quote is in another section than the one cited))",
        "miss: no review yet; have its support by section 2 reviewed (no recorded answer of the judge: record one, "
        "or review it by hand)",
        "down: no review yet; have its support by section 2 reviewed (the judge failed: see the row's error)")


def test_settle_writes_each_rows_state_once():
    from citeaudit.decide.decision import settle

    rows = [*ROWS, {C.ID: "e", C.ERROR: "boom", C.ERROR_KIND: "endpoint"}, {C.ID: "f"}]
    settled = settle(route(table(rows), 0.8))
    assert list(settled[C.STATE]) == ["stands", "stands", "waiting", "fabricated", "judge_error", "not_judged"]
    assert list(settled[C.FINAL_VERDICT]) == ["verified", "contradicted", None, "fabricated", None, None]
