"""The judge through the real openai client, its HTTP stubbed at the transport: `Judge(http_client=
Endpoint(...).client())`, `citeaudit.testing`'s scripted endpoint on an `httpx2.MockTransport`
(httpx2 is the HTTP library openai uses).
No socket and no server thread: what the client parses out of a chat-completions body, what goes
over the wire, the client's retry, what a bad number becomes, and the recording line.
test_judge.py stands in for the client itself; test_judge_http.py runs it against a real socket
(timeouts, Retry-After, refused connections, the sampling fallback)."""

import json
import math

import pytest

from citeaudit import CallCache, Judge
from citeaudit.judge.cache import read_recording, recording_name, request_key
from citeaudit.judge.judge import Z_99, wilson_lower_bound
from citeaudit.testing import Endpoint, Reply, completion


def body(top, content="A"):
    """`citeaudit.testing.completion` with the model "stub"."""
    return completion(content, top, model="stub")


def judge_over(script, tmp_cache, mode="record", **kw):
    kw.setdefault("strategy", "choice")
    kw.setdefault("max_retries", 0)
    return Judge(model="stub", base_url=script.url, api_key="k", grammar=False,
                 cache=CallCache(tmp_cache, mode=mode), http_client=script.client(), **kw)


def renormalized(*logprobs):
    mass = [math.exp(lp) for lp in logprobs]
    return [m / sum(mass) for m in mass]


def test_top_logprobs_of_a_chat_completions_body_give_the_probabilities(tmp_cache):
    script = Endpoint(body([("B", -0.3), ("A", -1.6), (" C", -2.9), ("The", -0.9)], content="B"))
    result = judge_over(script, tmp_cache).judge("the claim", "the evidence")
    supports, contradicts, says_nothing = renormalized(-1.6, -0.3, -2.9)  # "The" is not an option
    assert result.error is None and result.method == "logprobs" and result.cached is False
    assert result.probabilities == pytest.approx(
        {"supports": supports, "contradicts": contradicts, "says_nothing": says_nothing}, rel=1e-12)
    assert result.relation == "contradicts" and result.confidence == pytest.approx(1 - supports, rel=1e-12)
    ((method, path, sent, _),) = script.asked
    assert (method, path, sent["model"]) == ("POST", "/v1/chat/completions", "stub")
    assert (sent["max_tokens"], sent["logprobs"], sent["top_logprobs"], sent["temperature"]) == (1, True, 20, 0.0)
    assert "the claim" in sent["messages"][-1]["content"] and "grammar" not in sent


def test_yes_and_no_logprobs_give_the_yesno_probabilities(tmp_cache):
    script = Endpoint(body([("Yes", -0.2), (" no", -1.8), ("Maybe", -0.5)], content="Yes"))
    result = judge_over(script, tmp_cache, strategy="yesno").judge("claim", "evidence")
    q_yes, _ = renormalized(-0.2, -1.8)  # both questions get the same answer here
    assert result.error is None and script.requests == 2
    assert result.answers == pytest.approx({"true": q_yes, "false": q_yes}, rel=1e-12)
    assert result.probabilities == pytest.approx(
        {"supports": q_yes, "contradicts": (1 - q_yes) * q_yes, "says_nothing": (1 - q_yes) ** 2}, rel=1e-12)


def test_500_then_success_is_retried_with_the_same_request(tmp_cache):
    script = Endpoint(500, body([("A", -0.1), ("C", -2.5)]))
    result = judge_over(script, tmp_cache, max_retries=1).judge("claim", "evidence")
    assert result.error is None and result.relation == "supports"
    assert script.requests == 2 and script.asked[0][:3] == script.asked[1][:3]
    (line,) = (tmp_cache / recording_name("stub")).read_text().splitlines()  # the answer only, not the 500
    assert json.loads(line)["response"]["top_logprobs"] == [{"token": "A", "logprob": -0.1},
                                                            {"token": "C", "logprob": -2.5}]


def test_500_on_every_try_is_a_row_error(tmp_cache):
    script = Endpoint(500)
    result = judge_over(script, tmp_cache, max_retries=1).judge("claim", "evidence")
    assert result.confidence is None and "InternalServerError" in result.error
    assert script.requests == 2 and not list(tmp_cache.glob("*.jsonl"))


@pytest.mark.parametrize("entry", [None, ...], ids=["null", "missing"])
def test_a_logprob_that_is_not_a_number_is_a_row_error(tmp_cache, entry):
    answer = body([("A", entry), ("B", -1.0)])
    if entry is ...:  # the key left out, in the chosen token's entry and its first alternative
        chosen = answer["choices"][0]["logprobs"]["content"][0]
        del chosen["logprob"], chosen["top_logprobs"][0]["logprob"]
    script = Endpoint(answer)
    result = judge_over(script, tmp_cache).judge("claim", "evidence")
    assert result.relation is None and result.probabilities is None and result.confidence is None
    assert "not finite numbers" in result.error and "'A'" in result.error
    (record,) = read_recording(tmp_cache / recording_name("stub"))
    assert record["response"]["top_logprobs"][0] == {"token": "A", "logprob": None}


def test_a_positive_logprob_is_a_row_error(tmp_cache):
    """DESIGN: a log-probability is finite and <= 0 where it enters; a bad one is a row error."""
    script = Endpoint(body([("A", 0.5), ("B", -1.0)]))
    result = judge_over(script, tmp_cache).judge("claim", "evidence")
    assert result.confidence is None and result.error_kind == "unusable" and "above 0" in result.error


def test_a_zero_logprob_is_a_certainty_not_an_error(tmp_cache):
    script = Endpoint(body([("A", 0.0), ("B", -30.0)]))
    result = judge_over(script, tmp_cache).judge("claim", "evidence")
    assert result.error is None and result.confidence == pytest.approx(1.0)


def test_logprobs_with_no_content_get_the_sampling_fallback_not_a_logprob_confidence(tmp_cache):
    """`logprobs: {"content": []}` counts as no log-probabilities: five sampled answers, and the
    confidence is their Wilson lower bound (below 1/2), never a probability read off the body."""
    answer = body([("A", -0.01)])
    answer["choices"][0]["logprobs"] = {"content": []}
    script = Endpoint(answer)
    result = judge_over(script, tmp_cache, samples=5).judge("claim", "evidence")
    assert result.method == "sampling (n=5, Wilson 99% lower bound)" and script.requests == 6
    assert result.confidence == pytest.approx(wilson_lower_bound(5, 5, Z_99)) and result.confidence < 0.5


def test_record_mode_writes_one_recording_line_that_replays(tmp_cache):
    script = Endpoint(body([("C", -0.4), ("A", -1.5)], content="C"))
    judge = judge_over(script, tmp_cache)
    result = judge.judge("a claim that stays private", "evidence that stays private")
    judge.cache.close()
    path = tmp_cache / recording_name("stub")
    (line,) = path.read_text(encoding="utf-8").splitlines()
    assert "stays private" not in line  # the recording holds a hash of the messages, never their text
    record = json.loads(line)
    request = {"model": "stub", "messages": script.bodies[0]["messages"], "params": record["params"],
               "prompt_version": record["prompt_version"]}
    assert record["key"] == request_key(request) and record["model"] == "stub"
    assert record["response"]["content"] == "C" and record["tokens"] == {"prompt": 5, "completion": 1}

    silent = Endpoint(503)  # replay never sends
    replayed = judge_over(silent, tmp_cache, mode="replay").judge("a claim that stays private",
                                                                  "evidence that stays private")
    assert silent.requests == 0 and replayed.cached is True
    assert (replayed.relation, replayed.probabilities) == (result.relation, result.probabilities)


def test_an_endpoint_that_ignores_top_logprobs_is_sampled_not_certain(tmp_cache):
    """The chosen token alone (no alternatives) says nothing about the other options: renormalized on
    its own it would read as certainty, so the judge samples instead and stays below 1/2."""
    answer = body([("A", -0.3)])
    answer["choices"][0]["logprobs"]["content"][0]["top_logprobs"] = []
    script = Endpoint(answer)
    result = judge_over(script, tmp_cache, samples=5).judge("claim", "evidence")
    assert result.method == "sampling (n=5, Wilson 99% lower bound)" and result.confidence < 0.5


def test_a_200_with_an_html_body_says_what_came_back(tmp_cache):
    """A proxy or a wrong OPENAI_BASE_URL answering an HTML page: a row error that names it, not an
    AttributeError from deep inside (issue 21)."""
    page = "<html><body>Welcome to nginx!</body></html>"
    client = Endpoint(Reply(200, page.encode(), headers={"content-type": "text/html"})).client()
    judge = Judge(model="stub", base_url="http://stub.invalid/v1", api_key="k", grammar=False, strategy="choice",
                  max_retries=0, cache=CallCache(tmp_cache, mode="record"), http_client=client)
    result = judge.judge("claim", "evidence")
    assert result.confidence is None and result.error_kind == "unusable"
    assert "not a chat completion" in result.error and "Welcome to nginx" in result.error


def test_an_oversized_answer_is_capped_before_it_is_stored(tmp_cache):
    """A 2 MB message and 5,000 alternatives of 1 kB tokens: the recording keeps 200 characters of
    the message and the 20 alternatives asked for, tokens cut to 64 characters (issue 21)."""
    top = [("A", -0.1), ("B", -2.5)] + [("x" * 1_000 + str(i), -20.0) for i in range(5_000)]
    script = Endpoint(body(top, content="A" * 2_000_000))
    judge = judge_over(script, tmp_cache)
    result = judge.judge("claim", "evidence")
    judge.cache.close()
    (line,) = (tmp_cache / recording_name("stub")).read_text(encoding="utf-8").splitlines()
    record = json.loads(line)["response"]
    assert len(record["content"]) == 200 and len(record["top_logprobs"]) == 20
    assert max(len(t["token"]) for t in record["top_logprobs"]) == 64 and len(line) < 5_000
    assert result.relation == "supports"
