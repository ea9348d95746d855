"""Citation kinds are objects looked up by a row's `kind` (`citations.kinds`): how each names its
citation and its evidence, in the decision, the judge's prompt (part of the cache key), a contrast
finding and the report. The words are the ones the if-chains they replace wrote."""

import pytest

from citeaudit import registry
from citeaudit.citations.kinds import CitationKind, kind_of
from citeaudit.errors import InputError


def row(kind, found, cited=None, **more):
    return {"kind": kind, "id": "c1", "found_section": found, "cited_section": cited, **more}


@pytest.mark.parametrize(("the_row", "label", "target", "where", "place"), [
    (row("quote", "4.1.3", "4.1"), "c1", "section 4.1.3", "section 4.1.3 of rfc.txt", "section 4.1.3"),
    (row("quote", "page 7"), "c1", "section page 7", "page 7 of rfc.txt", "page 7"),
    (row("quote", None, "9.9"), "c1", "section 9.9", "an excerpt of rfc.txt", "the evidence"),
    (row("quote", None), "c1", "the source", "an excerpt of rfc.txt", "the evidence"),
    (row("lines", "L2-L3", "L2-L3"), "c1", "lines L2-L3", "lines 2-3 of rfc.txt", "lines 2-3"),
    (row("source", "S1", "S1"), 'answer.claims[4] "c1"', 'source "S1"', "source S1", "source S1"),
    (row("response", "4.1", source_file="doc.md"), "c1", "section 4.1 of doc.md", "section 4.1 of doc.md",
     "section 4.1"),
    (row("response", "page 3"), "c1", "page 3 of its source", "page 3 of rfc.txt", "page 3"),
    (row("response", None), "c1", "its source", "an excerpt of rfc.txt", "the evidence"),
    (row(None, "2"), "c1", "section 2", "section 2 of rfc.txt", "section 2"),  # no kind: a quote citation's
])
def test_each_kind_names_its_citation_and_evidence(the_row, label, target, where, place):
    kind = kind_of(the_row)
    assert (kind.label(the_row, 4), kind.target(the_row), kind.where(the_row, "rfc.txt"), kind.place(the_row)) == \
        (label, target, where, place)


def test_the_report_words_and_the_dataset_shapes_come_from_the_kinds():
    assert [kind_of(row(k, None)).no_quote_evidence for k in ("quote", "lines", "source", "response")] == [
        "the cited section is", "the cited lines are", "the cited source is", "the cited section is"]
    assert [k.name for k in registry.CITATION_KINDS.values() if k.evidence_whole] == ["lines"]
    assert [k.dataset_key for k in registry.CITATION_KINDS.values()] == ["citations", "document", "sources", "response"]


def test_a_kind_registered_by_name_is_looked_up_and_an_unknown_one_is_refused():
    with pytest.raises(InputError, match="unknown citation kind 'memo': use one of quote, lines, source, response"):
        kind_of(row("memo", "1"))
    registry.CITATION_KINDS.register("memo", CitationKind("memo", no_quote_evidence="the memo is"))
    try:
        assert kind_of(row("memo", "1")).where(row("memo", "1"), "m.txt") == "section 1 of m.txt"
    finally:
        registry.CITATION_KINDS.unregister("memo")
