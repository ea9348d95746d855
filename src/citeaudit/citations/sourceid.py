"""Typed records for source-id citations (seed 000) and the validation of their JSON documents.

Three documents come from outside: ``answer.json`` (``{"claims": [{id, text, citation_id}]}``),
``sources.json`` (``{"sources": [{id, content}]}``) and ``reviews.json``
(``{"reviews": [{claim_id, fingerprint, verdict}]}``). The strict Pydantic models below define
their shape; :func:`validate_source_id` turns them into a :class:`SourceIdAnswer` or raises one
:class:`ContractViolation` whose message is the first violation, in the words a user can act on.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from citeaudit.errors import InputError
from citeaudit.printable import quoted
from citeaudit.sources.reading import MAX_TEXT_BYTES, read_bounded
from citeaudit.strictjson import repeated_keys

# Pydantic matches patterns with Rust's regex crate, where ``$`` is the very end of the text
# (Python's ``$`` would also accept a final newline) and a lone surrogate never matches.
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]*$"
FINGERPRINT_PATTERN = r"^[0-9a-f]{64}$"
_DOCUMENTS = ("answer", "sources", "reviews")


class ContractViolation(InputError):
    """Input that breaks the source-id contract; the message is the REJECT reason.

    The message starts with the offending place (``answer.claims[2].citation_id``) and says
    how to fix it.
    """


class DuplicateKeyObject(dict):
    """A JSON object in which some key appeared more than once (the last value is kept).

    :func:`load_json` returns one for every such object, so that validation can reject it
    instead of silently dropping the earlier values.
    """

    def __init__(self, pairs: Sequence[tuple[str, Any]], duplicates: tuple[str, ...]) -> None:
        super().__init__(pairs)
        self.duplicates = duplicates


# How validation errors of a field read in a REJECT reason. Pydantic's own messages are
# generic; every field type below carries one of these, and a ``{value}`` or ``{type}`` in it
# is replaced by the offending value (quoted) or its JSON type.


@dataclass(frozen=True)
class _Reads:
    """The reason given when a field's value is not a string, and when the string is invalid.

    ``invalid=None`` means the field's own validator already words the reason.
    """

    not_string: str
    invalid: str | None


def _readable_text(value: str) -> str:
    """Accept text that is not blank and encodes as UTF-8 (no lone surrogates)."""
    if not value.strip():
        raise PydanticCustomError("blank_text", "is empty or blank; give the text")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise PydanticCustomError(
            "not_utf8",
            "cannot be encoded as UTF-8 (lone surrogate at character {position}); fix the text",
            {"position": exc.start},
        ) from None
    return value


_BAD_ID = (
    "{value} is not a valid id; use letters, digits, '_' and '-', starting with a letter or digit"
)
_BAD_FINGERPRINT = (
    "{value} is not 64 lowercase hex digits; "
    "store the value citeaudit.decide.fingerprints.fingerprint() returns"
)
_BAD_VERDICT = '{value} must be "supported" or "unsupported"'

Id = Annotated[
    str,
    StringConstraints(pattern=ID_PATTERN),
    _Reads(not_string="must be a string id, got {type}", invalid=_BAD_ID),
]
"""An id: ASCII letters, digits, ``_`` and ``-``, starting with a letter or digit."""

Text = Annotated[
    str,
    AfterValidator(_readable_text),
    _Reads(not_string="must be a string, got {type}", invalid=None),
]
"""Claim text or source content: a string that is not blank and encodes as UTF-8."""

Fingerprint = Annotated[
    str,
    StringConstraints(pattern=FINGERPRINT_PATTERN),
    _Reads(not_string=_BAD_FINGERPRINT, invalid=_BAD_FINGERPRINT),
]
"""A review fingerprint: 64 lowercase hex digits, as :func:`.fingerprint.fingerprint` returns."""

Verdict = Annotated[
    Literal["supported", "unsupported"], _Reads(not_string=_BAD_VERDICT, invalid=_BAD_VERDICT)
]
"""A reviewer's verdict on whether the cited source supports the claim."""


class _Strict(BaseModel):
    """Exactly the declared keys, no type coercion, immutable; no key twice in one object."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _no_duplicate_keys(cls, data: Any) -> Any:
        if isinstance(data, DuplicateKeyObject):
            raise PydanticCustomError(
                "duplicate_key",
                "duplicate key {key}; a key may appear only once in an object",
                {"key": quoted(data.duplicates[0])},
            )
        return data


class Claim(_Strict):
    """One claim of the answer and the id of the one source it cites."""

    id: Id
    text: Text
    citation_id: Id


class Source(_Strict):
    """One retrieved source the answer may cite."""

    id: Id
    content: Text


class SeedReview(_Strict):
    """A review of one claim, bound by ``fingerprint`` to the claim and source it saw."""

    claim_id: Id
    fingerprint: Fingerprint
    verdict: Verdict


class _AnswerDocument(_Strict):
    claims: Annotated[list[Claim], Field(min_length=1)]


class _SourcesDocument(_Strict):
    sources: list[Source]


class _ReviewsDocument(_Strict):
    reviews: list[SeedReview]


class _Documents(BaseModel):
    """The three documents together, so that one validation reports every error in all three."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    answer: _AnswerDocument
    sources: _SourcesDocument
    reviews: _ReviewsDocument


@dataclass(frozen=True)
class SourceIdAnswer:
    """A validated answer with its sources and reviews.

    Ids are unique within each tuple, every claim cites one of ``sources`` and every review
    names one of ``claims``; ``claims`` is never empty.
    """

    claims: tuple[Claim, ...]
    sources: tuple[Source, ...]
    reviews: tuple[SeedReview, ...]

    def content_of(self, source_id: str) -> str:
        """Return the content of the source with id ``source_id``; ``KeyError`` if none has it."""
        return self._content_by_id[source_id]

    @cached_property
    def _content_by_id(self) -> dict[str, str]:
        return {source.id: source.content for source in self.sources}


def validate_source_id(answer: object, sources: object, reviews: object) -> SourceIdAnswer:
    """Validate the parsed ``answer``, ``sources`` and ``reviews`` documents and type them.

    Raises :class:`ContractViolation` with the first violation, checking in this order:
    shapes and key sets of answer, sources, reviews (every object has exactly its keys, each
    once); at least one claim; each claim's id, text and citation_id; each source's id and
    content; each review's claim_id, fingerprint and verdict; unique claim ids, source ids
    and review claim_ids; every citation_id names a source; every review names a claim.
    Within a step, records are checked in list order. The arguments are not modified.
    """
    given = {"answer": answer, "sources": sources, "reviews": reviews}
    try:
        documents = _Documents.model_validate(given)
    except ValidationError as exc:
        raise ContractViolation(_first_reason(exc.errors(), given)) from None
    typed = SourceIdAnswer(
        claims=tuple(documents.answer.claims),
        sources=tuple(documents.sources.sources),
        reviews=tuple(documents.reviews.reviews),
    )
    _check_unique([claim.id for claim in typed.claims], "answer.claims", "id")
    _check_unique([source.id for source in typed.sources], "sources.sources", "id")
    _check_unique([review.claim_id for review in typed.reviews], "reviews.reviews", "claim_id")
    source_ids = {source.id for source in typed.sources}
    for index, claim in enumerate(typed.claims):
        if claim.citation_id not in source_ids:
            raise ContractViolation(
                f"answer.claims[{index}].citation_id: {quoted(claim.citation_id)} "
                "is not a source id; cite a source listed in sources.json"
            )
    claim_ids = {claim.id for claim in typed.claims}
    for index, review in enumerate(typed.reviews):
        if review.claim_id not in claim_ids:
            raise ContractViolation(
                f"reviews.reviews[{index}].claim_id: {quoted(review.claim_id)} "
                "is not a claim id in the answer; remove the review or fix its claim_id"
            )
    return typed


def load_json(path: str | os.PathLike[str], role: str) -> object:
    """Read one UTF-8 JSON file; ``role`` (``"answer"``, ...) names it in error messages.

    An object with a repeated key is returned as a :class:`DuplicateKeyObject`, which
    :func:`validate_source_id` rejects. Raises :class:`InputError`, naming the file and the
    fix, when the file cannot be read, is not UTF-8, is not JSON or nests too deeply.
    """
    shown = os.fspath(path)
    try:
        text = read_bounded(shown, MAX_TEXT_BYTES, f"{role} file", text=True).decode("utf-8")
        return json.loads(text, object_pairs_hook=_json_object)
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
    except ValueError as exc:  # an integer too long for Python to convert
        raise InputError(f"{shown}: the {role} file holds a value JSON cannot hold here ({exc}); fix it") from None
    except RecursionError as exc:
        raise InputError(
            f"{shown}: the {role} file nests JSON too deeply to parse; flatten it"
        ) from exc


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook``: a dict, or a :class:`DuplicateKeyObject` if a key repeats."""
    duplicates = repeated_keys(pairs)
    if duplicates:
        return DuplicateKeyObject(pairs, duplicates)
    return dict(pairs)


# Turning Pydantic's errors into the first violation, in the documented order.

_KEY_ERRORS = frozenset({"extra_forbidden", "missing", "invalid_key"})
_NOT_AN_OBJECT = frozenset({"model_type", "dict_type", "model_attributes_type"})


def _first_reason(errors: list[Any], given: dict[str, object]) -> str:
    """Return the REJECT reason for the first error in check order among Pydantic's ``errors``.

    Pydantic reports every error at once; the order is: shape errors (a value that is not an
    object or array, wrong or repeated keys), the outermost first, document by document; then
    an empty claims list; then field values, document by document, in list and field order.
    """

    def order(error: Any) -> tuple[int, int, int]:
        site = _shape_site(error)
        document = _DOCUMENTS.index(error["loc"][0])
        if site is not None:
            return (0, document, len(site))
        if error["type"] == "too_short":
            return (1, document, 0)
        return (2, document, 0)

    first = min(errors, key=order)  # min keeps the first of equals: Pydantic's list order
    site = _shape_site(first)
    if site is not None:
        return _shape_reason(first, site, given)
    if first["type"] == "too_short":
        return f"{_where(first['loc'])}: is empty; an answer needs at least one claim"
    return _value_reason(first)


def _shape_site(error: Any) -> tuple[Any, ...] | None:
    """The place of the object or array whose shape ``error`` is about; None for a value."""
    loc, kind = tuple(error["loc"]), error["type"]
    if kind in _KEY_ERRORS:
        return loc[:-1]
    if kind in _NOT_AN_OBJECT or kind in {"list_type", "duplicate_key"}:
        return loc
    if kind == "string_unicode" and _model_at(loc) is not None:
        return loc  # a key that is not valid Unicode (Pydantic reports it at the object)
    return None


def _shape_reason(error: Any, site: tuple[Any, ...], given: dict[str, object]) -> str:
    """The reason for a shape error at ``site``: wrong type, repeated key or wrong key set."""
    where, model = _where(site), _model_at(site)
    top = len(site) == 1
    if error["type"] == "duplicate_key":
        return f"{where}: {error['msg']}"
    got = _json_type(error["input"])
    if model is None:
        return f"{where}: must be a JSON array, got {got}"
    if error["type"] in _KEY_ERRORS or error["type"] == "string_unicode":
        # Pydantic reports each bad key apart; the reason lists them all, from the object itself.
        problem = _key_problem(set(_at(given, site)), set(model.model_fields))
        return f"{where}: top level {problem}" if top else f"{where}: {problem}"
    if top:
        key = next(iter(model.model_fields))
        return f"{where}: top level must be a JSON object {{{quoted(key)}: [...]}}, got {got}"
    return f"{where}: must be a JSON object, got {got}"


def _value_reason(error: Any) -> str:
    """The reason for an invalid field value, worded by the field type's :class:`_Reads`."""
    loc = tuple(error["loc"])
    model = _model_at(loc[:-1])
    field = model.model_fields.get(loc[-1]) if model is not None else None
    reads = next((m for m in field.metadata if isinstance(m, _Reads)), None) if field else None
    template = None
    if reads is not None:
        template = reads.not_string if error["type"] == "string_type" else reads.invalid
    if template is None:  # the field's validator worded it (or, unexpectedly, Pydantic did)
        return f"{_where(loc)}: {error['msg']}"
    value = error["input"]
    detail = template.replace("{value}", quoted(value)).replace("{type}", _json_type(value))
    return f"{_where(loc)}: {detail}"


def _model_at(site: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model that validates the object at ``site`` (a Pydantic ``loc``), or None."""
    node: Any = _Documents
    for step in site:
        if _is_model(node) and isinstance(step, str) and step in node.model_fields:
            node = node.model_fields[step].annotation
        elif get_origin(node) is list and isinstance(step, int):
            (node,) = get_args(node)
        else:
            return None
    return node if _is_model(node) else None


def _is_model(node: object) -> bool:
    return isinstance(node, type) and issubclass(node, BaseModel)


def _check_unique(ids: list[str], name: str, key: str) -> None:
    first_index: dict[str, int] = {}
    for index, value in enumerate(ids):
        if value in first_index:
            raise ContractViolation(
                f"{name}[{index}].{key}: duplicate {quoted(value)} "
                f"(also at {name}[{first_index[value]}]); each must be unique"
            )
        first_index[value] = index


def _at(given: dict[str, object], site: tuple[Any, ...]) -> Any:
    value: Any = given
    for step in site:
        value = value[step]
    return value


def _where(loc: tuple[Any, ...]) -> str:
    """``("answer", "claims", 0, "id")`` -> ``answer.claims[0].id``."""
    text = ""
    for step in loc:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text


def _key_problem(found: set[object], expected: set[str]) -> str:
    parts = []
    extra = found - expected
    missing = expected - found
    if extra:
        parts.append("unexpected key(s) " + ", ".join(sorted(quoted(k) for k in extra)))
    if missing:
        parts.append("missing key(s) " + ", ".join(sorted(quoted(k) for k in missing)))
    expected_list = ", ".join(quoted(k) for k in sorted(expected))
    return f"{'; '.join(parts)}; the keys must be exactly {expected_list}"


def _json_type(value: object) -> str:
    """Name the JSON type of ``value`` for a message (``a number``, ``an array``, ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
