"""The numbers check: a quantity of the claim (a value, a unit, a percentage, a date, a range's
end) that the evidence does not carry, while the evidence's best-matching sentence gives a
different one of the same kind ("the claim says 10 minutes; section 4.1.4 says 5 minutes").

A claim number the evidence says nowhere, with no number of its kind where the claim's words are,
is left alone: a paraphrase may add one ("three parts" where the text counts them).
"""

from __future__ import annotations

from citeaudit.decide.contrast.passages import Finding, best_sentences
from citeaudit.decide.contrast.quantities import Quantity, describe, quantities


def check(claim: str, evidence: str, quote: str | None, where: str) -> list[Finding]:
    """The first claim quantity the evidence contradicts, as a finding (or none)."""
    mine = quantities(claim)
    if not mine:
        return []
    everywhere = quantities(evidence)
    focus: list[Quantity] = []
    for sentence, _ in best_sentences(claim, evidence, quote, top=2):
        focus += [q for q in everywhere if sentence.start <= q.start and q.end <= sentence.end]
    for q in mine:
        if any(q.same(e) for e in everywhere):
            continue
        instead = [e for e in focus if e.comparable(q)]
        if instead:
            other = instead[0]
            return [Finding("numbers", f'the claim says "{describe(q)}"; {where} says "{describe(other)}"',
                            ((q.start, q.end),), ((other.start, other.end),))]
    return []
