"""The project's own numbered documents (issue 49): rebuilt as committed, and step 1 locates every
labelled citation as labelled in every format (`tools/numbered_statuses.py`)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "data" / "numbered"


def _tool(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_the_documents_are_what_the_tool_writes(tmp_path):
    _tool("make_numbered_docs").main([str(tmp_path)])
    built = sorted(p.name for p in tmp_path.iterdir())
    assert built == sorted(p.name for p in FOLDER.iterdir() if "_citations" not in p.name and "step1" not in p.name)
    for name in built:
        assert (tmp_path / name).read_bytes() == (FOLDER / name).read_bytes(), name


@pytest.fixture(scope="module")
def rows():
    return _tool("numbered_statuses").located()


def test_every_labelled_citation_is_located_as_labelled_in_every_format(rows):
    expected = json.loads((FOLDER / "step1_expected.json").read_text(encoding="utf-8"))
    assert len(rows) == 4 * len(expected) and set(rows["format"]) == {"text", "markdown", "html", "pdf"}
    assert set(rows["reading"]) >= {"numbered clauses: 5, with 17 sub-clauses", "numbered clauses: 4, with 13 sub-clauses"}
    right = rows[[c for c in rows.columns if c.startswith("right ")]].all(axis=1)
    assert right.groupby(rows["format"]).mean().min() >= 0.95
    assert right.all(), rows[~right][["document", "format", "citation", "quote_status", "found_section"]]


def test_a_claim_only_citation_of_a_missing_clause_is_never_judged(rows):
    missing = rows[rows["citation"].str.endswith(("no_clause", "no_article"))]
    assert len(missing) == 4 * 4 and not missing["judged"].any()


def test_the_tool_prints_every_format_as_labelled(capsys):
    assert _tool("numbered_statuses").main([]) == 0
    printed = capsys.readouterr().out
    for fmt in ("text", "markdown", "html", "pdf"):
        assert f"all ({fmt})" in printed
    assert printed.count("100%") == 4 * 4 + 4


def test_the_documented_table_is_what_the_tool_prints(rows):
    """docs/how-to/documents.md shows the saved output of `numbered_statuses.py --totals` (--save-docs)."""
    saved = json.loads((ROOT / "docs" / "measurements" / "data" / "numbered_statuses.json").read_text(encoding="utf-8"))
    assert saved["command"] == "python tools/numbered_statuses.py --totals"
    assert saved["output"] == _tool("numbered_statuses").summary(rows, totals=True).to_string() + "\n"
