"""The polarity check: the evidence sentence that best matches a claim negates what the claim
asserts, or asserts what the claim negates ("margins are expected to improve" against "did not
expect margins to improve").

Only negations that bear on the shared words count: a "not" whose next content word is a word of
the other side ("MUST NOT be accepted" against "must be accepted"), or two of whose next four are,
within its own clause (up to a comma, "which", "so that", ...). Phrases that bound a quantity
or widen a statement ("no more than", "not only", "whether or not") are not negations, nor
are "without" and "with no", which qualify a thing more often than they deny a statement, and a pair
where either side turns on an exception ("cannot ... unless", "only ... once", "instead of") is
left alone: double negations there are paraphrases more often than contrasts. When the quote stands
in several sentences, one that negates the shared words as the claim does is the one the claim
restates: the others are not read against it ("no effective therapies" against "... to identify
effective drugs. No therapies have been shown effective").
"""

from __future__ import annotations

import re

from citeaudit.decide.contrast.passages import Finding, best_sentences, clip, content, quoted_by, words

NEGATION = re.compile(
    r"\b(?:not|no|never|cannot|none|neither|nor|nobody|nothing|nowhere|unable|inability|impossible|"
    r"fails? to|failed to|\w+n't)\b(?!-)", re.IGNORECASE)  # "no-store" names a thing
NOT_A_NEGATION = re.compile(
    r"\b(?:not only|not least|no (?:more|less|later|earlier|longer|fewer|sooner) than|whether or not|if not|"
    r"no matter|not necessarily|with no)\b", re.IGNORECASE)
EXCEPTION = re.compile(r"\b(?:unless|only|except|excepting|instead of|rather than|otherwise|but not|more than once|"
                       r"at most|at least)\b", re.IGNORECASE)
SCOPE_WORDS = 6  # how many words after a negation it bears on
SCOPE_CONTENT = 1  # ... of which the first content word must be a word of the other side,
SCOPE_WIDE = 4  # ... or two of the first four, within the negation's own clause (up to a comma or a "which")
CLAUSE_END = re.compile(r"[,;:.()]|\b(?:so that|because|which|who|whose|although|though|but|while|whereas)\b",
                        re.IGNORECASE)
MIN_WORDS = 3  # a claim clause with fewer content words is too short to compare
MIN_QUOTED = 0.3  # ... of a sentence the citation's quote stands in (the citation says it is the one)
MIN_OVERLAP = 0.6  # the share of the clause's content words the evidence sentence must hold


def negations(text: str, shared: frozenset[str]) -> list[tuple[int, int]]:
    """The negations of `text` (offsets) whose scope holds one of the `shared` stems.

    >>> negations("the JWT MUST NOT be accepted for processing", {"accept"})
    [(8, 16)]
    """
    skipped = [(m.start(), m.end()) for m in NOT_A_NEGATION.finditer(text)]
    found = []
    for match in NEGATION.finditer(text):
        if any(lo <= match.start() < hi for lo, hi in skipped):
            continue
        clause = CLAUSE_END.split(text[match.end():], maxsplit=1)[0]
        scope = [w for _, _, w in words(clause)[:SCOPE_WORDS] if content(w)]
        if any(content(word) <= shared for word in scope[:SCOPE_CONTENT]) or \
                sum(content(word) <= shared for word in scope[:SCOPE_WIDE]) >= 2:
            start = match.start()
            before = re.search(r"\b(?:must|shall|should|may|do|does|did|is|are|was|were|can|will)\s+$",
                               text[max(0, start - 8):start], re.IGNORECASE)
            found.append((start - len(before.group()) if before else start, match.end()))
    return found


def check(claim: str, evidence: str, quote: str | None, where: str) -> list[Finding]:
    """A finding when a claim clause and its best-matching evidence sentence differ in negation."""
    from citeaudit.decide.contrast.passages import sentences

    for clause in sentences(claim):
        mine = content(clause.text)
        if len(mine) < MIN_WORDS or EXCEPTION.search(clause.text):
            continue
        read = []  # (sentence, the claim's negations, the sentence's) of each sentence to compare
        for sentence, score in best_sentences(clause.text, evidence, quote, top=1):
            quoted = quote is not None and quoted_by(sentence.text, content(quote))
            if score < (MIN_QUOTED if quoted else MIN_OVERLAP) or EXCEPTION.search(sentence.text):
                continue
            shared = mine & content(sentence.text)
            read.append((sentence, negations(clause.text, shared), negations(sentence.text, shared)))
        if any(ours and theirs and len(ours) % 2 == len(theirs) % 2 for _, ours, theirs in read):
            continue  # a quoted sentence negates what the claim negates: that is the one it restates
        for sentence, ours, theirs in read:
            if len(ours) % 2 == len(theirs) % 2:
                continue
            if theirs:
                says = f'{where} negates it: "{clip(sentence.text)}"'
            else:
                says = f'the claim negates what {where} asserts: "{clip(sentence.text)}"'
            return [Finding("polarity", says, tuple((a + clause.start, b + clause.start) for a, b in ours),
                            tuple((a + sentence.start, b + sentence.start) for a, b in theirs))]
    return []
