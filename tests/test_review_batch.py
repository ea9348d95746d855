"""A batch of reviews in one go: good rows go in, each bound to its evidence; bad rows are named."""

import json

import pytest
from conftest import DATA

from citeaudit import InputError, Judge, ReviewQueue, audit_quotes, load_reviews
from citeaudit.decide import review_batch, row_fingerprint


@pytest.fixture(scope="module")
def located():
    return audit_quotes("rfc7519.txt", DATA / "rfc7519_citations.json", locate_only=True).table


def test_the_example_batch_goes_in_whole_and_bound(located, tmp_path):
    store = tmp_path / "r.jsonl"
    outcome = review_batch(located, DATA / "rfc7519_reviews.csv", store, reviewer="ana")
    assert outcome.problems == () and len(outcome.recorded) == 7
    reviews = load_reviews(store)
    assert {r.citation_id: r.fingerprint for r in reviews} == \
        {r.citation_id: row_fingerprint(located[located["id"] == r.citation_id].iloc[0]) for r in reviews}
    assert {r.verdict for r in reviews if r.citation_id == "exp_required"} == {"contradicted"}
    assert all(r.reviewer == "ana" and r.selection == "waiting" for r in reviews)  # step 1 only: all waited
    assert [json.loads(line)["citation_id"] for line in store.read_text().splitlines()] == \
        [r.citation_id for r in reviews]  # one whole line each
    again = review_batch(located, DATA / "rfc7519_reviews.csv", store)
    assert again.recorded == () and len(again.unchanged) == 7 and len(load_reviews(store)) == 7


def test_a_bad_row_is_named_with_its_line_and_fix_and_the_others_go_in(located, tmp_path):
    batch = tmp_path / "batch.csv"
    batch.write_text("id,verdict,note,claim\n"
                     "aud_reject,verified,4.1.3 says so,ignored column\n"
                     "no_such_id,verified,,\n"
                     "sig_reporting,verified,,\n"
                     "clock_skew,supported,,\n"
                     "\n"
                     ",unsupported,,\n"
                     '"iat_future",unsupported,"a note, with a comma",\n'
                     "aud_reject,contradicted,,\n")
    store = tmp_path / "r.jsonl"
    outcome = review_batch(located, batch, store)
    assert [r.citation_id for r in outcome.recorded] == ["aud_reject", "iat_future"]
    assert [(r.citation_id, r.verdict, r.note) for r in load_reviews(store)] == \
        [("aud_reject", "verified", "4.1.3 says so"), ("iat_future", "unsupported", "a note, with a comma")]
    assert outcome.problems == (
        "line 3: no citation 'no_such_id' in the audited input; give an id of its audit table",
        "line 4: citation 'sig_reporting' has no evidence to review (quote not found in rfc7519.txt (best match "
        "52.9/100)); drop this row",
        "line 5: verdict 'supported' is not one of verified, contradicted, unsupported; write one of them",
        "line 7: no id; give the citation's id as the audit table shows it",
        "line 9: citation 'aud_reject' is reviewed already at line 2; keep one of the two",
    )
    assert "2 review(s)" in outcome.summary(store) and "5 row(s) left out" in outcome.summary(store)


def test_a_jsonl_batch_reports_lines_that_are_not_objects(located, tmp_path):
    batch = tmp_path / "batch.jsonl"
    batch.write_text('{"id": "epoch_seconds", "verdict": "verified", "note": "section 2"}\n'
                     "not json\n"
                     '["epoch_seconds"]\n'
                     '{"id": "pii_encryption", "verdict": "unsupported", "reviewer": "bo"}\n')
    store = tmp_path / "r.jsonl"
    outcome = review_batch(located, batch, store, reviewer="ana")
    assert [(r.citation_id, r.reviewer) for r in load_reviews(store)] == [("epoch_seconds", "ana"),
                                                                          ("pii_encryption", "bo")]
    assert [p.split(":")[0] for p in outcome.problems] == ["line 2", "line 3"]


@pytest.mark.parametrize("name, text, message", [
    ("b.csv", "citation,label\nc1,verified\n", r"b.csv, line 1: no column 'id' or 'verdict'"),
    ("b.csv", "", r"b.csv is empty"),
    ("b.txt", "id,verdict\n", r"a review batch is a .csv file"),
])
def test_a_file_that_is_not_a_batch_records_nothing(located, tmp_path, name, text, message):
    batch, store = tmp_path / name, tmp_path / "r.jsonl"
    batch.write_text(text)
    with pytest.raises(InputError, match=message):
        review_batch(located, batch, store)
    assert not store.exists()


def test_the_queue_takes_a_batch_and_lists_spot_checks_apart(tmp_path, replay_cache):
    from citeaudit import AuditOptions

    options = AuditOptions(spot_check=1.0, contrast=())  # no contrast check: the wrong exp_required may stand
    audit = audit_quotes("rfc7519.txt", DATA / "rfc7519_citations.json", judge=Judge(cache=replay_cache),
                         options=options).reroute(0.7)  # exp_required stands (verified; gold contradicted)
    queue = ReviewQueue(audit, tmp_path / "r.jsonl")
    assert queue.spot_checks and [queue.table.at[i, "id"] for i in queue.spot_checks] == ["exp_required"]
    assert "exp_required" not in [queue.table.at[i, "id"] for i in queue.pending]
    while queue.position < len(queue.pending):
        queue.skip()
    assert "spot check" in queue.card_html() and queue.current()["id"] == "exp_required"
    assert queue.overview().set_index("citation").at["exp_required", "state"] == "stands (spot check)"
    outcome = queue.review_batch(DATA / "rfc7519_reviews.csv", reviewer="ana")
    assert len(outcome.recorded) == 7 and queue.done and queue.spot_checks == []
    assert {r.citation_id: r.selection for r in load_reviews(queue.store)}["exp_required"] == "spot_check"
    assert queue.decision().status == "REJECT" and "recorded 7 review(s)" in queue.saved
    # the one drawn standing verdict is wrong (0 of 1), but the replay cache has no calibration: no promise to break
    assert queue.precision_warning() is None
