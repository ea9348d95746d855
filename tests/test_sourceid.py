"""Tests of the typed source-id records (citeaudit.citations.sourceid): duplicate keys, the typed result,
and properties of check_contract over generated documents."""

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from citeaudit.citations.sourceid import (
    Claim,
    ContractViolation,
    SourceIdAnswer,
    load_json,
    validate_source_id,
)
from citeaudit.decide.fingerprints import fingerprint
from citeaudit.errors import InputError
from citeaudit.pipeline.contract import check_contract, check_contract_files

EXAMPLE = Path(__file__).parents[1] / "data" / "contract"
NAMES = ("answer", "sources", "reviews")


def example_texts() -> dict[str, str]:
    return {name: (EXAMPLE / f"{name}.json").read_text(encoding="utf-8") for name in NAMES}


def check_texts(directory: Path, texts: dict[str, str]):
    for name, text in texts.items():
        (directory / f"{name}.json").write_text(text, encoding="utf-8")
    return check_contract_files(*(directory / f"{name}.json" for name in NAMES))


# Duplicate keys: json.load keeps the last value silently; the contract rejects them.


@pytest.mark.parametrize(
    ("name", "old", "new", "where", "key"),
    [
        (
            "answer",
            '"citation_id": "S1"',
            '"text": "The API failed.", "citation_id": "S1"',
            "answer.claims[0]",
            "text",
        ),
        ("sources", '"id": "S1",', '"id": "S0", "id": "S1",', "sources.sources[0]", "id"),
        (
            "reviews",
            '"verdict": "supported"',
            '"verdict": "unsupported", "verdict": "supported"',
            "reviews.reviews[0]",
            "verdict",
        ),
    ],
)
def test_duplicate_key_rejects_naming_the_key(tmp_path, name, old, new, where, key):
    texts = example_texts()
    assert old in texts[name]
    texts[name] = texts[name].replace(old, new)
    result = check_texts(tmp_path, texts)
    assert result.status == "REJECT"
    assert result.reasons == (
        f'{where}: duplicate key "{key}"; a key may appear only once in an object',
    )


def test_duplicate_top_level_key_rejects(tmp_path):
    texts = example_texts()
    texts["reviews"] = '{"reviews": [], "reviews": []}'
    result = check_texts(tmp_path, texts)
    assert result.reasons == (
        'reviews: duplicate key "reviews"; a key may appear only once in an object',
    )


def test_duplicate_key_is_a_shape_check_before_field_values(tmp_path):
    texts = example_texts()
    texts["answer"] = texts["answer"].replace('"citation_id": "S1"', '"citation_id": ""')
    texts["sources"] = texts["sources"].replace('"id": "S1",', '"id": "S1", "id": "S1",')
    result = check_texts(tmp_path, texts)
    assert result.reasons[0].startswith('sources.sources[0]: duplicate key "id"')


def test_same_key_in_different_objects_is_fine(tmp_path):
    assert check_texts(tmp_path, example_texts()).status == "ACCEPT"


def test_load_json_keeps_input_errors(tmp_path):
    path = tmp_path / "answer.json"
    path.write_text('{"claims": [}', encoding="utf-8")
    with pytest.raises(InputError, match=r"the answer file is not valid JSON .*fix the JSON"):
        load_json(path, "answer")


def test_key_that_is_not_unicode_is_listed_with_the_others():
    answer, sources, reviews = (json.loads(text) for text in example_texts().values())
    del answer["claims"][0]["text"]
    answer["claims"][0]["\ud800"] = "x"
    result = check_contract(answer, sources, reviews)
    assert result.reasons == (
        'answer.claims[0]: unexpected key(s) "\\ud800"; missing key(s) "text"; '
        'the keys must be exactly "citation_id", "id", "text"',
    )


# The typed result


def test_validate_returns_typed_records():
    answer, sources, reviews = (json.loads(text) for text in example_texts().values())
    records = validate_source_id(answer, sources, reviews)
    assert isinstance(records, SourceIdAnswer)
    assert [claim.citation_id for claim in records.claims] == ["S1"]
    assert records.content_of("S1") == sources["sources"][0]["content"]
    assert records.reviews[0].verdict == "supported"
    with pytest.raises(KeyError):
        records.content_of("S9")


def test_violation_is_an_input_error_with_the_reason():
    answer, sources, reviews = (json.loads(text) for text in example_texts().values())
    answer["claims"][0]["citation_id"] = "S9"
    with pytest.raises(ContractViolation) as caught:
        validate_source_id(answer, sources, reviews)
    assert isinstance(caught.value, InputError)
    assert str(caught.value) == (
        'answer.claims[0].citation_id: "S9" is not a source id; '
        "cite a source listed in sources.json"
    )


def test_models_are_strict_and_frozen():
    with pytest.raises(ValidationError):
        Claim(id=1, text="x", citation_id="S1")
    with pytest.raises(ValidationError):
        Claim(id="C1", text="x", citation_id="S1", page=3)
    claim = Claim(id="C1", text="x", citation_id="S1")
    with pytest.raises(ValidationError):
        claim.text = "y"


# Properties over generated documents

PLAUSIBLE = st.sampled_from(
    ["C1", "C2", "S1", "", " ", "\x1c", "C 1", "C1\n", "\ud800", "x\udfff", "supported",
     "unsupported", "0" * 64, "claims", "id", "text"]
)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), PLAUSIBLE, st.text(max_size=6)
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(PLAUSIBLE, st.text(max_size=4)), inner, max_size=3),
    ),
    max_leaves=8,
)
RECORD_KEYS = {
    "claims": ["id", "text", "citation_id"],
    "sources": ["id", "content"],
    "reviews": ["claim_id", "fingerprint", "verdict"],
}


def near_document(key: str):
    """Anything from arbitrary JSON to a document whose records have the right keys."""
    fields = RECORD_KEYS[key]
    value = st.one_of(PLAUSIBLE, JSON_VALUES)
    record = st.one_of(
        st.fixed_dictionaries({field: value for field in fields}),
        st.dictionaries(st.sampled_from([*fields, "page", "\ud800"]), value, max_size=4),
        JSON_VALUES,
    )
    return st.one_of(
        JSON_VALUES,
        st.fixed_dictionaries({key: st.one_of(st.lists(record, max_size=3), JSON_VALUES)}),
        st.dictionaries(
            st.sampled_from([key, "meta", "\udfff"]), st.lists(record, max_size=2), max_size=2
        ),
    )


@pytest.mark.slow  # 400 examples, about 3 s
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(near_document("claims"), near_document("sources"), near_document("reviews"))
def test_any_json_gives_a_result_never_an_exception(answer, sources, reviews):
    result = check_contract(answer, sources, reviews)
    assert result.status in {"ACCEPT", "REVIEW", "REJECT"}
    assert result.reasons and all(isinstance(reason, str) for reason in result.reasons)
    json.dumps(result.to_dict(), ensure_ascii=False).encode("utf-8")


IDS = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,4}", fullmatch=True)
TEXTS = st.text(min_size=1, max_size=12).filter(str.strip)


@st.composite
def valid_documents(draw):
    """Valid documents and the status they must get: ``(answer, sources, reviews, status)``."""
    source_ids = draw(st.lists(IDS, min_size=1, max_size=4, unique=True))
    sources = [{"id": source_id, "content": draw(TEXTS)} for source_id in source_ids]
    content = {source["id"]: source["content"] for source in sources}
    claim_ids = draw(st.lists(IDS, min_size=1, max_size=4, unique=True))
    claims = [
        {"id": claim_id, "text": draw(TEXTS), "citation_id": draw(st.sampled_from(source_ids))}
        for claim_id in claim_ids
    ]
    reviews, rejected, pending = [], False, False
    for claim in claims:
        state = draw(st.sampled_from(["none", "supported", "unsupported", "stale"]))
        cited = content[claim["citation_id"]]
        current = fingerprint(claim["id"], claim["text"], claim["citation_id"], cited)
        if state == "none":
            pending = True
            continue
        stale = state == "stale"
        pending = pending or stale
        rejected = rejected or state == "unsupported"
        reviews.append(
            {
                "claim_id": claim["id"],
                "fingerprint": "f" * 64 if stale else current,  # f...f: the digest of nothing here
                "verdict": draw(st.sampled_from(["supported", "unsupported"])) if stale else state,
            }
        )
    reviews = draw(st.permutations(reviews))
    status = "REJECT" if rejected else "REVIEW" if pending else "ACCEPT"
    return {"claims": claims}, {"sources": sources}, {"reviews": reviews}, status


@pytest.mark.slow  # 300 examples, about 2.5 s
@settings(max_examples=300, deadline=None)
@given(valid_documents())
def test_valid_documents_are_never_rejected_for_their_shape(documents):
    answer, sources, reviews, status = documents
    result = check_contract(answer, sources, reviews)
    assert result.status == status, result.reasons
    if status != "ACCEPT":  # decisions on claims ('answer.claims[0] "C1": ...'), no violation
        assert all(re.match(r'answer\.claims\[\d+\] "', reason) for reason in result.reasons)
    if status == "REJECT":
        assert "review found that source" in result.reasons[0]
