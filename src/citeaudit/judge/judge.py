"""Step 2: ask a model whether the evidence supports, contradicts or says nothing about a claim.

Three modules: `prompts.py` (the words asked, the data markers, the prompt versions),
`answers.py` (probabilities read off token log-probabilities, the sampled bound) and this one
(the strategies and the transport: one `Judge` per model and strategy, through the cache).

Calls go through the official `openai` client, against any OpenAI-compatible endpoint, and every
call goes through the `CallCache`. Five strategies (`vocab.Strategy`) yield the same three
probabilities, each with its own prompt version (so its own cache keys):

- `choice` (prompt `relation-v2`): one three-way question answered with one letter, A, B or C;
  the probabilities are the `top_logprobs` of that token renormalized over the three letters.
- `examples` (prompt `examples-v1`): `choice`'s question after six worked examples, each asked the
  same way and answered with its letter (`prompts.WORKED_EXAMPLES`); read as `choice` is. The
  examples are every request's common head, which llama.cpp's server keeps between requests.
- `yesno` (prompt `yesno-v1`): two binary questions over the same passage and claim, "does the
  passage state the claim or imply that it is true?" and "... that it is false?". With q_t and
  q_f their P(yes) (renormalized over Yes/No), P(supports) = q_t and the rest is split as
  P(contradicts) = (1 − q_t) q_f, P(says nothing) = (1 − q_t)(1 − q_f) (`combine_yesno`).
  The second call shares the first's long prefix, which llama.cpp's server reuses.
- `panel` (yesno's two requests, as yesno asks them, and "does the passage contradict the claim?",
  prompt `panel-v1`): the same three probabilities as `yesno` (the third answer does not enter
  them), and every answer's P(yes) in `Judgement.answers`, which a per-model calibration maps to
  P(pass) (`calibrate.py`: this weak model says yes to every question more often for claims that
  pass, so the answers are pooled by weights learned from labels, not by their wording).

- `panel+examples`: `panel`'s three requests and `examples`' one, each exactly as that strategy
  sends it (so the same recordings and cache keys); the three probabilities are `panel`'s, and
  `examples`' P(supports) joins the answers as a fourth, under `prompts.EXAMPLES_ANSWER`. The map
  of the four (`calibrate.py`) lets more verdicts stand than either strategy's alone, at the cost
  of both strategies' calls.

`Judgement.answers` holds P(yes) of each yes/no question by its key (`QUESTIONS`), for `yesno`,
`panel` and `panel+examples` (with `examples`' P(supports) as one more); a calibration may read them.

What decides an answer is pass or fail, so the relation is `supports` when P(supports) ≥ 1/2 and
otherwise the larger of contradicts and says nothing (`decided_relation`), and the confidence is
max(P(supports), 1 − P(supports)). When an endpoint returns no log-probabilities the question is
sampled `samples` times instead: the probabilities are the shares of the answers and the
confidence is the Wilson 99% lower bound of the pass-or-fail winner's count out of `samples`
(5 of 5 agreeing gives 0.43), below any confidence read from log-probabilities, so a handful of
samples never lets a verdict stand at a threshold of 1/2 or more. Free text is never parsed into a
probability.

Failures: an endpoint that cannot be used at all (unreachable, silent past the timeout and its
retries, key refused, model unknown) raises `JudgeUnavailableError` and stops the run; any other
failure of one call (a 500 after retries, a malformed or non-finite answer, a letter outside
A/B/C) becomes that row's `error`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from citeaudit.errors import CacheMissError, CiteAuditError, InputError, JudgeError, JudgeUnavailableError
from citeaudit.judge.answers import (
    LETTERS,
    Z_99,
    combine_yesno,
    decided_relation,
    finite_or_none,
    pass_fail_confidence,
    probabilities_from_top_logprobs,
    wilson_lower_bound,
    yes_probability,
)
from citeaudit.judge.cache import CallCache
from citeaudit.judge.prompts import (
    EXAMPLES_ANSWER,
    PROMPT_VERSIONS,
    QUESTIONS,
    STRATEGY_QUESTIONS,
    THREE_WAY,
    YESNO_QUESTIONS,
    build_messages,
    calls_per_citation,
)
from citeaudit.settings import environment as config
from citeaudit.table import ErrorKind, Relation, Strategy

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import httpx2
    from openai import OpenAI
    from openai.types.chat import ChatCompletionMessageParam

GRAMMAR = 'root ::= "A" | "B" | "C"'
YESNO_GRAMMAR = 'root ::= "Yes" | "No"'
TOP_LOGPROBS = 20
# what is kept of an answer (one token was asked for): a 10 MB body is never stored verbatim
MAX_CONTENT_CHARS, MAX_TOKEN_CHARS = 200, 64
SAMPLES = 5
# `examples`' answer to one citation, asked ahead of `panel`'s (`Judge.judge_all`): what `_choice`
# returned, or what it raised (raised again when that citation is judged)
Asked = tuple[dict, float, str, bool] | Exception


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
    answers: dict[str, float] | None = None  # yes/no strategies: P(yes) of each question, by its key
    error_kind: ErrorKind | None = None  # why it failed, set with `error`


def _unavailable(exc: Exception, judge: Judge) -> JudgeUnavailableError | None:
    """The `JudgeUnavailableError` for an openai error that means the endpoint cannot be used at all."""
    import openai

    where = judge.base_url or "the OpenAI default endpoint"
    start_local = "or start the local judge with `citeaudit serve-local --model qwen` and point OPENAI_BASE_URL at it"
    if isinstance(exc, openai.APITimeoutError):
        problem = (f"no answer from {where} within {judge.timeout:g} s in {judge.max_retries + 1} tries. "
                   f"Raise CITEAUDIT_TIMEOUT if the model is just slow; otherwise check OPENAI_BASE_URL, ")
    elif isinstance(exc, openai.APIConnectionError):
        problem = (f"cannot connect to {where} ({exc}). Set OPENAI_BASE_URL to a running OpenAI-compatible "
                   f"endpoint (with CITEAUDIT_MODEL and OPENAI_API_KEY as it needs), ")
    elif isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        problem = (f"{where} refused the API key (HTTP {exc.status_code}). Set OPENAI_API_KEY to a key it "
                   f"accepts (and OPENAI_BASE_URL, CITEAUDIT_MODEL to match), ")
    elif isinstance(exc, openai.NotFoundError):
        problem = (f"{where} answered 404 for model {judge.model!r}. Set CITEAUDIT_MODEL to a model it serves, "
                   f"and check that OPENAI_BASE_URL ends in its API root (often `/v1`), ")
    else:
        return None
    return JudgeUnavailableError(f"The judge cannot be used: {problem}{start_local}.")


@dataclass
class Judge:
    """Asks the relation question of one model, through the cache, in one strategy.

    Settings default to the environment (`OPENAI_BASE_URL`, `OPENAI_API_KEY`, `CITEAUDIT_MODEL`,
    `CITEAUDIT_STRATEGY`, `CITEAUDIT_GRAMMAR`, `CITEAUDIT_CACHE_MODE`, `CITEAUDIT_TIMEOUT`,
    `CITEAUDIT_RETRIES`). `strategy` is `choice`, `examples`, `yesno`, `panel` or `panel+examples`
    (module doc). `grammar=True` sends llama.cpp's `grammar` so that the one token must be a valid
    answer; other endpoints do not take it. `timeout` bounds each whole request (`deadline`); the
    client retries transient faults (connection errors, timeouts, 408/409/429/5xx, honouring
    `Retry-After`) `max_retries` times.
    """

    model: str = field(default_factory=config.model)
    base_url: str | None = field(default_factory=config.base_url)
    api_key: str | None = field(default_factory=config.api_key)
    grammar: bool | None = None  # None: config.use_grammar(model)
    cache: CallCache = field(default_factory=CallCache)
    max_retries: int = field(default_factory=config.retries)
    timeout: float = field(default_factory=config.timeout)
    samples: int = SAMPLES
    strategy: str = field(default_factory=config.strategy)
    questions: tuple[str, ...] | None = None  # yes/no strategies: the questions asked (keys of QUESTIONS)
    http_client: httpx2.Client | None = field(default=None, repr=False)  # handed to openai.OpenAI (tests stub it)
    _client: OpenAI | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.grammar is None:
            self.grammar = config.use_grammar(self.model)
        self.strategy = config.parse_strategy(self.strategy)
        if self.questions is None and self.strategy not in THREE_WAY:
            self.questions = STRATEGY_QUESTIONS[Strategy(self.strategy)]
        asked = set(self.questions or ())
        if asked and (self.strategy in THREE_WAY or not asked <= set(QUESTIONS)
                      or not set(YESNO_QUESTIONS) <= asked):
            others = ", ".join(q for q in QUESTIONS if q not in YESNO_QUESTIONS)
            raise InputError(f"questions {self.questions!r}: a yes/no strategy asks \"true\", \"false\" and any of "
                             f"{others}; choice and examples ask none")

    @property
    def prompt_version(self) -> str:
        return PROMPT_VERSIONS[Strategy(self.strategy)]

    @property
    def client(self) -> OpenAI:
        if self._client is None:
            from openai import OpenAI

            from citeaudit.judge.deadline import deadline_client

            self._client = OpenAI(
                base_url=self.base_url,
                api_key=self.api_key or "not-needed",  # a local server takes any key
                max_retries=self.max_retries,  # the client backs off and retries transient faults
                timeout=self.timeout,
                # the timeout bounds the whole request, not each read (`deadline`)
                http_client=self.http_client or deadline_client(self.timeout),
            )
        return self._client

    def _params(self, sample: int | None = None, three_way: bool | None = None) -> dict[str, object]:
        """The request's parameters; `three_way` (default: the strategy asks it) picks the letters'
        grammar over Yes/No's."""
        params: dict[str, object]
        if sample is None:
            params = {"temperature": 0.0, "max_tokens": 1, "logprobs": True, "top_logprobs": TOP_LOGPROBS}
        else:
            params = {"temperature": 1.0, "max_tokens": 1, "seed": sample}
        if self.grammar:
            three_way = self.strategy in THREE_WAY if three_way is None else three_way
            params["grammar"] = GRAMMAR if three_way else YESNO_GRAMMAR
        return params

    def _request(self, messages: list[ChatCompletionMessageParam], params: dict,
                 prompt_version: str | None = None) -> dict:
        """The request dict the cache keys (`cache.request_key`)."""
        return {"model": self.model, "messages": messages, "params": params,
                "prompt_version": prompt_version or self.prompt_version}

    def requests(self, claim: str, evidence: str, where: str = "cited section") -> list[dict]:
        """The requests `judge` sends for one citation when the endpoint returns log-probabilities
        (one per question of the strategy), built as `judge` builds them: what a cost estimate
        counts and what the cache is asked whether it already holds (`CallCache.recorded`)."""
        if self.strategy in THREE_WAY:
            return [self._request(self._three_way(claim, evidence, where), self._params())]
        asked = [self._request(build_messages(claim, evidence, where, question), self._params(),
                               PROMPT_VERSIONS[Strategy.YESNO] if question in YESNO_QUESTIONS else None)
                 for question in self.questions or ()]
        if self.strategy == Strategy.PANEL_EXAMPLES:
            asked.append(self._request(self._three_way(claim, evidence, where, examples=True),
                                       self._params(three_way=True), PROMPT_VERSIONS[Strategy.EXAMPLES]))
        return asked

    def _call(self, messages: list[ChatCompletionMessageParam], params: dict, what: str,
              prompt_version: str | None = None) -> tuple[dict, bool]:
        request = self._request(messages, params, prompt_version)

        def send() -> tuple[dict, dict]:
            sent = {k: v for k, v in params.items() if k != "grammar"}
            extra = {"grammar": params["grammar"]} if "grammar" in params else None
            try:
                response = self.client.chat.completions.create(
                    model=self.model, messages=messages, extra_body=extra, **sent
                )
            except Exception as exc:
                unavailable = _unavailable(exc, self)
                if unavailable is not None:
                    raise unavailable from exc
                raise
            choices = getattr(response, "choices", None)
            if not choices:  # an HTML page, a proxy's error text, an empty list: say what came back
                shown = response if isinstance(response, str) else \
                    "a reply with no choices" if choices is not None else type(response).__name__
                raise JudgeError(f"the endpoint answered with something that is not a chat completion "
                                 f"({str(shown)[:120]!r}); check that OPENAI_BASE_URL is the API root of an "
                                 "OpenAI-compatible server (often ending in /v1)")
            choice = choices[0]
            top = None
            if choice.logprobs is not None and choice.logprobs.content:
                first = choice.logprobs.content[0]
                # a NaN or infinity is recorded as null (strict JSON) and rejected when read
                # without the alternatives (an endpoint that ignores top_logprobs) the chosen token's
                # own log-probability says nothing about the other options: sample instead (None)
                # capped before anything is stored: an endpoint may send thousands of alternatives
                alternatives = (first.top_logprobs or [])[:TOP_LOGPROBS]
                top = [{"token": str(t.token)[:MAX_TOKEN_CHARS], "logprob": finite_or_none(t.logprob)}
                       for t in alternatives] or None
            usage = response.usage
            content = choice.message.content
            return (
                {"content": content[:MAX_CONTENT_CHARS] if isinstance(content, str) else None, "top_logprobs": top,
                 "finish_reason": str(choice.finish_reason)[:40] if choice.finish_reason is not None else None},
                {
                    "prompt": getattr(usage, "prompt_tokens", None),
                    "completion": getattr(usage, "completion_tokens", None),
                },
            )

        return self.cache.call(request, send, what=what)

    def judge_all(self, items: Sequence[tuple[str, str, str, str]],
                  done: Callable[[float], None] | None = None) -> list[Judgement]:
        """`judge` of each (claim, evidence, where, what), one request at a time, in order.

        In `panel+examples` every citation's `examples` request goes first, then each citation's
        `panel` requests: a server that keeps the previous prompt's evaluated tokens (llama.cpp's)
        then reuses the examples' head from one request to the next, and each passage across
        `panel`'s three questions, instead of evaluating both again for every citation (about half
        the time: `tools/bench_local_judge.py --strategy panel+examples`). `done` is called with the
        share of one citation's requests just answered (1 per citation in the other strategies;
        1/4, then 3/4 here), so a progress bar in citations moves during both passes.
        """
        share = 1 / calls_per_citation(Strategy(self.strategy))
        first: list[Asked | None] = [None] * len(items)
        if self.strategy == Strategy.PANEL_EXAMPLES:
            for k, item in enumerate(items):
                first[k] = self._examples_or_failure(*item)
                if done:
                    done(share)
        judged = []
        for item, asked in zip(items, first, strict=True):
            judged.append(self.judge(*item, asked))
            if done:
                done(1.0 - share if asked is not None else 1.0)
        return judged

    def _examples_or_failure(self, claim: str, evidence: str, where: str, what: str) -> Asked:
        """`_examples`, or what it raised: that citation's failure, reported when it is judged (but
        an endpoint that cannot be used at all stops the run here)."""
        try:
            return self._examples(claim, evidence, where, what)
        except JudgeUnavailableError:
            raise
        except Exception as exc:
            return exc

    def judge(self, claim: str, evidence: str, where: str = "cited section", what: str = "",
              asked: Asked | None = None) -> Judgement:
        """The relation, its probabilities and confidence; a failure comes back as `error`.
        `asked`: `panel+examples`' examples answer already asked (`judge_all`)."""
        answers = None
        try:
            if self.strategy in THREE_WAY:
                probs, confidence, method, cached = self._choice(claim, evidence, where, what)
            else:
                probs, confidence, method, cached, answers = self._yesno(claim, evidence, where, what, asked)
        except JudgeUnavailableError:
            raise  # no row can be judged: the caller stops the run
        except CacheMissError as exc:  # replay mode: the row keeps the message, which says how to record it
            return Judgement(None, None, None, None, self.model, None, str(exc), error_kind=ErrorKind.REPLAY_MISS)
        except CiteAuditError as exc:  # an answer that cannot be read as probabilities
            return Judgement(None, None, None, None, self.model, None, str(exc), error_kind=ErrorKind.UNUSABLE)
        except Exception as exc:  # the endpoint failed after the client's retries, or answered garbage
            return Judgement(None, None, None, None, self.model, None, f"{type(exc).__name__}: {exc}",
                             error_kind=ErrorKind.ENDPOINT)
        return Judgement(decided_relation(probs), probs, confidence, method, self.model, cached, answers=answers)

    def _sampled_method(self) -> str:
        return f"sampling (n={self.samples}, Wilson 99% lower bound)"

    def _three_way(self, claim: str, evidence: str, where: str,
                   examples: bool | None = None) -> list[ChatCompletionMessageParam]:
        """The three-way question's messages: `choice`'s, after the worked examples in `examples`
        (or when `examples` says so)."""
        return build_messages(claim, evidence, where,
                              examples=self.strategy == Strategy.EXAMPLES if examples is None else examples)

    def _choice(self, claim: str, evidence: str, where: str, what: str, examples: bool | None = None,
                version: str | None = None) -> tuple[dict, float, str, bool]:
        """The three-way question, as this strategy asks it (or, with `examples` and `version`, as
        `examples` does): probabilities, confidence, method, cached."""
        messages = self._three_way(claim, evidence, where, examples)
        params = self._params(three_way=True)
        record, cached = self._call(messages, params, what, version)
        top = record["response"].get("top_logprobs")
        if top:
            probs = probabilities_from_top_logprobs(top)
            if probs is None:
                raise JudgeError(
                    f"none of A, B, C among the top {len(top)} tokens "
                    f"(answer {record['response'].get('content')!r})"
                )
            return probs, pass_fail_confidence(probs), "logprobs", cached
        answers, cached = self._sample(messages, what, cached, version, three_way=True)
        counts = {relation: sum(a[:1] == letter for a in answers) for letter, relation in LETTERS.items()}
        answered = sum(counts.values())
        if answered == 0:
            raise JudgeError(f"no sampled answer was A, B or C in {self.samples} samples")
        probs = {r: c / answered for r, c in counts.items()}
        passes, fails = counts[Relation.SUPPORTS], answered - counts[Relation.SUPPORTS]
        # a lower bound: the samples that were not A, B or C count against the winner too
        return probs, wilson_lower_bound(max(passes, fails), self.samples, Z_99), self._sampled_method(), cached

    def _examples(self, claim: str, evidence: str, where: str, what: str) -> tuple[dict, float, str, bool]:
        """`examples`' question, exactly as that strategy asks it (its messages, grammar and prompt version)."""
        return self._choice(claim, evidence, where, what, examples=True, version=PROMPT_VERSIONS[Strategy.EXAMPLES])

    def _yesno(self, claim: str, evidence: str, where: str, what: str,
               asked: Asked | None = None) -> tuple[dict, float, str, bool, dict[str, float]]:
        """The yes/no `questions`, in order; yesno's two are asked as `yesno` asks them (same keys).
        In `panel+examples`, then `examples`' question (or its answer `asked` before)."""
        if isinstance(asked, Exception):  # that citation's examples request failed: no need to ask the rest
            raise asked
        q: dict[str, float] = {}
        sampled: dict[str, list[str]] = {}
        all_cached = True
        for question in self.questions or ():
            messages = build_messages(claim, evidence, where, question)
            version = PROMPT_VERSIONS[Strategy.YESNO] if question in YESNO_QUESTIONS else None
            record, cached = self._call(messages, self._params(), what, version)
            all_cached = all_cached and cached
            top = record["response"].get("top_logprobs")
            if top:
                p_yes = yes_probability(top)
                if p_yes is None:
                    raise JudgeError(f"neither Yes nor No among the top {len(top)} tokens "
                                     f"(answer {record['response'].get('content')!r})")
                q[question] = p_yes
            else:
                answers, all_cached = self._sample(messages, what, all_cached, version)
                words = [a.split()[0].strip(".,:;!").lower() if a else "" for a in answers]
                if not any(w in ("yes", "no") for w in words):
                    raise JudgeError(f"no sampled answer was Yes or No in {self.samples} samples")
                sampled[question] = words
                q[question] = words.count("yes") / sum(w in ("yes", "no") for w in words)
        bounds = []
        if self.strategy == Strategy.PANEL_EXAMPLES:
            shown, bound, method, cached = asked or self._examples(claim, evidence, where, what)
            all_cached = all_cached and cached
            q[EXAMPLES_ANSWER] = shown[Relation.SUPPORTS]
            if method != "logprobs":
                bounds.append(bound)
        probs = combine_yesno(q["true"], q["false"])
        if not sampled and not bounds:
            return probs, pass_fail_confidence(probs), "logprobs", all_cached, q
        # a lower bound per sampled question on its majority answer (other answers count against)
        bounds += [wilson_lower_bound(max(w.count("yes"), w.count("no")), self.samples, Z_99)
                   for w in sampled.values()]
        return probs, min(bounds), self._sampled_method(), all_cached, q

    def _sample(self, messages: list[ChatCompletionMessageParam], what: str, cached: bool,
                prompt_version: str | None = None, three_way: bool | None = None) -> tuple[list[str], bool]:
        """The `samples` sampled answers, stripped (each sample a cached call of its own)."""
        answers = []
        for i in range(self.samples):
            record, hit = self._call(messages, self._params(sample=i, three_way=three_way), what, prompt_version)
            cached = cached and hit
            answers.append((record["response"].get("content") or "").strip())
        return answers, cached
