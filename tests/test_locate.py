"""Normalization and matching, each case on a real excerpt of RFC 7519."""

import pytest

from citeaudit.locate import locate_quote as locate
from citeaudit.locate import normalize
from citeaudit.locate.textindex import strip_enclosing_quotes

AUD = ('If the principal processing the claim does not identify itself with a value in the "aud" '
       'claim when this claim is present, then the JWT MUST be rejected.')
# 11.2: the page footer, form feed and header of page 21 fall between "then" and "encrypt"
PAGE_BREAK = ("normally producers should sign the message and then encrypt the result "
              "(thus encrypting the signature).")


def check_span(doc, found, quote):
    """The span invariant: the raw slice, page furniture aside, is the matched passage."""
    start, end = found.span
    assert 0 <= start < end <= len(doc.raw)
    assert normalize(doc.clean_slice(start, end)) == strip_enclosing_quotes(normalize(quote))


def test_exact_quote_in_cited_section(rfc7519, index7519):
    found = locate(index7519, AUD, "4.1.3")
    assert (found.quote_status, found.found_section, found.section_match) == ("exact", "4.1.3", True)
    assert found.evidence == rfc7519.sections["4.1.3"].text
    check_span(rfc7519, found, AUD)


def test_quote_across_a_page_break(rfc7519, index7519):
    found = locate(index7519, PAGE_BREAK, "11.2")
    assert found.quote_status == "exact" and found.found_section == "11.2"
    assert "[Page 21]" in rfc7519.raw[found.span[0] : found.span[1]]
    check_span(rfc7519, found, PAGE_BREAK)


def test_hyphen_at_a_line_break(rfc7519, index7519):
    quote = 'In the general case, the "aud" value is an array of case-sensitive strings'
    assert "case-\n   sensitive" in rfc7519.raw
    found = locate(index7519, quote, "4.1.3")
    assert found.quote_status == "exact"
    check_span(rfc7519, found, quote)


def test_curly_quotes_fold(rfc7519, index7519):
    quote = AUD.replace('"aud"', "\u201caud\u201d")
    found = locate(index7519, quote, "4.1.3")
    assert found.quote_status == "exact"
    check_span(rfc7519, found, quote)


@pytest.mark.parametrize("dots", ["...", "\u2026", " ... "])
def test_elided_quote(rfc7519, index7519, dots):
    quote = f"If the principal processing the claim{dots}then the JWT MUST be rejected."
    found = locate(index7519, quote, "4.1.3")
    assert found.quote_status == "elided" and found.found_section == "4.1.3"
    assert rfc7519.clean_slice(*found.span).startswith("If the principal")
    assert rfc7519.clean_slice(*found.span).endswith("MUST be\n   rejected.")


def test_elided_pieces_out_of_order_are_not_elided(index7519):
    quote = "then the JWT MUST be rejected ... If the principal processing the claim"
    assert locate(index7519, quote, "4.1.3").quote_status != "elided"


def test_nbsp_and_zero_width_characters(rfc7519, index7519):
    quote = AUD.replace(" ", "\u00a0", 3).replace("principal", "prin\u200bcipal").replace("JWT", "J\ufeffWT")
    found = locate(index7519, quote, "4.1.3")
    assert found.quote_status == "exact"
    check_span(rfc7519, found, quote)


@pytest.mark.parametrize("wrap", ['"{}"', "\u201c{}\u201d", "'{}'"])
def test_enclosing_quotes_are_stripped(rfc7519, index7519, wrap):
    found = locate(index7519, wrap.format(AUD), "4.1.3")
    assert found.quote_status == "exact"
    check_span(rfc7519, found, wrap.format(AUD))


def test_quotes_inside_the_quote_are_kept(index7519):
    assert locate(index7519, '"aud" (Audience) Claim', "4.1.3").quote_status == "exact"


@pytest.mark.parametrize("written", ["4.1.3", "4.1.3.", "Section 4.1.3", "§4.1.3"])
def test_section_ids_written_four_ways(index7519, written):
    from citeaudit.sources import canonical_section_id

    found = locate(index7519, AUD, canonical_section_id(written))
    assert found.section_match is True and found.found_section == "4.1.3"


def test_misattributed_quote_is_found_elsewhere(index7519):
    found = locate(index7519, AUD, "4.1.4")
    assert found.quote_status == "exact"
    assert found.found_section == "4.1.3" and found.section_match is False


def test_one_changed_word_is_near_never_exact(rfc7519, index7519):
    altered = AUD.replace("MUST be rejected", "SHOULD be rejected")
    found = locate(index7519, altered, "4.1.3")
    assert found.quote_status == "near"
    assert 90 <= found.match_score < 100
    assert found.found_section == "4.1.3"
    assert "MUST be" in found.closest


def test_invented_quote_is_missing(index7519):
    quote = ("If the signature on a JWT cannot be validated, the recipient MUST report the "
             "validation failure to the issuer identified by the \"iss\" claim.")
    found = locate(index7519, quote, "7.2")
    assert found.quote_status == "missing" and found.fabricated
    assert found.span is None and found.match_score < 90


def test_claim_only_uses_the_cited_section(rfc7519, index7519):
    found = locate(index7519, None, "4.1.6")
    assert found.quote_status == "none" and found.evidence == rfc7519.sections["4.1.6"].text
    assert len(found.evidence) == 270


def test_claim_only_with_unknown_section_is_fabricated(index7519):
    assert locate(index7519, None, "99.1").fabricated


def test_normalize_is_idempotent_on_the_document(index7519):
    assert normalize(index7519.text) == index7519.text


@pytest.mark.parametrize("source, path", [("rfc7519.txt", "eval_rfc7519.json"), ("rfc6749.txt", "eval_rfc6749.json")])
def test_span_invariant_over_the_labelled_sets(source, path):
    """Every reported span, sliced from the raw file without page furniture, is the matched passage."""
    from conftest import DATA
    from rapidfuzz import fuzz

    from citeaudit import load_citations, load_rfc
    from citeaudit.locate import index_document

    doc = load_rfc(source)
    index = index_document(doc)
    statuses = set()
    for cite in load_citations(DATA / path):
        found = locate(index, cite.quote, cite.locator)
        statuses.add(found.quote_status)
        if found.span is None or cite.quote is None:
            continue
        passage = normalize(doc.clean_slice(*found.span))
        quote = strip_enclosing_quotes(normalize(cite.quote))
        if found.quote_status == "exact":
            assert passage == quote, cite.id
        elif found.quote_status == "elided":
            pieces = [p.strip() for p in quote.split("...") if p.strip()]
            assert passage.startswith(pieces[0]) and passage.endswith(pieces[-1]), cite.id
        else:
            assert fuzz.ratio(passage, quote) >= 85, cite.id
        assert doc.section(found.found_section).start <= found.span[0] < found.span[1] <= doc.section(found.found_section).end
    assert statuses >= {"exact", "elided", "near", "missing", "none"}


@pytest.mark.parametrize("text, message", [
    ("[" * 100_000, "nested too deeply"),
    ('[{"id": "a", "claim": "c", "quote": null, "section": "' + "1" * 10 + '", "x": ' + "9" * 5000 + "}]", "UTF-8 JSON"),
    ('[{"id": "a", "claim": "forged", "claim": "c", "quote": null, "section": "2"}]', "appears twice"),
    ("\udcff", "UTF-8"),
])
def test_hostile_citation_files_are_input_errors(tmp_path, text, message):
    from citeaudit import InputError, load_citations

    path = tmp_path / "c.json"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(InputError, match=message):
        load_citations(path)


def test_a_huge_quote_is_matched_exactly_or_fabricated_in_bounded_time(rfc7519):
    import time

    from citeaudit.citations import Citation, SectionRef
    from citeaudit.locate import locate_citations

    section = rfc7519.sections["4.1.3"].text
    huge = (section + " ") * 40  # ~30 KB, not in the document as a whole
    started = time.perf_counter()
    table = locate_citations([Citation("h", "c", huge, SectionRef("4.1.3")),
                              Citation("s", "c", section, SectionRef("4.1.3"))], rfc7519)
    assert time.perf_counter() - started < 5
    assert table.at[0, "quote_status"] == "missing" and "matched exactly or not at all" in table.at[0, "fabricated_reason"]
    assert table.at[1, "quote_status"] == "exact"


def test_an_oversized_source_is_refused_with_the_fix(tmp_path):
    from citeaudit.errors import SourceError
    from citeaudit.sources.reading import read_text

    path = tmp_path / "big.txt"
    path.write_text("x" * 2000)
    with pytest.raises(SourceError, match="is 2,000 bytes; citeaudit reads a text of up to 1,000 bytes. Split it"):
        read_text(path, limit=1000)
