"""A tiny OpenAI-compatible chat endpoint on 127.0.0.1 that answers after a fixed delay, with
log-probabilities, for the concurrency and batch-recording tests (the `scripted` fixture in
conftest.py) and the judge and batch benchmarks (tools/bench_judge.py, tools/bench_batch.py).

The answer letter is chosen by the claim: a claim holding `answer=B` (or C) gets that letter,
any other gets A; a yes/no question (the `yesno` and `panel` strategies) is answered Yes for A and
No otherwise. A claim holding `status=N` gets HTTP status N instead (an error body).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def completion(letter: str, other: str | None = None) -> dict:
    other = other or ("C" if letter != "C" else "A")
    top = [{"token": letter, "logprob": -0.1, "bytes": None}, {"token": other, "logprob": -2.5, "bytes": None}]
    choice = {"index": 0, "message": {"role": "assistant", "content": letter}, "finish_reason": "length",
              "logprobs": {"content": [{"token": letter, "logprob": -0.1, "bytes": None, "top_logprobs": top}]}}
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "scripted", "choices": [choice],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}


class _Server(ThreadingHTTPServer):
    # room in the listen backlog for every connection a test opens at once (16 in test_concurrency):
    # with socketserver's 5, a burst of connects on a loaded machine was now and then reset (about 1 run in 30)
    request_queue_size = 128
    daemon_threads = True


@dataclass
class Endpoint:
    url: str
    delay: float
    requests: int = 0
    in_flight: int = 0
    most_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@contextmanager
def scripted_endpoint(delay: float = 0.2) -> Iterator[Endpoint]:
    """Serve on a free port of 127.0.0.1 until the block ends; the endpoint counts requests."""
    state = Endpoint("", delay)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as a real server
        # TCP_NODELAY: with Nagle the body waited for the client's delayed ACK of the headers, ~40 ms a request
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with state.lock:
                state.requests += 1
                state.in_flight += 1
                state.most_in_flight = max(state.most_in_flight, state.in_flight)
            try:
                time.sleep(state.delay)
                user = body["messages"][-1]["content"]
                status = re.search(r"status=(\d{3})", user)
                letter = re.search(r"answer=([ABC])", user)
                code = int(status.group(1)) if status else 200
                answer = letter.group(1) if letter else "A"
                if user.rstrip().endswith("Answer Yes or No."):
                    reply = completion("Yes", "No") if answer == "A" else completion("No", "Yes")
                else:
                    reply = completion(answer)
                reply = reply if code == 200 else {
                    "error": {"message": f"scripted {code}", "type": "scripted"}}
                data = json.dumps(reply).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            finally:
                with state.lock:
                    state.in_flight -= 1

        def log_message(self, *args: object) -> None:
            pass

    server = _Server(("127.0.0.1", 0), Handler)
    # a short poll: shutdown() waits for the serving loop's next poll (0.5 s by default)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
