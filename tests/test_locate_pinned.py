"""Step 1 is pinned: every labelled citation and variants of every labelled quote give exactly the
quote_status, found_section, section_match, match_score, span, evidence and closest passage
recorded in locate_pinned.json (computed by the per-character implementation before the index
replaced it; regenerate with `python tests/locate_cases.py` only for an intended change)."""

import importlib
import json

import pytest
from locate_cases import PINNED, _key, compute


@pytest.fixture(scope="module")
def pinned():
    return {_key(row): row for row in json.loads(PINNED.read_text(encoding="utf-8"))}


@pytest.fixture(scope="module")
def current():
    return {_key(row): row for row in compute()}


def test_the_pinned_cases_cover_every_status(pinned):
    statuses = {row["quote_status"] for row in pinned.values()}
    assert statuses == {"exact", "elided", "near", "missing", "none"}
    assert len(pinned) > 400


def test_step1_is_exactly_as_pinned(pinned, current):
    assert current.keys() == pinned.keys()
    differ = {key: (pinned[key], current[key]) for key in pinned if pinned[key] != current[key]}
    assert not differ, f"{len(differ)} cases changed, e.g. {next(iter(differ.items()))}"


def test_the_token_index_finds_exactly_what_a_full_pass_finds(pinned, monkeypatch):
    """The index paths (token lookups for exact and elided quotes, candidate windows for near and
    missing ones) are taken for texts far longer than these; forced here, they give the same
    results. Only a missing quote's best score (and its closest passage) may be lower: the
    sections sharing none of its rare tokens are not aligned."""
    locate = importlib.import_module("citeaudit.locate.quotes")
    monkeypatch.setattr(locate, "SCAN_CHARS", 0)
    monkeypatch.setattr(locate, "NEAR_EXHAUSTIVE_CHARS", 0)
    current = {_key(row): row for row in compute()}
    loose = ("match_score", "closest")
    differ = {}
    for key, row in pinned.items():
        now = current[key]
        if row["quote_status"] == "missing":
            same = {k: v for k, v in row.items() if k not in loose} == {k: v for k, v in now.items() if k not in loose}
            if not same or now["match_score"] > row["match_score"]:
                differ[key] = (row, now)
        elif row != now:
            differ[key] = (row, now)
    assert not differ, f"{len(differ)} cases changed, e.g. {next(iter(differ.items()))}"
    assert sum(row["quote_status"] in ("exact", "elided", "near") for row in current.values()) == 284
