"""The identifiers check: the claim is about one identifier or defined term, the evidence about another
of the same kind ("the claim is about "iat"; section 4.1.7 is about "jti"").

Kinds of term: `quoted` (in quotation marks or code-formatted in backticks: "iat", `iat`: one kind,
as documents quote what users put in code), `defined` (a parenthesized defined name: "(Expiration
Time)", "(JWK)"), `keyword` (an all-caps keyword: JWS, HMAC, POST; not a BCP 14 word). A claim term
the evidence holds anywhere (a whole word, case-blind, quotes or not) is never flagged, nor one
that is another written two ways (BRCA and BRCA1); one it does not hold is
flagged when the evidence sentences the citation's quote stands in (else the best-matching ones),
or the section's heading, name a different term of its kind that the claim does not. A keyword, which
a paraphrase may add, must also hold the same place (a content word beside it in the claim is
beside the other in the evidence), unless the sentence holds most of the claim's other words
(`CLOSE`): then the claim is that sentence with its keyword swapped ("Lack of INO in mice leads to
plaque formation" against "FGF21 deficiency causes ... plaque formation"). A keyword there may also
stand in place of a name of letters and digits the evidence writes in lower or mixed case ("rim1",
"Gata3"), when the sentence holds at least `LOOSE_CLOSE` of the claim's words ("Mutations in BUPA
decrease levels of IME1" against "rim1 mutations cause reduced expression of IME1").
"""

from __future__ import annotations

import re

from citeaudit.decide.contrast.passages import Finding, best_sentences, content, heading, quoted_terms, words

QUOTED, DEFINED, KEYWORD = "quoted", "defined", "keyword"
CODE = re.compile(r"`([^`\n]{1,40})`")
DEFINED_NAME = re.compile(r"\((?P<name>[A-Z][A-Za-z0-9]*(?:[ -][A-Z][A-Za-z0-9]*){0,3})\)")
KEYWORD_TERM = re.compile(r"(?<![\w\"'`-])[A-Z][A-Z0-9]{1,}(?![\w\"'`:])(?!-\w)")  # "RESULTS:" is a label
# BCP 14 keywords and capitals that name no identifier
NOT_KEYWORDS = frozenset(["MUST", "NOT", "SHALL", "SHOULD", "MAY", "REQUIRED", "RECOMMENDED", "OPTIONAL", "AND",
                          "OR", "THE", "A", "AN", "IF", "OK", "NO", "II", "III", "IV", "VI", "VII", "VIII", "IX",
                          "XI", "XII"])
NEIGHBOURS = 3
# the share of the claim's content words a sentence must hold for a keyword there to stand in place of the
# claim's without a neighbour in common (issue 52, tuned on tools/contrast_dev.py's DEV set: 0.4 brings the
# swapped keywords that stand from 78% to 67% there for 2 more of 576 supported originals flagged)
CLOSE = 0.4
# ... for a keyword against a name of letters and digits in any case (DEV: 68.5% -> 60% stand, +2 of 576 flagged)
LOOSE_CLOSE = 0.3
NAME_WITH_DIGITS = re.compile(r"(?<![\w-])(?=[\w-]*[A-Za-z])(?=[\w-]*\d)[A-Za-z][\w-]*(?![\w-])")  # rim1, Gata3
SHOUTING = 0.4  # a text with more all-caps words than this share is a headline in capitals


def terms(text: str) -> list[tuple[str, int, int, str]]:
    """The identifier-like terms of `text` as (kind, start, end, term), in order.

    >>> [(kind, term) for kind, _, _, term in terms('The "jti" (JWT ID) claim and `iat` in a JWS.')]
    [('quoted', 'jti'), ('defined', 'JWT ID'), ('quoted', 'iat'), ('keyword', 'JWS')]
    """
    found = [(QUOTED, a, b, t.strip()) for a, b, t in quoted_terms(text) if t.strip() and len(t.split()) <= 3]
    found += [(QUOTED, m.start(1), m.end(1), m.group(1).strip()) for m in CODE.finditer(text) if m.group(1).strip()]
    found += [(DEFINED, m.start("name"), m.end("name"), m.group("name")) for m in DEFINED_NAME.finditer(text)]
    taken = [(a, b) for _, a, b, _ in found]
    plain = [w for _, _, w in words(text)]
    if sum(w.isupper() for w in plain) > SHOUTING * max(len(plain), 1):
        return sorted(found, key=lambda t: t[1])  # a headline in capitals: its words are no keywords
    found += [(KEYWORD, m.start(), m.end(), m.group()) for m in KEYWORD_TERM.finditer(text)
              if m.group() not in NOT_KEYWORDS and not any(a <= m.start() < b for a, b in taken)]
    return sorted(found, key=lambda t: t[1])


def _neighbours(text: str, start: int, end: int) -> frozenset[str]:
    before = [w for _, _, w in words(text[max(0, start - 80):start])][-NEIGHBOURS:]
    after = [w for _, _, w in words(text[end:end + 80])][:NEIGHBOURS]
    return content(" ".join(before + after))


def holds(text: str, term: str) -> bool:
    """Whether `text` holds `term` as a whole word (case-blind): "issued" does not hold "iss"."""
    return re.search(rf"(?<!\w){re.escape(term)}(?!\w)", text, re.IGNORECASE) is not None


def variants(a: str, b: str) -> bool:
    """Whether two terms are one written two ways: one starts with the other, letters and digits only, case-blind
    ("BRCA" and "BRCA1", "CO2" and "CO" of "CO(2)")."""
    a, b = re.sub(r"[\W_]", "", a.lower()), re.sub(r"[\W_]", "", b.lower())
    return a.startswith(b) or b.startswith(a)


def check(claim: str, evidence: str, quote: str | None, where: str) -> list[Finding]:
    """The first claim term the evidence lacks while the sentences it stands on name another of its kind."""
    mine = terms(claim)
    title = heading(evidence)
    best = best_sentences(claim, evidence, quote, top=1)
    places = [(s.start, s.text, score >= CLOSE) for s, score in best]
    if title:
        at = evidence.find(title)
        places.append((at, title, False))
    for kind, start, end, term in mine:
        if holds(evidence, term) or (kind == KEYWORD and re.search(rf"(?<!\w){re.escape(term)}", evidence)):
            continue  # held, or a keyword held with more after it (BRCA in BRCA1)
        for offset, sentence, close in places:
            instead = [(a, b, t) for k, a, b, t in terms(sentence)
                       if k == kind and not holds(claim, t) and not variants(term, t)
                       and (kind != KEYWORD or close or _neighbours(claim, start, end) & _neighbours(sentence, a, b))]
            if instead:
                a, b, other = instead[0]
                return [Finding("identifiers", f'the claim is about "{term}"; {where} is about "{other}"',
                                ((start, end),), ((a + offset, b + offset),))]
        if kind == KEYWORD and best and best[0][1] >= LOOSE_CLOSE:
            line = best[0][0]
            named = [m for m in NAME_WITH_DIGITS.finditer(line.text)
                     if not holds(claim, m.group()) and not variants(term, m.group())]
            if named:
                other, at = named[0].group(), line.start + named[0].start()
                return [Finding("identifiers", f'the claim is about "{term}"; {where} is about "{other}"',
                                ((start, end),), ((at, at + len(other)),))]
    return []
