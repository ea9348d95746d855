"""Tests of the seed-000 acceptance contract (citeaudit.pipeline.contract) and review fingerprints."""

import copy
import dataclasses
import hashlib
import json
from pathlib import Path

import pytest

from citeaudit.decide.fingerprints import fingerprint
from citeaudit.errors import InputError
from citeaudit.pipeline.contract import ContractResult, check_contract, check_contract_files

EXAMPLE = Path(__file__).parents[1] / "data" / "contract"
SEED_FINGERPRINT = "6709ca2e356511f1a0e55ccef6996d8f15a71a74411df7698a0b3823784d19e2"


def load_example() -> tuple[dict, dict, dict]:
    return tuple(
        json.loads((EXAMPLE / f"{name}.json").read_text(encoding="utf-8"))
        for name in ("answer", "sources", "reviews")
    )


@pytest.fixture
def example() -> tuple[dict, dict, dict]:
    """The seed's worked example: one claim, one source, one current supported review."""
    return copy.deepcopy(load_example())


def current_fingerprint(answer: dict, sources: dict, claim_index: int = 0) -> str:
    claim = answer["claims"][claim_index]
    content = {s["id"]: s["content"] for s in sources["sources"]}[claim["citation_id"]]
    return fingerprint(claim["id"], claim["text"], claim["citation_id"], content)


def add_claim(answer: dict, claim_id: str = "C2", citation_id: str = "S1") -> None:
    answer["claims"].append(
        {"id": claim_id, "text": "The endpoint answered within 50 ms.", "citation_id": citation_id}
    )


def assert_rejected_at(result: ContractResult, where: str, detail: str) -> None:
    assert result.status == "REJECT"
    assert len(result.reasons) == 1
    assert result.reasons[0].startswith(f"{where}: "), result.reasons
    assert detail in result.reasons[0], result.reasons


# The seed example, as committed in data/contract/


def test_example_fingerprint_is_the_seed_value(example):
    answer, sources, reviews = example
    assert current_fingerprint(answer, sources) == SEED_FINGERPRINT
    assert reviews["reviews"][0]["fingerprint"] == SEED_FINGERPRINT


def test_example_files_are_accepted():
    result = check_contract_files(
        EXAMPLE / "answer.json", EXAMPLE / "sources.json", EXAMPLE / "reviews.json"
    )
    assert result.status == "ACCEPT"
    assert result.to_dict() == {
        "status": "ACCEPT",
        "reasons": ["all 1 claim(s) have current supported reviews"],
    }


def test_fingerprint_is_sha256_of_canonical_json():
    canonical = '{"citation_id":"S1","claim_id":"C1","claim_text":"é","source_content":"x y"}'
    expected = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert fingerprint("C1", "é", "S1", "x y") == expected


# The seed's scenario table, T1 to T9


def test_t1_all_claims_supported_accepts(example):
    assert check_contract(*example).status == "ACCEPT"


def test_t2_no_review_needs_review(example):
    answer, sources, reviews = example
    reviews["reviews"] = []
    result = check_contract(answer, sources, reviews)
    assert result.status == "REVIEW"
    assert result.reasons == (
        'answer.claims[0] "C1": no review yet; have its support by source "S1" reviewed',
    )


def test_t3_citation_not_in_sources_rejects(example):
    answer, sources, reviews = example
    answer["claims"][0]["citation_id"] = "S9"
    result = check_contract(answer, sources, reviews)
    assert_rejected_at(result, "answer.claims[0].citation_id", '"S9" is not a source id')


def test_t4_empty_citation_id_rejects(example):
    answer, sources, reviews = example
    answer["claims"][0]["citation_id"] = ""
    result = check_contract(answer, sources, reviews)
    assert_rejected_at(result, "answer.claims[0].citation_id", '"" is not a valid id')


def test_t5_unsupported_review_rejects(example):
    answer, sources, reviews = example
    reviews["reviews"][0]["verdict"] = "unsupported"
    result = check_contract(answer, sources, reviews)
    assert result.status == "REJECT"
    assert result.reasons == (
        'answer.claims[0] "C1": review found that source "S1" does not support it',
    )


def test_t6_some_claims_unreviewed_needs_review(example):
    answer, sources, reviews = example
    add_claim(answer)
    result = check_contract(answer, sources, reviews)
    assert result.status == "REVIEW"
    assert len(result.reasons) == 1
    assert result.reasons[0].startswith('answer.claims[1] "C2": no review yet')


def test_t7_unsupported_beats_unreviewed(example):
    answer, sources, reviews = example
    add_claim(answer)
    reviews["reviews"][0]["verdict"] = "unsupported"
    result = check_contract(answer, sources, reviews)
    assert result.status == "REJECT"
    assert len(result.reasons) == 2
    assert result.reasons[0].startswith('answer.claims[0] "C1": review found')
    assert result.reasons[1].startswith('answer.claims[1] "C2": no review yet')


@pytest.mark.parametrize("target", ["claim", "source"])
def test_t8_changed_claim_or_source_needs_review(example, target):
    answer, sources, reviews = example
    if target == "claim":
        answer["claims"][0]["text"] = "The API returned HTTP 500."
    else:
        sources["sources"][0]["content"] = "log: the API returned HTTP 500."
    result = check_contract(answer, sources, reviews)
    assert result.status == "REVIEW"
    assert len(result.reasons) == 1
    assert result.reasons[0].startswith('answer.claims[0] "C1": review is stale')


@pytest.mark.parametrize(
    ("variant", "where", "detail"),
    [
        ("blank_text", "answer.claims[0].text", "is empty or blank"),
        ("duplicate_claim", "answer.claims[1].id", 'duplicate "C1" (also at answer.claims[0])'),
        ("bad_fingerprint", "reviews.reviews[0].fingerprint", '"bad" is not 64 lowercase hex'),
        ("claim_lone_surrogate", "answer.claims[0].text", "cannot be encoded as UTF-8"),
        ("source_lone_surrogate", "sources.sources[0].content", "cannot be encoded as UTF-8"),
    ],
)
def test_t9_malformed_or_duplicate_rejects(example, variant, where, detail):
    answer, sources, reviews = example
    if variant == "blank_text":
        answer["claims"][0]["text"] = " "
    elif variant == "duplicate_claim":
        answer["claims"].append(copy.deepcopy(answer["claims"][0]))
    elif variant == "bad_fingerprint":
        reviews["reviews"][0]["fingerprint"] = "bad"
    elif variant == "claim_lone_surrogate":
        answer["claims"][0]["text"] = "\ud800"
    else:
        sources["sources"][0]["content"] = "ok \ud800"
    assert_rejected_at(check_contract(answer, sources, reviews), where, detail)


# Input contract, beyond the seed's table


def test_lone_surrogate_in_json_file_rejects_not_crashes(example, tmp_path):
    answer, sources, reviews = example
    (tmp_path / "answer.json").write_text(
        json.dumps(answer).replace("HTTP 200", "\\ud800"), encoding="utf-8"
    )
    (tmp_path / "sources.json").write_text(json.dumps(sources), encoding="utf-8")
    (tmp_path / "reviews.json").write_text(json.dumps(reviews), encoding="utf-8")
    result = check_contract_files(
        *(tmp_path / f"{n}.json" for n in ("answer", "sources", "reviews"))
    )
    assert_rejected_at(result, "answer.claims[0].text", "lone surrogate")
    json.dumps(result.to_dict(), ensure_ascii=False).encode("utf-8")


def test_lone_surrogate_in_id_is_shown_escaped(example):
    answer, sources, reviews = example
    answer["claims"][0]["id"] = "C\ud800"
    result = check_contract(answer, sources, reviews)
    assert_rejected_at(result, "answer.claims[0].id", '"C\\ud800" is not a valid id')
    result.reasons[0].encode("utf-8")


@pytest.mark.parametrize("bad_id", ["-C1", "_C1", "C 1", "C1\n", "C.1", "Ｃ1", "c/1"])
def test_bad_id_pattern_rejects(example, bad_id):
    answer, sources, reviews = example
    answer["claims"][0]["id"] = bad_id
    assert_rejected_at(
        check_contract(answer, sources, reviews), "answer.claims[0].id", "is not a valid id"
    )


def test_good_id_pattern_is_accepted(example):
    answer, sources, reviews = example
    for record in (answer["claims"][0], sources["sources"][0]):
        record["id" if "content" in record else "citation_id"] = "0s_1-A"
    reviews["reviews"][0]["fingerprint"] = current_fingerprint(answer, sources)
    assert check_contract(answer, sources, reviews).status == "ACCEPT"


def test_non_string_id_rejects(example):
    answer, sources, reviews = example
    sources["sources"][0]["id"] = 1
    assert_rejected_at(
        check_contract(answer, sources, reviews),
        "sources.sources[0].id",
        "must be a string id, got a number",
    )


def test_extra_key_in_record_rejects(example):
    answer, sources, reviews = example
    answer["claims"][0]["page"] = 3
    assert_rejected_at(
        check_contract(answer, sources, reviews), "answer.claims[0]", 'unexpected key(s) "page"'
    )


def test_missing_key_in_record_rejects(example):
    answer, sources, reviews = example
    del reviews["reviews"][0]["verdict"]
    assert_rejected_at(
        check_contract(answer, sources, reviews), "reviews.reviews[0]", 'missing key(s) "verdict"'
    )


def test_extra_top_level_key_rejects(example):
    answer, sources, reviews = example
    sources["meta"] = {}
    assert_rejected_at(
        check_contract(answer, sources, reviews), "sources", 'unexpected key(s) "meta"'
    )


def test_missing_top_level_key_rejects(example):
    answer, sources, reviews = example
    assert_rejected_at(check_contract(answer, sources, {}), "reviews", 'missing key(s) "reviews"')


@pytest.mark.parametrize("value", [None, [], "claims", 3])
def test_top_level_not_an_object_rejects(example, value):
    _, sources, reviews = example
    assert_rejected_at(
        check_contract(value, sources, reviews), "answer", "top level must be a JSON object"
    )


@pytest.mark.parametrize("value", [{}, "C1", None])
def test_claims_not_a_list_rejects(example, value):
    answer, sources, reviews = example
    answer["claims"] = value
    assert_rejected_at(
        check_contract(answer, sources, reviews), "answer.claims", "must be a JSON array"
    )


def test_record_not_an_object_rejects(example):
    answer, sources, reviews = example
    sources["sources"].append(["S2", "text"])
    assert_rejected_at(
        check_contract(answer, sources, reviews), "sources.sources[1]", "must be a JSON object"
    )


def test_empty_claims_rejects(example):
    answer, sources, reviews = example
    answer["claims"] = []
    reviews["reviews"] = []
    assert_rejected_at(check_contract(answer, sources, reviews), "answer.claims", "is empty")


def test_non_string_text_rejects(example):
    answer, sources, reviews = example
    answer["claims"][0]["text"] = ["HTTP 200"]
    assert_rejected_at(
        check_contract(answer, sources, reviews), "answer.claims[0].text", "must be a string"
    )


def test_duplicate_source_id_rejects(example):
    answer, sources, reviews = example
    sources["sources"].append({"id": "S1", "content": "another log"})
    assert_rejected_at(
        check_contract(answer, sources, reviews),
        "sources.sources[1].id",
        'duplicate "S1" (also at sources.sources[0])',
    )


def test_duplicate_review_claim_id_rejects(example):
    answer, sources, reviews = example
    reviews["reviews"].append(dict(reviews["reviews"][0], verdict="unsupported"))
    assert_rejected_at(
        check_contract(answer, sources, reviews), "reviews.reviews[1].claim_id", 'duplicate "C1"'
    )


def test_unknown_citation_in_later_claim_names_that_claim(example):
    answer, sources, reviews = example
    add_claim(answer)
    add_claim(answer, "C3", "s9")
    assert_rejected_at(
        check_contract(answer, sources, reviews),
        "answer.claims[2].citation_id",
        '"s9" is not a source id',
    )


def test_citation_ids_are_case_sensitive(example):
    answer, sources, reviews = example
    answer["claims"][0]["citation_id"] = "s1"
    assert check_contract(answer, sources, reviews).status == "REJECT"


def test_review_for_unknown_claim_rejects(example):
    answer, sources, reviews = example
    reviews["reviews"].append(
        {"claim_id": "C9", "fingerprint": SEED_FINGERPRINT, "verdict": "supported"}
    )
    assert_rejected_at(
        check_contract(answer, sources, reviews),
        "reviews.reviews[1].claim_id",
        '"C9" is not a claim id',
    )


@pytest.mark.parametrize(
    "value", [SEED_FINGERPRINT.upper(), SEED_FINGERPRINT[:63], SEED_FINGERPRINT + "0", None, 0]
)
def test_fingerprint_not_64_lowercase_hex_rejects(example, value):
    answer, sources, reviews = example
    reviews["reviews"][0]["fingerprint"] = value
    assert_rejected_at(
        check_contract(answer, sources, reviews),
        "reviews.reviews[0].fingerprint",
        "is not 64 lowercase hex digits",
    )


@pytest.mark.parametrize("value", ["Supported", "yes", "", None, True])
def test_unknown_verdict_rejects(example, value):
    answer, sources, reviews = example
    reviews["reviews"][0]["verdict"] = value
    assert_rejected_at(
        check_contract(answer, sources, reviews), "reviews.reviews[0].verdict", "must be"
    )


def test_answer_is_checked_before_sources_and_reviews(example):
    answer, sources, reviews = example
    answer["claims"][0]["citation_id"] = ""
    sources["sources"][0]["content"] = ""
    reviews["reviews"][0]["verdict"] = "maybe"
    assert_rejected_at(
        check_contract(answer, sources, reviews), "answer.claims[0].citation_id", "not a valid id"
    )


def test_field_checks_come_before_duplicates_and_references(example):
    answer, sources, reviews = example
    answer["claims"].append(copy.deepcopy(answer["claims"][0]))
    reviews["reviews"][0]["fingerprint"] = "bad"
    assert_rejected_at(
        check_contract(answer, sources, reviews), "reviews.reviews[0].fingerprint", "not 64"
    )


# Staleness and precedence


def test_stale_after_editing_source_content(example):
    answer, sources, reviews = example
    sources["sources"][0]["content"] = sources["sources"][0]["content"].replace("200", "500")
    result = check_contract(answer, sources, reviews)
    assert result.status == "REVIEW"
    assert "stale" in result.reasons[0]


def test_stale_after_editing_claim_text(example):
    answer, sources, reviews = example
    answer["claims"][0]["text"] += " "
    result = check_contract(answer, sources, reviews)
    assert result.status == "REVIEW"
    assert "stale" in result.reasons[0]


def test_stale_after_recitation_to_another_source(example):
    answer, sources, reviews = example
    sources["sources"].append({"id": "S2", "content": sources["sources"][0]["content"]})
    answer["claims"][0]["citation_id"] = "S2"
    assert check_contract(answer, sources, reviews).status == "REVIEW"


def test_stale_unsupported_review_counts_as_no_review(example):
    answer, sources, reviews = example
    reviews["reviews"][0]["verdict"] = "unsupported"
    answer["claims"][0]["text"] = "The API returned HTTP 201."
    result = check_contract(answer, sources, reviews)
    assert result.status == "REVIEW"
    assert "stale" in result.reasons[0]


def test_re_review_of_edited_claim_restores_accept(example):
    answer, sources, reviews = example
    answer["claims"][0]["text"] = "The API returned HTTP 200 again."
    reviews["reviews"][0]["fingerprint"] = current_fingerprint(answer, sources)
    assert check_contract(answer, sources, reviews).status == "ACCEPT"


def test_reject_beats_stale_review(example):
    answer, sources, reviews = example
    sources["sources"].append({"id": "S2", "content": "log: p99 latency 480 ms"})
    add_claim(answer, "C2", "S2")
    reviews["reviews"].append(
        {
            "claim_id": "C2",
            "fingerprint": current_fingerprint(answer, sources, 1),
            "verdict": "unsupported",
        }
    )
    sources["sources"][0]["content"] += " (edited)"
    result = check_contract(answer, sources, reviews)
    assert result.status == "REJECT"
    assert result.reasons[0].startswith('answer.claims[1] "C2": review found')
    assert result.reasons[1].startswith('answer.claims[0] "C1": review is stale')


def test_two_claims_both_supported_accepts(example):
    answer, sources, reviews = example
    add_claim(answer)
    reviews["reviews"].append(
        {
            "claim_id": "C2",
            "fingerprint": current_fingerprint(answer, sources, 1),
            "verdict": "supported",
        }
    )
    result = check_contract(answer, sources, reviews)
    assert result.to_dict() == {
        "status": "ACCEPT",
        "reasons": ["all 2 claim(s) have current supported reviews"],
    }


def test_unused_sources_are_allowed(example):
    answer, sources, reviews = example
    sources["sources"].append({"id": "S2", "content": "unrelated log"})
    assert check_contract(answer, sources, reviews).status == "ACCEPT"


def test_inputs_are_not_modified(example):
    before = copy.deepcopy(example)
    check_contract(*example)
    assert example == before


def test_result_is_frozen():
    result = ContractResult("ACCEPT", ("ok",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.status = "REJECT"


# Reading files


def write_example(directory: Path) -> list[Path]:
    paths = []
    for name, document in zip(("answer", "sources", "reviews"), load_example(), strict=True):
        path = directory / f"{name}.json"
        path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
        paths.append(path)
    return paths


def test_missing_file_raises_input_error(tmp_path):
    answer, sources, reviews = write_example(tmp_path)
    reviews.unlink()
    with pytest.raises(
        InputError, match=r"reviews\.json: cannot read the reviews file .*check the path"
    ):
        check_contract_files(answer, sources, reviews)


def test_invalid_json_raises_input_error(tmp_path):
    answer, sources, reviews = write_example(tmp_path)
    sources.write_text('{"sources": [', encoding="utf-8")
    with pytest.raises(
        InputError, match=r"sources\.json: the sources file is not valid JSON .*line 1.*fix"
    ):
        check_contract_files(answer, sources, reviews)


def test_non_utf8_file_raises_input_error(tmp_path):
    answer, sources, reviews = write_example(tmp_path)
    answer.write_bytes(json.dumps(load_example()[0], ensure_ascii=False).encode("shift_jis"))
    with pytest.raises(
        InputError, match=r"answer\.json: the answer file is not UTF-8.*save it as UTF-8"
    ):
        check_contract_files(answer, sources, reviews)


def test_valid_json_breaking_the_contract_is_a_reject_not_an_error(tmp_path):
    answer, sources, reviews = write_example(tmp_path)
    reviews.write_text("[]", encoding="utf-8")
    result = check_contract_files(str(answer), str(sources), str(reviews))
    assert_rejected_at(result, "reviews", "top level must be a JSON object")
