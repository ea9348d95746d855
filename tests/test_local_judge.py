"""Integration: a real llama.cpp server with SmolLM2-135M, real calls through the openai client."""

import json
import shutil
import signal
import subprocess
import sys
from typing import Any

import pytest
from conftest import DATA, SERVER_THREADS

from citeaudit import CallCache, Judge, audit_quotes
from citeaudit.errors import JudgeUnavailableError, LocalModelError
from citeaudit.judge import local_server, model_path
from citeaudit.judge.cache import read_recording, recording_name
from citeaudit.judge.localmodel import LocalServer

pytestmark = pytest.mark.integration


@pytest.fixture
def server(smollm2_server):
    """The run's shared server (conftest.py)."""
    return smollm2_server


def test_model_file_is_verified():
    said = []
    path = model_path("smollm2", progress=said.append)
    assert len(said) == 1 and said[0].startswith("checking the SHA-256 of ") and str(path) in said[0]
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 90_000_000


CALLS = {"choice": 1, "examples": 1, "yesno": 2, "panel": 3, "panel+examples": 4}  # calls per judged citation


@pytest.mark.parametrize("strategy", list(CALLS))
def test_real_call_gives_three_probabilities(server, tmp_cache, rfc7519, strategy):
    judge = Judge(model=server.model, base_url=server.base_url, cache=CallCache(tmp_cache, mode="record"),
                  strategy=strategy)
    assert judge.grammar is True
    result = judge.judge("The aud claim identifies the recipients of a JWT.", rfc7519.sections["4.1.3"].text)
    assert result.error is None, result.error
    assert set(result.probabilities) == {"supports", "contradicts", "says_nothing"}
    assert sum(result.probabilities.values()) == pytest.approx(1.0)
    assert all(0.0 <= p <= 1.0 for p in result.probabilities.values())
    p_supports = result.probabilities["supports"]
    assert result.confidence == max(p_supports, 1 - p_supports)  # pass or fail
    assert result.method == "logprobs" and result.cached is False
    assert len(read_recording(tmp_cache / recording_name(server.model))) == CALLS[strategy]
    again = judge.judge("The aud claim identifies the recipients of a JWT.", rfc7519.sections["4.1.3"].text)
    assert again.cached is True and again.probabilities == result.probabilities


def test_audit_records_then_replays_without_a_server(server, tmp_cache, tmp_path):
    # one request per citation (choice): each strategy's requests to this server, recorded and
    # replayed, are test_real_call_gives_three_probabilities'; this test is about a whole audit, of
    # the field note (short sections: the worked example's RFC sections took 80-100 s on 2 cores)
    judge = Judge(model=server.model, base_url=server.base_url, cache=CallCache(tmp_cache, mode="record"),
                  strategy="choice")
    citations = DATA / "formats" / "field-note_citations.json"
    live = audit_quotes(DATA / "formats" / "field-note.txt", citations, judge=judge).table
    assert live["error"].isna().all() or all(e is None for e in live["error"])
    recording = read_recording(tmp_cache / recording_name(server.model))
    judged = sum(c["expected"] != "fabricated" for c in json.loads(citations.read_text(encoding="utf-8")))
    assert judged == 4 and len(recording) == judged * CALLS[judge.strategy]  # per citation not fabricated
    assert all(r["response"]["top_logprobs"] for r in recording)

    shutil.rmtree(tmp_cache / "store")  # rebuild the store from the recording alone
    offline = Judge(model=server.model, base_url="http://127.0.0.1:9/v1", cache=CallCache(tmp_cache, mode="replay"),
                    strategy="choice")
    replayed = audit_quotes(DATA / "formats" / "field-note.txt", citations, judge=offline).table
    assert list(replayed["probabilities"]) == list(live["probabilities"])
    assert all(c is True for c in replayed["cached"] if c is not None)


def test_refresh_calls_the_server_again(server, tmp_cache, rfc7519):
    claim, evidence = "JWTs are compact.", rfc7519.sections["1"].text
    Judge(model=server.model, base_url=server.base_url, cache=CallCache(tmp_cache, mode="record")).judge(claim, evidence)
    fresh = Judge(model=server.model, base_url=server.base_url, cache=CallCache(tmp_cache, mode="refresh"))
    assert fresh.judge(claim, evidence).cached is False
    assert len(read_recording(tmp_cache / recording_name(server.model))) == 2 * CALLS[fresh.strategy]


def test_unreachable_endpoint_stops_the_run(tmp_cache):
    judge = Judge(model="smollm2-135m-instruct-q4_1", base_url="http://127.0.0.1:9/v1",
                  cache=CallCache(tmp_cache, mode="record"), max_retries=1, timeout=5)
    with pytest.raises(JudgeUnavailableError, match="cannot connect to http://127.0.0.1:9/v1.*OPENAI_BASE_URL"):
        judge.judge("c", "e")


def test_server_loads_the_model_without_extra_buffer_types(server):
    log = server.log.read_text(errors="replace")
    assert "citeaudit.judge.llamaserver: use_extra_bufts=false" in log
    # llama.cpp's loading report lists one line per buffer the weights were put in; with extra
    # buffer types off, none is a repacked (CPU_REPACK) or AMX one. The CPU's feature list
    # (`AMX_INT8 = 1` in the system-info line) says what the CPU has, not what the loader used.
    buffers = [line for line in log.splitlines() if "load_tensors:" in line and "buffer size" in line]
    assert buffers, "llama.cpp's loading report is missing from the log"
    assert not [line for line in buffers if "CPU_REPACK" in line or "AMX" in line], buffers


def _ask(server: LocalServer, messages: list, **params: Any) -> dict:
    from openai import OpenAI

    client = OpenAI(base_url=server.base_url, api_key="local", max_retries=0)
    return client.chat.completions.create(model=server.model, messages=messages, **params).model_dump()


def test_one_token_logprobs_are_the_stock_servers_from_one_row(server, rfc7519):
    """The server runs without llama-cpp-python's `logits_all` (`one_token_logprobs`): the judge's
    requests get the log-probabilities the stock server (`logits_all=True`) gives, token for token."""
    from citeaudit.judge.judge import GRAMMAR, YESNO_GRAMMAR
    from citeaudit.judge.prompts import build_messages

    assert "--logits_all false" in " ".join(server.process.args)
    asked = [
        (build_messages("The aud claim identifies the recipients of a JWT.", rfc7519.sections["4.1.3"].text,
                        "section 4.1.3 of rfc7519.txt"), GRAMMAR),
        (build_messages("JWTs are large.", rfc7519.sections["1"].text, "section 1 of rfc7519.txt", "true"), YESNO_GRAMMAR),
        (build_messages("JWTs are large.", rfc7519.sections["1"].text, "section 1 of rfc7519.txt", "false"), None),
    ]
    params = {"temperature": 0.0, "max_tokens": 1, "logprobs": True, "top_logprobs": 20}
    with local_server("smollm2", timeout=180, logits_all=True, n_threads=SERVER_THREADS) as stock:
        expected = [_ask(stock, m, **params, extra_body={"grammar": g} if g else None) for m, g in asked]
    got = [_ask(server, m, **params, extra_body={"grammar": g} if g else None) for m, g in asked]
    for mine, theirs in zip(got, expected, strict=True):
        a, b = mine["choices"][0], theirs["choices"][0]
        assert a["message"]["content"] == b["message"]["content"]
        [ours], [stock_token] = a["logprobs"]["content"], b["logprobs"]["content"]
        assert ours["token"] == stock_token["token"]
        assert ours["logprob"] == pytest.approx(stock_token["logprob"], abs=1e-3)
        assert [t["token"] for t in ours["top_logprobs"]] == [t["token"] for t in stock_token["top_logprobs"]]
        assert [t["logprob"] for t in ours["top_logprobs"]] == pytest.approx(
            [t["logprob"] for t in stock_token["top_logprobs"]], abs=1e-3)


def test_one_token_server_refuses_logprobs_of_longer_answers_and_still_samples(server):
    from openai import InternalServerError

    messages = [{"role": "user", "content": "Say yes."}]
    with pytest.raises(InternalServerError, match="only for one-token answers"):
        _ask(server, messages, max_tokens=2, logprobs=True, top_logprobs=5)
    sampled = _ask(server, messages, max_tokens=3, temperature=1.0, seed=7)  # no log-probabilities asked
    assert sampled["choices"][0]["logprobs"] is None and sampled["choices"][0]["message"]["content"] is not None


def test_disable_extra_bufts_clears_the_model_default(monkeypatch):
    import llama_cpp.llama_cpp as lib

    from citeaudit.judge.llamaserver import disable_extra_bufts

    assert lib.llama_model_default_params().use_extra_bufts is True  # llama.cpp's default
    monkeypatch.setattr(lib, "llama_model_default_params", lib.llama_model_default_params)  # undone after
    disable_extra_bufts()
    disable_extra_bufts()  # wrapping twice changes nothing
    assert lib.llama_model_default_params().use_extra_bufts is False


def test_killed_server_is_reported_with_its_log_tail(tmp_cache):
    with (pytest.raises(LocalModelError, match="died: it was killed by signal SIGKILL") as raised,
          local_server("smollm2", timeout=180, n_threads=SERVER_THREADS) as running):
        # a generous timeout: the first call on a loaded 2-core machine can take tens of seconds
        judge = Judge(model=running.model, base_url=running.base_url, max_retries=1, timeout=120,
                      cache=CallCache(tmp_cache, mode="record"))
        assert judge.judge("JWTs are compact.", "A JWT is a compact claims representation.").error is None
        running.process.send_signal(signal.SIGKILL)
        running.process.wait(timeout=10)
        judge.judge("The aud claim is optional.", "Use of this claim is OPTIONAL.")  # nobody listens now
    message = str(raised.value)
    assert isinstance(raised.value.__cause__, JudgeUnavailableError)  # what the block raised
    tail = running.log.read_text(errors="replace").splitlines()[-20:]
    assert str(running.log) in message and "\n".join(tail) in message  # the log is kept and quoted
    assert "POST /v1/chat/completions" in message  # the first call's line, near the end of the log
    running.log.unlink()  # kept by stop_server because the server had died


def test_check_passes_while_alive_and_quotes_the_log_after_exit(tmp_path):
    log = tmp_path / "server.log"
    script = "import sys, time; print('\\n'.join(f'line {i}' for i in range(30)), flush=True); " \
             "sys.stdin.readline(); sys.exit(3)"
    with open(log, "wb") as out:
        process = subprocess.Popen([sys.executable, "-c", script], stdout=out, stdin=subprocess.PIPE)
    server = LocalServer("http://127.0.0.1:9/v1", "m", process, log)
    server.check()  # still running
    process.communicate(b"\n", timeout=10)
    with pytest.raises(LocalModelError, match="exited with code 3") as raised:
        server.check()
    assert "line 29" in str(raised.value) and "line 10\n" in str(raised.value) and "line 9\n" not in str(raised.value)


def test_a_failing_block_with_a_live_server_keeps_its_error_and_the_temporary_log_goes():
    with (pytest.raises(ValueError, match="the body's own error"),
          local_server("smollm2", timeout=180, n_threads=SERVER_THREADS) as running):
        assert running.temporary_log and running.log.is_file()
        raise ValueError("the body's own error")
    assert not running.log.exists()


def test_record_writes_the_user_cache_and_only_shipped_writes_the_shipped_recording(tmp_path, monkeypatch):
    """`citeaudit record` appends to the user cache (cache/local/); `--shipped` (the Makefile's
    targets) to the shipped recording, asking again what only the user cache holds."""
    shipped = tmp_path / "cache"
    monkeypatch.setenv("CITEAUDIT_CACHE_DIR", str(shipped))
    monkeypatch.setenv("CITEAUDIT_STRATEGY", "choice")
    monkeypatch.setenv("CITEAUDIT_TIMEOUT", "300")
    inputs = ["--document", str(DATA / "lines" / "field_note.txt"), "--answer", str(DATA / "lines" / "good_answer.txt")]
    name = recording_name("smollm2-135m-instruct-q4_1")
    for extra, written in (([], shipped / "local" / name), (["--shipped"], shipped / name)):
        result = subprocess.run([sys.executable, "-m", "citeaudit.surfaces.cli", "record", "--model", "smollm2", *extra, *inputs],
                                capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, result.stderr
        assert f"2 citations newly judged by smollm2-135m-instruct-q4_1 (every answer asked: one per question of " \
            f"the strategy), appended to {written.parent}" in result.stdout
        assert len(read_recording(written)) == 2
    assert sorted(p.relative_to(shipped).as_posix() for p in shipped.rglob("*.jsonl")) == [f"local/{name}", name]
