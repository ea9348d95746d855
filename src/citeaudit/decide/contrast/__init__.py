"""Contrast checks between a claim and its evidence: what a small judge misses (issue 34).

A small judge reads the topic and misses the twist: "Every JWT has to carry an exp claim" against
a section that ends "Use of this claim is OPTIONAL." Five deterministic checks compare the claim
with the part of the evidence that best matches it (the quote's sentences, else the best-matching
sentences of the cited section), each registered by name (`CHECKS`):

| check       | fires when                                                                        |
|-------------|-----------------------------------------------------------------------------------|
| `normative` | the claim's obligation (must, should, may, optional) differs from the evidence's  |
| `numbers`   | a value, unit, percentage or date of the claim is not the one the evidence gives  |
| `polarity`  | the best-matching evidence sentence negates what the claim asserts, or the reverse |
| `entities`  | a name, identifier or quoted term of the claim is swapped for another             |
| `identifiers` | the claim is about one quoted term, defined name or keyword, the evidence another |

Each finding is one line of why plus the fired words (offsets into the claim and the evidence).
`check_contrast` writes them to the `contrast` column; routing (`routing.py`) then keeps a
`verified` verdict with a finding from standing (flag `contrast`). A finding never makes anything
pass and never changes a failing verdict. The checks read English: on a claim or evidence in
another language (Japanese, say) they stay silent and the row's `contrast_note` says so, except
`numbers`, which also reads the amounts of a Japanese claim against Japanese evidence.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from citeaudit import registry
from citeaudit import table as C
from citeaudit.citations.kinds import kind_of
from citeaudit.decide.contrast import entities, identifiers, normative, numbers, polarity
from citeaudit.decide.contrast.japanese import japanese
from citeaudit.decide.contrast.passages import Finding, readable
from citeaudit.settings.environment import DEFAULT_CONTRAST_CHECKS
from citeaudit.table import ContrastCheck

if TYPE_CHECKING:  # the command line reads this package's names before any table exists
    import pandas as pd

Check = Callable[[str, str, "str | None", str], list[Finding]]


def reads_english(claim: str, evidence: str) -> bool:
    """Whether a claim and its evidence are both in a language the English checks read."""
    return readable(claim) and readable(evidence)


def _reads_english_or_japanese(claim: str, evidence: str) -> bool:
    return reads_english(claim, evidence) or (japanese(claim) and japanese(evidence))


@dataclass(frozen=True)
class ContrastCheckRule:
    """A contrast check registered by name (`CHECKS`, `citeaudit.registry.CONTRAST_CHECKS`; a plugin's
    through the entry-point group `citeaudit.contrast_checks`): `check(claim, evidence, quote, where)`
    returns its findings (`Finding`, `check` set to its name), `reads(claim, evidence)` whether it reads
    that pair at all (when not, the row's `contrast_note` says it stayed silent)."""

    name: str
    check: Check
    reads: Callable[[str, str], bool] = reads_english


CHECKS: registry.Registry[ContrastCheckRule] = registry.CONTRAST_CHECKS
for _rule in (ContrastCheckRule(ContrastCheck.NORMATIVE, normative.check),  # the registry lines, in --help's order
              ContrastCheckRule(ContrastCheck.NUMBERS, numbers.check, _reads_english_or_japanese),
              ContrastCheckRule(ContrastCheck.POLARITY, polarity.check),
              ContrastCheckRule(ContrastCheck.ENTITIES, entities.check),
              ContrastCheckRule(ContrastCheck.IDENTIFIERS, identifiers.check)):
    CHECKS.register(_rule.name, _rule)

__all__ = ["CHECKS", "ContrastCheckRule", "Finding", "check_contrast", "contrast_findings", "evidence_place",
           "silent_note"]


def evidence_place(row: C.Row) -> str:
    """How a finding names the evidence: `section 4.1.4`, `page 3`, `lines 2-3`, `source s1`, or
    `the evidence` (its citation kind's `place`)."""
    return kind_of(row).place(row)


def reads(kind: str, claim: str, evidence: str) -> bool:
    """Whether the check `kind` reads this pair: English, or for `numbers` a Japanese pair as well."""
    return CHECKS.get(kind).reads(claim, evidence)


def silent_note(kinds: Iterable[str], claim: str, evidence: str) -> str | None:
    """Why the checks stay silent on this pair (a language they cannot read), or None."""
    names = ", ".join(k for k in kinds if not reads(k, claim, evidence))
    if not names:
        return None
    if not readable(claim):
        return f"contrast checks ({names}) read English only: silent on this claim"
    if not readable(evidence):
        return f"contrast checks ({names}) read English only: silent on this evidence"
    return None


def contrast_findings(claim: str, evidence: str, quote: str | None = None, where: str = "the evidence",
                      kinds: Iterable[str] = DEFAULT_CONTRAST_CHECKS) -> list[Finding]:
    """What the `kinds` of check (by default `DEFAULT_CONTRAST_CHECKS`) find between a claim and its
    evidence (none on a text they cannot read).

    >>> [f.says for f in contrast_findings("Every JWT has to carry an exp claim.",
    ...     '4.1.4.  "exp" (Expiration Time) Claim\\n\\n   Use of this claim is OPTIONAL.', where="section 4.1.4")]
    ['the claim says required ("has to"); section 4.1.4 says optional ("OPTIONAL"): "Use of this claim is OPTIONAL."']
    """
    kinds = tuple(kinds)
    found: list[Finding] = []
    for kind in kinds:
        rule = CHECKS.get(kind)
        if rule.reads(claim, evidence):
            found += rule.check(claim, evidence, quote, where)
    return found


def check_contrast(table: pd.DataFrame, kinds: Iterable[str] = DEFAULT_CONTRAST_CHECKS) -> pd.DataFrame:
    """The table with `contrast` (the findings of `kinds`, by default `DEFAULT_CONTRAST_CHECKS`, as dicts,
    on every row with evidence; None where there is no evidence or no check runs) and `contrast_note`
    (why the checks stayed silent)."""
    import pandas as pd

    kinds = tuple(kinds)
    out = table.copy()
    findings: list[list[dict] | None] = []
    notes: list[str | None] = []
    for row in C.row_dicts(out):
        claim, evidence = row.get(C.CLAIM), row.get(C.EVIDENCE)
        if not kinds or not isinstance(claim, str) or not isinstance(evidence, str):
            findings.append(None)
            notes.append(None)
            continue
        quote = row.get(C.QUOTE) if isinstance(row.get(C.QUOTE), str) else None
        notes.append(silent_note(kinds, claim, evidence))
        findings.append([f.to_dict() for f in contrast_findings(claim, evidence, quote, evidence_place(row), kinds)])
    out[C.CONTRAST] = pd.Series(findings, index=out.index, dtype=object)
    out[C.CONTRAST_NOTE] = pd.Series(notes, index=out.index, dtype=object)
    return out
