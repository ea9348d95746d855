"""The identifiers check (`decide/contrast/identifiers.py`, issue 52): a claim about one quoted or
code-formatted term, defined name or keyword against evidence about another of its kind."""

import pytest

from citeaudit.decide.contrast import identifiers

JTI = '4.1.7.  "jti" (JWT ID) Claim\n\n   The "jti" (JWT ID) claim provides a unique identifier for the JWT.'
ISS = '4.1.1.  "iss" (Issuer) Claim\n\n   The "iss" (issuer) claim identifies the principal that issued the JWT.'


@pytest.mark.parametrize("claim, evidence, fired", [
    ('The "iat" claim provides a unique identifier for the JWT.', JTI, ("iat", "jti")),
    ("The `iat` claim provides a unique identifier for the JWT.", JTI, ("iat", "jti")),  # code-formatted
    ('The "sub" claim identifies the principal that issued the JWT.', ISS, ("sub", "iss")),  # "issued" is no "iss"
    ("A JWE is signed with an HMAC key.", "A JWS is signed with an HMAC key or an RSA key.", ("JWE", "JWS")),
    ('The "jti" claim provides a unique identifier for the JWT.', JTI, None),
    ('The "jti" claim makes a JWT unique.', JTI, None),
    ("BRCA 1 carriers have a higher risk.", "BRCA1 mutation carriers had a higher risk.", None),  # one term, two ways
    ("The JWE is sent over TLS.", "A JWS MUST be rejected when its signature fails.", None),  # not the same place
    # no neighbour in common, but the sentence holds most of the claim's other words: the keyword is swapped
    ("Lack of JWE in clients leads to token replay.", "JWS deficiency causes token replay in clients.", ("JWE", "JWS")),
    ("Lack of JWE in clients leads to slow logins.", "JWS deficiency causes token replay in clients.", None),
    # a keyword against a name of letters and digits in lower or mixed case, in a sentence that holds the claim's words
    ("Mutations in ABCD lower levels of the kinase.", "Mutations in rim1 lower the kinase's levels.", ("ABCD", "rim1")),
    ("Mutations in ABCD lower levels of the kinase.", "The rim1 strain grew in yeast.", None),
    ("Tokens are checked.", "RESULTS: the JWS was checked.", None),  # nothing of the claim's is named
])
def test_identifiers(claim, evidence, fired):
    found = identifiers.check(claim, evidence, None, "the evidence")
    if fired is None:
        assert found == []
    else:
        (finding,) = found
        (a, b), = finding.claim
        (c, d), = finding.evidence
        assert (claim[a:b], evidence[c:d]) == fired and finding.check == "identifiers"


def test_terms_by_kind():
    found = [(kind, term) for kind, _, _, term in identifiers.terms(
        'The "jti" (JWT ID) claim, the `iat` value of a JWS, which MUST hold, and the RESULTS: label of a study.')]
    assert found == [("quoted", "jti"), ("defined", "JWT ID"), ("quoted", "iat"), ("keyword", "JWS")]
    assert identifiers.terms("THE RESULTS OF A TRIAL OF JWS") == []  # a headline in capitals
