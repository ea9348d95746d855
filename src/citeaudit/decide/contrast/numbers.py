"""The numbers check: a quantity of the claim (a value, a unit, a percentage, a date, a range's
end) that the evidence does not carry, while the evidence's best-matching sentence gives a
different one of the same kind ("the claim says 10 minutes; section 4.1.4 says 5 minutes").

A vague amount is a range ("a few minutes", `quantities.VAGUE`): a claim amount inside the range the
evidence allows is carried; one outside it, larger than "no more than a few minutes" say, is not.

Conservative: a claim number the evidence says anywhere (a bare count: where it counts the same
thing, or in the best-matching sentences), or one inside a range the evidence gives
(or a range of the claim that holds an evidence number), is never flagged; a bare count (or an
ordinal) is compared only with one that counts the same thing (a content word beside both: "500 envelopes" against
"1000 envelopes", never "Type 1 Diabetes" against "two groups");
a Japanese claim against Japanese evidence is read by `japanese.amounts` (kanji numerals as the
statute reader reads them: 三年以下 is 3 years) and compared within its counter; a claim number with no number of
its kind where the claim's words are is left alone: a paraphrase may add one. A claim number written
with fewer decimals than an evidence number of its dimension is that number rounded when it is
within half a unit of its last digit ("6 percent" for "5.9%"), or a whole unit after a hedge
("about", "around", "roughly": "around 80 percent" for "80.9%").
"""

from __future__ import annotations

import re
import unicodedata

from citeaudit.decide.contrast import japanese
from citeaudit.decide.contrast.passages import Finding, best_sentences, content, readable, words
from citeaudit.decide.contrast.quantities import COUNT, ORDINAL, TIMES, Quantity, describe, quantities, ranges, within

COUNTING = (COUNT, ORDINAL, TIMES)  # amounts that say nothing of what they count: compared by their neighbours
NEIGHBOURS = 2  # content words either side of a count that say what it counts
HEDGE = re.compile(r"\b(?:about|around|roughly|approximately|nearly|almost|some|an estimated|circa|ca\.|~)\s*$",
                   re.IGNORECASE)
_WRITTEN = re.compile(r"\d[\d,]*(?:[.·](\d+))?")


def neighbours(text: str, q: Quantity) -> frozenset[str]:
    """The content stems of the words beside a quantity (what a bare count counts; for a vague amount,
    the words after it: "several sensors")."""
    before = [] if q.upper is not None else [w for _, _, w in words(text[max(0, q.start - 60):q.start])][-NEIGHBOURS:]
    after = [w for _, _, w in words(text[q.end:q.end + 60])][:NEIGHBOURS]
    return content(" ".join(before + after))


def rounded(claim: str, q: Quantity, e: Quantity) -> bool:
    """Whether the claim's `q` is the evidence's `e` rounded to the claim's digits (half a unit of its
    last digit; a whole one after a hedge: "about 6 percent" for "5.9%"); `e` must be written with more
    decimals than `q`, both in one dimension."""
    mine, theirs = _WRITTEN.match(q.text), _WRITTEN.match(e.text)
    if q.dimension != e.dimension or q.upper is not None or e.upper is not None or not theirs:
        return False
    if mine is None and q.dimension not in ("percent", *COUNTING):
        return False  # a number in words ("six percent") is whole; its unit's size is known for these only
    places = len(mine.group(1) or "") if mine else 0
    if len(theirs.group(1) or "") <= places:
        return False
    written = float(mine.group().replace(",", "").replace("·", ".")) if mine else q.value
    if written == 0:
        return False
    factor = q.value / written  # the claim's unit in the dimension's base unit
    unit = 10.0 ** -places * (1.0 if HEDGE.search(claim[max(0, q.start - 16):q.start]) else 0.5)
    return abs(e.value / factor - written) <= unit + 1e-9


def counting(q: Quantity, e: Quantity) -> bool:
    """Whether both are bare counts or ordinals, which say nothing of what they count."""
    return q.dimension in COUNTING and e.dimension in COUNTING


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def check_japanese(claim: str, evidence: str, quote: str | None, where: str) -> list[Finding]:
    """The first amount of a Japanese claim the Japanese evidence does not carry while a sentence the
    quote stands in (else any of its sentences) gives another of its kind ("三年" against "一年")."""
    everywhere = japanese.amounts(evidence)
    spans = japanese.sentences(evidence)
    if quote and _squeezed(quote):
        said = _squeezed(quote)
        quoted = [(a, b) for a, b in spans if _squeezed(evidence[a:b]) in said or said in _squeezed(evidence[a:b])]
        spans = quoted or spans
    focus = [e for e in everywhere if any(a <= e.start and e.end <= b for a, b in spans)]
    for q in japanese.amounts(claim):
        if any(q.same(e) for e in everywhere):
            continue
        instead = [e for e in focus if e.comparable(q)]
        if instead:
            other = instead[0]
            return [Finding("numbers", f'the claim says "{describe(q)}"; {where} says "{describe(other)}"',
                            ((q.start, q.end),), ((other.start, other.end),))]
    return []


def check(claim: str, evidence: str, quote: str | None, where: str) -> list[Finding]:
    """The first claim quantity the evidence contradicts, as a finding (or none); a Japanese pair is
    read by `check_japanese`."""
    if japanese.japanese(claim) and japanese.japanese(evidence) and not readable(claim):
        return check_japanese(claim, evidence, quote, where)
    mine = quantities(claim)
    if not mine:
        return []
    everywhere = quantities(evidence)
    theirs_ranges, mine_ranges = ranges(evidence, everywhere), ranges(claim, mine)
    focus: list[Quantity] = []
    for sentence, _ in best_sentences(claim, evidence, quote, top=2):
        focus += [q for q in everywhere if sentence.start <= q.start and q.end <= sentence.end]
    for q in mine:
        near = neighbours(claim, q)
        if any((q.same(e) or rounded(claim, q, e))
               and (e in focus or not counting(q, e) or near & neighbours(evidence, e)) for e in everywhere) \
                or within(q, theirs_ranges):
            continue
        mine_range = [pair for pair in mine_ranges if q in pair]
        if mine_range and any(within(e, mine_range) for e in everywhere) \
                and not any(lo.dimension == q.dimension for lo, _ in theirs_ranges):
            continue  # a claim range around an evidence number; against an evidence range, its ends must be in it
        instead = [e for e in focus if e.comparable(q) and (q.dimension not in COUNTING
                                                              or near & neighbours(evidence, e))]
        if instead:
            other = instead[0]
            return [Finding("numbers", f'the claim says "{describe(q)}"; {where} says "{describe(other)}"',
                            ((q.start, q.end),), ((other.start, other.end),))]
    return []
