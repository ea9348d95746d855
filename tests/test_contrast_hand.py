"""Issue 52's hand examples over RFC 7519: each a supported claim and the same claim with one thing
changed, the same exact quote, and a judge that says "supports" to everything, so only a flag keeps
the changed claim from standing. Four stood before issue 52 (a number word, a vague amount, two
swapped identifiers); no original may be held back."""

import json

import pytest

from citeaudit import AuditOptions, audit_quotes, load_citations
from citeaudit.decide.routing import blocked_by, flags_of
from citeaudit.settings.environment import DEFAULT_CONTRAST_CHECKS
from citeaudit.table import ContrastCheck

LEEWAY = "Implementers MAY provide for some small leeway, usually no more than a few minutes, to account for clock skew."
# (id, section, quote, supported claim, the claim with one thing changed)
EXAMPLES = [
    ("number_word", "7.2", "Verify that the JWT contains at least one period ('.') character.",
     "A JWT must contain at least one period ('.') character.",
     "A JWT must contain at least two period characters."),
    ("vague_amount", "4.1.4", LEEWAY,
     "Implementers may allow some small leeway, usually no more than a few minutes, for clock skew.",
     "Implementers may allow up to 30 minutes of leeway for clock skew."),
    ("iat_for_jti", "4.1.7", 'The "jti" (JWT ID) claim provides a unique identifier for the JWT.',
     'The "jti" claim provides a unique identifier for the JWT.',
     'The "iat" claim provides a unique identifier for the JWT.'),
    ("sub_for_iss", "4.1.1", 'The "iss" (issuer) claim identifies the principal that issued the JWT.',
     'The "iss" claim identifies the principal that issued the JWT.',
     'The "sub" claim identifies the principal that issued the JWT.'),
    ("exp_required", "4.1.4", "Use of this claim is OPTIONAL.",
     'Use of the "exp" claim is optional.',
     'Every JWT has to carry an "exp" claim.'),
    ("exp_accepted", "4.1.4", "on or after which the JWT MUST NOT be accepted for processing",
     "A JWT must not be accepted for processing on or after its expiration time.",
     "A JWT may be accepted for processing on or after its expiration time."),
    ("iat_age", "4.1.6", "This claim can be used to determine the age of the JWT.",
     'The "iat" claim can be used to determine the age of the JWT.',
     'The "iat" claim cannot be used to determine the age of the JWT.'),
    ("aud_single", "4.1.3", 'the "aud" value MAY be a single case-sensitive string containing a StringOrURI value',
     'When the JWT has one audience, the "aud" value may be a single case-sensitive string.',
     'When the JWT has one audience, the "aud" value must be a single case-sensitive string.'),
    ("sub_unique", "4.1.2", "The subject value MUST either be scoped to be locally unique in the context of the "
     "issuer or be globally unique.",
     "The subject value must be either locally unique in the context of the issuer or globally unique.",
     "The subject value should be either locally unique in the context of the issuer or globally unique."),
    ("epoch", "2", "seconds from 1970-01-01T00:00:00Z UTC until the specified UTC date/time",
     "A NumericDate counts the seconds from 1970-01-01T00:00:00Z UTC, ignoring leap seconds.",
     "A NumericDate counts the seconds from 1980-01-01T00:00:00Z UTC, ignoring leap seconds."),
    ("jti_replay", "4.1.7", 'The "jti" claim can be used to prevent the JWT from being replayed.',
     'The "jti" claim can be used to keep a JWT from being replayed.',
     'The "jti" claim cannot be used to keep a JWT from being replayed.'),
]


def _stands(tmp_path, kinds, changed: bool) -> dict[str, bool]:
    records = [{"id": name, "claim": new if changed else old, "quote": quote, "section": section}
               for name, section, quote, old, new in EXAMPLES]
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    table = audit_quotes("rfc7519.txt", load_citations(path), locate_only=True,
                         options=AuditOptions(contrast=kinds)).table
    assert (table["quote_status"] == "exact").all(), table[["id", "quote_status"]]
    return {row["id"]: not blocked_by(flags_of(row), "verified") for row in table.to_dict("records")}


@pytest.mark.parametrize("kinds", [tuple(DEFAULT_CONTRAST_CHECKS), tuple(ContrastCheck)], ids=["default", "all"])
def test_no_changed_claim_stands_and_no_original_is_held_back(tmp_path, kinds):
    assert [name for name, stands in _stands(tmp_path, kinds, changed=True).items() if stands] == []
    assert [name for name, stands in _stands(tmp_path, kinds, changed=False).items() if not stands] == []


def test_without_checks_every_changed_claim_would_stand(tmp_path):
    """The examples test the checks: nothing else (a near quote, a section mismatch) holds them back."""
    assert all(_stands(tmp_path, (), changed=True).values())
