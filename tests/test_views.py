"""The views show what the answer wrote: the claim, the quote, a word diff for near quotes, the
closest passage for missing ones, highlights on whole words."""

import re

import pytest
from conftest import DATA

from citeaudit import audit_quotes, step1_view, step2_view
from citeaudit.views import closest_passage, evidence_html, quote_html, quote_notes, records, word_diff


@pytest.fixture(scope="module")
def located():
    return audit_quotes("rfc7519.txt", DATA / "eval_rfc7519.json", locate_only=True)


def row(audit, cid):
    return audit.table[audit.table["id"] == cid].iloc[0]


def test_step_views_show_the_claim_and_the_quote_as_written(located):
    for view in (step1_view(located.table), step2_view(located.table)):
        shown = row(located, "jwt_sub_uniqueness_should")
        line = view[view["citation"] == "jwt_sub_uniqueness_should"].iloc[0]
        assert line["claim"] == shown["claim"] and line["quoted text"] == shown["quote"]
    assert "claim" not in step1_view(located.table, text=False)


def test_near_quote_diff_marks_the_changed_word(located):
    near = row(located, "jwt_sub_uniqueness_should")
    assert word_diff(near["quote"], closest_passage(near, located.document)) == (
        "The subject value [-MUST-]{+SHOULD+} either be scoped to be locally unique in the context of the "
        "issuer or be globally unique.")
    page = quote_html(near, located.document)
    assert near["quote"] in page
    assert re.search(r"<del [^>]*>MUST</del> <ins [^>]*>SHOULD</ins>", page)


def test_missing_quote_shows_the_quote_and_the_closest_passage_on_word_boundaries(located):
    missing = row(located, "jwt_fab_exp_access_token")
    passage = closest_passage(missing, located.document)
    assert passage.startswith("processing.") and passage.endswith("date/time")  # not "rocessing"
    page = quote_html(missing, located.document)
    assert "Not in the source" in page and "52.5/100" in page
    assert "the &quot;exp&quot; claim MUST be present and MUST NOT be more than one hour" in page
    note = "\n".join(quote_notes(located.table, located.document))
    assert "jwt_fab_exp_access_token: quote not in the source" in note
    record = next(r for r in records(located.table, located.document) if r["id"] == "jwt_fab_exp_access_token")
    assert record["quote"] == missing["quote"] and record["closest"] == passage


def test_highlight_snaps_to_whole_words(located):
    near = row(located, "jwt_claim_review_two_weeks")
    marked = re.search(r"<mark>(.*?)</mark>", evidence_html(near, located.document), flags=re.S).group(1)
    assert marked.startswith("Values are registered")  # the alignment began at "alues"


def test_window_folds_a_long_section_behind_details(located):
    long_row = located.table[(located.table["evidence"].str.len() > 2500) & located.table["span"].notna()].iloc[0]
    page = evidence_html(long_row, located.document, window=True)
    window, full = page.split("<details>")
    assert "<mark>" in window and "<mark>" in full and len(window) < len(full)
    assert "characters)</summary>" in full
