"""Step 2: ask a model whether the evidence supports, contradicts or says nothing about a claim.

One chat call per citation through the official `openai` client, against any OpenAI-compatible
endpoint. The model answers one letter; the probabilities are the `top_logprobs` of that token,
renormalized over the three options, and the confidence is the largest. When an endpoint returns
no log-probabilities the answer is sampled `samples` times instead (`method = "sampling"`).
Free text is never parsed into a probability. Every call goes through the `CallCache`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from . import config
from .cache import CallCache
from .errors import CiteAuditError, JudgeError

PROMPT_VERSION = "relation-v1"
RELATIONS = ("supports", "contradicts", "says_nothing")
LETTERS = {"A": "supports", "B": "contradicts", "C": "says_nothing"}
GRAMMAR = 'root ::= "A" | "B" | "C"'
TOP_LOGPROBS = 20
SAMPLES = 5

SYSTEM_PROMPT = (
    "You check citations. You read a passage from a source document and a claim that cites it, "
    "and you decide how the passage relates to the claim. Judge only by the passage."
)
USER_TEMPLATE = """Passage ({where}):
<<<
{evidence}
>>>

Claim: {claim}

How does the passage relate to the claim?
A) supports: the passage states the claim or directly implies that it is true
B) contradicts: the passage states the opposite of the claim or implies that it is false
C) says nothing: the passage does not address what the claim asserts, either way

Answer with one letter: A, B or C."""


def build_messages(claim: str, evidence: str, where: str = "cited section") -> list[dict]:
    """The chat messages of the relation question (the one place the prompt lives)."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": USER_TEMPLATE.format(where=where, evidence=evidence, claim=claim)},
    ]


@dataclass(frozen=True)
class Judgement:
    """The judge's answer for one citation; `error` is set (and the rest None) when it failed."""

    relation: str | None
    probabilities: dict[str, float] | None
    confidence: float | None
    method: str | None
    model: str
    cached: bool | None
    error: str | None = None


def probabilities_from_top_logprobs(top: list[dict]) -> dict[str, float] | None:
    """Renormalize the probability mass of the tokens "A", "B", "C" (spaces ignored) to sum to 1.

    >>> p = probabilities_from_top_logprobs([{"token": "A", "logprob": -0.1}, {"token": " B", "logprob": -2.4},
    ...                                      {"token": "The", "logprob": -3.0}])
    >>> round(p["supports"], 3), p["says_nothing"]
    (0.909, 0.0)
    """
    mass = dict.fromkeys(RELATIONS, 0.0)
    for entry in top:
        letter = entry["token"].strip()
        if letter in LETTERS:
            mass[LETTERS[letter]] += math.exp(entry["logprob"])
    total = sum(mass.values())
    if total <= 0:
        return None
    return {relation: value / total for relation, value in mass.items()}


@dataclass
class Judge:
    """Asks the relation question of one model, through the cache.

    Settings default to the environment (`OPENAI_BASE_URL`, `OPENAI_API_KEY`, `CITEAUDIT_MODEL`,
    `CITEAUDIT_GRAMMAR`, `CITEAUDIT_CACHE_MODE`). `grammar=True` sends llama.cpp's
    `grammar` so that the one token must be A, B or C; other endpoints do not take it.
    """

    model: str = field(default_factory=config.model)
    base_url: str | None = field(default_factory=config.base_url)
    api_key: str | None = field(default_factory=config.api_key)
    grammar: bool | None = None  # None: config.use_grammar(model)
    cache: CallCache | None = None
    max_retries: int = 3
    timeout: float = 300.0
    samples: int = SAMPLES
    _client: object = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.grammar is None:
            self.grammar = config.use_grammar(self.model)
        if self.cache is None:
            self.cache = CallCache()

    @property
    def client(self):
        if self._client is None:
            from openai import OpenAI

            self._client = OpenAI(
                base_url=self.base_url,
                api_key=self.api_key or "not-needed",  # a local server takes any key
                max_retries=self.max_retries,  # the client backs off and retries transient faults
                timeout=self.timeout,
            )
        return self._client

    def _params(self, sample: int | None = None) -> dict:
        if sample is None:
            params = {"temperature": 0.0, "max_tokens": 1, "logprobs": True, "top_logprobs": TOP_LOGPROBS}
        else:
            params = {"temperature": 1.0, "max_tokens": 1, "seed": sample}
        if self.grammar:
            params["grammar"] = GRAMMAR
        return params

    def _call(self, messages: list[dict], params: dict, what: str) -> tuple[dict, bool]:
        request = {
            "model": self.model,
            "messages": messages,
            "params": params,
            "prompt_version": PROMPT_VERSION,
        }

        def send() -> tuple[dict, dict]:
            sent = {k: v for k, v in params.items() if k != "grammar"}
            extra = {"grammar": params["grammar"]} if "grammar" in params else None
            response = self.client.chat.completions.create(
                model=self.model, messages=messages, extra_body=extra, **sent
            )
            choice = response.choices[0]
            top = None
            if choice.logprobs is not None and choice.logprobs.content:
                first = choice.logprobs.content[0]
                top = [{"token": t.token, "logprob": t.logprob} for t in first.top_logprobs or []]
                if not top:
                    top = [{"token": first.token, "logprob": first.logprob}]
            usage = response.usage
            return (
                {"content": choice.message.content, "top_logprobs": top, "finish_reason": choice.finish_reason},
                {
                    "prompt": getattr(usage, "prompt_tokens", None),
                    "completion": getattr(usage, "completion_tokens", None),
                },
            )

        return self.cache.call(request, send, what=what)

    def judge(self, claim: str, evidence: str, where: str = "cited section", what: str = "") -> Judgement:
        """The relation, its probabilities and confidence; a failure comes back as `error`."""
        messages = build_messages(claim, evidence, where)
        try:
            record, cached = self._call(messages, self._params(), what)
            top = record["response"].get("top_logprobs")
            if top:
                probs = probabilities_from_top_logprobs(top)
                if probs is None:
                    raise JudgeError(
                        f"none of A, B, C among the top {len(top)} tokens "
                        f"(answer {record['response'].get('content')!r})"
                    )
                method = "logprobs"
            else:
                probs, cached = self._sample(messages, what, cached)
                method = f"sampling (n={self.samples})"
        except CiteAuditError as exc:  # a replay miss included: the row keeps the message
            return Judgement(None, None, None, None, self.model, None, str(exc))
        except Exception as exc:  # the endpoint failed after the client's retries
            return Judgement(None, None, None, None, self.model, None, f"{type(exc).__name__}: {exc}")
        relation = max(RELATIONS, key=lambda r: probs[r])
        return Judgement(relation, probs, probs[relation], method, self.model, cached)

    def _sample(self, messages: list[dict], what: str, cached: bool) -> tuple[dict[str, float], bool]:
        counts = dict.fromkeys(RELATIONS, 0)
        for i in range(self.samples):
            record, hit = self._call(messages, self._params(sample=i), what)
            cached = cached and hit
            letter = (record["response"].get("content") or "").strip()[:1]
            if letter in LETTERS:
                counts[LETTERS[letter]] += 1
        answered = sum(counts.values())
        if answered == 0:
            raise JudgeError(f"no sampled answer was A, B or C in {self.samples} samples")
        return {r: c / answered for r, c in counts.items()}, cached
