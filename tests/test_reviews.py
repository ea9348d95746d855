import json

import pytest
from conftest import DATA

from citeaudit import InputError, apply_reviews
from citeaudit.citations.lines import load_line_answer
from citeaudit.decide import decide_answer as decide
from citeaudit.decide.fingerprints import fingerprint
from citeaudit.decide.reviews import load_reviews, record_review, review_row
from citeaudit.pipeline.audit import audit_lines, audit_quotes


@pytest.fixture
def note(tmp_path):
    doc = tmp_path / "note.txt"
    doc.write_text((DATA / "lines" / "field_note.txt").read_text())
    return doc


def line_table(doc):
    return audit_lines(load_line_answer(doc, DATA / "lines" / "good_answer.txt"), locate_only=True).table


def test_a_current_review_decides_the_row_and_an_edit_makes_it_stale(note, tmp_path):
    store = tmp_path / "reviews.jsonl"
    table = line_table(note)
    assert decide(apply_reviews(table, load_reviews(store))).status == "REVIEW"
    review_row(table, "c1", store, "verified", reviewer="ana", note="lines 2-3 say so")
    review_row(table, "c2", store, "verified", reviewer="ana")
    reviewed = apply_reviews(line_table(note), load_reviews(store))
    assert list(reviewed["review_state"]) == ["current", "current"]
    assert decide(reviewed).status == "ACCEPT"

    note.write_text(note.read_text().replace("14 March", "15 March"))  # edit the cited evidence
    edited = apply_reviews(line_table(note), load_reviews(store))
    assert list(edited["review_state"]) == ["stale", "current"]
    decision = decide(edited)
    assert decision.status == "REVIEW" and decision.reasons[0].startswith("c1")


def test_a_confirmed_failing_verdict_rejects(note, tmp_path):
    store = tmp_path / "reviews.jsonl"
    table = line_table(note)
    review_row(table, "c1", store, "contradicted")
    decision = decide(apply_reviews(table, load_reviews(store)))
    assert decision.status == "REJECT" and decision.reasons[0] == "c1: review found that lines L2-L3 contradicts it"


def test_latest_review_counts(note, tmp_path):
    store = tmp_path / "reviews.jsonl"
    table = line_table(note)
    review_row(table, "c1", store, "unsupported")
    review_row(table, "c1", store, "verified")
    assert apply_reviews(table, load_reviews(store))["review_verdict"][0] == "verified"


def test_store_lines_hold_the_contract_fields(note, tmp_path):
    store = tmp_path / "reviews.jsonl"
    table = line_table(note)
    review_row(table, "c2", store, "verified", reviewer="bo", note="ok")
    record = json.loads(store.read_text())
    assert set(record) == {"citation_id", "fingerprint", "verdict", "reviewer", "note", "timestamp", "selection"}
    assert record["selection"] == "waiting"  # step 1 only: no model verdict stood, so it waited for a human
    row = table.iloc[1]
    assert record["fingerprint"] == fingerprint("c2", row["claim"], "L5-L6", row["evidence"])


def test_torn_last_line_is_not_a_review(tmp_path):
    store = tmp_path / "reviews.jsonl"
    record_review(store, "c1", "a" * 64, "verified")
    with open(store, "a") as handle:
        handle.write('{"citation_id": "c2", "finger')
    assert [r.citation_id for r in load_reviews(store)] == ["c1"]
    record_review(store, "c3", "b" * 64, "unsupported")
    assert [r.citation_id for r in load_reviews(store)] == ["c1", "c3"]


def test_bad_review_line_names_file_line_and_field(tmp_path):
    store = tmp_path / "reviews.jsonl"
    store.write_text('{"citation_id": "c1", "fingerprint": "xyz", "verdict": "verified"}\n')
    with pytest.raises(InputError, match=r"reviews.jsonl: review 1, field 'fingerprint'"):
        load_reviews(store)


def test_review_of_unknown_or_fabricated_citation_is_refused(tmp_path):
    table = audit_lines(load_line_answer(DATA / "lines" / "field_note.txt", DATA / "lines" / "broken_answer.txt"),
                        locate_only=True).table
    with pytest.raises(InputError, match="no citation 'c9'"):
        review_row(table, "c9", tmp_path / "r.jsonl", "verified")
    with pytest.raises(InputError, match="no evidence"):
        review_row(table, "c2", tmp_path / "r.jsonl", "verified")
    with pytest.raises(InputError, match="not one of"):
        record_review(tmp_path / "r.jsonl", "c1", "a" * 64, "supported")


def test_seed_reviews_json_reads_as_a_store():
    reviews = load_reviews(DATA / "contract" / "reviews.json")
    assert [(r.citation_id, r.verdict) for r in reviews] == [("C1", "verified")]
    assert reviews[0].fingerprint == "6709ca2e356511f1a0e55ccef6996d8f15a71a74411df7698a0b3823784d19e2"


def test_reviews_work_for_quote_citations_too(tmp_path):
    store = tmp_path / "reviews.jsonl"
    table = audit_quotes("rfc7519.txt", DATA / "rfc7519_citations.json", locate_only=True).table
    review_row(table, "aud_reject", store, "verified")
    reviewed = apply_reviews(table, load_reviews(store)).set_index("id")
    assert reviewed.at["aud_reject", "review_state"] == "current"
    assert reviewed.at["epoch_seconds", "review_state"] == "none"


@pytest.mark.cli
def test_audit_with_reviews_shows_the_models_columns_apart_from_what_holds(tmp_path, recorded_cache):
    """An overridden verdict reads `verified / auto` as the model's and `contradicted (human)` as
    what holds now: the table never shows the overruled verdict as the row's verdict."""
    from test_cli import run

    store, inputs = tmp_path / "r.jsonl", ("--source", "rfc7519.txt", "--citations", str(DATA / "rfc7519_citations.json"))
    assert run("review", "--reviews", str(store), *inputs, "--id", "clock_skew", "--verdict", "contradicted",
               "--threshold", "0.7").returncode == 0
    result = run("audit", *inputs, "--reviews", str(store), "--threshold", "0.7")
    header, *rows = result.stdout.splitlines()[1:10]
    assert "model verdict" in header and "model route" in header and "final" in header.split()
    clock = next(line for line in rows if line.split()[0] == "clock_skew").split()
    assert "verified" in clock and "contradicted (human)" in " ".join(clock)
    plain = run("audit", *inputs, "--threshold", "0.7").stdout.splitlines()[1]
    assert "model verdict" not in plain and " verdict " in plain  # without reviews, one verdict column
