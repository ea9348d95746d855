"""The judge over real HTTP through the openai client, against a scripted, fault-injecting endpoint
on 127.0.0.1: transient faults are retried, an endpoint that cannot be used stops the run with
`JudgeUnavailableError`, a bad answer becomes a row error, and an endpoint without
log-probabilities gets the sampling fallback. Every case takes at most a few seconds."""

import json
import socket
import time

import pytest

from citeaudit import CallCache, Judge
from citeaudit.errors import JudgeError, JudgeUnavailableError
from citeaudit.judge.answers import Z_99, wilson_lower_bound
from citeaudit.testing import DRIP_BODY, DRIP_HEAD, HANG, Reply, completion, scripted_endpoint


@pytest.fixture
def endpoint():
    """`citeaudit.testing`'s endpoint over a real socket, answering with no delay; each test
    scripts it (`endpoint.script(...)`: one step per request, the last repeating)."""
    with scripted_endpoint() as served:
        yield served


def judge_for(endpoint, tmp_cache, **kw):
    url = endpoint if isinstance(endpoint, str) else endpoint.url
    kw.setdefault("timeout", 2)
    kw.setdefault("strategy", "choice")  # the scripted server answers A, B or C
    return Judge(model="scripted", base_url=url, api_key="k", grammar=False,
                 cache=CallCache(tmp_cache, mode="record"), **kw)


def recorded_lines(tmp_cache):
    return [line for path in tmp_cache.glob("*.jsonl") for line in path.read_text().splitlines()]


def test_transient_faults_are_retried(endpoint, tmp_cache):
    endpoint.script(503, 429, completion("B"))
    result = judge_for(endpoint, tmp_cache, max_retries=3).judge("claim", "evidence")
    assert result.error is None and result.relation == "contradicts"
    assert endpoint.requests == 3
    sent = endpoint.bodies[-1]
    assert (sent["max_tokens"], sent["logprobs"], sent["top_logprobs"]) == (1, True, 20)


def test_500_then_success_is_retried(endpoint, tmp_cache):
    endpoint.script(500, completion("A"))
    result = judge_for(endpoint, tmp_cache, max_retries=1).judge("claim", "evidence")
    assert result.error is None and result.relation == "supports" and result.method == "logprobs"
    assert endpoint.requests == 2 and len(recorded_lines(tmp_cache)) == 1  # only the answer is recorded


@pytest.mark.slow  # waits the server's 1 s
def test_429_waits_for_retry_after(endpoint, tmp_cache):
    endpoint.script(Reply(429, headers={"Retry-After": "1"}), completion("A"))
    result = judge_for(endpoint, tmp_cache, max_retries=1).judge("claim", "evidence")
    assert result.error is None and result.relation == "supports"
    first, second = (asked.at for asked in endpoint.asked)
    assert second - first >= 0.95  # the server's 1 s, not the client's own backoff (at most 0.5 s)


def test_persistent_failure_is_an_error_row(endpoint, tmp_cache):
    endpoint.script(500)
    result = judge_for(endpoint, tmp_cache, max_retries=1).judge("claim", "evidence")
    assert result.relation is None and "InternalServerError" in result.error
    assert endpoint.requests == 2  # the first try and one retry
    assert recorded_lines(tmp_cache) == []  # a failure is never recorded as an answer


@pytest.mark.slow  # two timeouts of 0.5 s and the backoff between
def test_hanging_endpoint_stops_the_run_in_bounded_time(endpoint, tmp_cache):
    """An endpoint that never answers cannot judge any row: JudgeUnavailableError (not a row
    error) once the timeout has run out on the first try and on the retry."""
    gives_up_in_bounded_time(endpoint, tmp_cache, HANG, 0.5, r"no answer .* within 0.5 s in 2 tries.*CITEAUDIT_TIMEOUT",
                             within=15)


def gives_up_in_bounded_time(endpoint, tmp_cache, reply, timeout, says, within):
    """With one retry, the judge gives up on `reply` after two tries, within `within` seconds: a bound
    far above what the two tries take (a loaded machine stretches them) and far below what an
    unbounded wait would (forever, or ~60 s of dripped bytes)."""
    endpoint.script(reply)
    judge = judge_for(endpoint, tmp_cache, timeout=timeout, max_retries=1)
    started = time.monotonic()
    with pytest.raises(JudgeUnavailableError, match=says):
        judge.judge("claim", "evidence")
    assert time.monotonic() - started < within
    assert endpoint.requests == 2


@pytest.mark.slow  # two deadlines of 1 s
@pytest.mark.parametrize("drip", [DRIP_HEAD, DRIP_BODY])
def test_an_endpoint_that_drips_bytes_is_bounded_by_the_whole_request_deadline(endpoint, tmp_cache, drip):
    """Each byte comes well within any per-read timeout, but the whole reply would take ~60 s:
    the timeout bounds each request as a whole (`deadline.DeadlineTransport`), so two tries end
    in about two seconds."""
    gives_up_in_bounded_time(endpoint, tmp_cache, drip, 1, r"within 1 s in 2 tries", within=20)


def test_malformed_json_body_is_an_error_row(endpoint, tmp_cache):
    endpoint.script(Reply(200, b'{"id": "x", "choices": ['))
    result = judge_for(endpoint, tmp_cache, max_retries=0).judge("claim", "evidence")
    assert result.relation is None and result.confidence is None and result.error
    assert recorded_lines(tmp_cache) == []


def test_body_without_choices_is_an_error_row(endpoint, tmp_cache):
    endpoint.script({**completion("A"), "choices": []})
    result = judge_for(endpoint, tmp_cache, max_retries=0).judge("claim", "evidence")
    assert result.relation is None and result.error_kind == "unusable"
    assert "not a chat completion ('a reply with no choices')" in result.error


def test_no_logprobs_falls_back_to_sampling(endpoint, tmp_cache):
    endpoint.script(*(completion(answer, logprobs=False) for answer in "AACABA"))
    result = judge_for(endpoint, tmp_cache, samples=5).judge("claim", "evidence")
    assert result.method == "sampling (n=5, Wilson 99% lower bound)"
    assert result.probabilities == {"supports": 0.6, "contradicts": 0.2, "says_nothing": 0.2}
    assert result.confidence == pytest.approx(wilson_lower_bound(3, 5, Z_99))
    assert [r.get("seed") for r in endpoint.bodies[1:]] == [0, 1, 2, 3, 4]


def test_unanimous_samples_give_a_lower_bound_not_certainty(endpoint, tmp_cache):
    endpoint.script(completion("A", logprobs=False))
    result = judge_for(endpoint, tmp_cache, samples=5).judge("claim", "evidence")
    assert result.relation == "supports" and result.probabilities["supports"] == 1.0
    assert 0.42 < result.confidence < 0.44  # Wilson 99% lower bound of 5/5: below any threshold from 0.5 up


def test_nan_logprob_is_an_error_row_and_the_recording_stays_strict_json(endpoint, tmp_cache):
    endpoint.script(completion("A", [("A", float("nan")), ("C", -1.9)]))  # json.dumps writes a bare NaN
    result = judge_for(endpoint, tmp_cache).judge("claim", "evidence")
    assert result.relation is None and result.confidence is None
    assert "not finite numbers" in result.error
    (line,) = recorded_lines(tmp_cache)
    record = json.loads(line, parse_constant=lambda name: pytest.fail(f"bare {name} in the recording"))
    assert record["response"]["top_logprobs"][0] == {"token": "A", "logprob": None}


def test_connection_refused_names_the_settings(tmp_cache):
    with socket.socket() as sock:  # a port that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    judge = judge_for(f"http://127.0.0.1:{port}/v1", tmp_cache, max_retries=1, timeout=1)
    with pytest.raises(JudgeUnavailableError, match=r"cannot connect to http://127.0.0.1:\d+/v1") as raised:
        judge.judge("claim", "evidence")
    message = str(raised.value)
    assert all(name in message for name in ("OPENAI_BASE_URL", "CITEAUDIT_MODEL", "OPENAI_API_KEY",
                                            "citeaudit serve-local --model qwen"))
    assert isinstance(raised.value, JudgeError)  # callers that catch JudgeError still do


def test_refused_key_names_openai_api_key(endpoint, tmp_cache):
    endpoint.script(401)
    with pytest.raises(JudgeUnavailableError, match="refused the API key .*OPENAI_API_KEY"):
        judge_for(endpoint, tmp_cache, max_retries=2).judge("claim", "evidence")
    assert endpoint.requests == 1  # not retried


def test_unknown_model_names_citeaudit_model(endpoint, tmp_cache):
    endpoint.script(404)
    with pytest.raises(JudgeUnavailableError, match="404 for model 'scripted'.*CITEAUDIT_MODEL"):
        judge_for(endpoint, tmp_cache).judge("claim", "evidence")
