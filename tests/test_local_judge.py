"""Integration: a real llama.cpp server with SmolLM2-135M, real calls through the openai client."""

import shutil

import pytest

from citeaudit import CallCache, Judge, audit_quotes, local_server, model_path
from citeaudit.cache import read_recording, recording_name
from conftest import DATA

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server():
    with local_server("smollm2", timeout=180) as running:
        yield running


def test_model_file_is_verified():
    path = model_path("smollm2")
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 90_000_000


def test_real_call_gives_three_probabilities(server, tmp_cache, rfc7519):
    judge = Judge(model=server.model, base_url=server.base_url, cache=CallCache(tmp_cache, mode="record"))
    assert judge.grammar is True
    result = judge.judge("The aud claim identifies the recipients of a JWT.", rfc7519.sections["4.1.3"].text)
    assert result.error is None, result.error
    assert set(result.probabilities) == {"supports", "contradicts", "says_nothing"}
    assert sum(result.probabilities.values()) == pytest.approx(1.0)
    assert all(0.0 <= p <= 1.0 for p in result.probabilities.values())
    assert result.confidence == max(result.probabilities.values())
    assert result.method == "logprobs" and result.cached is False
    again = judge.judge("The aud claim identifies the recipients of a JWT.", rfc7519.sections["4.1.3"].text)
    assert again.cached is True and again.probabilities == result.probabilities


def test_audit_records_then_replays_without_a_server(server, tmp_cache, tmp_path):
    judge = Judge(model=server.model, base_url=server.base_url, cache=CallCache(tmp_cache, mode="record"))
    live = audit_quotes("rfc7519.txt", DATA / "rfc7519_citations.json", judge=judge).table
    assert live["error"].isna().all() or all(e is None for e in live["error"])
    recording = read_recording(tmp_cache / recording_name(server.model))
    assert len(recording) == 7  # one call per citation that was not fabricated
    assert all(r["response"]["top_logprobs"] for r in recording)

    shutil.rmtree(tmp_cache / "store")  # rebuild the store from the recording alone
    offline = Judge(model=server.model, base_url="http://127.0.0.1:9/v1", cache=CallCache(tmp_cache, mode="replay"))
    replayed = audit_quotes("rfc7519.txt", DATA / "rfc7519_citations.json", judge=offline).table
    assert list(replayed["probabilities"]) == list(live["probabilities"])
    assert all(c is True for c in replayed["cached"] if c is not None)


def test_refresh_calls_the_server_again(server, tmp_cache, rfc7519):
    claim, evidence = "JWTs are compact.", rfc7519.sections["1"].text
    Judge(model=server.model, base_url=server.base_url, cache=CallCache(tmp_cache, mode="record")).judge(claim, evidence)
    fresh = Judge(model=server.model, base_url=server.base_url, cache=CallCache(tmp_cache, mode="refresh"))
    assert fresh.judge(claim, evidence).cached is False
    assert len(read_recording(tmp_cache / recording_name(server.model))) == 2


def test_unreachable_endpoint_is_an_error_row(tmp_cache):
    judge = Judge(model="smollm2-135m-instruct-q4_1", base_url="http://127.0.0.1:9/v1",
                  cache=CallCache(tmp_cache, mode="record"), max_retries=1, timeout=5)
    result = judge.judge("c", "e")
    assert result.relation is None and "Connection" in result.error
