"""A scripted judge for tests, tools and benchmarks: one fake OpenAI-compatible endpoint, through
the judge's public seams.

`Endpoint` is the script and what it was asked. It answers each chat-completions request with
its next step, or, with no script, by the claim (`answer_by_claim`). It is served two ways, with
the same answers and the same record of requests:

- over HTTP, by `scripted_endpoint()`: a real server on a free port of 127.0.0.1 (keep-alive,
  threaded), for whatever goes over a socket (timeouts, `Retry-After`, a refused connection, the
  command line in a subprocess, Dask workers): point `Judge(base_url=endpoint.url)` or
  `OPENAI_BASE_URL` at it;
- in process, by `Endpoint.client()`: an `httpx2.Client` on a `MockTransport` (httpx2 is the HTTP
  library the openai client uses), handed to `Judge(http_client=...)`: no socket, no thread.

A step is an int (that HTTP status, with an error body; a status a client retries, 408, 409, 429
or 5xx, also says `retry-after-ms: 1`, so the retry comes at once instead of after the client's
own backoff of a second or so: a `Reply` without headers gets that backoff), a dict (a 200 JSON body, most often
`completion(...)`), a `Reply` (status, body as a dict or raw bytes, headers), `HANG` or
`DRIP_HEAD`/`DRIP_BODY` (over HTTP only), an exception (raised by the transport, in process
only), or a callable that takes the request's JSON body and returns a step. Steps are used one
per request; the last one repeats.

The answers are scripted, never a model's: use them for the judge's mechanics (retries, parsing,
concurrency, recording and replay), and the local llama.cpp server for anything about what a model
says. Nothing in the package imports this module.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias

if TYPE_CHECKING:
    import httpx2

__all__ = ["DRIP_BODY", "DRIP_HEAD", "HANG", "Asked", "Endpoint", "Reply", "answer_by_claim", "completion",
           "scripted_endpoint"]

HANG = "hang"  # over HTTP: read the request, then answer nothing until the server stops
DRIP_HEAD, DRIP_BODY = "drip-head", "drip-body"  # over HTTP: send a 200 one byte every 0.1 s (its head, or its body)
DRIP_SECONDS = 0.1
RETRY_AT_ONCE = {"retry-after-ms": "1"}  # the headers of an int step that a client retries
OFFLINE_URL = "http://scripted.invalid/v1"  # the base URL of an endpoint served in process (never resolved)


def completion(content: str = "A", top: Iterable[tuple[str, float | None]] | None = None, *,
               logprobs: bool = True, model: str = "scripted") -> dict[str, Any]:
    """A chat-completions body whose answer is the one token `content`.

    `top` is that token's `top_logprobs` as (token, logprob) pairs, the chosen token's own entry
    being the first (a logprob of None is sent as JSON null). By default `content` at -0.1 and one
    other answer at -2.5: the other of Yes/No, else C (A for C). `logprobs=False` is an endpoint
    that returns none (`"logprobs": null`), as a sampled answer comes back.

    >>> body = completion("Yes")
    >>> [(t["token"], t["logprob"]) for t in body["choices"][0]["logprobs"]["content"][0]["top_logprobs"]]
    [('Yes', -0.1), ('No', -2.5)]
    >>> completion("B", logprobs=False)["choices"][0]["logprobs"] is None
    True
    """
    if top is None:
        other = {"Yes": "No", "No": "Yes", "C": "A"}.get(content, "C")
        top = [(content, -0.1), (other, -2.5)]
    entries = [{"token": token, "logprob": logprob, "bytes": None} for token, logprob in top]
    choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": content},
                              "finish_reason": "length", "logprobs": None}
    if logprobs:
        choice["logprobs"] = {"content": [{**entries[0], "top_logprobs": entries}]}
    return {"id": "scripted", "object": "chat.completion", "created": 0, "model": model, "choices": [choice],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}


@dataclass
class Reply:
    """One scripted HTTP answer: a status, a body (a dict is sent as JSON, bytes as they are; by
    default an OpenAI-shaped error body) and extra headers."""

    status: int = 200
    body: dict[str, Any] | bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def all_headers(self) -> dict[str, str]:
        """`headers`, with a JSON Content-Type unless they name one."""
        named = any(name.lower() == "content-type" for name in self.headers)
        return self.headers if named else {"Content-Type": "application/json", **self.headers}

    def data(self) -> bytes:
        body = self.body if self.body is not None else {
            "error": {"message": f"scripted {self.status}", "type": "scripted"}}
        return body if isinstance(body, bytes) else json.dumps(body).encode()


Step: TypeAlias = int | dict | Reply | str | BaseException | Callable[[dict], Any]


def answer_by_claim(body: dict[str, Any], logprobs: bool = True) -> dict[str, Any] | Reply:
    """The default step: the answer is chosen by the last message (the claim is in it). One holding
    `answer=B` (or C) gets that letter, any other A; a yes/no question (a message ending "Answer
    Yes or No.") is answered Yes for A and No otherwise; one holding `status=N` gets HTTP status N.

    >>> def ask(text): return {"messages": [{"role": "user", "content": text}]}
    >>> answer_by_claim(ask("claim answer=B"))["choices"][0]["message"]["content"]
    'B'
    >>> answer_by_claim(ask("claim answer=C. Answer Yes or No."))["choices"][0]["message"]["content"]
    'No'
    >>> answer_by_claim(ask("claim status=503")).status
    503
    """
    user = str(body["messages"][-1]["content"])
    status = re.search(r"status=(\d{3})", user)
    if status:
        return Reply(int(status.group(1)))
    letter = re.search(r"answer=([ABC])", user)
    answer = letter.group(1) if letter else "A"
    if user.rstrip().endswith("Answer Yes or No."):
        answer = "Yes" if answer == "A" else "No"
    return completion(answer, logprobs=logprobs)


class Asked(NamedTuple):
    """One request the endpoint received: its method, path, JSON body and when it came (monotonic)."""

    method: str
    path: str
    body: dict[str, Any]
    at: float


class Endpoint:
    """A scripted OpenAI-compatible chat endpoint: `steps` (see the module docstring; none: answer
    by the claim), an optional `delay` in seconds before each answer, and what it was asked
    (`asked`, `requests`, `most_in_flight`). `url` is its base URL: a socket's once
    `scripted_endpoint` serves it, else one that is never resolved (for `client()`)."""

    def __init__(self, *steps: Step, delay: float = 0.0) -> None:
        self.steps: list[Step] = list(steps) or [answer_by_claim]
        self.delay = delay
        self.url = OFFLINE_URL
        self.asked: list[Asked] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.lock = threading.Lock()
        self.released = threading.Event()  # set when the server stops: a hanging or dripping answer ends

    @property
    def requests(self) -> int:
        """How many requests came."""
        return len(self.asked)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """The JSON body of every request, in the order they came."""
        return [asked.body for asked in self.asked]

    def script(self, *steps: Step) -> None:
        """Replace the steps still to come."""
        with self.lock:
            self.steps = list(steps)

    def answer(self, method: str, path: str, body: dict[str, Any]) -> Reply | str | BaseException:
        """Record a request, wait `delay`, and return its step as a `Reply` (or HANG, a drip, an exception)."""
        with self.lock:
            self.asked.append(Asked(method, path, body, time.monotonic()))
            step = self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if self.delay:
                time.sleep(self.delay)
            while callable(step) and not isinstance(step, (BaseException, type)):
                step = step(body)
            if isinstance(step, int):
                return Reply(step, headers=RETRY_AT_ONCE if step in (408, 409, 429) or step >= 500 else {})
            if isinstance(step, dict):
                return Reply(200, step)
            if isinstance(step, (Reply, str, BaseException)):
                return step
            raise TypeError(f"not a scripted step: {step!r}")
        finally:
            with self.lock:
                self.in_flight -= 1

    def client(self) -> httpx2.Client:
        """An `httpx2.Client` that answers in process, for `Judge(http_client=...)` (no socket)."""
        import httpx2

        def handle(request: httpx2.Request) -> httpx2.Response:
            reply = self.answer(request.method, request.url.path, json.loads(request.content))
            if isinstance(reply, BaseException):
                raise reply
            if isinstance(reply, str):
                raise ValueError(f"{reply!r} needs a socket: serve the endpoint with scripted_endpoint()")
            return httpx2.Response(reply.status, content=reply.data(), headers=reply.all_headers())

        return httpx2.Client(transport=httpx2.MockTransport(handle))


class _Server(ThreadingHTTPServer):
    # room in the listen backlog for every connection a test opens at once (16 in test_concurrency):
    # with socketserver's 5, a burst of connects on a loaded machine was now and then reset (about 1 run in 30)
    request_queue_size = 128
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that went away before its answer was sent (a killed or timed-out run) is what
        fault tests make happen: not worth a traceback on stderr. Anything else is reported."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


def _handler(endpoint: Endpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as a real server
        # TCP_NODELAY: with Nagle the body waited for the client's delayed ACK of the headers, ~40 ms a request
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            reply = endpoint.answer("POST", self.path, body)
            if reply == HANG:
                endpoint.released.wait(10)
                self.close_connection = True
            elif reply in (DRIP_HEAD, DRIP_BODY):
                self._drip(reply)
            elif isinstance(reply, Reply):
                data = reply.data()
                self.send_response(reply.status)
                self.send_header("Content-Length", str(len(data)))
                for name, value in reply.all_headers().items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            else:
                raise ValueError(f"{reply!r} cannot be sent over HTTP")

        def _drip(self, how: object) -> None:
            """A 200 whose every byte comes well within any per-read timeout, the whole taking long."""
            self.close_connection = True
            data = json.dumps(completion("A")).encode()
            head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(data)}\r\n\r\n").encode()
            if how == DRIP_BODY:
                self.wfile.write(head)
                self.wfile.flush()
            for byte in (head + data if how == DRIP_HEAD else data):
                if endpoint.released.wait(DRIP_SECONDS):
                    return
                try:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                except OSError:  # the client gave up
                    return

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@contextmanager
def scripted_endpoint(*steps: Step, delay: float = 0.0, endpoint: Endpoint | None = None,
                      host: str = "127.0.0.1") -> Iterator[Endpoint]:
    """Serve an `Endpoint` (given, or made of `steps` and `delay`) over HTTP on a free port of
    `host` (an address of this machine, default 127.0.0.1) until the block ends; `endpoint.url` is
    its base URL (`http://HOST:PORT/v1`)."""
    endpoint = endpoint or Endpoint(*steps, delay=delay)
    server = _Server((host, 0), _handler(endpoint))
    # a short poll: shutdown() waits for the serving loop's next poll (0.5 s by default)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    endpoint.url = f"http://{host}:{server.server_address[1]}/v1"
    try:
        yield endpoint
    finally:
        endpoint.released.set()
        server.shutdown()
        server.server_close()
