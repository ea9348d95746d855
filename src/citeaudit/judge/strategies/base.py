"""What a judge strategy is: the requests it sends for one citation, and how their answers become
the three probabilities.

A strategy (`JudgeStrategy`) builds its requests as `Ask`s: the messages, the kind of answer asked
for (`LETTERS`, A/B/C, or `YES_NO`), the prompt version they are keyed under and the key their
answer is kept under. The `Judge` sends each one through the cache (the sampling parameters are the
strategy's `params`), reads its answer as a `Reading` (from the token log-probabilities, or, when
the endpoint gives none, from `samples` sampled answers) and hands the strategy every reading of the
citation: `read` turns them into the three probabilities and the `answers` (P(yes) per question).
The confidence is the strategy's too (`outcome`): from log-probabilities, max(P(supports),
1 − P(supports)); when any answer was sampled, the smallest lower bound among the sampled ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from citeaudit.errors import JudgeError
from citeaudit.judge.answers import (
    pass_fail_confidence,
    probabilities_from_top_logprobs,
    sampled_letters,
    sampled_yes,
    yes_probability,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from openai.types.chat import ChatCompletionMessageParam

GRAMMAR = 'root ::= "A" | "B" | "C"'
YESNO_GRAMMAR = 'root ::= "Yes" | "No"'
TOP_LOGPROBS = 20
YES, NO = "yes", "no"
# what `calibrate` maps by default (`decide.calibration.SUPPORTS`, `ANSWERS`)
SUPPORTS_INPUT, ANSWERS_INPUT = "supports", "answers"


@dataclass(frozen=True)
class Reading:
    """One request's answer as numbers: `probabilities` over its options (the three relations, or
    `yes` and `no`); `bound` None when read from log-probabilities, else the Wilson 99% lower bound
    of the pass-or-fail majority of the samples; `cached` when every call came from the cache."""

    probabilities: dict[str, float]
    bound: float | None
    cached: bool

    @property
    def p_yes(self) -> float:
        return self.probabilities[YES]


class AnswerKind:
    """What a request asks to be answered with: its grammar (for llama.cpp's server), and how its
    answer is read from the top log-probabilities or from sampled answers (`JudgeError` when no
    option is among them: a row error, never a guess)."""

    grammar: ClassVar[str]
    # the request's whole parameters when its answer is not a sampled token (a hidden state), else None
    request_params: ClassVar[dict[str, object] | None] = None

    def from_logprobs(self, top: list[dict], content: object, cached: bool) -> Reading:
        raise NotImplementedError

    def from_samples(self, answers: list[str], samples: int, cached: bool) -> Reading:
        raise NotImplementedError


class LetterAnswer(AnswerKind):
    """A) supports, B) contradicts, C) says nothing: the three probabilities themselves."""

    grammar = GRAMMAR

    def from_logprobs(self, top: list[dict], content: object, cached: bool) -> Reading:
        probabilities = probabilities_from_top_logprobs(top)
        if probabilities is None:
            raise JudgeError(f"none of A, B, C among the top {len(top)} tokens (answer {content!r})")
        return Reading(probabilities, None, cached)

    def from_samples(self, answers: list[str], samples: int, cached: bool) -> Reading:
        letters = sampled_letters(answers, samples)
        if letters is None:
            raise JudgeError(f"no sampled answer was A, B or C in {samples} samples")
        return Reading(*letters, cached)


class YesNoAnswer(AnswerKind):
    """Yes or No: P(yes) (`Reading.p_yes`)."""

    grammar = YESNO_GRAMMAR

    def from_logprobs(self, top: list[dict], content: object, cached: bool) -> Reading:
        p_yes = yes_probability(top)
        if p_yes is None:
            raise JudgeError(f"neither Yes nor No among the top {len(top)} tokens (answer {content!r})")
        return Reading({YES: p_yes, NO: 1.0 - p_yes}, None, cached)

    def from_samples(self, answers: list[str], samples: int, cached: bool) -> Reading:
        yes = sampled_yes(answers, samples)
        if yes is None:
            raise JudgeError(f"no sampled answer was Yes or No in {samples} samples")
        return Reading({YES: yes[0], NO: 1.0 - yes[0]}, yes[1], cached)


LETTERS, YES_NO = LetterAnswer(), YesNoAnswer()


@dataclass(frozen=True)
class Ask:
    """One request of a strategy for one citation, before the judge's model and settings.

    `key` names its answer among the citation's readings (a yes/no question's key is its key in
    `Judgement.answers`); `ahead` asks it of every citation before any other request when the judge
    runs one request at a time (`Judge.judge_all`: a shared head a local server keeps)."""

    key: str
    messages: list[ChatCompletionMessageParam]
    answer: AnswerKind
    prompt_version: str
    ahead: bool = False


@dataclass(frozen=True)
class Outcome:
    """What a strategy makes of one citation's readings."""

    probabilities: dict[str, float]
    confidence: float
    sampled: bool  # some answer was sampled: `confidence` is a lower bound
    answers: dict[str, float] | None


class JudgeStrategy:
    """A way of asking for the three probabilities, registered by name (`register_strategy`).

    Subclasses set the class attributes and write `asks` and `read`; the rest has defaults:

    - `name`: what `--strategy`, `CITEAUDIT_STRATEGY` and `Judge(strategy=...)` take;
    - `summary`: how it asks, in a few words (the command line's help);
    - `prompt_version`: the version its own wording is keyed under (an `Ask` may carry another's);
    - `letters`: its own questions are answered A/B/C (else Yes/No);
    - `default_questions`: the yes/no questions (keys of `prompts.QUESTIONS`) asked unless the
      judge is told others (`Judge(questions=...)`, checked by `accepts`); empty: it takes none;
    - `reads_hidden_states`: some request is answered by the local model's hidden state (`probe`):
      only a local model can be asked, and its calibration is fitted by `tools/bench_probe.py`;
    - `calibration_inputs`: what `calibrate` maps by default, `supports` (P(supports)) or `answers`
      (the P(yes) of each answer key); `calibrate` works it out from the judged rows (answers
      present: `answers`), and the registry's tests check that it agrees for every strategy.
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    prompt_version: ClassVar[str]
    letters: ClassVar[bool] = True
    default_questions: ClassVar[tuple[str, ...]] = ()
    calibration_inputs: ClassVar[str] = SUPPORTS_INPUT
    reads_hidden_states: ClassVar[bool] = False

    def asks(self, claim: str, evidence: str, where: str,
             questions: tuple[str, ...] | None = None) -> list[Ask]:
        """The requests for one citation, in the order they are sent (`questions`: the yes/no
        questions asked, default `default_questions`)."""
        raise NotImplementedError

    def read(self, readings: Mapping[str, Reading]) -> tuple[dict[str, float], dict[str, float] | None]:
        """The three probabilities and the `answers` (None: none), from the readings of every
        request of `asks`, by key, in that order."""
        raise NotImplementedError

    def accepts(self, questions: tuple[str, ...]) -> bool:
        """Whether it can ask these yes/no questions (a strategy without questions takes none)."""
        return not questions

    def answer_keys(self, questions: tuple[str, ...] | None = None) -> tuple[str, ...]:
        """The keys of `Judgement.answers`, in order (empty: it keeps none)."""
        return ()

    def params(self, answer: AnswerKind, sample: int | None = None, grammar: bool = False) -> dict[str, object]:
        """The sampling parameters of a request answered as `answer`: one token with the top
        log-probabilities at temperature 0, or (`sample`, the fallback when the endpoint gives none)
        one sampled token with that seed; `grammar` adds `answer`'s grammar (llama.cpp's server).
        An answer that is no token (a hidden state) has its own `request_params`."""
        if answer.request_params is not None:
            return dict(answer.request_params)
        params: dict[str, object]
        if sample is None:
            params = {"temperature": 0.0, "max_tokens": 1, "logprobs": True, "top_logprobs": TOP_LOGPROBS}
        else:
            params = {"temperature": 1.0, "max_tokens": 1, "seed": sample}
        if grammar:
            params["grammar"] = answer.grammar
        return params

    def outcome(self, readings: Mapping[str, Reading]) -> Outcome:
        """`read`, with the confidence: max(P(supports), 1 − P(supports)) from log-probabilities;
        when any answer was sampled, the smallest of the sampled answers' lower bounds (below any
        confidence read from log-probabilities, so a handful of samples never lets a verdict stand)."""
        probabilities, answers = self.read(readings)
        bounds = [reading.bound for reading in readings.values() if reading.bound is not None]
        confidence = min(bounds) if bounds else pass_fail_confidence(probabilities)
        return Outcome(probabilities, confidence, bool(bounds), answers)

    def calls_per_citation(self, questions: tuple[str, ...] | None = None) -> int:
        """How many requests it sends per citation when the endpoint gives log-probabilities."""
        return len(self.asks("claim", "evidence", "cited section", questions))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} strategy {self.name!r}, prompt {self.prompt_version}>"
