"""Judge mechanics with a stand-in client (units only; test_local_judge talks to a real server)."""

from types import SimpleNamespace as NS

import pytest

from citeaudit import CallCache, Judge, build_messages
from citeaudit.judge import PROMPT_VERSION, probabilities_from_top_logprobs


class FakeCompletions:
    """Answers like an OpenAI endpoint; `logprobs=None` imitates one that returns none."""

    def __init__(self, top=None, contents=("A",), fail=None):
        self.top, self.contents, self.fail, self.calls = top, list(contents), fail, []

    def create(self, **kwargs):
        self.calls.append(kwargs)
        if self.fail:
            raise self.fail
        content = self.contents[(len(self.calls) - 1) % len(self.contents)]
        logprobs = None
        if self.top is not None:
            entries = [NS(token=t, logprob=lp) for t, lp in self.top]
            logprobs = NS(content=[NS(token=self.top[0][0], logprob=self.top[0][1], top_logprobs=entries)])
        choice = NS(message=NS(content=content), logprobs=logprobs, finish_reason="length")
        return NS(choices=[choice], usage=NS(prompt_tokens=10, completion_tokens=1))


def judge_with(fake, tmp_cache, **kw):
    judge = Judge(model="fake-model", cache=CallCache(tmp_cache, mode="record"), grammar=False, **kw)
    judge._client = NS(chat=NS(completions=fake))
    return judge


def test_probabilities_renormalize_over_three_options(tmp_cache):
    fake = FakeCompletions(top=[("B", -0.2), ("A", -2.0), (" C", -3.0), ("Answer", -1.0)])
    result = judge_with(fake, tmp_cache).judge("claim", "evidence")
    assert result.relation == "contradicts" and result.method == "logprobs"
    assert sum(result.probabilities.values()) == pytest.approx(1.0)
    assert result.confidence == pytest.approx(max(result.probabilities.values()))
    call = fake.calls[0]
    assert (call["max_tokens"], call["logprobs"], call["top_logprobs"], call["temperature"]) == (1, True, 20, 0.0)


def test_second_call_comes_from_the_cache(tmp_cache):
    fake = FakeCompletions(top=[("A", -0.1)])
    judge = judge_with(fake, tmp_cache)
    assert judge.judge("c", "e").cached is False
    assert judge.judge("c", "e").cached is True
    assert len(fake.calls) == 1


def test_sampling_fallback_without_logprobs(tmp_cache):
    fake = FakeCompletions(top=None, contents=["A", "C", "A", "A", "B"])
    result = judge_with(fake, tmp_cache, samples=5).judge("c", "e")
    assert result.method == "sampling (n=5)"
    assert result.probabilities == {"supports": 0.6, "contradicts": 0.2, "says_nothing": 0.2}
    assert len(fake.calls) == 6 and {c["seed"] for c in fake.calls[1:]} == {0, 1, 2, 3, 4}


def test_answer_outside_the_options_is_an_error_row(tmp_cache):
    fake = FakeCompletions(top=[("The", -0.1), ("I", -1.0)])
    result = judge_with(fake, tmp_cache).judge("c", "e")
    assert result.relation is None and "none of A, B, C" in result.error


def test_endpoint_failure_is_an_error_row(tmp_cache):
    fake = FakeCompletions(fail=ConnectionError("refused"))
    result = judge_with(fake, tmp_cache).judge("c", "e")
    assert result.relation is None and result.error == "ConnectionError: refused"


def test_grammar_goes_in_extra_body_and_the_key(tmp_cache):
    fake = FakeCompletions(top=[("A", -0.1)])
    judge = judge_with(fake, tmp_cache)
    judge.grammar = True
    judge.judge("c", "e")
    assert fake.calls[0]["extra_body"] == {"grammar": 'root ::= "A" | "B" | "C"'}
    judge.grammar = False
    judge.judge("c", "e")
    assert len(fake.calls) == 2  # a different request, not a cache hit


def test_prompt_holds_claim_evidence_and_version():
    messages = build_messages("the claim", "the passage", "section 4 of x")
    assert "the claim" in messages[1]["content"] and "the passage" in messages[1]["content"]
    assert PROMPT_VERSION.startswith("relation-")


def test_no_option_mass_gives_none():
    assert probabilities_from_top_logprobs([{"token": "X", "logprob": 0.0}]) is None
