"""The three-way question, answered with one letter: `choice`, and `examples` (the same question
after worked examples).

- `choice` (prompt `relation-v2`): A) supports, B) contradicts, C) says nothing; the three
  probabilities are the `top_logprobs` of that one token renormalized over the three letters
  (`answers.probabilities_from_top_logprobs`), or, sampled, the shares of the letters.
- `examples` (prompt `examples-v1`): `choice`'s question after six worked examples, each asked the
  same way and answered with its letter (`prompts.WORKED_EXAMPLES`); read as `choice` is. The
  examples are every request's common head, which llama.cpp's server keeps between requests.

Neither keeps `answers`; their calibration maps P(supports).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from citeaudit.judge.prompts import EXAMPLES_VERSION, PROMPT_VERSION, build_messages
from citeaudit.judge.strategies.base import LETTERS, Ask, JudgeStrategy, Reading

if TYPE_CHECKING:
    from collections.abc import Mapping


class Choice(JudgeStrategy):
    name = "choice"
    summary = "one A/B/C question"
    prompt_version = PROMPT_VERSION
    worked_examples = False  # the worked examples before the question (`examples`)

    def asks(self, claim: str, evidence: str, where: str,
             questions: tuple[str, ...] | None = None) -> list[Ask]:
        messages = build_messages(claim, evidence, where, examples=self.worked_examples)
        return [Ask(self.name, messages, LETTERS, self.prompt_version)]

    def read(self, readings: Mapping[str, Reading]) -> tuple[dict[str, float], dict[str, float] | None]:
        return readings[self.name].probabilities, None


class Examples(Choice):
    name = "examples"
    summary = "choice's question after six worked examples"
    prompt_version = EXAMPLES_VERSION
    worked_examples = True
