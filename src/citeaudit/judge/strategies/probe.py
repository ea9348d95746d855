"""Strategies that read the judge model's hidden state (issue 37): `probe` and `stacked`.

- `probe` (one request, no answer token): the final layer's hidden state at the end of `choice`'s
  three-way question (`judge.hidden_states`), mapped to P(supports), P(contradicts), P(says
  nothing) by the probe fitted on the labelled sets (`hidden_states.ProbeWeights`, a shipped file
  bound to the model file's SHA-256, the prompt version and the layer). Its calibration maps
  P(supports), as `choice`'s does.
- `stacked` (`panel`'s three questions and the probe's request): `panel`'s probabilities, and the
  probe's P(supports) kept as one more of the `answers` (key `probe`), so its calibration maps
  panel's three answers and the probe's together.

A vector request is keyed and recorded like any answer (its parameters say which layer is read);
only a local model can answer one (`Judge`: llama-cpp-python in the judging process).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from citeaudit.judge.prompts import PROMPT_VERSION, build_messages
from citeaudit.judge.strategies.base import SUPPORTS_INPUT, AnswerKind, Ask, JudgeStrategy, Reading
from citeaudit.judge.strategies.yesno import Panel

if TYPE_CHECKING:
    from collections.abc import Mapping

    import numpy as np

LAYER = "last"  # the final layer after its norm (`hidden_states.FINAL`), the one the shipped probe reads
PROBE_KEY = "probe"


class VectorAnswer(AnswerKind):
    """The hidden state at the end of the prompt, read through the probe: its three probabilities."""

    grammar = ""
    request_params: ClassVar[dict[str, object] | None] = {"hidden_state": LAYER}  # the request names the layer read

    def from_probabilities(self, probabilities: np.ndarray, cached: bool) -> Reading:
        from citeaudit.judge.hidden_states import CLASSES  # numpy's, when a probe reads (not at start-up)

        return Reading(dict(zip(CLASSES, map(float, probabilities), strict=True)), None, cached)


VECTOR = VectorAnswer()


def probe_ask(claim: str, evidence: str, where: str) -> Ask:
    """The probe's request: `choice`'s question, answered by the hidden state at its end."""
    return Ask(PROBE_KEY, build_messages(claim, evidence, where), VECTOR, PROMPT_VERSION)


class Probe(JudgeStrategy):
    name = "probe"
    summary = "a probe on the hidden state at the end of choice's question (local model)"
    prompt_version = PROMPT_VERSION
    calibration_inputs = SUPPORTS_INPUT
    reads_hidden_states = True

    def asks(self, claim: str, evidence: str, where: str,
             questions: tuple[str, ...] | None = None) -> list[Ask]:
        return [probe_ask(claim, evidence, where)]

    def read(self, readings: Mapping[str, Reading]) -> tuple[dict[str, float], dict[str, float] | None]:
        return readings[PROBE_KEY].probabilities, None


class Stacked(Panel):
    name = "stacked"
    summary = "panel's three questions and the probe"
    reads_hidden_states = True

    def asks(self, claim: str, evidence: str, where: str,
             questions: tuple[str, ...] | None = None) -> list[Ask]:
        return [*super().asks(claim, evidence, where, questions), probe_ask(claim, evidence, where)]

    def read(self, readings: Mapping[str, Reading]) -> tuple[dict[str, float], dict[str, float] | None]:
        probabilities, answers = super().read({k: r for k, r in readings.items() if k != PROBE_KEY})
        return probabilities, {**(answers or {}), PROBE_KEY: readings[PROBE_KEY].probabilities["supports"]}

    def answer_keys(self, questions: tuple[str, ...] | None = None) -> tuple[str, ...]:
        return (*super().answer_keys(questions), PROBE_KEY)
