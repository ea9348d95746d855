import itertools
import math

import pandas as pd
import pytest
from conftest import DATA

from citeaudit import Judge, audit_quotes
from citeaudit import columns as C
from citeaudit.calibrate import advise, expected_calibration_error, lowest_threshold, reliability, threshold_table


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
