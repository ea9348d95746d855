"""Focused evidence (issue 34): what the judge reads of a long cited section."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit import AuditOptions, audit_quotes
from citeaudit.errors import InputError
from citeaudit.pipeline.audit import judge_questions
from citeaudit.pipeline.focus import FOCUS_CHARS, GAP, focused_evidence
from citeaudit.table import EvidenceMode

ROOT = Path(__file__).resolve().parent.parent


def test_a_long_sections_passage_holds_the_quotes_sentence_its_neighbours_and_the_heading():
    filler = [f"Sentence {i} says something about tokens of this kind." for i in range(40)]
    quote = "The exp claim is OPTIONAL for every issuer."
    section = "4.1.4.  \"exp\" Claim\n\n" + " ".join([*filler[:20], quote, *filler[20:]])
    passage = focused_evidence("Every issuer has to set exp.", section, quote)
    assert passage is not None and len(passage) < len(section)
    assert passage.startswith('4.1.4. "exp" Claim' + GAP)
    assert f"{filler[19]} {quote} {filler[20]}" in passage  # one neighbour on either side
    assert filler[18] not in passage and filler[21] not in passage


def test_a_short_section_or_one_nothing_matches_is_asked_whole():
    assert focused_evidence("The exp claim is optional.", "Use of the exp claim is OPTIONAL.") is None
    unrelated = " ".join(f"Lorem ipsum dolor {i} sit amet." for i in range(100))
    assert len(unrelated) > FOCUS_CHARS
    assert focused_evidence("Refresh tokens rotate weekly.", unrelated) is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["alpha beta gamma.", "Tokens expire after use.", "Keys rotate.",
                                 "The issuer signs it.", "\n\n", "Nothing here at all."]), min_size=1, max_size=400),
       st.sampled_from(["Tokens expire.", "The issuer signs tokens.", "keys rotate daily"]))
def test_a_passage_is_shorter_and_made_of_the_sections_sentences_in_order(parts, claim):
    section = " ".join(parts)
    passage = focused_evidence(claim, section)
    if passage is None:
        return
    assert len(passage) < len(section)
    flat, position = " ".join(section.split()), 0
    for run in passage.split(GAP):  # each run is consecutive sentences of the section, in its order
        found = flat.find(run, position)
        assert found >= 0, run
        position = found + len(run)


def test_focused_questions_change_only_long_sections_and_name_the_passage():
    table = audit_quotes("rfc7519.txt", ROOT / "data" / "rfc7519_citations.json", locate_only=True).table
    whole = judge_questions(table, "rfc7519.txt")
    focused = judge_questions(table, "rfc7519.txt", EvidenceMode.FOCUSED)
    assert whole.keys() == focused.keys()
    changed = [i for i in whole if whole[i] != focused[i]]
    assert changed, "the worked example cites sections longer than FOCUS_CHARS"
    for i in whole:
        claim, evidence, where, what = whole[i]
        if i in changed:
            assert len(evidence) > FOCUS_CHARS and len(focused[i][1]) < len(evidence)
            assert focused[i][2] == f"passages of {where}" and focused[i][::3] == (claim, what)
        else:
            assert len(evidence) <= FOCUS_CHARS or focused[i] == whole[i]


def test_the_evidence_mode_is_one_setting(monkeypatch):
    assert AuditOptions().evidence == EvidenceMode.SECTION
    monkeypatch.setenv("CITEAUDIT_EVIDENCE", "focused")
    assert AuditOptions.from_env().evidence == EvidenceMode.FOCUSED
    assert AuditOptions.from_env(evidence="section").evidence == EvidenceMode.SECTION
    monkeypatch.setenv("CITEAUDIT_EVIDENCE", "chunks")
    with pytest.raises(InputError, match="CITEAUDIT_EVIDENCE.*section, focused"):
        AuditOptions.from_env()
