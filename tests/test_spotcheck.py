"""Spot checks: the draw, what they hold (nothing, until a review), and the agreement's numbers."""

import hashlib
import itertools
import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit import AuditOptions, AuditRun, InputError, apply_reviews, load_reviews
from citeaudit import table as C
from citeaudit.decide import (
    Routing,
    agreement,
    is_spot_check,
    precision_warning,
    review_row,
    route,
    settle,
    spot_draw,
    wilson_interval,
)
from citeaudit.decide import decide_answer as decide
from citeaudit.decide.calibration import Calibration


def fp(n: int) -> str:
    """A synthetic review fingerprint (64 hex characters)."""
    return hashlib.sha256(f"citation {n}".encode()).hexdigest()


FINGERPRINTS = [fp(n) for n in range(20_000)]


# --- the draw -------------------------------------------------------------------------------------

def test_the_same_fingerprint_is_always_drawn_or_not():
    for f in FINGERPRINTS[:200]:
        assert spot_draw(f) == spot_draw(str(f))
        assert is_spot_check(f, 0.37) == is_spot_check(f, 0.37) == (spot_draw(f) < 0.37)


def test_rate_zero_draws_none_and_rate_one_draws_all():
    assert not any(is_spot_check(f, 0.0) for f in FINGERPRINTS)
    assert all(is_spot_check(f, 1.0) for f in FINGERPRINTS)
    assert not is_spot_check(None, 1.0)  # no evidence, no fingerprint: nothing to review


@pytest.mark.parametrize("rate", [0.02, 0.1, 0.5, 0.9])
def test_the_share_drawn_is_near_the_rate(rate):
    share = sum(is_spot_check(f, rate) for f in FINGERPRINTS) / len(FINGERPRINTS)
    assert abs(share - rate) < 5 * math.sqrt(rate * (1 - rate) / len(FINGERPRINTS))  # 5 sd: never by chance


def test_a_higher_rate_draws_every_citation_a_lower_one_draws():
    low = {f for f in FINGERPRINTS[:5000] if is_spot_check(f, 0.05)}
    high = {f for f in FINGERPRINTS[:5000] if is_spot_check(f, 0.2)}
    assert low < high


def test_the_draw_is_not_the_fingerprints_own_bits():
    """Hashed again with a label: a fold or sample taken from the fingerprint's bits elsewhere is independent."""
    same = sum((spot_draw(f) < 0.5) == (int(f[:16], 16) / 2 ** 64 < 0.5) for f in FINGERPRINTS)
    assert abs(same / len(FINGERPRINTS) - 0.5) < 0.02


def test_the_rate_is_checked_where_it_enters(monkeypatch):
    for bad in (-0.1, 1.5, float("nan"), True):
        with pytest.raises(InputError, match="from 0 to 1"):
            AuditOptions(spot_check=bad)
    monkeypatch.setenv("CITEAUDIT_SPOT_CHECK", "0.25")
    assert AuditOptions.from_env().spot_check == 0.25 and AuditRun(AuditOptions.from_env()).routing.spot_check == 0.25
    assert AuditOptions.from_env(spot_check=0.0).spot_check == 0.0  # an argument before the environment
    monkeypatch.setenv("CITEAUDIT_SPOT_CHECK", "ten percent")
    with pytest.raises(InputError, match="CITEAUDIT_SPOT_CHECK='ten percent'"):
        AuditOptions.from_env()
    monkeypatch.delenv("CITEAUDIT_SPOT_CHECK")
    assert AuditOptions.from_env().spot_check == 0.1


# --- what a spot check holds ----------------------------------------------------------------------

def table(rows):
    base = {C.ID: None, C.KIND: "quote", C.CLAIM: "a claim", C.CITED_SECTION: "2", C.FOUND_SECTION: "2",
            C.EVIDENCE: "the section's text", C.VERDICT: None, C.QUOTE_STATUS: "exact", C.SECTION_MATCH: True,
            C.FABRICATED_REASON: None, C.RELATION: None, C.CONFIDENCE: None, C.ERROR: None}
    return pd.DataFrame([{**base, **r} for r in rows], dtype=object)


def standing(n: int, relation: str = "supports") -> list[dict]:
    return [{C.ID: f"s{k}", C.CLAIM: f"claim {k}", C.RELATION: relation, C.CONFIDENCE: 0.95} for k in range(n)]


ROWS = [*standing(40),
        {C.ID: "w", C.RELATION: "supports", C.CONFIDENCE: 0.6},
        {C.ID: "f", C.QUOTE_STATUS: "missing", C.EVIDENCE: None, C.FABRICATED_REASON: "quote not found"},
        {C.ID: "e", C.ERROR: "boom", C.ERROR_KIND: "endpoint"}]


def test_only_standing_verdicts_are_drawn_and_their_state_stays_stands():
    routed = route(table(ROWS), 0.8)
    none, some, every = (settle(routed, rate) for rate in (0.0, 0.5, 1.0))
    assert list(every[C.SPOT_CHECK]) == [True] * 40 + [False] * 3
    assert not any(none[C.SPOT_CHECK]) and 0 < sum(some[C.SPOT_CHECK]) < 40
    for settled in (some, every):
        assert list(settled[C.STATE]) == list(none[C.STATE]) and list(settled[C.FINAL_VERDICT]) == \
            list(none[C.FINAL_VERDICT])


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(["supports", "contradicts", "says_nothing"]),
                               st.floats(0.34, 1.0), st.booleans()), min_size=1, max_size=8),
       rate=st.floats(0.0, 1.0))
def test_without_a_review_a_spot_check_never_changes_the_decision(rows, rate):
    """Fail closed: drawing spot checks at any rate neither makes an answer ACCEPT nor keeps it from it."""
    routed = route(table([{C.ID: f"r{k}", C.CLAIM: f"claim {k}", C.RELATION: relation, C.CONFIDENCE: confidence,
                           C.QUOTE_STATUS: "near" if near else "exact"}
                          for k, (relation, confidence, near) in enumerate(rows)]), 0.8)
    assert decide(settle(routed, rate)) == decide(settle(routed, 0.0))


def test_an_agreeing_spot_check_review_leaves_the_decision_and_a_disagreeing_one_settles_it(tmp_path):
    settled = settle(route(table(standing(3)), 0.8), 1.0)  # three verified verdicts stand, all drawn
    assert decide(settled).status == "ACCEPT"
    agree, disagree = tmp_path / "agree.jsonl", tmp_path / "disagree.jsonl"
    review_row(settled, "s1", agree, "verified")
    review_row(settled, "s1", disagree, "contradicted", note="the section says the opposite")
    assert [r.selection for r in load_reviews(agree)] == ["spot_check"]

    agreed = apply_reviews(settled, load_reviews(agree), 1.0)
    assert decide(agreed).status == "ACCEPT" and list(agreed[C.FINAL_VERDICT]) == ["verified"] * 3
    assert agreed.set_index(C.ID).at["s1", C.STATE] == "reviewed"

    disagreed = apply_reviews(settled, load_reviews(disagree), 1.0)
    decision = decide(disagreed)
    assert decision.status == "REJECT" and decision.reasons == ("s1: review found that section 2 contradicts it",)


def test_a_review_records_how_its_citation_was_selected(tmp_path):
    settled = settle(route(table([*standing(2), {C.ID: "w", C.RELATION: "supports", C.CONFIDENCE: 0.6}]), 0.8),
                     0.0)  # nothing drawn: s0 and s1 stand, w waits
    store = tmp_path / "r.jsonl"
    review_row(settled, "w", store, "verified")
    review_row(settled, "s0", store, "verified")
    drawn = settle(settled, 1.0)
    review_row(drawn, "s1", store, "unsupported")
    assert [(r.citation_id, r.selection) for r in load_reviews(store)] == \
        [("w", "waiting"), ("s0", "override"), ("s1", "spot_check")]


def test_a_store_written_before_selections_keeps_loading(tmp_path):
    store = tmp_path / "old.jsonl"
    store.write_text('{"citation_id": "c1", "fingerprint": "' + "a" * 64 + '", "verdict": "verified", '
                     '"reviewer": null, "note": null, "timestamp": "2025-01-01T00:00:00+00:00"}\n')
    (review,) = load_reviews(store)
    assert review.selection is None and review.verdict == "verified"


# --- agreement ------------------------------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(n=st.integers(0, 2000), data=st.data())
def test_the_wilson_interval_holds_the_share_and_stays_in_0_1(n, data):
    k = data.draw(st.integers(0, n))
    low, high = wilson_interval(k, n)
    assert 0.0 <= low <= high <= 1.0
    if n:
        assert low <= k / n <= high
        assert (low == 0.0) == (k == 0) and (high == 1.0) == (k == n)


def test_the_wilson_interval_narrows_as_reviews_accumulate():
    widths = [wilson_interval(9 * n // 10, n) for n in (10, 50, 200, 1000)]
    assert all(b[1] - b[0] < a[1] - a[0] for a, b in itertools.pairwise(widths))
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


CALIBRATED = Routing.resolve(None, Calibration(model="m", strategy="panel", a=0.0, b=1.0, threshold=0.8), "m",
                             "panel", spot_check=1.0)


def reviewed(rows, verdicts, rate=1.0, stale=()):
    """Rows routed at 0.8, each id in `verdicts` reviewed with that verdict (ids in `stale` against
    another evidence text)."""
    routed = settle(route(table(rows), 0.8), rate)
    from citeaudit.decide.reviews import Review, row_fingerprint

    prints = {row[C.ID]: row_fingerprint(row) for _, row in routed.iterrows()}
    reviews = [Review(citation_id=cid, fingerprint="0" * 64 if cid in stale else prints[cid], verdict=v)
               for cid, v in verdicts.items()]
    return apply_reviews(routed, reviews, rate)


def test_agreement_counts_current_reviews_and_leaves_stale_ones_out():
    rows = [*standing(4), {C.ID: "w", C.RELATION: "contradicts", C.CONFIDENCE: 0.6},
            {C.ID: "e", C.ERROR: "boom", C.ERROR_KIND: "endpoint"}]
    verdicts = {"s0": "verified", "s1": "verified", "s2": "contradicted", "s3": "unsupported", "w": "contradicted",
                "e": "verified"}
    result = agreement({"doc.txt": reviewed(rows, verdicts, stale=("s3",))}, CALIBRATED)
    assert result.stale == ("s3",) and result.counts == {"citations": 6, "reviewed": 5}
    assert result.confusion.loc["verified"].to_dict() == {"verified": 2, "contradicted": 1, "unsupported": 0}
    assert result.confusion.loc["contradicted"].to_dict() == {"verified": 0, "contradicted": 1, "unsupported": 0}
    assert result.confusion.loc["no verdict"].to_dict() == {"verified": 1, "contradicted": 0, "unsupported": 0}
    (group,) = result.groups.to_dict(orient="records")
    assert (group["source"], group["reviewed"], group["agree"]) == ("doc.txt", 4, 3)  # the judge error apart
    assert (group["low"], group["high"]) == wilson_interval(3, 4)
    spot = result.spot  # s0-s3 stand and are drawn at rate 1; s3's review is stale
    assert (spot.drawn, spot.reviewed, spot.right, spot.promise) == (4, 3, 2, 0.95)
    assert (spot.low, spot.high) == wilson_interval(2, 3)
    assert spot.high < 0.95 and result.warning is not None  # 2 of 3 right: at most 94% at 95% confidence


def test_the_warning_comes_when_the_spot_checks_interval_lies_below_the_promise():
    rows = standing(12)
    wrong = {f"s{k}": "unsupported" for k in range(5)}
    right = {f"s{k}": "verified" for k in range(5, 12)}
    result = agreement({"doc.txt": reviewed(rows, {**wrong, **right})}, CALIBRATED)
    assert result.spot.high == wilson_interval(7, 12)[1] < 0.95
    assert result.warning is not None and "below the calibration's promise of 95%" in result.warning
    assert "raise the threshold (--threshold above 0.80) or fit a profile" in result.warning
    assert precision_warning({"doc.txt": reviewed(rows, {**wrong, **right})}, CALIBRATED) == result.warning
    # the same reviews of verdicts that were not drawn (rate 0) say nothing of the standing precision
    undrawn = agreement({"doc.txt": reviewed(rows, {**wrong, **right}, rate=0.0)}, CALIBRATED)
    assert undrawn.spot.reviewed == 0 and undrawn.warning is None
    # without a calibration nothing was promised, so nothing is broken
    plain = agreement({"doc.txt": reviewed(rows, {**wrong, **right})}, Routing.resolve(None, None, spot_check=1.0))
    assert plain.spot.promise is None and plain.warning is None and "nothing was promised" in plain.spot.line()


def test_agreement_is_per_source_and_its_numbers_are_plain_json():
    import json

    a = reviewed(standing(2), {"s0": "verified", "s1": "verified"})
    b = reviewed(standing(3), {"s0": "unsupported"})
    result = agreement({"a.txt": a, "b.txt": b}, CALIBRATED)
    assert list(result.groups["source"]) == ["a.txt", "b.txt"] and list(result.groups["agree"]) == [2, 0]
    assert json.loads(json.dumps(result.to_dict(), allow_nan=False)) == result.to_dict()
