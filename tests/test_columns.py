"""The table's columns, each declared once in `table.py` (`column(name, stage, output)`): the lists the
stages use are derived from the declarations, the JSON Lines record keeps the command line's order,
and every judge column is the `Judgement` field of its name."""

import math
from dataclasses import fields

import numpy as np
import pandas as pd
import pytest
from conftest import DATA
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit import audit_quotes
from citeaudit import table as C
from citeaudit.citations.dataset import ANSWER_ID, LINE
from citeaudit.judge import Judgement
from citeaudit.pipeline.batch import ROW_COLUMNS
from citeaudit.pipeline.jsonl import records
from citeaudit.table import Stage

# the command line's record as DESIGN.md and docs/extending/column.md document it: a new column is written after these
RECORD = ["id", "kind", "claim", "quote", "cited_section", "quote_status", "found_section", "section_match",
          "match_score", "span", "relation", "probabilities", "answers", "confidence", "method", "p_pass", "score",
          "verdict", "route", "flags", "model", "cached", "error", "error_kind", "closest", "fabricated_reason",
          "expected", "review_verdict", "review_state", "final_verdict", "state"]
VENDOR_RECORD = ["source_file", "vendor", "vendor_location", "findings", "unchecked_reason"]


def test_each_column_is_declared_once_and_the_lists_are_derived():
    names = [c.name for c in C.COLUMNS]
    assert len(names) == len(set(names))
    assert C.LOCATE_COLUMNS + C.JUDGE_COLUMNS + C.names(Stage.ROUTE) + C.names(Stage.REVIEW) == C.AUDIT_COLUMNS
    assert set(C.AUDIT_COLUMNS) | set(C.RESPONSE_FIELDS) == set(names)
    assert [ANSWER_ID, LINE, *C.AUDIT_COLUMNS] == ROW_COLUMNS  # a batch's rows: every column of the table
    assert C.LOCATE_COLUMNS[:5] == [C.ID, C.KIND, C.CLAIM, C.QUOTE, C.CITED_SECTION]


def test_the_record_keeps_the_command_lines_order():
    places = sorted(c.output for c in C.COLUMNS if c.output is not None)
    assert places == list(range(1, len(places) + 1))  # one place each, no gap
    assert C.RECORD_FIELDS[:len(RECORD + VENDOR_RECORD)] == RECORD + VENDOR_RECORD  # new fields come after
    assert [f for f in C.RECORD_FIELDS if f not in VENDOR_RECORD] == C.OUTPUT_FIELDS
    assert C.RESPONSE_FIELDS[:len(VENDOR_RECORD)] == VENDOR_RECORD
    assert C.EVIDENCE not in C.RECORD_FIELDS and C.FINGERPRINT not in C.RECORD_FIELDS


def test_every_judge_column_is_a_judgement_field():
    """`judge_citations` copies a `Judgement` into its row field by field, by these names."""
    assert set(C.JUDGE_COLUMNS) == {f.name for f in fields(Judgement)}


@pytest.mark.parametrize("locate_only", [True, False], ids=["locate-only", "replay"])
def test_records_have_the_declared_fields_and_the_judgement_reaches_them(recorded_cache, locate_only):
    audit = audit_quotes("rfc7519.txt", DATA / "rfc7519_citations.json", locate_only=locate_only)
    written = records(audit.table, audit.document)
    assert all(list(record) == C.OUTPUT_FIELDS for record in written)
    judged = [r for r in written if r["model"] is not None]
    assert bool(judged) != locate_only
    for record in judged:  # every judge column came from the Judgement, none left at None by the copy
        assert record["relation"] in ("supports", "contradicts", "says_nothing") or record["error"]
        assert record["method"] is not None and record["cached"] is not None


def test_a_vendor_responses_records_carry_its_own_fields_in_their_place():
    from citeaudit import audit_response

    sources = ["rfc7519.txt", DATA / "formats" / "lantern-sync.md", DATA / "formats" / "reservoir-report.pdf"]
    audit = audit_response(DATA / "responses" / "anthropic_messages.json", sources, locate_only=True)
    written = records(audit.table, audit.document)
    assert written and all(list(record) == C.RECORD_FIELDS for record in written)


CELLS = st.one_of(st.none(), st.just(float("nan")), st.just(pd.NA), st.integers(), st.booleans(), st.floats(),
                  st.text(max_size=5), st.lists(st.integers(), max_size=3),
                  st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
                  st.lists(st.lists(st.integers(), min_size=2, max_size=2), min_size=1, max_size=2))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["a", "b", "c", "extra"]), CELLS, max_size=4), max_size=5))
def test_a_table_keeps_each_value_as_one_cell_and_reads_back_as_pandas_records(rows):
    """`frame`: object columns, a missing value (absent, None, NaN, NA) as None, a list or dict one
    cell, keys outside the columns left out; `row_dicts` reads it back as pandas' `to_dict`."""
    columns = ["a", "b", "c"]
    table = C.frame(rows, columns)
    assert list(table.columns) == columns and len(table) == len(rows)
    assert all(dtype is np.dtype(object) for dtype in table.dtypes)
    for n, row in enumerate(rows):
        for column in columns:
            value, cell = row.get(column), table[column].iloc[n]
            if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
                assert cell is None
            else:
                assert cell is value
    assert repr(C.row_dicts(table)) == repr(table.to_dict("records"))
