"""JSON read strictly: an object that gives a key twice is an error, never "the last one wins".

`json.loads` keeps the last of two equal keys, so a forged value can hide behind the one a
first-key reader sees. Every reader of citeaudit's inputs and stores parses through `loads`, which
also turns JSON nested deeper than Python recurses into a `ValueError` (`TooDeepError`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence


class RepeatedKeyError(ValueError):
    """An object gave `keys` (in the order they repeat) more than once."""

    def __init__(self, keys: tuple[str, ...]):
        self.keys = keys
        super().__init__(f"key {keys[0]!r} appears twice in one object")


def unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """`object_pairs_hook` for `json`: the object as a dict, or `RepeatedKeyError`.

    >>> unique_keys([("a", 1), ("b", 2)])
    {'a': 1, 'b': 2}
    """
    value = dict(pairs)
    if len(value) < len(pairs):
        raise RepeatedKeyError(repeated_keys(pairs))
    return value


def repeated_keys(pairs: Sequence[tuple[str, object]]) -> tuple[str, ...]:
    """The keys that occur more than once among `pairs`, in the order they first repeat.

    >>> repeated_keys([("a", 1), ("b", 2), ("b", 3), ("a", 4), ("b", 5)])
    ('b', 'a')
    """
    seen: set[str] = set()
    repeated: list[str] = []
    for key, _ in pairs:
        if key in seen and key not in repeated:
            repeated.append(key)
        seen.add(key)
    return tuple(repeated)


class TooDeepError(ValueError):
    """JSON nested deeper than Python's parser recurses (a `RecursionError` inside `json`)."""


def loads(text: str | bytes) -> object:
    """`json.loads` with `unique_keys`: raises `RepeatedKeyError` (a `ValueError`) on a repeated key,
    and `TooDeepError` (a `ValueError` too) where `json` would raise `RecursionError`, so that every
    reader that refuses bad JSON (`ValueError`) refuses JSON nested too deeply as well."""
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except RecursionError:
        raise TooDeepError("JSON nested too deeply to read (arrays or objects thousands deep)") from None
