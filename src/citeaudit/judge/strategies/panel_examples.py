"""`panel+examples`: `panel`'s three requests and `examples`' one, each exactly as that strategy
sends it (so the same recordings and cache keys). The three probabilities are `panel`'s, and
`examples`' P(supports) joins the answers as a fourth, under `prompts.EXAMPLES_ANSWER` (read as a
P(yes): "does the passage support the claim?"). The map of the four (`calibrate`) lets more
verdicts stand than either strategy's alone, at the cost of both strategies' calls.

`examples`' request goes `ahead`: run one request at a time (`Judge.judge_all`), every citation's
examples request is sent first, then each citation's panel requests, so a server that keeps the
previous prompt's evaluated tokens (llama.cpp's) reuses the examples' head from one request to the
next and each passage across panel's three questions (about half the time:
`tools/bench_local_judge.py --strategy panel+examples`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from citeaudit.judge.prompts import EXAMPLES_ANSWER
from citeaudit.judge.strategies.base import Ask, Reading
from citeaudit.judge.strategies.choice import Examples
from citeaudit.judge.strategies.yesno import Panel
from citeaudit.table import Relation

if TYPE_CHECKING:
    from collections.abc import Mapping

EXAMPLES = Examples()


class PanelExamples(Panel):
    name = "panel+examples"
    summary = "panel's three and examples' one"

    def asks(self, claim: str, evidence: str, where: str,
             questions: tuple[str, ...] | None = None) -> list[Ask]:
        (shown,) = EXAMPLES.asks(claim, evidence, where)
        return [*super().asks(claim, evidence, where, questions), replace(shown, key=EXAMPLES_ANSWER, ahead=True)]

    def read(self, readings: Mapping[str, Reading]) -> tuple[dict[str, float], dict[str, float] | None]:
        probabilities, answers = super().read({k: r for k, r in readings.items() if k != EXAMPLES_ANSWER})
        shown = readings[EXAMPLES_ANSWER].probabilities[Relation.SUPPORTS]
        return probabilities, {**(answers or {}), EXAMPLES_ANSWER: shown}

    def answer_keys(self, questions: tuple[str, ...] | None = None) -> tuple[str, ...]:
        return (*super().answer_keys(questions), EXAMPLES_ANSWER)
