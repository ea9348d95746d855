"""The judge strategies by name: `register_strategy`, `get_strategy`, `STRATEGIES`.

As fsspec's `register_implementation` and simonw/llm's `register_models`: a strategy is an object
(`JudgeStrategy`) registered under its `name`, and everything that lists or takes strategy names
reads this table: `Judge(strategy=...)`, `table.Strategy` (a registered name is a `Strategy`),
the command line's `--strategy` choices and help, the Makefile's list.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from citeaudit.errors import InputError
from citeaudit.table import add_strategy_name, drop_strategy_name

if TYPE_CHECKING:
    from citeaudit.judge.strategies.base import JudgeStrategy

_REGISTERED: dict[str, JudgeStrategy] = {}
STRATEGIES: Mapping[str, JudgeStrategy] = MappingProxyType(_REGISTERED)  # by name, in registration order
NAME = re.compile(r"[a-z][a-z0-9_+-]{0,39}")  # a word for a command line and a file name


def register_strategy(strategy: JudgeStrategy, clobber: bool = False) -> JudgeStrategy:
    """Register `strategy` under its `name` (`ValueError` if that name is taken, unless `clobber`)."""
    name = strategy.name
    if not NAME.fullmatch(name):
        raise ValueError(f"strategy name {name!r}: use lower-case letters, digits, '_', '-' or '+' "
                         "(it is a --strategy value and part of calibration file names)")
    if name in _REGISTERED and not clobber:
        raise ValueError(f"a strategy named {name!r} is registered already ({_REGISTERED[name]!r}); "
                         "pass clobber=True to replace it")
    add_strategy_name(name)
    _REGISTERED[name] = strategy
    return strategy


def unregister_strategy(name: str) -> None:
    """Remove a registered strategy (a test's own, say); its name is no longer a `Strategy`."""
    _REGISTERED.pop(name, None)
    drop_strategy_name(name)


def get_strategy(name: str) -> JudgeStrategy:
    """The strategy registered as `name`; `InputError` listing the registered names otherwise."""
    try:
        return _REGISTERED[str(name)]
    except KeyError:
        raise InputError(f"unknown judge strategy {name!r}: use one of {', '.join(_REGISTERED)} "
                         "(--strategy or CITEAUDIT_STRATEGY)") from None


class _PromptVersions(Mapping[str, str]):
    """Each registered strategy's prompt version, by name (read from the registry when asked)."""

    def __getitem__(self, name: str) -> str:
        if name not in _REGISTERED:
            raise KeyError(name)
        return _REGISTERED[name].prompt_version

    def __iter__(self) -> Iterator[str]:
        return iter(list(_REGISTERED))

    def __len__(self) -> int:
        return len(_REGISTERED)

    def __repr__(self) -> str:
        return repr(dict(self))


PROMPT_VERSIONS: Mapping[str, str] = _PromptVersions()


def calls_per_citation(name: str, questions: tuple[str, ...] | None = None) -> int:
    """How many requests the judge sends per citation in strategy `name` (from log-probabilities)."""
    return get_strategy(name).calls_per_citation(questions)
