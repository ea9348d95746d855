"""Reading saved vendor responses (`citations/responses/`): each format's citations, its quirks, and bad
input that stops with an `InputError` naming the field, never a traceback."""

import copy
import json
import re

import pytest
from conftest import DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citeaudit import InputError
from citeaudit.citations.responses import detect_response_format, load_response, parse_response, sentence_before
from citeaudit.table import ResponseFormat

RESPONSES = DATA / "responses"
LABELS = json.loads((RESPONSES / "labels.json").read_text(encoding="utf-8"))


def fixture(name):
    return json.loads((RESPONSES / name).read_text(encoding="utf-8"))


def snake(value):
    """The SDK's dump of a REST (camelCase) body: every key in snake_case."""
    if isinstance(value, dict):
        return {re.sub(r"(?<!^)([A-Z])", r"_\1", k).lower(): snake(v) for k, v in value.items()}
    if isinstance(value, list):
        return [snake(v) for v in value]
    return value


@pytest.mark.parametrize("name", sorted(LABELS))
def test_every_fixture_is_read_by_its_shape_with_the_labelled_citations(name):
    parsed = load_response(RESPONSES / name)
    assert parsed.format == LABELS[name]["format"]
    assert [c.id for c in parsed.citations] == list(LABELS[name]["citations"])
    for citation in parsed.citations:
        start, end = citation.claim_span
        assert (citation.claim and citation.claim in " ".join(parsed.answer[start:end].split())) or \
            citation.claim in parsed.answer[start:end]
    assert len(parsed.uncited()) == LABELS[name]["uncited"]


def test_anthropic_citations_keep_the_vendor_offsets_pages_and_source():
    parsed = load_response(RESPONSES / "anthropic_messages.json")
    first, shifted, page = parsed.citations[:3]
    assert first.type == "char_location" and first.source.index == 0 and first.source.names == ("rfc7519.txt",)
    assert shifted.chars[0] - 212 >= 0 and shifted.location.startswith("chars ")
    # start_page_number is 1-based and end_page_number exclusive: one page
    assert page.pages[0] == page.pages[1] and page.location == f"page {page.pages[0]}"
    assert parsed.citations[-1].source.names[0] == "https://datatracker.ietf.org/doc/html/rfc7515"
    assert parsed.sdk.startswith("anthropic ")


def test_anthropic_missing_field_is_named():
    data = fixture("anthropic_messages.json")
    del data["content"][1]["citations"][0]["cited_text"]
    with pytest.raises(InputError, match=r"content\[1\]\.citations\[0\]\.cited_text: missing: citeaudit needs"):
        parse_response(data, name="r.json")


def test_unknown_fields_of_a_newer_sdk_are_ignored():
    data = fixture("anthropic_messages.json")
    data["content"][1]["citations"][0]["confidence"] = 0.9
    data["content"][1]["brand_new"] = {"x": 1}
    assert len(parse_response(data).citations) == len(LABELS["anthropic_messages.json"]["citations"])
    gemini = fixture("gemini_grounding.json")  # google-genai's types forbid unknown fields: they are dropped
    gemini["candidates"][0]["groundingMetadata"]["groundingSupports"][0]["renderedStyle"] = "bold"
    gemini["candidates"][0]["someNewField"] = [1, 2]
    assert len(parse_response(gemini).citations) == 6


def test_gemini_offsets_are_utf8_bytes_and_snake_case_reads_the_same():
    data = fixture("gemini_grounding.json")
    parsed = parse_response(data)
    second = parsed.citations[1]
    assert "—" in second.claim and parsed.answer[slice(*second.claim_span)] == second.claim
    from dataclasses import replace

    snaked = parse_response(snake(data)).citations
    assert snaked[0].id == "candidates[0].grounding_metadata.grounding_supports[0].grounding_chunk_indices[0]"
    assert [replace(c, id="") for c in snaked] == [replace(c, id="") for c in parsed.citations]
    # offsets taken as characters instead of bytes no longer land on the segment's text
    support = data["candidates"][0]["groundingMetadata"]["groundingSupports"][2]
    text = data["candidates"][0]["content"]["parts"][0]["text"]
    support["segment"]["startIndex"] = text.find(support["segment"]["text"])
    support["segment"]["endIndex"] = support["segment"]["startIndex"] + len(support["segment"]["text"])
    with pytest.raises(InputError, match=r"groundingSupports\[2\]\.segment\.text: .* UTF-8 bytes"):
        parse_response(data)


def test_gemini_zero_fields_omitted_by_proto3_mean_zero():
    data = {"candidates": [{"content": {"parts": [{"text": "Access tokens expire after fifteen minutes."}]},
                            "groundingMetadata": {
                                "groundingChunks": [{"retrievedContext": {"uri": "gs://b/token-service.html",
                                                                          "text": "fifteen minutes"}}],
                                "groundingSupports": [{"segment": {"endIndex": 43},
                                                       "groundingChunkIndices": [0]}]}}]}
    (citation,) = parse_response(data).citations
    assert citation.claim_span == (0, 43) and citation.quote == "fifteen minutes"
    data["candidates"][0]["groundingMetadata"]["groundingSupports"][0]["groundingChunkIndices"] = [3]
    with pytest.raises(InputError, match=r"groundingChunkIndices\[0\]: chunk 3 does not exist"):
        parse_response(data)


def test_openai_file_citation_index_is_a_point_of_the_answer():
    parsed = load_response(RESPONSES / "openai_responses.json")
    claims = [c.claim for c in parsed.citations]
    assert claims[0] == "The token service's access tokens expire fifteen minutes after they are issued."
    assert parsed.citations[0].source.names == ("token-service.html", "file-TokSvc8fQ2")
    assert parsed.uncited() == ["Here is a short summary."]
    data = fixture("openai_responses.json")
    data["output"][1]["content"][0]["annotations"][0]["index"] = 10_000
    with pytest.raises(InputError, match=r"output\[1\]\.content\[0\]\.annotations\[0\]\.index: \[10000, 10000\) is "
                                         r"out of range"):
        parse_response(data)


def test_openai_chat_url_marker_is_not_the_claim():
    parsed = load_response(RESPONSES / "openai_chat.json")
    assert parsed.citations[1].claim == 'Use of the "nbf" claim is mandatory in every JWT'
    assert parsed.citations[1].id == "choices[0].message.annotations[1].url_citation"
    assert parsed.uncited() == []  # the markers belong to the citations they mark
    data = fixture("openai_chat.json")
    data["choices"][0]["message"]["annotations"][0]["url_citation"]["end_index"] = 5_000
    with pytest.raises(InputError, match=r"annotations\[0\]\.start_index: \[\d+, 5000\) is out of range"):
        parse_response(data)


def test_cohere_v1_and_v2():
    v2 = load_response(RESPONSES / "cohere_chat.json")
    assert v2.citations[0].quote.startswith("Wind from the west") and v2.citations[0].source.index == 0
    assert v2.citations[-1].source.names == ("lab-manual.pdf",)
    v1 = {"text": "Tokens expire in fifteen minutes.", "generation_id": "g1",
          "citations": [{"start": 0, "end": 32, "text": "Tokens expire in fifteen minutes", "document_ids": ["doc_0"]}],
          "documents": [{"id": "doc_0", "title": "token-service.html", "snippet": "fifteen minutes"}]}
    (citation,) = parse_response(v1).citations
    assert citation.id == "citations[0].document_ids[0]" and citation.source.index == 0
    v1["citations"][0]["document_ids"] = ["doc_7"]
    with pytest.raises(InputError, match=r"citations\[0\]\.document_ids\[0\]: 'doc_7' is not the id"):
        parse_response(v1)


def test_langchain_pages_are_zero_based_and_llamaindex_offsets_are_read():
    lc = load_response(RESPONSES / "langchain_retrievalqa.json")
    assert lc.citations[0].pages == (2, 2)  # metadata page 1 is the second page
    assert lc.citations[2].chars is not None
    li = load_response(RESPONSES / "llamaindex_response.json")
    assert li.format == ResponseFormat.LANGCHAIN and li.citations[0].chars[1] - li.citations[0].chars[0] == \
        len(li.citations[0].quote)
    dumped = {"result": "x y z", "source_documents": [{"lc": 1, "type": "constructor",
                                                       "id": ["langchain", "schema", "document", "Document"],
                                                       "kwargs": {"page_content": "z", "metadata": {"source": "a.md"}}}]}
    assert parse_response(dumped).citations[0].source.names == ("a.md",)


def test_bad_input_names_file_and_fix(tmp_path):
    bad = tmp_path / "r.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match=r"r\.json: not JSON"):
        load_response(bad)
    bad.write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(InputError, match=r"not a response of a known shape .*--response-format"):
        load_response(bad)
    with pytest.raises(InputError, match=r"r\.json: content: expected a list, found null"):
        load_response(bad, "anthropic")
    with pytest.raises(InputError, match="unknown response format 'bard'"):
        load_response(RESPONSES / "openai_chat.json", "bard")


def test_a_missing_extra_is_named(monkeypatch):
    import importlib

    real = importlib.import_module

    def without_cohere(name, *args):
        if name == "cohere":
            raise ImportError(name)
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", without_cohere)
    with pytest.raises(InputError, match=r"pip install 'citeaudit\[cohere\]'"):
        load_response(RESPONSES / "cohere_chat.json")


def test_sentence_before():
    text = "First one. Second one [1]. Third!\nFourth [2]"
    assert text[sentence_before(text, text.index(" [1]")):text.index(" [1]")] == "Second one"
    assert text[sentence_before(text, text.index(" [2]")):text.index(" [2]")] == "Fourth"
    assert sentence_before(text, 9) == 0
    floor = text.index("one [1]")
    assert text[sentence_before(text, text.index(" [1]"), floor):text.index(" [1]")] == "one"


JSON = st.recursive(st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False)
                    | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
                    max_leaves=25)
KEYS = st.sampled_from(["content", "citations", "output", "choices", "message", "candidates", "groundingMetadata",
                        "text", "type", "annotations", "source_documents", "result", "start", "end", "index",
                        "segment", "startIndex", "endIndex", "groundingSupports", "groundingChunks", "documents"])


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


def _replace(data, path, new):
    if not path:
        return new
    node = data
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = new
    return data


def _parse_or_input_error(data, format=None):
    try:
        parsed = parse_response(data, format)
    except InputError as exc:
        assert str(exc)
        return None
    for c in parsed.citations:
        assert 0 <= c.claim_span[0] <= c.claim_span[1] <= len(parsed.answer)
    return parsed


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=JSON | st.dictionaries(KEYS, JSON, max_size=5), format=st.none() | st.sampled_from(list(ResponseFormat)))
def test_arbitrary_json_never_escapes_as_a_traceback(data, format):
    _parse_or_input_error(data, format)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(LABELS)), pick=st.integers(0, 10_000), new=JSON)
def test_a_fixture_with_any_part_replaced_parses_or_names_the_problem(name, pick, new):
    data = fixture(name)
    paths = list(_paths(data))
    mutated = _replace(copy.deepcopy(data), paths[pick % len(paths)], new)
    _parse_or_input_error(mutated)


def test_detect_format_of_every_fixture():
    assert {detect_response_format(fixture(n)) for n in LABELS} == set(ResponseFormat)


def test_a_save_from_an_older_sdk_loads_without_fields_citeaudit_does_not_read():
    data = fixture("openai_responses.json")
    for annotation in data["output"][1]["content"][0]["annotations"]:
        del annotation["filename"]  # file_citation had no filename in early Responses API versions
    parsed = parse_response(data)
    assert parsed.citations[0].source.names == ("file-TokSvc8fQ2",)
    chat = fixture("openai_chat.json")
    del chat["choices"][0]["message"]["annotations"][0]["url_citation"]["title"]
    assert len(parse_response(chat).citations) == 3


def test_vertex_rag_chunks_and_llamaindex_text_resource():
    data = {"candidates": [{"content": {"parts": [{"text": "Raw files are kept for ten years."}]},
                            "groundingMetadata": {"groundingChunks": [{"retrievedContext": {
                                "uri": "gs://b/reservoir-report.pdf",
                                "ragChunk": {"text": "Raw instrument files are kept for ten years.",
                                             "pageSpan": {"firstPage": 4, "lastPage": 4}}}}],
                                "groundingSupports": [{"segment": {"endIndex": 33}, "groundingChunkIndices": [0]}]}}]}
    (citation,) = parse_response(data).citations
    assert citation.quote == "Raw instrument files are kept for ten years." and citation.pages == (4, 4)
    nodes = {"response": "x", "source_nodes": [{"node": {"text_resource": {"text": "chunk"}, "metadata": {}},
                                                 "score": 0.5}]}
    assert parse_response(nodes).citations[0].quote == "chunk"


def test_a_citation_of_no_answer_text_is_refused():
    data = {"candidates": [{"content": {"parts": [{"text": "Tokens expire."}]},
                            "groundingMetadata": {"groundingChunks": [{"web": {"uri": "https://a.example/x"}}],
                                                  "groundingSupports": [{"segment": {}, "groundingChunkIndices": [0]}]}}]}
    with pytest.raises(InputError, match=r"groundingSupports\[0\]\.groundingChunkIndices\[0\]: the citation is "
                                         "attached to no answer text"):
        parse_response(data)


def test_langchain_qa_chain_shape():
    data = {"input_documents": [{"page_content": "Access tokens expire fifteen minutes after they are issued.",
                                 "metadata": {"source": "token-service.html"}}],
            "question": "How long do access tokens live?", "output_text": "Fifteen minutes."}
    parsed = parse_response(data)
    assert parsed.format == ResponseFormat.LANGCHAIN and parsed.citations[0].id == "input_documents[0]"


def test_a_vendor_format_registered_by_name_is_detected_and_parsed():
    from citeaudit.citations.responses import VENDOR_FORMATS, VendorCitation, VendorFormat, register_vendor_format
    from citeaudit.citations.responses.parsed import cited_source

    def parse(data, reader):
        answer = reader.array(data["toy_answer"], "toy_answer")[0]
        return answer, [VendorCitation(f"toy_cites[{n}]", "toy", "toy_cite", answer, (0, len(answer)), quote,
                                       cited_source(None, "toy.md"))
                        for n, quote in enumerate(reader.array(data.get("toy_cites"), "toy_cites"))]

    register_vendor_format(VendorFormat("toy", parse, lambda data: "toy_answer" in data))
    try:
        with pytest.raises(ValueError, match="response format 'toy' is registered already"):
            register_vendor_format(VendorFormat("toy", parse, lambda data: False))
        data = {"toy_answer": ["Tokens expire."], "toy_cites": ["expire after ten minutes"]}
        parsed = parse_response(data)
        assert (parsed.format, parsed.answer, [c.quote for c in parsed.citations]) == \
            ("toy", "Tokens expire.", ["expire after ten minutes"])
        with pytest.raises(InputError, match=r"r\.json: toy_cites: expected a list, found null"):
            parse_response({"toy_answer": ["x"]}, "toy", name="r.json")
        assert detect_response_format(fixture("openai_chat.json")) == ResponseFormat.OPENAI_CHAT  # built-ins first
    finally:
        VENDOR_FORMATS.unregister("toy")
    with pytest.raises(InputError, match="unknown response format 'toy'"):
        parse_response(data, "toy")
