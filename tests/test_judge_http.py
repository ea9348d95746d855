"""The judge over real HTTP through the openai client, against a scripted endpoint on 127.0.0.1:
transient faults are retried, and an endpoint without log-probabilities gets the sampling fallback."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from citeaudit import CallCache, Judge


def completion(content, logprobs=True):
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "length",
              "logprobs": None}
    if logprobs:
        top = [{"token": content, "logprob": -0.2, "bytes": None}, {"token": "C", "logprob": -1.9, "bytes": None}]
        choice["logprobs"] = {"content": [{"token": content, "logprob": -0.2, "bytes": None, "top_logprobs": top}]}
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "scripted", "choices": [choice],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}


@pytest.fixture
def endpoint():
    """Answers POST /v1/chat/completions from a script: an int is an HTTP error, a dict a body."""
    state = {"script": [], "requests": []}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            state["requests"].append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            step = state["script"].pop(0) if len(state["script"]) > 1 else state["script"][0]
            status, body = (step, {"error": {"message": "busy"}}) if isinstance(step, int) else (200, step)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    state["url"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
    yield state
    server.shutdown()


def judge_for(endpoint, tmp_cache, **kw):
    return Judge(model="scripted", base_url=endpoint["url"], api_key="k", grammar=False,
                 cache=CallCache(tmp_cache, mode="record"), **kw)


def test_transient_faults_are_retried(endpoint, tmp_cache):
    endpoint["script"] = [503, 429, completion("B")]
    result = judge_for(endpoint, tmp_cache, max_retries=3).judge("claim", "evidence")
    assert result.error is None and result.relation == "contradicts"
    assert len(endpoint["requests"]) == 3
    sent = endpoint["requests"][-1]
    assert (sent["max_tokens"], sent["logprobs"], sent["top_logprobs"]) == (1, True, 20)


def test_persistent_failure_is_an_error_row(endpoint, tmp_cache):
    endpoint["script"] = [500]
    result = judge_for(endpoint, tmp_cache, max_retries=1).judge("claim", "evidence")
    assert result.relation is None and "InternalServerError" in result.error
    assert len(endpoint["requests"]) == 2  # the first try and one retry


def test_no_logprobs_falls_back_to_sampling(endpoint, tmp_cache):
    endpoint["script"] = [completion("A", logprobs=False), completion("A", False), completion("C", False),
                          completion("A", False), completion("B", False), completion("A", False)]
    result = judge_for(endpoint, tmp_cache, samples=5).judge("claim", "evidence")
    assert result.method == "sampling (n=5)"
    assert result.probabilities == {"supports": 0.6, "contradicts": 0.2, "says_nothing": 0.2}
    assert [r.get("seed") for r in endpoint["requests"][1:]] == [0, 1, 2, 3, 4]
