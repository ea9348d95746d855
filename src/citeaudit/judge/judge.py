"""Step 2: ask a model whether the evidence supports, contradicts or says nothing about a claim.

The words asked are `prompts.py` (the data markers, the questions, the prompt versions); the numbers
read off the answers `answers.py`; the ways of asking `strategies/` (one object per strategy,
registered by name: `choice`, `examples`, `yesno`, `panel`, `panel+examples`, each with its own
prompt version, so its own cache keys). This module is the transport: one `Judge` per model and
strategy, through the cache. It sends the requests its strategy builds for a citation (`requests`),
reads each answer as a `strategies.Reading`, and lets the strategy turn the readings into the three
probabilities, the `answers` (yes/no strategies: P(yes) of each question, by its key) and the
confidence.

Calls go through the official `openai` client, against any OpenAI-compatible endpoint, and every
call goes through the `CallCache`.

What decides an answer is pass or fail, so the relation is `supports` when P(supports) ≥ 1/2 and
otherwise the larger of contradicts and says nothing (`decided_relation`), and the confidence is
max(P(supports), 1 − P(supports)). When an endpoint returns no log-probabilities each question is
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
from pathlib import Path
from typing import TYPE_CHECKING

from citeaudit.errors import CacheMissError, CiteAuditError, InputError, JudgeError, JudgeUnavailableError
from citeaudit.judge.answers import Z_99 as Z_99  # re-exported: the bound of sampled confidences
from citeaudit.judge.answers import decided_relation, finite_or_none
from citeaudit.judge.answers import wilson_lower_bound as wilson_lower_bound
from citeaudit.judge.cache import CallCache
from citeaudit.judge.prompts import QUESTIONS, YESNO_QUESTIONS
from citeaudit.judge.strategies import LETTERS, STRATEGIES, YES_NO, get_strategy
from citeaudit.judge.strategies.base import GRAMMAR as GRAMMAR  # re-exported: the answer kinds' grammars
from citeaudit.judge.strategies.base import TOP_LOGPROBS
from citeaudit.judge.strategies.base import YESNO_GRAMMAR as YESNO_GRAMMAR
from citeaudit.judge.strategies.probe import VECTOR, probe_ask
from citeaudit.settings import environment as config
from citeaudit.table import ErrorKind

PROBE_VECTORS_HINT = " (`make probe-vectors` records the labelled sets)"  # a Makefile target: said in a checkout only

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import httpx2
    import numpy as np
    from openai import OpenAI
    from openai.types.chat import ChatCompletionMessageParam

    from citeaudit.judge.strategies import Ask, JudgeStrategy, Reading

# what is kept of an answer (one token was asked for): a 10 MB body is never stored verbatim
MAX_CONTENT_CHARS, MAX_TOKEN_CHARS = 200, 64
SAMPLES = 5
# the readings of a citation's `ahead` requests, asked before its others (`Judge.judge_all`), or
# what asking them raised (raised again when that citation is judged)
Asked = dict[str, "Reading"] | Exception


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

    Every setting is an argument and none is read from the environment: `pipeline.run.AuditRun`
    builds the judge the settings describe (`AuditOptions`: `CITEAUDIT_MODEL`, `OPENAI_BASE_URL`,
    ...). Unset, they are the defaults (`base_url` None: the openai client's). `cache` is required
    (a `CallCache`: the folder and the mode). `strategy` names a registered strategy
    (`strategies.STRATEGIES`: `choice`, `examples`, `yesno`, `panel`, `panel+examples` and any
    registered since); the object itself is `strategy_object`, which builds the requests and reads
    their answers. `grammar=True` sends llama.cpp's `grammar` so that the one token must be a valid
    answer; other endpoints do not take it (None: on for the models our llama.cpp server runs,
    `LOCAL_MODELS`). `timeout` bounds each whole request (`deadline`); the client retries
    transient faults (connection errors, timeouts, 408/409/429/5xx, honouring `Retry-After`)
    `max_retries` times.
    """

    model: str = config.DEFAULT_MODEL
    base_url: str | None = None
    api_key: str | None = None
    grammar: bool | None = None  # None: on for a local model (`LOCAL_MODELS`)
    cache: CallCache = None  # type: ignore[assignment]  # required: checked in __post_init__
    max_retries: int = config.DEFAULT_RETRIES
    timeout: float = config.DEFAULT_TIMEOUT
    samples: int = SAMPLES
    strategy: str = config.DEFAULT_STRATEGY
    questions: tuple[str, ...] | None = None  # yes/no strategies: the questions asked (keys of QUESTIONS)
    models: Path | None = None  # where an assembled local model is kept (read in process: `probe`)
    http_client: httpx2.Client | None = field(default=None, repr=False)  # handed to openai.OpenAI (tests stub it)
    _client: OpenAI | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.cache is None:
            raise TypeError("a Judge asks through a call cache: Judge(cache=CallCache(folder, mode)), or "
                            "AuditRun(options).judge for the one the settings describe")
        if self.grammar is None:
            self.grammar = self.model in config.LOCAL_MODELS.values()
        self.strategy = config.parse_strategy(self.strategy)
        strategy = self.strategy_object
        if self.questions is None:
            self.questions = strategy.default_questions or None
        elif self.questions and not strategy.accepts(self.questions):
            others = ", ".join(q for q in QUESTIONS if q not in YESNO_QUESTIONS)
            none = [name for name, each in STRATEGIES.items() if not each.default_questions]
            listed = " and ".join([", ".join(none[:-1]), none[-1]] if len(none) > 1 else none)
            raise InputError(f"questions {self.questions!r}: a yes/no strategy asks \"true\", \"false\" and any of "
                             f"{others}; {listed} ask none")

    @property
    def strategy_object(self) -> JudgeStrategy:
        """The registered strategy named `strategy`: what this judge asks, and how it reads the answers."""
        return get_strategy(self.strategy)

    @property
    def prompt_version(self) -> str:
        return self.strategy_object.prompt_version

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

    def _asks(self, claim: str, evidence: str, where: str) -> list[Ask]:
        return self.strategy_object.asks(claim, evidence, where, self.questions)

    def _params(self, sample: int | None = None, three_way: bool | None = None) -> dict[str, object]:
        """The parameters of a request answered with a letter (`three_way`) or Yes/No (default: as
        the strategy's own questions are answered), as the strategy sends it."""
        strategy = self.strategy_object
        letters = strategy.letters if three_way is None else three_way
        return strategy.params(LETTERS if letters else YES_NO, sample, grammar=bool(self.grammar))

    def _ask_params(self, ask: Ask, sample: int | None = None) -> dict[str, object]:
        return self.strategy_object.params(ask.answer, sample, grammar=bool(self.grammar))

    def _request(self, messages: list[ChatCompletionMessageParam], params: dict,
                 prompt_version: str | None = None) -> dict:
        """The request dict the cache keys (`cache.request_key`)."""
        return {"model": self.model, "messages": messages, "params": params,
                "prompt_version": prompt_version or self.prompt_version}

    def requests(self, claim: str, evidence: str, where: str = "cited section") -> list[dict]:
        """The requests `judge` sends for one citation when the endpoint returns log-probabilities
        (one per request of the strategy), built as `judge` builds them: what a cost estimate
        counts and what the cache is asked whether it already holds (`CallCache.recorded`)."""
        return [self._request(ask.messages, self._ask_params(ask), ask.prompt_version)
                for ask in self._asks(claim, evidence, where)]

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

        A strategy's `ahead` requests (`panel+examples`' examples request) go first, every
        citation's, then each citation's others: a server that keeps the previous prompt's
        evaluated tokens (llama.cpp's) then reuses their common head from one request to the next,
        instead of evaluating it again for every citation. `done` is called with the share of one
        citation's requests just answered (1 per citation without `ahead` requests; 1/4, then 3/4 in
        `panel+examples`), so a progress bar in citations moves during both passes.
        """
        first: list[Asked | None] = [None] * len(items)
        shares = [0.0] * len(items)  # of each citation's requests, the share asked ahead
        for k, (claim, evidence, where, what) in enumerate(items):
            asks = self._asks(claim, evidence, where)
            ahead = [ask for ask in asks if ask.ahead]
            if ahead:
                first[k], shares[k] = self._ask_ahead(ahead, what), len(ahead) / len(asks)
                if done:
                    done(shares[k])
        judged = []
        for item, asked, share in zip(items, first, shares, strict=True):
            judged.append(self.judge(*item, asked))
            if done:
                done(1.0 - share)
        return judged

    def _ask_ahead(self, ahead: list[Ask], what: str) -> Asked:
        """The readings of `ahead`, or what asking them raised: that citation's failure, reported when
        it is judged (but an endpoint that cannot be used at all stops the run here)."""
        try:
            return {ask.key: self._read(ask, what) for ask in ahead}
        except JudgeUnavailableError:
            raise
        except Exception as exc:
            return exc

    def judge(self, claim: str, evidence: str, where: str = "cited section", what: str = "",
              asked: Asked | None = None) -> Judgement:
        """The relation, its probabilities and confidence; a failure comes back as `error`.
        `asked`: the readings of the strategy's `ahead` requests, asked already (`judge_all`)."""
        strategy = self.strategy_object
        try:
            if isinstance(asked, Exception):  # that citation's ahead request failed: no need to ask the rest
                raise asked
            readings = {ask.key: asked[ask.key] if asked and ask.key in asked else self._read(ask, what)
                        for ask in self._asks(claim, evidence, where)}
            outcome = strategy.outcome(readings)
        except JudgeUnavailableError:
            raise  # no row can be judged: the caller stops the run
        except CacheMissError as exc:  # replay mode: the row keeps the message, which says how to record it
            return Judgement(None, None, None, None, self.model, None, str(exc), error_kind=ErrorKind.REPLAY_MISS)
        except CiteAuditError as exc:  # an answer that cannot be read as probabilities
            return Judgement(None, None, None, None, self.model, None, str(exc), error_kind=ErrorKind.UNUSABLE)
        except Exception as exc:  # the endpoint failed after the client's retries, or answered garbage
            return Judgement(None, None, None, None, self.model, None, f"{type(exc).__name__}: {exc}",
                             error_kind=ErrorKind.ENDPOINT)
        method = self._sampled_method() if outcome.sampled else "logprobs"
        cached = all(reading.cached for reading in readings.values())
        return Judgement(decided_relation(outcome.probabilities), outcome.probabilities, outcome.confidence, method,
                         self.model, cached, answers=outcome.answers)

    def hidden_state(self, claim: str, evidence: str, where: str = "cited section", what: str = "") -> np.ndarray:
        """The hidden state the `probe` strategy reads for this citation (through the cache, like an
        answer: recorded, replayed), without the probe: what the probe is fitted on."""
        return self._vector(probe_ask(claim, evidence, where), what)[0]

    def hidden_states(self, claim: str, evidence: str, where: str = "cited section",
                      layers: Sequence[str] = ("last",), what: str = "") -> dict[str, np.ndarray]:
        """The hidden states of `layers` (`hidden_states.LAYERS`' names) at the end of the probe's
        question for this citation, each through the cache as a request of its own (the final
        layer's is the probe's own request); those to record are read in one forward pass."""
        ask = probe_ask(claim, evidence, where)
        return {layer: vector for layer, (vector, _) in self._vectors(ask, layers, what).items()}

    def hidden_state_requests(self, claim: str, evidence: str, where: str = "cited section",
                              layers: Sequence[str] = ("last",)) -> dict[str, dict]:
        """The request of each of `layers`' hidden states for this citation (as `hidden_states`
        sends them): what `CallCache.recorded` is asked."""
        ask = probe_ask(claim, evidence, where)
        return {layer: self._layer_request(ask, layer) for layer in layers}

    def _layer_request(self, ask: Ask, layer: str) -> dict:
        return self._request(ask.messages, {**self._ask_params(ask), "hidden_state": layer}, ask.prompt_version)

    def _vector(self, ask: Ask, what: str) -> tuple[np.ndarray, bool]:
        layer = str(self._ask_params(ask)["hidden_state"])
        return self._vectors(ask, (layer,), what)[layer]

    def _vectors(self, ask: Ask, layers: Sequence[str], what: str) -> dict[str, tuple[np.ndarray, bool]]:
        from citeaudit.judge import hidden_states

        local = hidden_states.local_model(self.model)
        read: dict[str, tuple[dict, dict]] = {}

        def send_of(layer: str) -> Callable[[], tuple[dict, dict]]:
            def send() -> tuple[dict, dict]:
                if not read:  # the first layer to record reads them all, in one pass
                    vectors, tokens = hidden_states.read_vectors(local, ask.messages, layers, self.models)
                    usage = {"prompt": tokens, "completion": 0}
                    read.update({name: ({"vector": hidden_states.encode_vector(vector), "dimensions": len(vector)},
                                        usage) for name, vector in vectors.items()})
                return read[layer]
            return send

        out = {}
        for layer in layers:
            try:
                record, cached = self.cache.call(self._layer_request(ask, layer), send_of(layer), what=what)
            except CacheMissError as exc:  # the cache's hint names a server; a hidden state is read in-process
                raise CacheMissError(
                    f"{exc.lookup}: no recorded hidden state. Replay mode never reads a model. To record it, rerun "
                    f"with `--cache-mode record` (or `citeaudit record --model {local.key} --strategy probe ...`): "
                    f"the local model is read in this process, no server is needed"
                    f"{PROBE_VECTORS_HINT if config.in_checkout() else ''}.") from None
            out[layer] = (hidden_states.recorded_vector(record["response"]), cached)
        return out

    def _read_vector(self, ask: Ask, what: str) -> Reading:
        """The hidden state at the end of `ask`'s prompt, recorded like an answer (float16), read by
        the probe fitted for this model, prompt version and layer."""
        from citeaudit.judge import hidden_states

        vector, cached = self._vector(ask, what)
        layer = str(self._ask_params(ask)["hidden_state"])
        folders = self.cache.folders
        weights = hidden_states.probe_weights(hidden_states.local_model(self.model), ask.prompt_version, layer,
                                              folders)
        if len(vector) != len(weights.mean):
            raise JudgeError(f"a hidden state of {len(vector)} numbers, but the probe {weights.path} reads "
                             f"{len(weights.mean)}: it was fitted on other vectors; "
                             f"{hidden_states.refit_advice(weights.path, folders[-1])}")
        return VECTOR.from_probabilities(weights.probabilities(vector)[0], cached)

    def _sampled_method(self) -> str:
        return f"sampling (n={self.samples}, Wilson 99% lower bound)"

    def _read(self, ask: Ask, what: str) -> Reading:
        """Send `ask` (through the cache) and read its answer: from the top log-probabilities, or,
        when the endpoint gives none, from `samples` sampled answers (each a cached call of its own);
        a hidden-state request (`probe`) is read through the probe (`hidden_states`)."""
        if ask.answer is VECTOR:
            return self._read_vector(ask, what)
        record, cached = self._call(ask.messages, self._ask_params(ask), what, ask.prompt_version)
        response = record["response"]
        top = response.get("top_logprobs")
        if top:
            return ask.answer.from_logprobs(top, response.get("content"), cached)
        answers = []
        for i in range(self.samples):
            sampled, hit = self._call(ask.messages, self._ask_params(ask, sample=i), what, ask.prompt_version)
            cached = cached and hit
            answers.append((sampled["response"].get("content") or "").strip())
        return ask.answer.from_samples(answers, self.samples, cached)
