import pytest
from conftest import DATA

from citeaudit.citations.lines import extract_line_citations, load_line_answer, range_problem
from citeaudit.pipeline.audit import audit_lines

NOTE = DATA / "lines" / "field_note.txt"


def test_markers_in_the_three_accepted_forms():
    found = extract_line_citations("A holds. [L5] B and C hold. [L2-L3] D too. [L2-3]")
    assert [(c.locator.marker, c.locator.first, c.locator.last) for c in found.citations] == [("[L5]", 5, 5), ("[L2-L3]", 2, 3), ("[L2-3]", 2, 3)]
    assert [c.claim for c in found.citations] == ["A holds.", "B and C hold.", "D too."]
    assert found.unrecognized == []


def test_claim_starts_at_its_sentence_not_at_the_text_start():
    found = extract_line_citations("Intro sentence without a citation. The run moved to May [L2].")
    assert found.citations[0].claim == "The run moved to May"


@pytest.mark.parametrize("marker", ["[line 2]", "(L2)", "[2]", "[lines 2-3]", "[L 2]", "(line 4)", "[2-3]",
                                    "[L1,L2]", "[L-6]", "[L1-L2-L3]", "[L2-3-4]", "[1, 2]", "[L" + "9" * 5000 + "]"])
def test_other_forms_are_reported_not_ignored(marker):
    found = extract_line_citations(f"The run moved. {marker} Fine. [L1]")
    assert found.unrecognized == [marker]
    assert len(found.citations) == 1


@pytest.mark.parametrize("first, last, problem", [
    (1, 7, None), (7, 7, None), (8, 8, "past the end"), (0, 2, "numbered from 1"), (3, 2, "reversed"),
])
def test_range_validity_on_seven_lines(first, last, problem):
    result = range_problem(first, last, 7)
    assert (result is None) if problem is None else (problem in result)


def test_good_answer_over_the_note():
    answer = load_line_answer(NOTE, DATA / "lines" / "good_answer.txt")
    assert answer.summary == {"document_lines": 7, "citations_found": 2, "invalid_citations": 0,
                              "unrecognized_citations": 0}
    table = audit_lines(answer, locate_only=True).table
    assert list(table["found_section"]) == ["L2-L3", "L5-L6"]
    assert table["evidence"][1] == answer.document.line_range(5, 6)
    start, end = table["span"][0]
    assert answer.document.raw[start:end] == "\n".join(answer.document.raw.splitlines()[1:3])


def test_broken_answer_flags_l8_and_the_reversed_range():
    answer = load_line_answer(NOTE, DATA / "lines" / "broken_answer.txt")
    assert answer.summary == {"document_lines": 7, "citations_found": 4, "invalid_citations": 2,
                              "unrecognized_citations": 1}
    table = audit_lines(answer, locate_only=True).table.set_index("cited_section")
    assert table.at["[L8]", "verdict"] == "fabricated" and table.at["[L8]", "route"] == "auto"
    assert "past the end of the document (7 lines)" in table.at["[L8]", "fabricated_reason"]
    assert table.at["[L3-L2]", "verdict"] == "fabricated"
    assert table.at["[L2]", "verdict"] is None and table.at["[L2]", "evidence"].startswith("The water sampling")


def test_every_citation_is_a_line_citation_with_a_typed_range():
    found = extract_line_citations("A holds. [L2-3]")
    (citation,) = found.citations
    assert citation.kind == "lines" and citation.quote is None
    assert (citation.locator.first, citation.locator.last, citation.locator.label) == (2, 3, "L2-L3")


@pytest.mark.parametrize("text", ["No citation here at all.", "", "Only a broken one [L1,L2]."])
def test_an_answer_with_nothing_checkable_is_never_accepted(tmp_path, text):
    answer_path = tmp_path / "answer.txt"
    answer_path.write_text(text or " ")
    audit = audit_lines(load_line_answer(NOTE, answer_path), locate_only=True)
    assert audit.decision.status == "REVIEW"


@pytest.mark.cli
@pytest.mark.parametrize("extra", ["", " Samples stay cold [line 4].", " Samples stay cold [L1,L2]."])
def test_unrecognized_markers_keep_every_decision_path_in_review(tmp_path, replay_cache, monkeypatch, extra):
    """Library, `lines` and `report` decide alike: an unrecognized marker turns ACCEPT into REVIEW."""
    from test_cli import run

    from citeaudit import Judge

    answer_path = tmp_path / "answer.txt"
    answer_path.write_text((DATA / "lines" / "good_answer.txt").read_text().rstrip() + extra + "\n")
    expected = "REVIEW" if extra else "ACCEPT"
    audit = audit_lines(load_line_answer(NOTE, answer_path), judge=Judge(cache=replay_cache), threshold=0.0)
    assert audit.decision.status == expected
    monkeypatch.setenv("CITEAUDIT_CACHE_DIR", str(replay_cache.directory))
    args = ["--document", str(NOTE), "--answer", str(answer_path), "--threshold", "0"]
    for command in (["lines"], ["report", "--html", str(tmp_path / "r.html")]):
        result = run(*command, *args)
        assert expected in result.stdout and result.returncode == (1 if extra else 0), result.stderr
