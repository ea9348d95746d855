"""Shape checks for vendor responses: every problem names the file, the JSON path and the fix.

`Reader` checks the parts of a response a vendor module reads (an object, a list, a span in
range) and validates a part with the vendor SDK's own Pydantic type (`Reader.validate`: unknown
fields are dropped and validation retried, so a response saved by a newer SDK still loads); `typed`
validates a list of citations by the SDK type each one's `type` names.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from citeaudit.errors import InputError

_DROP_ROUNDS = 100  # unknown fields dropped, at most this many rounds of validation


class Reader:
    """Shape checks that name the file and the JSON path of what is wrong."""

    def __init__(self, name: str, vendor: str):
        self.name, self.vendor = name, vendor

    def fail(self, where: str, problem: str, fix: str = "") -> InputError:
        fix = fix or f"save the {self.vendor} response body exactly as the API returned it"
        return InputError(f"{self.name}: {where}: {problem}. Fix: {fix}.")

    def obj(self, value: object, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object, found {kind(value)}")
        return value

    def array(self, value: object, where: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(where, f"expected a list, found {kind(value)}")
        return value

    def span(self, start: int, end: int, length: int | None, where: str,
             what: str = "the answer text") -> tuple[int, int]:
        """`(start, end)` when `0 <= start <= end <= length` (`length` None: a source's, unknown here)."""
        if not 0 <= start <= end or (length is not None and end > length):
            size = f": {what} has {length:,} characters" if length is not None else ""
            raise self.fail(where, f"[{start}, {end}) is out of range{size}",
                            "give offsets inside the text they index (0 <= start <= end <= length)")
        return start, end

    def validate(self, model: Any, data: object, where: str) -> Any:
        """`data` validated by the SDK's `model` (a type or a `TypeAdapter`); unknown fields are
        dropped and validation retried (SDKs that forbid them would refuse a newer response)."""
        validate: Callable[[object], Any] = getattr(model, "model_validate", None) or model.validate_python
        data = copy.deepcopy(data)
        for _ in range(_DROP_ROUNDS):
            try:
                return validate(data)
            except ValidationError as exc:
                errors = exc.errors()
                extra = [e["loc"] for e in errors if e["type"] == "extra_forbidden"]
                if not extra or not all(_drop(data, loc) for loc in extra):
                    raise self._schema_error(where, errors, model) from None
            except (TypeError, ValueError, AttributeError) as exc:  # an SDK validator that raised instead
                raise self.fail(where, f"rejected by the {self.vendor} SDK's types ({type(exc).__name__}: {exc})") \
                    from None
        raise self.fail(where, "too many unknown fields")

    def _schema_error(self, where: str, errors: list[Any], model: Any) -> InputError:
        first = errors[0]
        # a union member's class name or tag in the location is no field of the response
        loc = _path(where, [p for p in first["loc"]
                            if not _is_tag(p, model) and not (isinstance(p, str) and p[:1].isupper())])
        if first["type"] == "missing":
            problem = "missing: citeaudit needs this field"
        else:
            problem = f"{first['msg']} (found {short(first.get('input'))})"
        more = f" ({len(errors) - 1} more problem(s) in this part)" if len(errors) > 1 else ""
        name = getattr(model, "__name__", None) or type(model).__name__
        return InputError(f"{self.name}: {loc}: {problem}{more}; checked with the {self.vendor} SDK's {name}. "
                          f"Fix: save the {self.vendor} response body exactly as the API returned it.")


def _is_tag(part: object, model: Any) -> bool:
    """A discriminated union's tag in an error location (`char_location`), not a field name."""
    return (isinstance(part, str) and part in {"char_location", "page_location", "content_block_location",
                                              "search_result_location", "web_search_result_location",
                                              "file_citation", "url_citation", "container_file_citation",
                                              "file_path", "function-after[_validate()]"}) or \
        (isinstance(part, str) and part.startswith(("function-", "tagged-union[", "union[")))


def _drop(data: object, loc: tuple) -> bool:
    """Remove the field at `loc` from nested dicts and lists; False when it is not there."""
    node: Any = data
    for part in loc[:-1]:
        inside_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if (isinstance(node, dict) and part in node) or inside_list:
            node = node[part]
        elif isinstance(node, dict | list):
            continue  # a union's branch name in the location
        else:
            return False
    if isinstance(node, dict) and loc and loc[-1] in node:
        del node[loc[-1]]
        return True
    return False


def _path(base: str, parts: list) -> str:
    out = base
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def kind(value: object) -> str:
    """A JSON value's kind in words, for messages: "an object", "a list", "null", ..."""
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def short(value: object) -> str:
    """A value's repr, cut to 60 characters, for messages."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# fields an SDK type requires that citeaudit does not read: a response saved by an SDK version
# without them (OpenAI's file_citation had no filename at first) still loads
NOT_NEEDED: dict[str, dict[str, object]] = {
    "file_citation": {"filename": ""},
    "url_citation": {"title": ""},
    "container_file_citation": {"filename": "", "container_id": "", "file_id": ""},
    "web_search_result_location": {"encrypted_index": ""},
}


def typed(r: Reader, items: object, where: str, types: dict[str, Any], skip: tuple[str, ...] = ()) -> list[Any]:
    """Each item of a list validated by the SDK type its `type` names (the SDKs' unions are not
    discriminated for Pydantic, which would report every member's errors); `skip` types are left out."""
    out = []
    for n, raw in enumerate(r.array(items, where) if items is not None else []):
        item = r.obj(raw, f"{where}[{n}]")
        kind = item.get("type")
        if kind in skip:
            continue
        if not isinstance(kind, str) or kind not in types:
            raise r.fail(f"{where}[{n}].type", f"{short(kind)} is not a citation type citeaudit knows "
                         f"({', '.join(types)})", "save the response body as the API returned it; a new citation "
                         "type needs a newer citeaudit")
        filled = {**NOT_NEEDED.get(kind, {}), **item}
        out.append((f"{where}[{n}]", r.validate(types[kind], filled, f"{where}[{n}]")))
    return out
