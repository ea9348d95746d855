"""Clause locators as LLMs write them (issue 49): parsed to the document's own ids, resolved only
to a clause that exists, and step 1's verdict on where a quote is."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit import load_document
from citeaudit.citations.records import Citation, SectionRef
from citeaudit.locate.locators import parse_locator, resolve, with_cited_regions
from citeaudit.locate.quotes import locate_citations

LICENCE = ("Licence\n\nThis Agreement is made on 1 March 2024.\n\n"
           "1. Definitions.\n(a) \"Software\" means the programs.\n(b) \"You\" means the licensee.\n\n"
           "2. Grant. The Licensor grants you a licence.\n\n"
           "3. Fees.\n3.1 Fees are due monthly.\n3.2 Fees are not refundable.\n\n"
           "4. Termination.\n(a) Either party may end this Agreement on 30 days' notice.\n"
           "(b) The Licensor may end it at once if you breach clause 3.1.\n(c) On the end you delete the Software.\n")


@pytest.fixture
def licence(tmp_path):
    path = tmp_path / "licence.txt"
    path.write_text(LICENCE, encoding="utf-8")
    return load_document(path)


@pytest.mark.parametrize(("locator", "expected"), [
    ("Section 4(b)", "4(b)"), ("§ 4(b)", "4(b)"), ("s. 4(b)", "4(b)"), ("Sec. 4b", "4(b)"), ("clause 3.2", "3.2"),
    ("para. 3", "3"), ("Art. 17(1)(a)", "17(1)(a)"), ("Article 17", "17"), ("subsection 6b", "6(b)"),
    ("section 4 (b)", "4(b)"), ("(Section 4(b))", "4(b)"), ("§4", "4"), ("Section 4.1.3", "4.1.3"),
])
def test_clause_locators_parse_to_the_documents_ids(locator, expected):
    assert parse_locator(locator).number == expected


def test_several_clauses_are_all_named():
    assert parse_locator("Sections 5.1 and 5.2").numbers == ("5.1", "5.2")
    assert parse_locator("4(b)-(d)").numbers == ("4(b)", "4(c)", "4(d)")
    assert parse_locator("clauses 3.1 to 3.3").numbers == ("3.1", "3.2", "3.3")
    assert parse_locator("Art. 3(2)(a)-(c)").numbers == ("3(2)(a)", "3(2)(b)", "3(2)(c)")


number = st.integers(1, 40).map(str)
clause_id = st.builds(lambda parts, subs: ".".join(parts) + "".join(f"({s})" for s in subs),
                      st.lists(number, min_size=1, max_size=3), st.lists(st.sampled_from("abcdefgh"), max_size=2))
style = st.sampled_from(["Section {}", "§ {}", "§{}", "s. {}", "Sec. {}", "clause {}", "Clause {}", "{}",
                         "the section {}", "subsection {}"])


@settings(max_examples=150, deadline=None)
@given(clause_id, style)
def test_any_clause_id_in_any_style_parses_back(sid, written):
    parsed = parse_locator(written.format(sid))
    assert parsed.number == sid and parsed.pages is None and parsed.lines is None


def _one(document, section, quote):
    citation = Citation(id="c", claim="A claim.", quote=quote, locator=SectionRef(section))
    document = with_cited_regions(document, [citation])
    return locate_citations([citation], document).iloc[0]


def test_a_quote_in_a_sub_clause_cited_as_its_clause_matches(licence):
    row = _one(licence, "Section 4", "The Licensor may end it at once")
    assert (row.quote_status, row.found_section, row.section_match) == ("exact", "4", True)


def test_a_quote_cited_as_its_sibling_is_a_mismatch_that_names_where_it_is(licence):
    row = _one(licence, "Section 4(c)", "The Licensor may end it at once")
    assert (row.quote_status, row.found_section, row.section_match) == ("exact", "4(b)", False)


def test_a_range_of_clauses_holds_a_quote_in_any_of_them(licence):
    row = _one(licence, "4(a)-(c)", "you delete the Software")
    assert (row.found_section, row.section_match) == ("4(a)-4(c)", True)
    row = _one(licence, "Sections 3.1 and 3.2", "Fees are not refundable.")
    assert (row.found_section, row.section_match) == ("3.1-3.2", True)


def test_a_clause_that_does_not_exist_is_never_replaced_by_other_text(licence):
    assert resolve(licence, "Section 9") is None and resolve(licence, "Sec. 4(f)") is None
    with_quote = _one(licence, "Section 9", "Fees are due monthly.")
    assert (with_quote.found_section, with_quote.section_match) == ("3.1", False)  # found elsewhere, flagged
    claim_only = _one(licence, "Section 9", None)
    assert claim_only.evidence is None and "does not exist" in claim_only.fabricated_reason


def test_a_text_read_as_paragraphs_has_no_section_4(tmp_path):
    path = tmp_path / "note.txt"
    path.write_text("One.\n\nTwo.\n\nThree.\n\nFour: a definition.\n", encoding="utf-8")
    document = load_document(path)
    assert document.reading.startswith("paragraphs")
    assert resolve(document, "Section 4") is None and resolve(document, "clause 4") is None
    assert resolve(document, "4") == "4" and resolve(document, "para. 4") == "4"  # a paragraph, as today


def test_articles_are_cited_with_or_without_their_word(tmp_path):
    path = tmp_path / "regulation.txt"
    path.write_text("Regulation\n\nArticle 1\nScope\n1. It applies to all sites.\n\nArticle 2\nRent\n"
                    "1. Rent is due in April.\n2. Rent may be paid:\n(a) by card;\n(b) in cash.\n", encoding="utf-8")
    document = load_document(path)
    assert resolve(document, "Article 2") == "Article 2" and resolve(document, "Art. 2") == "Article 2"
    assert resolve(document, "Art. 2(2)(b)") == "2(2)(b)" and resolve(document, "Article 2(1)") == "2(1)"


def test_the_judge_reads_a_sub_clause_under_its_parents_captions(tmp_path, licence):
    row = _one(licence, "Section 4(b)", "The Licensor may end it at once")
    assert row.evidence == "4. Termination\n(b) The Licensor may end it at once if you breach clause 3.1."
    assert _one(licence, "Section 4", None).evidence.startswith("4. Termination.\n(a) Either party")
    path = tmp_path / "regulation.txt"
    path.write_text("Regulation\n\nArticle 1\nScope\n1. It applies to all sites.\n\nArticle 2\nRent\n"
                    "1. Rent is due in April.\n2. Rent may be paid:\n(a) by card;\n(b) in cash.\n", encoding="utf-8")
    row = _one(load_document(path), "Art. 2(2)(b)", None)
    assert row.evidence == "Article 2 Rent\n2. Rent may be paid:\n(b) in cash."


def test_a_long_clause_is_focused_as_any_long_section(tmp_path):
    from citeaudit.pipeline.focus import FOCUS_CHARS, focused_evidence

    filler = " ".join(f"The Licensee keeps record {i} of each copy." for i in range(60))
    path = tmp_path / "long.txt"
    path.write_text(f"Licence\n\n1. Scope.\nIt applies.\n\n2. Copies.\n(a) {filler} Backup copies are allowed.\n"
                    "(b) Nothing else.\n\n3. End.\nIt ends.\n", encoding="utf-8")
    row = _one(load_document(path), "Section 2(a)", "Backup copies are allowed.")
    assert row.found_section == "2(a)" and len(row.evidence) > FOCUS_CHARS
    focused = focused_evidence("Backups are allowed.", row.evidence, "Backup copies are allowed.")
    assert focused is not None and "Backup copies are allowed." in focused and len(focused) < FOCUS_CHARS


def test_a_code_of_regulations_reads_its_sections_and_is_cited_as_the_code(tmp_path):
    path = tmp_path / "part164.txt"
    path.write_text(
        "Part 164 excerpt\n\n"
        "§ 164.510 Uses requiring an opportunity to agree.\n(a) Standard: facility directories.\n"
        "(1) Permitted uses. A covered entity may use the following.\n(b) Standard: involvement in care.\n\n"
        "§ 164.512 Uses for which an authorization is not required.\n(a) Standard: uses required by law.\n"
        "(1) A covered entity may use protected health information to the extent required by law.\n"
        "(2) A covered entity must meet the requirements of paragraph\n(c) of this section.\n"
        "(b) Standard: public health activities.\n\n"
        "§ 164.514 Other requirements.\n(a) Standard: de-identification.\n", encoding="utf-8")
    document = load_document(path)  # 164.512 follows 164.510: a section sign allows the gaps of an excerpt
    assert document.reading == "numbered clauses: 3, with 8 sub-clauses"
    assert "(c) of this section." in document.sections["164.512(a)(2)"].text  # a cross-reference, not item (c)
    assert resolve(document, "§ 164.512(a)(1)") == "164.512(a)(1)"
    assert resolve(document, "45 CFR 164.512(b)") == resolve(document, "45 C.F.R. § 164.512(b)") == "164.512(b)"
