"""Yes/no questions over the passage and claim: `yesno` and `panel`.

- `yesno` (prompt `yesno-v1`): two binary questions over the same passage and claim, "does the
  passage state the claim or imply that it is true?" and "... that it is false?". With q_t and q_f
  their P(yes) (renormalized over Yes/No), P(supports) = q_t and the rest is split as
  P(contradicts) = (1 − q_t) q_f, P(says nothing) = (1 − q_t)(1 − q_f) (`answers.combine_yesno`).
  The second request shares the first's long prefix, which llama.cpp's server reuses.
- `panel` (yesno's two requests, as yesno asks them, and "does the passage contradict the
  claim?", prompt `panel-v1`): the same three probabilities as `yesno` (the third answer does not
  enter them).

Both keep every answer's P(yes) in `Judgement.answers`, by the question's key, which a per-model
calibration maps to P(pass) (`calibrate`: this weak model says yes to every question more often for
claims that pass, so the answers are pooled by weights learned from labels, not by their wording).
A judge may be told to ask other questions of `prompts.QUESTIONS` (`Judge(questions=...)`), as long
as yesno's two are among them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from citeaudit.judge.answers import combine_yesno
from citeaudit.judge.prompts import (
    PANEL_QUESTIONS,
    PANEL_VERSION,
    QUESTIONS,
    YESNO_QUESTIONS,
    YESNO_VERSION,
    build_messages,
)
from citeaudit.judge.strategies.base import ANSWERS_INPUT, YES_NO, Ask, JudgeStrategy, Reading

if TYPE_CHECKING:
    from collections.abc import Mapping


class YesNo(JudgeStrategy):
    name = "yesno"
    summary = "two yes/no questions"
    prompt_version = YESNO_VERSION
    letters = False
    default_questions = tuple(YESNO_QUESTIONS)
    calibration_inputs = ANSWERS_INPUT

    def asks(self, claim: str, evidence: str, where: str,
             questions: tuple[str, ...] | None = None) -> list[Ask]:
        # yesno's two questions are asked under yesno's version whichever strategy asks them, so
        # every strategy that asks them shares their recordings and cache keys
        return [Ask(question, build_messages(claim, evidence, where, question), YES_NO,
                    YESNO_VERSION if question in YESNO_QUESTIONS else self.prompt_version)
                for question in (self.default_questions if questions is None else questions)]

    def read(self, readings: Mapping[str, Reading]) -> tuple[dict[str, float], dict[str, float] | None]:
        answers = {key: reading.p_yes for key, reading in readings.items()}
        return combine_yesno(answers["true"], answers["false"]), answers

    def accepts(self, questions: tuple[str, ...]) -> bool:
        return set(questions) <= set(QUESTIONS) and set(YESNO_QUESTIONS) <= set(questions)

    def answer_keys(self, questions: tuple[str, ...] | None = None) -> tuple[str, ...]:
        return self.default_questions if questions is None else tuple(questions)


class Panel(YesNo):
    name = "panel"
    summary = 'yesno\'s two and "does it contradict?"'
    prompt_version = PANEL_VERSION
    default_questions = (*YESNO_QUESTIONS, *PANEL_QUESTIONS)
