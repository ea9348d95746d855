"""What the judge reads of a long cited section: the whole of it, or the passage that matters
(issue 34, "focused evidence").

A small judge reads a 3,000-character RFC section or a paper abstract less well than the two
sentences a claim is about. With `EvidenceMode.FOCUSED`, a cited section longer than `FOCUS_CHARS`
is replaced, in the question only, by its heading and the sentences the quote stands in (else the
sentences that share most of the claim's content words, `decide.contrast.passages.best_sentences`),
each with one neighbour on either side, in the section's order, gaps marked `[...]`. The table's
`evidence` stays the whole section: it is what a reviewer reads, what a review's fingerprint binds
and what a calibration's length input measures. A shorter section, or one where no sentence
matches, is asked about whole, so its request (and its recorded answer) is the same in both modes.

    >>> section = "4.1.4.  Claim\\n\\n" + " ".join(f"Filler sentence {i} about nothing." for i in range(60))
    >>> section += " Use of this claim is OPTIONAL."
    >>> focused_evidence("The claim is optional.", section, "Use of this claim is OPTIONAL.")
    '4.1.4. Claim [...] Filler sentence 59 about nothing. Use of this claim is OPTIONAL.'
    >>> focused_evidence("The claim is optional.", section[:200]) is None  # short: asked whole
    True
"""

from __future__ import annotations

from citeaudit.decide.contrast.passages import best_sentences, heading, sentences
from citeaudit.table import EvidenceMode

FOCUS_CHARS = 1500  # a section longer than this is focused (RFC sections run to 4,000, abstracts to 4,700)
NEIGHBOURS = 1  # sentences kept on either side of each matching one
GAP = " [...] "

__all__ = ["FOCUS_CHARS", "EvidenceMode", "focused_evidence", "focused_where"]


def focused_evidence(claim: str, evidence: str, quote: str | None = None, limit: int = FOCUS_CHARS) -> str | None:
    """The passage of `evidence` the judge is asked about instead of the whole, or None when the
    whole is asked: it is at most `limit` characters, no sentence matches the claim or quote, or the
    passage would be no shorter."""
    if len(evidence) <= limit:
        return None
    best = best_sentences(claim, evidence, quote)
    if not best:
        return None
    every = sentences(evidence)
    where = {s.start: k for k, s in enumerate(every)}
    keep = {k for s, _ in best for k in range(where[s.start] - NEIGHBOURS, where[s.start] + NEIGHBOURS + 1)}
    title = heading(evidence)
    if title and every and every[0].text.startswith(title):
        keep.add(0)  # the heading names what the sentences are about ("Use of this claim")
    runs: list[list[str]] = []
    last = None
    for k in sorted(k for k in keep if 0 <= k < len(every)):
        text = " ".join(every[k].text.split())
        if last is not None and k == last + 1:
            runs[-1].append(text)
        else:
            runs.append([text])
        last = k
    passage = GAP.join(" ".join(run) for run in runs)
    return passage if len(passage) < len(evidence) else None


def focused_where(where: str) -> str:
    """How the question names a focused passage: `passages of <where>`."""
    return f"passages of {where}"
