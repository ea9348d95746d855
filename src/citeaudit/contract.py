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

import json
import os
import re
from dataclasses import dataclass

from citeaudit.errors import InputError
from citeaudit.fingerprint import fingerprint

ACCEPT = "ACCEPT"
REVIEW = "REVIEW"
REJECT = "REJECT"

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
FINGERPRINT_PATTERN = re.compile(r"[0-9a-f]{64}")
VERDICTS = ("supported", "unsupported")

_CLAIM_KEYS = frozenset({"id", "text", "citation_id"})
_SOURCE_KEYS = frozenset({"id", "content"})
_REVIEW_KEYS = frozenset({"claim_id", "fingerprint", "verdict"})


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


class _Violation(Exception):
    """An input contract violation; its message is the REJECT reason."""


def check_contract(answer: object, sources: object, reviews: object) -> ContractResult:
    """Decide ACCEPT, REVIEW or REJECT for already-parsed ``answer``, ``sources`` and ``reviews``.

    Expected shapes, with exactly these keys at every level:
    ``{"claims": [{"id", "text", "citation_id"}]}``, ``{"sources": [{"id", "content"}]}``,
    ``{"reviews": [{"claim_id", "fingerprint", "verdict"}]}``.

    Checks run in this order and the first violation is the single REJECT reason:
    shapes and key sets (answer, sources, reviews); at least one claim; each claim's id, text
    and citation_id; each source's id and content; each review's claim_id, fingerprint and
    verdict; unique claim ids, source ids and review claim_ids; every citation_id names a
    source; every review names a claim. Ids fully match ``[A-Za-z0-9][A-Za-z0-9_-]*``; text
    and content are strings that are not blank and encode as UTF-8; fingerprints are 64
    lowercase hex digits; verdicts are ``supported`` or ``unsupported``.

    A review is current when its fingerprint equals
    ``fingerprint(claim.id, claim.text, claim.citation_id, source.content)``; a stale review
    counts as no review. The function is pure and does not modify its arguments.
    """
    try:
        claims = _records(answer, "answer", "claims", _CLAIM_KEYS)
        documents = _records(sources, "sources", "sources", _SOURCE_KEYS)
        checks = _records(reviews, "reviews", "reviews", _REVIEW_KEYS)
        if not claims:
            raise _Violation("answer.claims: is empty; an answer needs at least one claim")
        for index, claim in enumerate(claims):
            where = f"answer.claims[{index}]"
            _check_id(claim["id"], f"{where}.id")
            _check_text(claim["text"], f"{where}.text")
            _check_id(claim["citation_id"], f"{where}.citation_id")
        for index, document in enumerate(documents):
            where = f"sources.sources[{index}]"
            _check_id(document["id"], f"{where}.id")
            _check_text(document["content"], f"{where}.content")
        for index, check in enumerate(checks):
            _check_review(check, f"reviews.reviews[{index}]")
        _check_unique(claims, "id", "answer.claims")
        _check_unique(documents, "id", "sources.sources")
        _check_unique(checks, "claim_id", "reviews.reviews")
        source_ids = {document["id"] for document in documents}
        for index, claim in enumerate(claims):
            if claim["citation_id"] not in source_ids:
                raise _Violation(
                    f"answer.claims[{index}].citation_id: {_show(claim['citation_id'])} "
                    "is not a source id; cite a source listed in sources.json"
                )
        claim_ids = {claim["id"] for claim in claims}
        for index, check in enumerate(checks):
            if check["claim_id"] not in claim_ids:
                raise _Violation(
                    f"reviews.reviews[{index}].claim_id: {_show(check['claim_id'])} "
                    "is not a claim id in the answer; remove the review or fix its claim_id"
                )
    except _Violation as violation:
        return ContractResult(REJECT, (str(violation),))
    return _decide(claims, documents, checks)


def check_contract_files(
    answer_path: str | os.PathLike[str],
    sources_path: str | os.PathLike[str],
    reviews_path: str | os.PathLike[str],
) -> ContractResult:
    """Read the three JSON files (UTF-8) and return :func:`check_contract` on their contents.

    Raises :class:`citeaudit.errors.InputError`, naming the file and the fix, when a file
    cannot be read, is not UTF-8 or is not valid JSON. Valid JSON that breaks the contract
    is not an error: it gives a REJECT result.
    """
    return check_contract(
        _load_json(answer_path, "answer"),
        _load_json(sources_path, "sources"),
        _load_json(reviews_path, "reviews"),
    )


def _decide(
    claims: list[dict[str, str]], documents: list[dict[str, str]], checks: list[dict[str, str]]
) -> ContractResult:
    content_by_source = {document["id"]: document["content"] for document in documents}
    review_by_claim = {check["claim_id"]: check for check in checks}
    rejected: list[str] = []
    pending: list[str] = []
    for index, claim in enumerate(claims):
        where = f"answer.claims[{index}] {_show(claim['id'])}"
        cited = _show(claim["citation_id"])
        review = review_by_claim.get(claim["id"])
        if review is None:
            pending.append(f"{where}: no review yet; have its support by source {cited} reviewed")
            continue
        current = fingerprint(
            claim["id"],
            claim["text"],
            claim["citation_id"],
            content_by_source[claim["citation_id"]],
        )
        if review["fingerprint"] != current:
            pending.append(
                f"{where}: review is stale (the claim or source {cited} changed since it was "
                "reviewed); review it again"
            )
        elif review["verdict"] == "unsupported":
            rejected.append(f"{where}: review found that source {cited} does not support it")
    if rejected:
        return ContractResult(REJECT, tuple(rejected + pending))
    if pending:
        return ContractResult(REVIEW, tuple(pending))
    return ContractResult(ACCEPT, (f"all {len(claims)} claim(s) have current supported reviews",))


def _records(document: object, name: str, key: str, fields: frozenset[str]) -> list[dict[str, str]]:
    """Return ``document[key]``, checking the document and each record have exactly their keys."""
    if type(document) is not dict:
        raise _Violation(
            f"{name}: top level must be a JSON object {{{_show(key)}: [...]}}, "
            f"got {_json_type(document)}"
        )
    if set(document) != {key}:
        raise _Violation(f"{name}: top level {_key_problem(set(document), {key})}")
    items = document[key]
    if type(items) is not list:
        raise _Violation(f"{name}.{key}: must be a JSON array, got {_json_type(items)}")
    for index, item in enumerate(items):
        where = f"{name}.{key}[{index}]"
        if type(item) is not dict:
            raise _Violation(f"{where}: must be a JSON object, got {_json_type(item)}")
        if set(item) != fields:
            raise _Violation(f"{where}: {_key_problem(set(item), fields)}")
    return items


def _check_id(value: object, where: str) -> None:
    if type(value) is not str:
        raise _Violation(f"{where}: must be a string id, got {_json_type(value)}")
    if ID_PATTERN.fullmatch(value) is None:
        raise _Violation(
            f"{where}: {_show(value)} is not a valid id; use letters, digits, '_' and '-', "
            "starting with a letter or digit"
        )


def _check_text(value: object, where: str) -> None:
    if type(value) is not str:
        raise _Violation(f"{where}: must be a string, got {_json_type(value)}")
    if not value.strip():
        raise _Violation(f"{where}: is empty or blank; give the text")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _Violation(
            f"{where}: cannot be encoded as UTF-8 (lone surrogate at character {exc.start}); "
            "fix the text"
        ) from None


def _check_review(check: dict[str, object], where: str) -> None:
    _check_id(check["claim_id"], f"{where}.claim_id")
    value = check["fingerprint"]
    if type(value) is not str or FINGERPRINT_PATTERN.fullmatch(value) is None:
        raise _Violation(
            f"{where}.fingerprint: {_show(value)} is not 64 lowercase hex digits; "
            "store the value citeaudit.fingerprint.fingerprint() returns"
        )
    verdict = check["verdict"]
    if type(verdict) is not str or verdict not in VERDICTS:
        raise _Violation(f'{where}.verdict: {_show(verdict)} must be "supported" or "unsupported"')


def _check_unique(items: list[dict[str, str]], key: str, name: str) -> None:
    first_index: dict[str, int] = {}
    for index, item in enumerate(items):
        value = item[key]
        if value in first_index:
            raise _Violation(
                f"{name}[{index}].{key}: duplicate {_show(value)} "
                f"(also at {name}[{first_index[value]}]); each must be unique"
            )
        first_index[value] = index


def _key_problem(found: set[object], expected: set[str]) -> str:
    parts = []
    extra = found - expected
    missing = expected - found
    if extra:
        parts.append("unexpected key(s) " + ", ".join(sorted(_show(k) for k in extra)))
    if missing:
        parts.append("missing key(s) " + ", ".join(sorted(_show(k) for k in missing)))
    expected_list = ", ".join(_show(k) for k in sorted(expected))
    return f"{'; '.join(parts)}; the keys must be exactly {expected_list}"


def _show(value: object, limit: int = 60) -> str:
    """Quote a value for a message: JSON for strings (escaped if not UTF-8 encodable), else repr."""
    if type(value) is str:
        try:
            value.encode("utf-8")
            text = json.dumps(value, ensure_ascii=False)
        except UnicodeEncodeError:
            text = json.dumps(value)
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if type(value) is bool:
        return "a boolean"
    if type(value) in (int, float):
        return "a number"
    if type(value) is str:
        return "a string"
    if type(value) is list:
        return "an array"
    if type(value) is dict:
        return "an object"
    return type(value).__name__


def _load_json(path: str | os.PathLike[str], role: str) -> object:
    shown = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as stream:
            return json.load(stream)
    except OSError as exc:
        raise InputError(
            f"{shown}: cannot read the {role} file ({exc.strerror or exc}); "
            "check the path and its permissions"
        ) from exc
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{shown}: the {role} file is not UTF-8 (bad byte at offset {exc.start}); "
            "save it as UTF-8"
        ) from exc
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{shown}: the {role} file is not valid JSON ({exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}); fix the JSON syntax"
        ) from exc
    except RecursionError as exc:
        raise InputError(
            f"{shown}: the {role} file nests JSON too deeply to parse; flatten it"
        ) from exc
