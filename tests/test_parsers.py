"""Property-based tests of the input parsers: any input gives records or a clear `InputError`."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citeaudit import InputError, load_citations
from citeaudit.citations import extract_line_citations
from citeaudit.citations.records import LineRange

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
RECORD = st.fixed_dictionaries(
    {"id": st.text(min_size=1, max_size=8), "claim": st.text(min_size=1), "quote": st.none() | st.text(min_size=1),
     "section": st.text(min_size=1, max_size=12)},
    optional={"expected": st.sampled_from(["verified", "contradicted", "unsupported", "fabricated", "other"]),
              "extra": JSON},
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(JSON, st.lists(RECORD, max_size=5), st.binary(max_size=64)))
def test_a_citation_file_loads_or_says_which_record_is_wrong(tmp_path, data):
    path = tmp_path / "c.json"
    path.write_bytes(data if isinstance(data, bytes) else json.dumps(data).encode("utf-8", "surrogatepass"))
    try:
        citations = load_citations(path)
    except InputError as error:
        assert str(path) in str(error)
        return
    assert isinstance(data, list)
    assert [c.id for c in citations] == [r["id"] for r in data]
    assert len({c.id for c in citations}) == len(citations)
    assert all(c.kind == "quote" and c.claim.strip() for c in citations)


ACCEPTED = ["[L1]", "[L2-L3]", "[L2-3]", "[L0]", "[L3-L2]"]  # accepted form; validity is checked later
LOOKALIKES = ["[L1,L2]", "[L-6]", "[L1-L2-L3]", "[L2-3-4]", "[line 4]", "(L2)", "[2]", "[1, 2]", "[L99999999999]"]
WORDS = st.text(alphabet=st.characters(blacklist_characters="[]()"), max_size=15)


@given(parts=st.lists(st.one_of(st.sampled_from(ACCEPTED + LOOKALIKES), WORDS), max_size=12))
def test_every_bracketed_line_marker_is_accepted_or_reported(parts):
    found = extract_line_citations(" ".join(parts))
    accepted = [c.locator.marker for c in found.citations]
    assert accepted == [p for p in parts if p in ACCEPTED]
    assert found.unrecognized == [p for p in parts if p in LOOKALIKES]
    for citation in found.citations:
        assert isinstance(citation.locator, LineRange) and citation.kind == "lines"
        assert f"[L{citation.locator.first}" in citation.locator.marker
