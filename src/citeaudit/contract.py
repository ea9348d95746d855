"""The acceptance contract for source-id citations (seed 000).

An answer is a list of claims, each citing one retrieved source by id. A human (or another
independent process) records, per claim, whether the cited source supports it, together with
the fingerprint of exactly what was reviewed. This module decides, from those three JSON
documents alone, whether the answer is accepted:

``REJECT``
    the input breaks the contract (shape, keys, ids, text, duplicates, unknown references),
    or a current review says a claim is ``unsupported``;
``REVIEW``
    otherwise, while some claim has no review or only a stale one (its fingerprint no longer
    matches the claim and source as they are now);
``ACCEPT``
    every claim has a current ``supported`` review.

The decision checks that reviews exist and still match their target; it never judges
support itself, and the fingerprint proves nothing about who reviewed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from citeaudit.fingerprint import fingerprint
from citeaudit.sourceid import (
    ContractViolation,
    SourceIdAnswer,
    load_json,
    quoted,
    validate_source_id,
)

ACCEPT = "ACCEPT"
REVIEW = "REVIEW"
REJECT = "REJECT"


@dataclass(frozen=True)
class ContractResult:
    """The decision on one answer: ``status`` is ACCEPT, REVIEW or REJECT; ``reasons`` say why.

    A REJECT for a contract violation carries one reason naming the offending record
    (for example ``answer.claims[2].citation_id``). A decision over valid input lists
    rejected claims first, then claims waiting for review.
    """

    status: str
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        """Return ``{"status": ..., "reasons": [...]}``, ready for ``json.dumps``."""
        return {"status": self.status, "reasons": list(self.reasons)}


def check_contract(answer: object, sources: object, reviews: object) -> ContractResult:
    """Decide ACCEPT, REVIEW or REJECT for already-parsed ``answer``, ``sources`` and ``reviews``.

    Expected shapes, with exactly these keys at every level:
    ``{"claims": [{"id", "text", "citation_id"}]}``, ``{"sources": [{"id", "content"}]}``,
    ``{"reviews": [{"claim_id", "fingerprint", "verdict"}]}``.

    Checks run in this order and the first violation is the single REJECT reason:
    shapes and key sets (answer, sources, reviews; a key repeated in one object, which
    :func:`citeaudit.sourceid.load_json` records, breaks the key set); at least one claim;
    each claim's id, text and citation_id; each source's id and content; each review's
    claim_id, fingerprint and verdict; unique claim ids, source ids and review claim_ids;
    every citation_id names a source; every review names a claim. Ids fully match
    ``[A-Za-z0-9][A-Za-z0-9_-]*``; text and content are strings that are not blank and encode
    as UTF-8; fingerprints are 64 lowercase hex digits; verdicts are ``supported`` or
    ``unsupported``.

    A review is current when its fingerprint equals
    ``fingerprint(claim.id, claim.text, claim.citation_id, source.content)``; a stale review
    counts as no review. The function is pure and does not modify its arguments. The
    validation itself is :func:`citeaudit.sourceid.validate_source_id`.
    """
    try:
        records = validate_source_id(answer, sources, reviews)
    except ContractViolation as violation:
        return ContractResult(REJECT, (str(violation),))
    return _decide(records)


def check_contract_files(
    answer_path: str | os.PathLike[str],
    sources_path: str | os.PathLike[str],
    reviews_path: str | os.PathLike[str],
) -> ContractResult:
    """Read the three JSON files (UTF-8) and return :func:`check_contract` on their contents.

    Raises :class:`citeaudit.errors.InputError`, naming the file and the fix, when a file
    cannot be read, is not UTF-8 or is not valid JSON. Valid JSON that breaks the contract
    is not an error: it gives a REJECT result, as does an object with a repeated key.
    """
    return check_contract(
        load_json(answer_path, "answer"),
        load_json(sources_path, "sources"),
        load_json(reviews_path, "reviews"),
    )


def _decide(records: SourceIdAnswer) -> ContractResult:
    """The decision over valid input: rejected claims first, then claims waiting for review."""
    review_by_claim = {review.claim_id: review for review in records.reviews}
    rejected: list[str] = []
    pending: list[str] = []
    for index, claim in enumerate(records.claims):
        where = f"answer.claims[{index}] {quoted(claim.id)}"
        cited = quoted(claim.citation_id)
        review = review_by_claim.get(claim.id)
        if review is None:
            pending.append(f"{where}: no review yet; have its support by source {cited} reviewed")
            continue
        current = fingerprint(
            claim.id, claim.text, claim.citation_id, records.content_of(claim.citation_id)
        )
        if review.fingerprint != current:
            pending.append(
                f"{where}: review is stale (the claim or source {cited} changed since it was "
                "reviewed); review it again"
            )
        elif review.verdict == "unsupported":
            rejected.append(f"{where}: review found that source {cited} does not support it")
    if rejected:
        return ContractResult(REJECT, tuple(rejected + pending))
    if pending:
        return ContractResult(REVIEW, tuple(pending))
    count = len(records.claims)
    return ContractResult(ACCEPT, (f"all {count} claim(s) have current supported reviews",))
