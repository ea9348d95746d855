"""The entities check: a name, identifier or quoted term of the claim that the evidence does not
contain, while the evidence's best-matching sentence names a different one of the same shape
where the claim's words are ("the claim names "nbf"; section 4.1.6 names "iat"").

Shapes: a quoted term ("exp"), an identifier (JWT, HS256, SHA-256, StringOrURI), a name (a
capitalized word inside a sentence: Paris, Zenodo; not in a headline written in title case). A
term of the claim found anywhere in the evidence (case-blind) is never flagged, and the other term
must hold the same place: a content word beside it in the evidence is beside the claim's term.
"""

from __future__ import annotations

import re

from citeaudit.decide.contrast.passages import STOPWORDS, Finding, best_sentences, content, quoted_terms, words

# BCP 14 keywords and other capitalized words that name nothing
_NOT_NAMES = frozenset([
    "MUST", "NOT", "SHALL", "SHOULD", "MAY", "REQUIRED", "RECOMMENDED", "OPTIONAL", "AND", "OR", "THE", "A", "AN",
    "IF", "I", "OK", "Section", "Sections", "Figure", "Table", "Appendix", "However", "Therefore", "Thus", "Also"
])
IDENTIFIER = re.compile(r"\b(?:[A-Z]{2,}[A-Za-z0-9]*|[A-Za-z]+\d[\w-]*|[A-Z][a-z]+(?:[A-Z][a-z0-9]*)+)\b")
NAME = re.compile(r"(?<![.!?:;\n]\s)(?<![\n\"“(‘'])(?<!^)\b[A-Z][a-z]{2,}\b")
ROMAN = re.compile(r"[IVXLC]+")
NEIGHBOURS = 3  # content words either side of a term that say what place it holds
TITLE_CASE = 0.4  # a text with more capitalized words than this share is a headline: its names are not read


def terms(text: str) -> list[tuple[str, int, int, str]]:
    """The claim-like terms of `text` as (shape, start, end, term): quoted, identifier, name.

    >>> [(shape, term) for shape, _, _, term in terms('The "nbf" claim of a JWT, said Alice.')]
    [('quoted', 'nbf'), ('identifier', 'JWT'), ('name', 'Alice')]
    """
    found = [("quoted", a, b, t) for a, b, t in quoted_terms(text) if len(t.split()) <= 4]
    inside = [(a - 1, b + 1) for _, a, b, _ in found]
    plain = [w for _, _, w in words(text)]
    headline = sum(w[0].isupper() for w in plain) > TITLE_CASE * max(len(plain), 1)
    for shape, pattern in (("identifier", IDENTIFIER), ("name", NAME)):
        for match in pattern.finditer(text):
            term = match.group()
            if term in _NOT_NAMES or term.lower() in STOPWORDS or ROMAN.fullmatch(term) or \
                    any(lo <= match.start() < hi for lo, hi in inside) or (shape == "name" and headline):
                continue
            if shape == "name" and IDENTIFIER.fullmatch(match.group()):
                continue
            found.append((shape, match.start(), match.end(), match.group()))
            inside.append((match.start(), match.end()))
    return sorted(found, key=lambda t: t[1])


def neighbours(text: str, start: int, end: int) -> frozenset[str]:
    """The content stems of the words beside a term: the place it holds in its sentence."""
    before = [w for _, _, w in words(text[max(0, start - 80):start])][-NEIGHBOURS:]
    after = [w for _, _, w in words(text[end:end + 80])][:NEIGHBOURS]
    return content(" ".join(before + after))


def check(claim: str, evidence: str, quote: str | None, where: str) -> list[Finding]:
    """The first claim term the evidence lacks while a different one of its shape stands in its place
    (a content word beside it in the claim is beside the other in the evidence)."""
    text = evidence.lower()
    mine = terms(claim)
    ours = {t.lower() for _, _, _, t in mine}
    focus = best_sentences(claim, evidence, quote, top=2)
    for shape, start, end, term in mine:
        if term.lower() in text:
            continue
        place = neighbours(claim, start, end)
        for sentence, _ in focus:
            instead = [(a, b, t) for s, a, b, t in terms(sentence.text)
                       if s == shape and t.lower() not in ours and t.lower() not in claim.lower()
                       and place & neighbours(sentence.text, a, b)]
            if instead:
                a, b, other = instead[0]
                return [Finding("entities", f'the claim names "{term}"; {where} names "{other}" there instead',
                                ((start, end),), ((a + sentence.start, b + sentence.start),))]
    return []
