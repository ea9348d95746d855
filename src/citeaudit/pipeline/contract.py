"""The acceptance contract for source-id citations (seed 000), on top of the audit pipeline.

An answer is a list of claims, each citing one retrieved source by id. A human (or another
independent process) records, per claim, whether the cited source supports it, together with
the fingerprint of exactly what was reviewed. From those three JSON documents alone:

``REJECT``
    the input breaks the contract (shape, keys, ids, text, duplicates, unknown references;
    `sourceid.validate_source_id` names the first violation), or a current review says a claim
    is ``unsupported``;
``REVIEW``
    otherwise, while some claim has no review or only a stale one (its fingerprint no longer
    matches the claim and source as they are now);
``ACCEPT``
    every claim has a current ``supported`` review.

The claims go through the same table and the same `decide.decide` as every other citation
format. By default no model is asked (reviews decide); `audit.audit_sources(...,
locate_only=False)` or `citeaudit contract --judge` lets the judge read the cited sources too.
The fingerprint identifies content and proves nothing about who reviewed.
"""

from __future__ import annotations

import os

from citeaudit.decide.decision import Decision
from citeaudit.pipeline.audit import audit_source_files, audit_sources

# seed 000's name for the decision; one type for every format
ContractResult = Decision


def check_contract(answer: object, sources: object, reviews: object) -> Decision:
    """Decide ACCEPT, REVIEW or REJECT for already-parsed ``answer``, ``sources`` and ``reviews``.

    Expected shapes, with exactly these keys at every level:
    ``{"claims": [{"id", "text", "citation_id"}]}``, ``{"sources": [{"id", "content"}]}``,
    ``{"reviews": [{"claim_id", "fingerprint", "verdict"}]}``. A contract violation is a REJECT
    with one reason naming the offending record (for example ``answer.claims[2].citation_id``).
    A review is current when its fingerprint equals
    ``fingerprint(claim.id, claim.text, claim.citation_id, source.content)``; a stale review
    counts as no review. The function is pure and does not modify its arguments.
    """
    return audit_sources(answer, sources, reviews).decision


def check_contract_files(
    answer_path: str | os.PathLike[str],
    sources_path: str | os.PathLike[str],
    reviews_path: str | os.PathLike[str],
) -> Decision:
    """Read the three JSON files (UTF-8) and return :func:`check_contract` on their contents.

    Raises :class:`citeaudit.errors.InputError`, naming the file and the fix, when a file
    cannot be read, is not UTF-8 or is not valid JSON. Valid JSON that breaks the contract
    is not an error: it gives a REJECT result.
    """
    return audit_source_files(os.fspath(answer_path), os.fspath(sources_path), os.fspath(reviews_path)).decision
