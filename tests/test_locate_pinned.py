"""Step 1 is pinned: every labelled citation and variants of every labelled quote give exactly the
quote_status, found_section, section_match, match_score, span, evidence and closest passage
recorded in locate_pinned.json (computed by the per-character implementation before the index
replaced it; regenerate with `python tests/locate_cases.py` only for an intended change)."""

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
