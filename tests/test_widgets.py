"""The slider and review callbacks, called as functions and through the real ipywidgets objects."""

import pytest
from conftest import DATA

from citeaudit import (
    AuditOptions,
    InputError,
    Judge,
    ReviewQueue,
    ThresholdExplorer,
    audit_quotes,
    load_reviews,
    load_rfc,
)


@pytest.fixture(scope="module")
def judged(replay_cache):
    """The worked example with the contrast checks off, so that the wrong `exp_required` can stand (as
    the model's verdict alone would let it) for the slider and the override to act on."""
    doc = load_rfc("rfc7519.txt")
    return doc, audit_quotes(doc, DATA / "rfc7519_citations.json", judge=Judge(cache=replay_cache),
                             options=AuditOptions(contrast=()))


def test_slider_callback_reroutes_without_calls(judged):
    _, audit = judged
    table = audit.table
    explorer = ThresholdExplorer(table, 0.8)
    strict = explorer.view(0.8)
    loose = explorer.view(0.0)
    assert (strict["route"] == "auto").sum() == 1  # only the fabricated quote stands
    assert (loose["route"] == "auto").sum() == 8
    assert loose.set_index("citation").at["exp_required", "right"] == False  # noqa: E712
    # the row's flags beside its route (a blocking one keeps a verdict from standing whatever its score)
    assert loose.set_index("citation").at["iat_future", "flags"] == "contradicted_or_unsupported"
    # one count for the citations (the comparison table's `judged` is the 7 the model judged)
    assert explorer.threshold == 0.0
    assert "8 of 8 labelled citations (7 judged by the model, 1 settled by step 1) stand" in explorer.summary()


def test_slider_widget_moves_the_threshold(judged):
    _, audit = judged
    table = audit.table
    explorer = ThresholdExplorer(table, 0.8)
    box = explorer.widget()
    slider = box.children[0]
    assert (slider.min, slider.max) == (0.5, 1.0)  # a routing score is never below 0.5
    slider.value = 0.6
    assert explorer.threshold == 0.6


def test_review_queue_records_and_advances(judged, tmp_path):
    doc, audit = judged
    store = tmp_path / "reviews.jsonl"
    queue = ReviewQueue(audit, store)
    assert len(queue.pending) == 7 and queue.decision().status == "REJECT"
    first = queue.current()["id"]
    assert "<mark>" in queue.card_html()
    queue.decide("verified", note="section 2 says so", reviewer="t")
    assert [r.citation_id for r in load_reviews(store)] == [first]
    assert len(queue.pending) == 6 and queue.current()["id"] != first
    queue.skip()
    assert queue.position == 1


def test_review_widget_buttons_write_to_the_store(judged, tmp_path):
    doc, audit = judged
    store = tmp_path / "reviews.jsonl"
    queue = ReviewQueue(audit, store)
    box = queue.widget(reviewer="t")
    card, note, buttons, status, _override = box.children
    verified, contradicted, unsupported, skip = buttons.children
    note.value = "checked"
    verified.click()
    assert load_reviews(store)[0].note == "checked" and note.value == ""
    skip.click()
    contradicted.click()
    reviews = load_reviews(store)
    assert [r.verdict for r in reviews] == ["verified", "contradicted"]
    assert "REJECT" in status.value


def test_queue_empties_and_the_answer_can_be_accepted(tmp_path, replay_cache):
    doc = load_rfc("rfc7519.txt")
    good = [c for c in __import__("json").loads((DATA / "rfc7519_citations.json").read_text())
            if c["expected"] == "verified"]
    path = tmp_path / "good.json"
    path.write_text(__import__("json").dumps(good))
    audit = audit_quotes(doc, path, judge=Judge(cache=replay_cache))
    queue = ReviewQueue(audit, tmp_path / "r.jsonl")
    while not queue.done:
        queue.decide("verified")
    assert queue.decision().status == "ACCEPT"
    assert "Queue empty" in queue.card_html()
    with pytest.raises(IndexError):
        queue.decide("verified")


def test_the_queue_confirms_each_write(tmp_path, replay_cache):
    """After a decision the queue says what it wrote, where, and how many reviews the store holds."""
    from conftest import DATA

    from citeaudit import ReviewQueue, audit_quotes

    audit = audit_quotes("rfc7519.txt", DATA / "rfc7519_citations.json", judge=Judge(cache=replay_cache))
    store = tmp_path / "reviews.jsonl"
    queue = ReviewQueue(audit, store)
    first = queue.current()["id"]
    queue.decide("verified")
    assert queue.saved == f"saved verified for {first} to {store} (1 review(s) in the store)"


def test_the_risk_coverage_marker_names_the_sliders_threshold(judged):
    """The marker sat on the grid's nearest 0.05 and its legend said 0.85 while the slider said 0.84."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _, audit = judged
    explorer = ThresholdExplorer(audit.table, 0.84)
    fig = explorer.figure()
    labels = [text.get_text() for text in fig.axes[0].get_legend().get_texts()]
    plt.close(fig)
    assert labels == ["threshold 0.84"]


def test_a_standing_verdict_is_overridden_from_the_queue(judged, tmp_path):
    """Driven through the real widgets: pick a citation whose verdict stood, record a human verdict;
    the store holds it under the row's fingerprint, the queue confirms the write, and the audit
    settled again from the store shows that citation reviewed with the human verdict."""
    from citeaudit.decide import row_fingerprint

    audit = judged[1].reroute(0.7)  # exp_required stands as verified; its gold verdict is contradicted
    store = tmp_path / "reviews.jsonl"
    queue = ReviewQueue(audit, store)
    stood = audit.table[audit.table["id"] == "exp_required"].iloc[0]
    assert (stood["state"], stood["final_verdict"], stood["expected"]) == ("stands", "verified", "contradicted")
    assert queue.standing() == ["exp_required"]  # the fabricated one has no evidence to bind a review to
    box = queue.widget(reviewer="t")
    status, override = box.children[3], box.children[4]
    _, pickers, why, record, left = override.children
    pick, human = pickers.children
    assert "ACCEPT" not in status.value
    assert pick.options == (("exp_required: verified", "exp_required"),) and not record.disabled
    assert left.value == ""
    assert pick.value == "exp_required"  # shown as picked is picked: a click records it (it recorded nothing)
    human.value, why.value = "contradicted", "4.1.4 says MUST NOT be accepted"
    record.click()
    (review,) = load_reviews(store)
    assert (review.citation_id, review.verdict, review.note, review.reviewer) == \
        ("exp_required", "contradicted", "4.1.4 says MUST NOT be accepted", "t")
    assert review.fingerprint == row_fingerprint(stood)
    assert f"saved contradicted for exp_required to {store} (1 review(s) in the store)" in status.value
    assert pick.options == () and why.value == ""
    assert record.disabled and "No verdict that stood is left to override" in left.value  # not a dead button
    settled = audit.with_reviews(store)
    row = settled.table.set_index("id").loc["exp_required"]
    assert (row["state"], row["review_state"], row["final_verdict"]) == ("reviewed", "current", "contradicted")
    assert queue.table.set_index("id").at["exp_required", "state"] == "reviewed"
    assert any(r.startswith("exp_required: review found") for r in settled.decision.reasons)


def test_only_a_standing_verdict_is_overridden(judged, tmp_path):
    queue = ReviewQueue(judged[1].reroute(0.7), tmp_path / "reviews.jsonl")
    waiting = queue.current()["id"]
    with pytest.raises(InputError, match=r"no standing verdict to override; those that do: exp_required"):
        queue.override(waiting, "verified")
    with pytest.raises(InputError, match="sig_reporting"):
        queue.override("sig_reporting", "verified")  # fabricated, with no evidence a review could bind to
    assert not (tmp_path / "reviews.jsonl").exists()


def test_the_wrong_verdicts_that_stand_are_listed_alone(judged):
    """Notebook 04 lists every row once (in the slider's output) and then only what would stand wrongly."""
    _, audit = judged
    explorer = ThresholdExplorer(audit.table, 0.0)
    view = explorer.view()
    wrong = explorer.wrong_standing(view)
    assert list(wrong["citation"]) == list(view.loc[(view["route"] == "auto") & (view["right"] == False),  # noqa: E712
                                                        "citation"])
    assert "exp_required" in set(wrong["citation"]) and len(wrong) < len(view)
    assert explorer.wrong_standing(explorer.view(1.0)).empty
