"""The judge strategies by name: `STRATEGIES` (`citeaudit.registry`'s), `register_strategy`, `get_strategy`.

A strategy is an object (`JudgeStrategy`) registered under its `name`, in the one registry shape
every extension has (`citeaudit.registry`: the built-ins below, then the packages that declare the
entry-point group `citeaudit.strategies`). Everything that lists or takes strategy names reads it:
`Judge(strategy=...)`, the settings' `parse_strategy`, the command line's `--strategy` choices and
help, the Makefile's list.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from citeaudit import registry

if TYPE_CHECKING:
    from citeaudit.judge.strategies.base import JudgeStrategy

STRATEGIES: registry.Registry[JudgeStrategy] = registry.STRATEGIES  # by name, in registration order
NAME = registry.NAME  # a word for a command line and a file name


def register_strategy(strategy: JudgeStrategy, clobber: bool = False) -> JudgeStrategy:
    """Register `strategy` under its `name` (`ValueError` if that name is taken, unless `clobber`)."""
    return STRATEGIES.register(strategy.name, strategy, clobber=clobber)


def unregister_strategy(name: str) -> None:
    """Remove a registered strategy (a test's own, say)."""
    STRATEGIES.unregister(name)


def get_strategy(name: str) -> JudgeStrategy:
    """The strategy registered as `name`; `InputError` listing the registered names otherwise."""
    return STRATEGIES.get(name)


class _PromptVersions(Mapping[str, str]):
    """Each registered strategy's prompt version, by name (read from the registry when asked)."""

    def __getitem__(self, name: str) -> str:
        if name not in STRATEGIES:
            raise KeyError(name)
        return STRATEGIES[name].prompt_version

    def __iter__(self) -> Iterator[str]:
        return iter(STRATEGIES.names())

    def __len__(self) -> int:
        return len(STRATEGIES)

    def __repr__(self) -> str:
        return repr(dict(self))


PROMPT_VERSIONS: Mapping[str, str] = _PromptVersions()


def calls_per_citation(name: str, questions: tuple[str, ...] | None = None) -> int:
    """How many requests the judge sends per citation in strategy `name` (from log-probabilities)."""
    return get_strategy(name).calls_per_citation(questions)
