"""The labelled citation sets (`data/eval_*.json`) agree with step 1 and are large and balanced.

A labelled file `eval_<doc>.json` or `eval_<doc>_more.json` is about the document `<doc>.txt`: the
project's own documents are in `data/docs/`, the RFCs it does not own come from
`CITEAUDIT_DATA_DIR` (see `resolve_source`). The labels say what the cited section says about
the claim; step 1 must agree with the one thing it decides alone: a `fabricated` citation is
fabricated without a model (its quote is missing or its section does not exist), and every other
citation has evidence (a quote found exact, elided or near, or an existing cited section).
"""

import json
import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from conftest import DATA
from rapidfuzz import fuzz

from citeaudit import audit_quotes, load_rfc
from citeaudit.locate import normalize
from citeaudit.locate.textindex import strip_enclosing_quotes
from citeaudit.sources import Document

LABELLED = sorted(DATA.glob("eval_*.json"))
DOCS = DATA / "docs"
VERDICTS = ("verified", "contradicted", "unsupported", "fabricated")
JUDGED = ("verified", "contradicted", "unsupported")


def document_name(path: Path) -> str:
    """`eval_rfc7519_more.json` -> `rfc7519`."""
    return re.sub(r"_more$", "", path.stem.removeprefix("eval_"))


@cache
def document(name: str) -> Document:
    own = DOCS / f"{name}.txt"
    return load_rfc(own if own.is_file() else f"{name}.txt")


def records(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def located(path: Path):
    return audit_quotes(document(document_name(path)), path, locate_only=True).table


def test_the_labelled_files_are_found():
    assert {p.name for p in LABELLED} >= {"eval_rfc7519.json", "eval_rfc6749.json", "eval_rfc7519_more.json",
                                          "eval_rfc6749_more.json", "eval_sensor_telemetry.json"}


@pytest.mark.parametrize("path", LABELLED, ids=lambda p: p.name)
def test_records_are_well_formed(path):
    for record in records(path):
        assert set(record) == {"id", "claim", "quote", "section", "expected"}, record
        assert record["expected"] in VERDICTS, record["id"]
        assert record["claim"].strip() and record["section"].strip(), record["id"]
        assert record["quote"] is None or record["quote"].strip(), record["id"]


@pytest.mark.parametrize("path", LABELLED, ids=lambda p: p.name)
def test_step1_agrees_with_the_labels(path):
    table = located(path)
    assert list(table["id"]) == [r["id"] for r in records(path)]
    doc = document(document_name(path))
    for row in table.itertuples():
        if row.expected == "fabricated":
            assert row.verdict == "fabricated", f"{row.id}: labelled fabricated, step 1 found {row.quote_status}"
            assert row.quote_status in ("missing", "none"), row.id
            if row.quote_status == "none":
                assert doc.section(row.cited_section) is None, f"{row.id}: section {row.cited_section} exists"
        else:
            assert row.verdict is None, f"{row.id}: labelled {row.expected}, step 1 says fabricated"
            assert row.quote_status in ("exact", "elided", "near", "none"), row.id
            assert row.found_section is not None and row.evidence, row.id
            if row.quote_status == "none":
                assert doc.section(row.cited_section) is not None, row.id


@pytest.mark.parametrize("path", LABELLED, ids=lambda p: p.name)
def test_spans_are_the_matched_passages(path):
    """The span of every found quote, sliced from the raw file, is the quoted passage."""
    doc = document(document_name(path))
    for row in located(path).itertuples():
        if row.span is None or row.quote is None:
            continue
        start, end = row.span
        passage = normalize(doc.clean_slice(start, end))
        quote = strip_enclosing_quotes(normalize(row.quote))
        if row.quote_status == "exact":
            assert passage == quote, row.id
        elif row.quote_status == "elided":
            pieces = [p.strip() for p in quote.split("...") if p.strip()]
            assert passage.startswith(pieces[0]) and passage.endswith(pieces[-1]), row.id
        else:
            assert fuzz.ratio(passage, quote) >= 85, row.id
        section = doc.section(row.found_section)
        assert section is not None and section.start <= start < end <= section.end, row.id


def test_ids_are_unique_across_files():
    ids = Counter(r["id"] for path in LABELLED for r in records(path))
    assert [i for i, n in ids.items() if n > 1] == []


def test_the_sets_are_large_balanced_and_cover_the_hard_cases():
    rows = [r for path in LABELLED for r in records(path)]
    counts = Counter(r["expected"] for r in rows)
    assert len(rows) >= 120, counts
    assert len({document_name(p) for p in LABELLED}) >= 3
    assert all(counts[v] >= 28 for v in JUDGED), counts
    assert 0.15 <= counts["fabricated"] / len(rows) <= 0.25, counts
    judged = [counts[v] for v in JUDGED]
    assert max(judged) - min(judged) <= 0.1 * sum(judged), counts
    assert 0.15 <= sum(r["quote"] is None for r in rows) / len(rows) <= 0.35
    tables = [located(path) for path in LABELLED]
    statuses = Counter(s for t in tables for s in t["quote_status"])
    assert all(statuses[s] >= 3 for s in ("exact", "elided", "near", "missing", "none")), statuses
    misattributed = sum(((t["section_match"] == False) & t["verdict"].isna()).sum() for t in tables)  # noqa: E712
    assert misattributed >= 9


def test_every_document_has_every_relation():
    for name in {document_name(p) for p in LABELLED}:
        counts = Counter(r["expected"] for p in LABELLED if document_name(p) == name for r in records(p))
        assert all(counts[v] >= 5 for v in VERDICTS), (name, counts)


def test_the_project_document_loads_into_numbered_sections():
    doc = document("sensor_telemetry")
    assert len(doc.sections) == 28
    assert doc.section("1").title == "Introduction"
    assert doc.section("4.5").title == "Duplicate Detection"
    assert "[Page" not in doc.clean and "\f" not in doc.clean
    assert 12_000 <= len(doc.raw.encode("utf-8")) <= 22_000
