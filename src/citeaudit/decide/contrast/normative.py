"""The normative-level check: the obligation a claim states against the level the evidence gives
the same thing.

The claim's words (must, has to, required, shall, must not, should, may, optional, is allowed)
and the evidence's (the BCP 14 keywords of an RFC, MUST, SHOULD NOT, OPTIONAL, ..., and the same
words in lower case) are read as one of five levels. Two rules, each conservative:

- the same act: a claim clause's level against the level the evidence sentence that best
  matches it gives the same verb ("has to reject" against "MUST be rejected" agree; "may reject"
  against "MUST be rejected" do not), or against the one level of a sentence that holds most of
  the clause's words;
- presence: a claim that something has to be carried, included or used, against a sentence of the
  evidence that says the use of that same thing is OPTIONAL ("Use of this claim is OPTIONAL." under
  the heading `"exp" (Expiration Time) Claim`).

An evidence sentence may put the level on the act's noun instead of its verb: "collisions MUST be
prevented" gives colliding the level prohibited, "if signing and encryption are necessary" gives
signing and encrypting the level required (`nominal_acts`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from citeaudit.decide.contrast.passages import (
    FUNCTION_WORDS,
    Finding,
    best_sentences,
    clip,
    content,
    heading,
    quoted_terms,
    sentences,
    stem,
    words,
)

REQUIRED, RECOMMENDED, OPTIONAL, NOT_RECOMMENDED, PROHIBITED = (
    "required", "recommended", "optional", "not recommended", "prohibited")
# longest first within a level; every pattern is matched case-blind on whole words
_MARKERS = (
    (PROHIBITED, r"must not|mustn't|must never|shall not|shan't|may not|is not allowed to|are not allowed to|"
                 r"is not allowed|are not allowed|is not permitted|are not permitted|is forbidden|are forbidden|"
                 r"is prohibited|are prohibited|forbidden|prohibited"),
    (OPTIONAL, r"does not have to|do not have to|need not|needn't|is not required|are not required|not required|"
               r"is not mandatory|are not mandatory|optionally|optional|is allowed to|are allowed to|is allowed|"
               r"are allowed|is permitted|are permitted|is free to|are free to|may"),
    (NOT_RECOMMENDED, r"should not|shouldn't|not recommended|is discouraged|are discouraged"),
    (REQUIRED, r"must|has to|have to|had to|needs to|need to|is required to|are required to|is required|"
               r"are required|required|requires|require|mandatory|shall|is obligatory|are obligatory|"
               r"is necessary|are necessary"),
    (RECOMMENDED, r"should|ought to|recommended|is encouraged to|are encouraged to"),
)
# a marker may be wrapped across lines ("MUST\n   NOT", "are\n   necessary")
# (one word-start test before the alternatives, instead of one per level: the search is the check's cost)
MARKER = re.compile(r"\b(?=[a-z])(?:" + "|".join(rf"(?P<m{n}>(?:{pattern})\b)".replace(" ", r"\s+")
                                                for n, (_, pattern) in enumerate(_MARKERS)) + ")", re.IGNORECASE)
# verbs that say a thing is there: "has to carry an exp claim", "must include", "must be present"
PRESENCE = frozenset(stem(w) for w in [
    "carry", "carries", "contain", "include", "have", "has", "be", "present", "use", "provide", "set"
])
# verbs of having, one act for the comparison of levels ("MAY contain" against "MUST NOT include")
HAVING = frozenset(stem(w) for w in ["carry", "contain", "include", "have", "hold"])
# words that sit between a marker and the verb it governs ("must either reject", "must be rejected")
_SKIP = frozenset(["be", "either", "always", "only", "also", "still", "both", "all", "then", "first", "not", "ever"])
# verbs that end in -ly, which an adverb between a marker and its verb ("should normally sign") does too
_LY_VERBS = frozenset(["apply", "reply", "supply", "comply", "rely", "imply", "multiply", "fly", "ally", "rally",
                       "tally", "bully"])
# a marker that is the predicate of its sentence's subject ("signing is necessary", "use of it is OPTIONAL")
_PREDICATE = re.compile(r"(?:is|are)(?: not)? (?:required|mandatory|optional|necessary|needed|allowed|permitted|"
                        r"forbidden|prohibited|recommended|discouraged)|optional|forbidden|prohibited|recommended",
                        re.IGNORECASE)
# "collisions MUST be prevented": the act's noun, then a verb that forbids or performs it
_FORBID = frozenset(["prevent", "avoid"])
_PERFORM = frozenset(["perform", "don", "carri"])
_OPPOSITE = {REQUIRED: PROHIBITED, RECOMMENDED: NOT_RECOMMENDED, PROHIBITED: REQUIRED,
             NOT_RECOMMENDED: RECOMMENDED}
_NOUN_JOINERS = frozenset(["and", "or", "both", "of", "the", "a", "an", "any", "such", "these", "this", "is", "are",
                           "be", "not"])
# where a claim sentence joins two statements: each is matched alone when the whole matches no sentence
_JOINED = re.compile(r",\s+(?:and|but|while|whereas)\s+", re.IGNORECASE)
CLOSE = 0.7  # a sentence holding this share of a claim clause's words says the same thing, whatever its verb
DEICTIC = re.compile(r"\b(?:this|the) (?:claim|parameter|header parameter|header|field|member|element|attribute|"
                     r"option|extension|value|property|key)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Marker:
    """One normative expression: its level, its offsets and the stem of the verb it governs (or "")."""

    level: str
    start: int
    end: int
    text: str
    verb: str


def markers(text: str, offset: int = 0) -> list[Marker]:
    """Every normative expression of `text` with the verb it governs; offsets shifted by `offset`.

    >>> [(m.level, m.verb) for m in markers("the JWT MUST be rejected; it may not be used")]
    [('required', 'reject'), ('prohibited', 'us')]
    """
    return list(_markers(text, offset))


@lru_cache(maxsize=1024)  # pure, and asked again of the same evidence sentences by every claim clause
def _markers(text: str, offset: int) -> tuple[Marker, ...]:
    found = []
    for match in MARKER.finditer(text):
        level = _MARKERS[int(next(k for k, v in match.groupdict().items() if v)[1:])][0]
        verb, after = "", words(text[match.end():match.end() + 60])[:4]
        for i, (_, _, word) in enumerate(after):
            lower = word.lower()
            if lower in _SKIP or (lower.endswith("ly") and lower not in _LY_VERBS):  # "should normally sign"
                continue
            if lower in FUNCTION_WORDS:  # "must be the integer 1", "is required for": the act is to be
                verb = "be" if any(w.lower() == "be" for _, _, w in after[:i]) else ""
            else:
                verb = stem(word)
            break
        found.append(Marker(level, offset + match.start(), offset + match.end(), match.group(), verb))
        found.extend(Marker(act_level, offset + match.start(), offset + match.end(), match.group(), act)
                     for act, act_level in nominal_acts(text[:match.start()], match.group(), level, verb))
    return tuple(found)


def acts_of_noun(noun: str) -> frozenset[str]:
    """The verb stems a noun may name the act of, as `stem` writes them; none for a noun that is not
    an act's.

    >>> sorted(acts_of_noun("collisions")), sorted(acts_of_noun("encryption")), sorted(acts_of_noun("signing"))
    (['collid', 'collit'], ['encrypt'], ['sign'])
    """
    w = noun.lower()
    if w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if w.endswith("ing") and len(w) > 5:
        return frozenset([stem(w)])
    if w.endswith("ment") and len(w) > 7:
        return frozenset([stem(w[:-4])])
    for suffix, ends in (("ication", ("i",)), ("ization", ("iz",)), ("sion", ("d", "t")), ("tion", ("t",))):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return frozenset(w[: -len(suffix)] + end for end in ends)
    return frozenset()


def nominal_acts(before: str, marker: str, level: str, verb: str) -> list[tuple[str, str]]:
    """The acts a marker gives a level through their nouns, with that level: the nouns just before it
    (its subject, "signing and encryption") when the marker is a predicate ("are necessary") or when
    it governs a verb that forbids the act ("MUST be prevented": the opposite level) or performs it.
    Empty for every other marker."""
    if verb in _FORBID:
        level = _OPPOSITE.get(level, "")
    elif not (verb in _PERFORM or _PREDICATE.fullmatch(" ".join(marker.split()))):
        return []
    if not level:
        return []
    acts: list[tuple[str, str]] = []
    for _, _, word in reversed(words(before[-60:])[-5:]):
        if word.lower() in _NOUN_JOINERS:
            continue
        nouns = acts_of_noun(word)
        if not nouns:
            break
        acts.extend((act, level) for act in sorted(nouns))
    return acts


def same_act(a: str, b: str) -> bool:
    """Whether two governed verbs (stems) name the same act: the same stem, or two verbs of having
    ("contain" and "include", "carry" and "have")."""
    return a == b or (a in HAVING and b in HAVING)


def _says(level: str, marker: Marker) -> str:
    return f'{level} ("{marker.text}")'


def _candidates(text: str, evidence: str, quote: str | None) -> list:
    return [(s, score) for s, score in best_sentences(text, evidence, quote, top=2) if score >= 0.5]


def _part(clause: str, at: int) -> str:
    """The statement of a claim sentence that holds offset `at` ("..., and X may collide" gives "X may
    collide")."""
    begin = 0
    for joint in _JOINED.finditer(clause):
        if joint.end() > at:
            return clause[begin:joint.start()]
        begin = joint.end()
    return clause[begin:]


def _same_act(clause: str, start: int, claim_markers: list[Marker], evidence: str, quote: str | None,
              where: str) -> Finding | None:
    levels = {m.level for m in claim_markers}
    whole = _candidates(clause, evidence, quote)
    everywhere = markers(evidence)
    for mine in claim_markers:
        candidates = whole or _candidates(_part(clause, mine.start - start), evidence, quote)
        found: tuple[Marker, str] | None = None
        for sentence, _ in candidates:
            same = [m for m in markers(sentence.text, sentence.start) if mine.verb and same_act(m.verb, mine.verb)]
            if same:
                agreeing = [m for m in same if m.level == mine.level]
                found = (agreeing or same)[0], sentence.text
                break
        if found is None and mine.verb and any(same_act(m.verb, mine.verb) and m.level in levels for m in everywhere):
            continue  # the evidence gives this act the claim's level elsewhere: no contrast
        if found is None and candidates and candidates[0][1] >= CLOSE:
            sentence = candidates[0][0]
            theirs = markers(sentence.text, sentence.start)
            if len({m.level for m in theirs}) == 1:  # a close paraphrase of one level: "is required" / RECOMMENDED
                found = (theirs[0], sentence.text)
        if found is not None and found[0].level not in levels:
            other, text = found
            return Finding("normative", f"the claim says {_says(mine.level, mine)}; {where} says "
                           f'{other.level} ("{other.text}"): "{clip(text)}"',
                           ((mine.start, mine.end),), ((other.start, other.end),))
    return None


def _subject_terms(evidence: str, sentence: str) -> frozenset[str]:
    """The content stems and quoted terms (lower case) a sentence speaks of, with "this claim" read as
    its section's heading."""
    terms = content(sentence) | {t.lower() for _, _, t in quoted_terms(sentence)}
    if DEICTIC.search(sentence):
        title = heading(evidence)
        terms |= content(title) | {t.lower() for _, _, t in quoted_terms(title)}
    return terms


def _presence(clause: str, start: int, claim_markers: list[Marker], evidence: str, where: str) -> Finding | None:
    required = [m for m in claim_markers if m.level == REQUIRED and m.verb in PRESENCE]
    if not required:
        return None
    mine = required[0]
    named = {t.lower() for _, _, t in quoted_terms(clause)}
    objects = content(clause[mine.end - start:]) - PRESENCE
    if not objects:
        return None
    for sentence in sentences(evidence):
        optional = [m for m in markers(sentence.text, sentence.start) if m.level == OPTIONAL]
        if not optional or not re.search(r"\b(?:use of|is optional|are optional|may be omitted|may contain|"
                                         r"may include|may be present|may carry|may have)\b", sentence.text, re.I):
            continue
        theirs = _subject_terms(evidence, sentence.text)
        if named and not named <= theirs:
            continue
        if not named and len(objects & theirs) < max(1, round(0.67 * len(objects))):
            continue
        other = optional[0]
        return Finding("normative", f"the claim says {_says(REQUIRED, mine)}; {where} says optional "
                       f'("{other.text}"): "{clip(sentence.text)}"',
                       ((mine.start, mine.end),), ((other.start, other.end),))
    return None


def check(claim: str, evidence: str, quote: str | None, where: str) -> list[Finding]:
    """The normative findings of a claim against its evidence (at most one: presence first)."""
    for clause in sentences(claim):
        mine = markers(clause.text, clause.start)
        if not mine:
            continue
        finding = _presence(clause.text, clause.start, mine, evidence, where) or \
            _same_act(clause.text, clause.start, mine, evidence, quote, where)
        if finding is not None:
            return [finding]
    return []
