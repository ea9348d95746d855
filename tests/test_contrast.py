"""The contrast checks between a claim and its evidence (`decide/contrast`), one kind at a time, on
the worked example, and on text they cannot read."""

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit import table as C
from citeaudit.decide.contrast import check_contrast, contrast_findings
from citeaudit.decide.contrast.normative import markers
from citeaudit.table import ContrastCheck

EXP = ('4.1.4.  "exp" (Expiration Time) Claim\n\n   The "exp" (expiration time) claim identifies the expiration time '
       'on\n   or after which the JWT MUST NOT be accepted for processing.  Implementers MAY provide for some small '
       'leeway, usually no more than\n   a few minutes, to account for clock skew.  Its value MUST be a number\n   '
       'containing a NumericDate value.  Use of this claim is OPTIONAL.')
AUD = ('4.1.3.  "aud" (Audience) Claim\n\n   If the principal processing the claim does not identify itself with a '
       'value in the\n   "aud" claim when this claim is present, then the JWT MUST be\n   rejected.  Use of this claim '
       'is OPTIONAL.')


def says(claim, evidence, kind, quote=None, where="section 4.1.4"):
    return [f.says for f in contrast_findings(claim, evidence, quote, where, [kind])]


def fired(claim, evidence, finding, which=0):
    """The words a finding marks in the claim and in the evidence."""
    return [claim[a:b] for a, b in finding.claim], [evidence[a:b] for a, b in finding.evidence]


# normative level

def test_the_worked_examples_required_claim_against_an_optional_section():
    claim = 'Every JWT has to carry an "exp" claim; a token without an expiration time is invalid.'
    (finding,) = contrast_findings(claim, EXP, None, "section 4.1.4", [ContrastCheck.NORMATIVE])
    assert finding.says.startswith('the claim says required ("has to"); section 4.1.4 says optional ("OPTIONAL")')
    assert "\n" not in finding.says
    assert fired(claim, EXP, finding) == (["has to"], ["OPTIONAL"])


@pytest.mark.parametrize("claim, flagged", [
    ("If a validator is not in the aud claim, it has to reject the JWT.", False),  # MUST be rejected: agrees
    ("If a validator is not in the aud claim, it may reject the JWT.", True),  # MAY against MUST
    ("If a validator is not in the aud claim, it should reject the JWT.", True),
    ("If a validator is not in the aud claim, the JWT must not be rejected.", True),
])
def test_the_same_act_at_another_level(claim, flagged):
    assert bool(says(claim, AUD, ContrastCheck.NORMATIVE)) == flagged


def test_verbs_of_having_are_one_act_and_the_sentence_with_the_verb_decides():
    evidence = ("The endpoint URI MUST NOT include a fragment component.  The server MAY support any suitable "
                "scheme.  The server MUST support the HTTP Basic scheme for clients that were issued a password.")
    assert says("A redirection endpoint URI may contain a fragment component.", evidence, ContrastCheck.NORMATIVE)
    # the sentence about Basic decides, not the one elsewhere that lets the server support any scheme
    (line,) = says("The server may support the HTTP Basic scheme for clients that were issued a password.", evidence,
                   ContrastCheck.NORMATIVE)
    assert line.startswith('the claim says optional ("may"); section 4.1.4 says required ("MUST")')
    assert says("The server has to support the HTTP Basic scheme for clients issued a password.", evidence,
                ContrastCheck.NORMATIVE) == []


def test_a_claim_about_another_act_than_the_optional_one_is_left_alone():
    # "Use of this claim is OPTIONAL" speaks of carrying the claim, not of rejecting a token
    assert says("A validator has to reject a token whose aud claim does not name it.", AUD, ContrastCheck.NORMATIVE) == []


ORDER = ("11.2.  Signing and Encryption Order\n\n   While syntactically the signing and encryption operations for "
         "Nested\n   JWTs may be applied in any order, if both signing and encryption are\n   necessary, normally "
         "producers should sign the message and then\n\n   encrypt the result (thus encrypting the signature).  "
         "This prevents\n   attacks in which the signature is stripped.")
JTI = ('4.1.7.  "jti" (JWT ID) Claim\n\n   The "jti" claim can be used\n   to prevent the JWT from being replayed.  '
       "If the application\n   uses multiple issuers, collisions MUST be prevented among values\n   produced by "
       "different issuers as well.  Use of this claim is OPTIONAL.")


def test_a_level_on_the_acts_noun_counts_for_the_act():
    # "collisions MUST be prevented": colliding is prohibited; "signing ... are necessary": signing is required
    claim = 'The "jti" claim can stop replays, and when an application uses several issuers, values may collide.'
    (line,) = says(claim, JTI, ContrastCheck.NORMATIVE, where="section 4.1.7")
    assert line.startswith('the claim says optional ("may"); section 4.1.7 says prohibited ("MUST")')
    assert says("When an application uses several issuers, values from different issuers must not collide.", JTI,
                ContrastCheck.NORMATIVE, where="section 4.1.7") == []
    claim = "When a Nested JWT may be both signed and encrypted, producers should normally sign first."
    (finding,) = contrast_findings(claim, ORDER, None, "section 11.2", [ContrastCheck.NORMATIVE])
    assert fired(claim, ORDER, finding) == (["may"], ["are\n   necessary"])
    assert says("When a Nested JWT has to be both signed and encrypted, producers should normally sign first and "
                "then encrypt.", ORDER, ContrastCheck.NORMATIVE, where="section 11.2") == []


def test_a_sentence_runs_on_across_a_removed_page_break_and_a_marker_across_a_line_break():
    from citeaudit.decide.contrast.passages import sentences

    texts = [x.text for x in sentences(ORDER)]
    assert texts[1].startswith("While") and texts[1].endswith("(thus encrypting the signature).")
    assert [x.text for x in sentences("Heading\n\n   Body text.\n\n   o  a bullet")] == [
        "Heading", "Body text.", "o  a bullet"]
    assert [(m.level, m.verb) for m in markers("the JWT MUST\n   NOT be accepted")] == [("prohibited", "accept")]
    assert [m.verb for m in markers("producers should normally sign it; they must apply it")] == ["sign", "appli"]


def test_markers_read_bcp14_keywords_and_plain_words():
    levels = [(m.level, m.text) for m in markers("MUST NOT, SHOULD, is allowed to, need not, OPTIONAL, shall")]
    assert levels == [("prohibited", "MUST NOT"), ("recommended", "SHOULD"), ("optional", "is allowed to"),
                      ("optional", "need not"), ("optional", "OPTIONAL"), ("required", "shall")]


# numbers

def test_a_changed_number_is_flagged_with_both_values():
    evidence = "5.1.  Clock skew\n\n   A collector rejects readings stamped more than 120 seconds in the future."
    claim = "A collector rejects readings stamped more than five minutes in the future."
    (finding,) = contrast_findings(claim, evidence, None, "section 5.1", [ContrastCheck.NUMBERS])
    assert finding.says == 'the claim says "five minutes"; section 5.1 says "120 seconds"'
    assert fired(claim, evidence, finding) == (["five minutes"], ["120 seconds"])


@pytest.mark.parametrize("claim", [
    "A collector rejects readings stamped more than two minutes in the future.",  # 120 seconds, in minutes
    "A collector rejects readings stamped more than 2 min in the future.",
    "A collector rejects readings stamped far in the future.",  # no number at all
])
def test_the_same_amount_in_other_units_is_not_flagged(claim):
    evidence = "A collector rejects readings stamped more than 120 seconds in the future."
    assert says(claim, evidence, ContrastCheck.NUMBERS) == []


def test_a_hyphenated_unit_is_read():
    evidence = "Each sensor has its own key of 256 bits, generated at random."
    assert says("Every sensor has its own 512-bit key.", evidence, ContrastCheck.NUMBERS) == \
        ['the claim says "512-bit"; section 4.1.4 says "256 bits"']
    assert says("Every sensor has its own 256-bit key.", evidence, ContrastCheck.NUMBERS) == []


def test_a_number_the_evidence_does_not_contradict_is_left_alone():
    # the claim adds a count where the best-matching sentence gives none of its kind
    assert says("The JWT has 3 parts separated by periods.", "A JWT is a sequence of parts separated by periods.",
                ContrastCheck.NUMBERS) == []


# polarity

@pytest.mark.parametrize("claim, flagged", [
    ("The JWT MUST NOT be accepted for processing on or after the expiration time.", False),
    ("The JWT must be accepted for processing on or after the expiration time.", True),
    ("The JWT is never accepted for processing on or after the expiration time.", False),
])
def test_a_negation_on_one_side_only(claim, flagged):
    assert bool(says(claim, EXP, ContrastCheck.POLARITY)) == flagged


def test_the_reverse_the_claim_negates_what_the_evidence_asserts():
    evidence = "Analysts expected margins to improve in the second half."
    claim = "Analysts did not expect margins to improve in the second half."
    (finding,) = contrast_findings(claim, evidence, None, "the source", [ContrastCheck.POLARITY])
    assert finding.says.startswith("the claim negates what the source asserts")
    assert fired(claim, evidence, finding) == (["did not"], [])


@pytest.mark.parametrize("claim", [
    "StringOrURI values are compared as case-sensitive strings without any transformation.",  # with no
    "No more than a few minutes of leeway is usual.",  # a bound, not a negation
    "A JWT's contents should only be relied on once they are secured.",  # an exception: left alone
])
def test_paraphrases_of_negation_are_left_alone(claim):
    evidence = ("StringOrURI values are compared as case-sensitive strings with no transformations applied.  "
                "Usually no more than a few minutes of leeway.  The contents of a JWT cannot be relied upon "
                "unless they have been secured.")
    assert says(claim, evidence, ContrastCheck.POLARITY) == []


# entities

def test_a_swapped_quoted_term_is_flagged_with_the_one_in_its_place():
    evidence = '4.1.6.  "iat" (Issued At) Claim\n\n   The "iat" (issued at) claim identifies the time at which the JWT was issued.'
    claim = 'The "nbf" claim identifies the time at which the JWT was issued.'
    (finding,) = contrast_findings(claim, evidence, None, "section 4.1.6", [ContrastCheck.ENTITIES])
    assert finding.says == 'the claim names "nbf"; section 4.1.6 names "iat" there instead'
    assert fired(claim, evidence, finding) == (["nbf"], ["iat"])


@pytest.mark.parametrize("claim", [
    'The "iat" claim identifies when the JWT was issued.',  # the same term
    "The issued-at claim identifies when the token was issued.",  # no term at all
    'The "iat" claim of a JWT was defined by Alice.',  # a name the evidence lacks, but none stands in its place
])
def test_terms_the_evidence_holds_or_does_not_replace_are_left_alone(claim):
    evidence = 'The "iat" (issued at) claim identifies the time at which the JWT was issued.'
    assert says(claim, evidence, ContrastCheck.ENTITIES, where="section 4.1.6") == []


# languages the checks cannot read, and the table

JAPANESE = "すべてのJWTはexpクレームを持たなければならない。有効期限は5分である。"


@pytest.mark.parametrize("kind", list(ContrastCheck))
def test_a_japanese_claim_is_read_by_no_check(kind):
    assert contrast_findings(JAPANESE, EXP, None, "section 4.1.4", [kind]) == []
    assert contrast_findings("Every JWT has to carry an exp claim.", JAPANESE, None, "第4条", [kind]) == []


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=120), st.text(max_size=300), st.one_of(st.none(), st.text(max_size=80)))
def test_no_check_fails_on_any_text(claim, evidence, quote):
    for finding in contrast_findings(claim, evidence, quote, "the evidence", list(ContrastCheck)):
        assert all(0 <= a <= b <= len(claim) for a, b in finding.claim)
        assert all(0 <= a <= b <= len(evidence) for a, b in finding.evidence)


def test_the_table_gets_findings_and_a_note_where_the_checks_stay_silent():
    table = pd.DataFrame({C.ID: ["a", "b", "c"], C.KIND: ["quote"] * 3, C.QUOTE: [None] * 3,
                          C.FOUND_SECTION: ["4.1.4", "4.1.4", None],
                          C.CLAIM: ['Every JWT has to carry an "exp" claim.', JAPANESE, "gone"],
                          C.EVIDENCE: [EXP, EXP, None]}, dtype=object)
    out = check_contrast(table)
    assert [len(f) if f is not None else None for f in out[C.CONTRAST]] == [1, 0, None]
    assert out.at[0, C.CONTRAST][0]["check"] == "normative" and out.at[0, C.CONTRAST][0]["claim"] == [[10, 16]]
    assert out[C.CONTRAST_NOTE].tolist()[0] is None and out[C.CONTRAST_NOTE].tolist()[2] is None
    assert "read English only" in out.at[1, C.CONTRAST_NOTE]
    assert check_contrast(table, [])[C.CONTRAST].tolist() == [None] * 3  # no check: not run


# routing and settings: a flag holds back a verified verdict, never a failing one

def test_the_worked_examples_wrong_verdict_waits_at_any_threshold_and_stands_without_the_checks(recorded_cache):
    from conftest import DATA

    from citeaudit import AuditOptions, audit_quotes

    audit = audit_quotes("rfc7519.txt", DATA / "rfc7519_citations.json", options=AuditOptions.from_env())
    row = audit.table.set_index("id").loc["exp_required"]
    assert (row["verdict"], row["route"], row["state"]) == ("verified", "review", "waiting")
    assert row["score"] >= audit.threshold and "contrast" in row["flags"]
    assert [f["check"] for f in row["contrast"]] == ["normative"]
    assert audit.reroute(0.0).table.set_index("id").at["exp_required", "route"] == "review"
    assert "flagged contrast (normative: the claim says required" in " ".join(audit.decision.reasons)
    off = audit_quotes("rfc7519.txt", DATA / "rfc7519_citations.json", options=AuditOptions.from_env(contrast="none"))
    assert off.table.set_index("id").at["exp_required", "route"] == "auto"  # the model's score alone lets it stand
    assert off.table["contrast"].tolist() == [None] * 8


def test_a_contrast_flag_leaves_a_failing_verdict_standing(recorded_cache):
    from conftest import DATA

    from citeaudit import AuditOptions, audit_quotes
    from citeaudit.decide import route

    audit = audit_quotes("rfc7519.txt", DATA / "rfc7519_citations.json", options=AuditOptions.from_env())
    table = audit.table.copy()
    i = table.index[table["id"] == "exp_required"][0]
    table.at[i, "probabilities"] = {"supports": 0.05, "contradicts": 0.9, "says_nothing": 0.05}
    table.at[i, "confidence"], table.at[i, "answers"] = 0.95, None
    routed = route(table, 0.9, None).loc[i]
    assert (routed["verdict"], routed["route"]) == ("contradicted", "auto") and "contrast" in routed["flags"]


def test_the_setting_is_read_once_from_arguments_then_the_environment(monkeypatch):
    from citeaudit import AuditOptions, InputError
    from citeaudit.settings import DEFAULT_CONTRAST_CHECKS

    assert AuditOptions().contrast == DEFAULT_CONTRAST_CHECKS == AuditOptions.from_env().contrast
    monkeypatch.setenv("CITEAUDIT_CONTRAST_CHECKS", "numbers, normative")
    assert AuditOptions.from_env().contrast == (ContrastCheck.NORMATIVE, ContrastCheck.NUMBERS)
    assert AuditOptions.from_env(contrast="none").contrast == () and len(AuditOptions.from_env(contrast="all").contrast) == 5
    monkeypatch.setenv("CITEAUDIT_CONTRAST_CHECKS", "numbrs")
    with pytest.raises(InputError, match=r"CITEAUDIT_CONTRAST_CHECKS: unknown contrast check 'numbrs': give some of "
                                         r"normative, numbers, polarity, entities, identifiers"):
        AuditOptions.from_env()


def test_a_locate_only_audit_runs_the_checks_too():
    from conftest import DATA

    from citeaudit import audit_quotes

    audit = audit_quotes("rfc7519.txt", DATA / "rfc7519_citations.json", locate_only=True)
    found = {i: [f["check"] for f in c] for i, c in zip(audit.table["id"], audit.table["contrast"]) if c}
    assert found == {"exp_required": ["normative"]}
    assert audit.table.set_index("id").at["sig_reporting", "contrast"] is None  # fabricated: no evidence


def test_every_surface_says_why_the_checks_stayed_silent_or_what_they_found():
    from citeaudit.surfaces import contrast_html
    from citeaudit.surfaces.views import contrast_words

    table = pd.DataFrame({C.ID: ["ja", "en"], C.KIND: ["quote"] * 2, C.QUOTE: [None] * 2,
                          C.FOUND_SECTION: ["4.1.4"] * 2, C.EVIDENCE: [EXP] * 2,
                          C.CLAIM: [JAPANESE, 'Every JWT has to carry an "exp" claim <b>.']}, dtype=object)
    ja, en = (row for _, row in check_contrast(table).iterrows())
    assert contrast_words(ja) == "contrast checks (normative, numbers, polarity, identifiers) read English only: silent on this claim"
    assert "read English only" in contrast_html(ja) and "<mark" not in contrast_html(ja)
    assert contrast_words(en).startswith('normative: the claim says required ("has to"); section 4.1.4 says optional')
    page = contrast_html(en)
    assert 'Every JWT <mark class="contrast">has to</mark> carry' in page and '<mark class="contrast">OPTIONAL</mark>' in page
    assert "&lt;b&gt;" in page and "<b>." not in page  # the claim's text is escaped


def test_a_calibration_measures_the_judge_whatever_contrast_checks_ran(recorded_cache):
    from conftest import DATA

    from citeaudit import AuditOptions, audit_quotes
    from citeaudit.calibrate import cross_validate, threshold_table

    tables = [audit_quotes("rfc7519.txt", DATA / "rfc7519_citations.json", calibration=False,
                           options=AuditOptions.from_env(contrast=kinds)).table for kinds in ("all", "none")]
    assert any(tables[0]["contrast"].map(bool)) and tables[1]["contrast"].isna().all()
    pd.testing.assert_frame_equal(threshold_table(tables[0]), threshold_table(tables[1]))
    (figures, held), (figures_off, held_off) = (cross_validate(t, folds=2) for t in tables)
    assert pd.Series(figures, dtype=object).equals(pd.Series(figures_off, dtype=object))  # NaN meets NaN
    pd.testing.assert_frame_equal(held, held_off)


def test_numbers_reads_a_japanese_claim_against_a_statute_as_the_statute_reader_reads_its_numerals(tmp_path):
    """Issue 52: 三年以下 in the Act is 3 years; a claim of 3年 and 100万円 is carried, one of 5年 is not."""
    import json

    from citeaudit import AuditOptions, audit_quotes, load_citations

    quote = "第三条の規定に違反した者は、三年以下の拘禁刑又は百万円以下の罰金に処する。"
    claims = {"same": "不正アクセス行為をした者は、3年以下の拘禁刑又は１００万円以下の罰金に処せられる。",
              "years": "不正アクセス行為をした者は、5年以下の拘禁刑に処せられる。",
              "yen": "不正アクセス行為をした者は、三年以下の拘禁刑又は五百万円以下の罰金に処せられる。"}
    path = tmp_path / "ja.json"
    path.write_text(json.dumps([{"id": k, "claim": c, "quote": quote, "section": "第11条"} for k, c in claims.items()]),
                    encoding="utf-8")
    table = audit_quotes("unauthorized-access-act-128-1999.egov.xml", load_citations(path), locate_only=True,
                         options=AuditOptions(contrast=("numbers", "normative"))).table.set_index("id")
    assert (table["quote_status"] == "exact").all()
    says = {i: [f["says"] for f in found] for i, found in table["contrast"].items()}
    assert says == {"same": [], "years": ['the claim says "5年"; section 第11条 says "三年"'],
                    "yen": ['the claim says "五百万円"; section 第11条 says "百万円"']}
    assert set(table["contrast_note"]) == {"contrast checks (normative) read English only: silent on this claim"}


def test_polarity_reads_the_quoted_sentence_that_negates_what_the_claim_negates():
    """A quote over two sentences, one that negates the claim's words as the claim does: no finding
    (issue 52's DEV set); the claim without its negation is still found."""
    from citeaudit.decide.contrast import polarity

    evidence = ("The outbreak is a challenge to identify effective therapies for treatment. "
                "No therapies have been shown effective to date.")
    negated = "There were no effective therapies for treatment to date."
    assert polarity.check(negated, evidence, evidence, "the evidence") == []
    assert polarity.check("Effective therapies have been shown for treatment to date.", evidence, evidence,
                          "the evidence")
