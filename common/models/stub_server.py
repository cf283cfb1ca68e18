"""A local OpenAI-compatible server (stdlib only) for tests and benchmarks, with scriptable failures.

It answers POST .../chat/completions and .../completions. Each request takes the next
behaviour from a queue (then ``default``); the reply text comes from ``answer(prompt)``:

    ok           200 with the answer and token usage
    429:<s>      429 Too Many Requests with ``Retry-After: <s>``
    500, 503     a server error
    400 401 403 404   a client error with an OpenAI-style {"error": {"message"}} body (401 echoes
                 the Authorization header it got, as a careless server might)
    slow:<s>     wait <s> seconds, then answer normally (for read timeouts)
    malformed    200 with a body that is not JSON
    drop         close the connection without answering
    empty        200 with an empty answer
    content_filter, invalid_prompt   400 as a content filter refuses a prompt (Azure's code
                 content_filter, OpenAI's invalid_prompt: ``stub_replies.FILTER_ERRORS``)
    filtered     200 with the reply withheld: no text, finish_reason "content_filter"

``max_context`` (words, like its token counts) makes it refuse longer requests as llama.cpp's
and vLLM's servers do: HTTP 400 with an OpenAI-style error whose code is
``context_length_exceeded``. A reply longer than the request's ``max_tokens`` (or
``max_completion_tokens``) words is cut there with ``finish_reason`` "length". ``GET .../models``
lists the one model ``stub-model``.

It can answer as a reasoning model: ``think_words`` words of thinking come before the answer
(and count against the token limit, so a small limit cuts the reply mid-thought), put where
``thinking`` says, as the servers do: ``reasoning_content`` (DeepSeek, vLLM and llama.cpp with
a reasoning parser), ``reasoning`` (newer vLLM, Ollama), ``inline`` (``<think>...</think>`` in
the text) or ``hidden`` (OpenAI: not returned, only counted). Usage then reports
``completion_tokens_details.reasoning_tokens``, and ``prompt_tokens_details.cached_tokens`` (the
words of every message before the last, as a prefix cache would hold). ``reasoning_model``
makes it refuse ``max_tokens`` and any temperature but 1 as OpenAI's o-series does (HTTP 400,
``unsupported_parameter`` / ``unsupported_value``).

``text_only`` (400 or 500) plays a server of a text-only model: a request with a picture gets
that status with vLLM's (400) or llama.cpp's (500) message. Every chat request's messages are
checked against the API's documented shape first (``stub_replies.check_messages``: 400).

``latency`` makes every completion take that many seconds (a server of fixed speed);
``max_concurrent`` N answers 429 (with ``Retry-After: <retry_after>``, 0 by default) to a
completion that arrives while N are being answered (a rate limit), and ``peak_concurrent``
says how many it answered at once.
It also speaks OpenAI's Batch API (files and batches, ``stub_batch.BatchStore``), answering each
line of a batch as the live route would (``stub_replies.respond``); ``batch_api=False`` leaves
those routes out (a server without them, as vLLM's).

Run it alone: ``python -m common.models.stub_server --port 0`` prints ``listening on
http://127.0.0.1:<port>/v1`` and serves until killed; ``server_process`` does that for the
benchmarks (bench/), which need the server in a process of its own.
"""

import argparse
import collections
import contextlib
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from common.models.stub_batch import BatchStore
from common.models.stub_replies import FILTER_ERRORS, THINKING_STYLES, THOUGHT, respond, withheld

__all__ = ["THINKING_STYLES", "THOUGHT", "BatchStore", "StubServer", "default_answer", "server_process"]


def default_answer(prompt: str) -> str:
    """Return "TRUE": a stand-in model that always gives the same answer."""
    return "TRUE"


class StubServer:
    """An OpenAI-compatible HTTP server on 127.0.0.1 in a background thread; a context manager.

    ``url`` is the base URL (``http://127.0.0.1:<port>/v1``). ``requests`` lists every request
    seen as ``{"path", "headers", "body"}`` and ``connections`` counts them per client connection;
    ``script(*behaviours)`` queues behaviours.
    """

    def __init__(
        self,
        answer: Callable[[str], str] = default_answer,
        default: str = "ok",
        port: int = 0,
        record: bool = True,
        max_context: int | None = None,
        think_words: int = 0,
        thinking: str = "reasoning_content",
        reasoning_model: bool = False,
        latency: float = 0.0,
        max_concurrent: int | None = None,
        retry_after: float = 0.0,
        batches: BatchStore | None = None,
        batch_api: bool = True,
        text_only: int | None = None,
    ):
        if thinking not in THINKING_STYLES:
            raise ValueError(f"thinking must be one of {', '.join(THINKING_STYLES)}, got {thinking!r}")
        self.answer = answer
        self.max_context = max_context
        self.think_words, self.thinking, self.reasoning_model = think_words, thinking, reasoning_model
        self.default = default
        self.text_only = text_only  # None: it takes pictures; 400 or 500: a text-only server's answer
        self.record = record
        self.latency = latency  # seconds every completion takes
        self.max_concurrent = max_concurrent  # more completions at once get a 429 ...
        self.retry_after = retry_after  # ... saying to come back after this many seconds
        # the Batch API's files and batches (None: no such routes, as vLLM's server)
        self.batches = (batches or BatchStore()) if batch_api else None
        self.peak_concurrent = 0  # the most completions it answered at once
        self._busy = 0
        self.requests: list[dict[str, Any]] = []
        self.connections: dict[tuple[str, int], int] = {}  # client (host, port) -> requests on it
        self._queue: collections.deque[str] = collections.deque()
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", port), _handler_for(self))
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="stub-server", daemon=True
        )

    def __enter__(self) -> "StubServer":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start serving in a daemon thread."""
        self._thread.start()

    def serve(self) -> None:
        """Serve in the calling thread until the process ends (the command-line mode)."""
        self._httpd.serve_forever()

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def script(self, *behaviours: str) -> None:
        """Queue ``behaviours`` for the next requests, in order."""
        with self._lock:
            self._queue.extend(behaviours)

    @contextlib.contextmanager
    def in_flight(self) -> Iterator[bool]:
        """Count a completion in flight while the block runs; yield whether it is one too many."""
        with self._lock:
            self._busy += 1
            crowded = self.max_concurrent is not None and self._busy > self.max_concurrent
            if not crowded:
                self.peak_concurrent = max(self.peak_concurrent, self._busy)
        try:
            yield crowded
        finally:
            with self._lock:
                self._busy -= 1

    def next_behaviour(self) -> str:
        """Return the next queued behaviour, or the default."""
        with self._lock:
            return self._queue.popleft() if self._queue else self.default


class _Server(ThreadingHTTPServer):
    """A threading HTTP server with a listen backlog for many clients connecting at once."""

    request_queue_size = 128  # the default 5 resets connections under a burst of new clients


def _handler_for(server: StubServer) -> type[BaseHTTPRequestHandler]:
    """Return a request handler class bound to ``server``."""
    return type("Handler", (_Handler,), {"stub": server})


class _Handler(BaseHTTPRequestHandler):
    """Answers the OpenAI routes for the ``StubServer`` in ``stub`` (set by ``_handler_for``)."""

    stub: StubServer
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
    disable_nagle_algorithm = True  # else headers and body as two packets wait for a delayed ACK

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet."""

    def do_GET(self) -> None:
        """Answer ``GET .../models`` with the one model ``stub-model``, and the Batch API's looks
        at batches and files (``stub_batch``); anything else with a 404."""
        path, batches = self.path.split("?")[0].rstrip("/"), self.stub.batches
        if path.endswith("/models"):
            listed = {"object": "list", "data": [{"id": "stub-model", "object": "model", "owned_by": "stub"}]}
            return self._send(200, json.dumps(listed).encode())
        if batches is not None and path.endswith("/batches"):
            return self._send_json(*batches.listing())
        if batches is not None and "/batches/" in path:
            return self._send_json(
                *batches.look(path.rsplit("/", 1)[1], lambda b, r: respond(self.stub, b, r))
            )
        if batches is not None and path.endswith("/content") and "/files/" in path:
            return self._send(*batches.content(path.split("/files/")[1].split("/")[0]))
        self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}).encode())

    def do_POST(self) -> None:
        """Answer a completion request with the next scripted behaviour (module docstring), or a
        Batch API upload or batch creation."""
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.stub.batches is not None and self.path.rstrip("/").endswith("/files"):
            return self._send_json(*self.stub.batches.upload(self.headers.get("Content-Type", ""), raw))
        body = json.loads(raw or b"{}")
        if self.stub.batches is not None and self.path.rstrip("/").endswith("/batches"):
            return self._send_json(*self.stub.batches.create(body))
        self._record(body)
        with self.stub.in_flight() as crowded:
            if crowded:  # more requests at once than max_concurrent: too many
                return self._error(429, f"{self.stub.retry_after:g}")
            self._complete(body)

    def _complete(self, body: dict[str, Any]) -> None:
        """Answer a completion request after ``latency`` seconds, as the next behaviour says."""
        behaviour, _, arg = self.stub.next_behaviour().partition(":")
        if behaviour == "drop":
            self.close_connection = True
            self.connection.close()
            return
        if behaviour == "slow":
            time.sleep(float(arg))
        elif self.stub.latency:
            time.sleep(self.stub.latency)
        if behaviour == "malformed":
            return self._send(200, b'{"choices": [ {"text": "TRU')
        if behaviour.isdigit():
            return self._error(int(behaviour), arg)
        if behaviour in FILTER_ERRORS:
            return self._send_json(400, {"error": FILTER_ERRORS[behaviour]})
        status, payload = respond(self.stub, body, self.path, empty=behaviour == "empty")
        self._send_json(status, withheld(payload) if behaviour == "filtered" and status == 200 else payload)

    def _record(self, body: dict[str, Any]) -> None:
        """Keep the request (path, headers, body) and count it per client connection, if asked to."""
        if self.stub.record:
            with self.stub._lock:
                self.stub.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                peer = self.client_address
                self.stub.connections[peer] = self.stub.connections.get(peer, 0) + 1

    def _error(self, status: int, retry_after: str) -> None:
        """Send an OpenAI-style error of ``status`` (429 with ``Retry-After``; 401 echoes the key)."""
        message = {
            401: f"Incorrect API key provided: {self.headers.get('Authorization', '')}",
            404: "The model does not exist",
            400: "Bad request: max_tokens is too large",
        }
        payload = {"error": {"message": message.get(status, f"stub error {status}"), "code": status}}
        headers = {"Retry-After": retry_after or "0"} if status == 429 else {}
        self._send(status, json.dumps(payload).encode(), headers)

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        """Send ``payload`` as JSON with ``status``."""
        self._send(status, json.dumps(payload).encode())

    def _send(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        """Send ``data`` as a JSON response with ``status`` and extra ``headers``."""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


@contextlib.contextmanager
def server_process(
    answer: str = "TRUE", latency: float = 0.0, max_concurrent: int = 0, retry_after: float = 0.0
) -> Iterator[str]:
    """Yield the base URL of a stub server running in a process of its own (``main`` below),
    answering ``answer`` to every request after ``latency`` seconds (429 with ``Retry-After:
    <retry_after>`` to those above ``max_concurrent`` at once, when given); kill the process on
    exit.

    A process and not a thread: a benchmark's clients would otherwise share one interpreter
    lock with the server they measure. Raises RuntimeError when the server does not start."""
    command = [sys.executable, "-m", "common.models.stub_server", "--port", "0", "--answer", answer]
    limits = ["--max-concurrent", str(max_concurrent), "--retry-after", str(retry_after)]
    server = subprocess.Popen(
        [*command, "--latency", str(latency), *limits],
        cwd=Path(__file__).resolve().parents[2],  # the project root, where `common` is found
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stdout.readline()
        if not line.startswith("listening on "):
            raise RuntimeError(f"stub server did not start: {line!r}")
        yield line.split()[-1]
    finally:
        server.kill()
        server.wait()
        server.stdout.close()


def main() -> None:
    """Serve until killed, printing the base URL on one line (flushed) for the parent process."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument("--answer", default="TRUE", help="the text every request gets")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds every completion takes")
    parser.add_argument("--max-concurrent", type=int, default=0, help="429 above this many at once (0: none)")
    parser.add_argument("--retry-after", type=float, default=0.0, help="the Retry-After of those 429s (s)")
    parser.add_argument("--think-words", type=int, default=0, help="words of thinking before the answer")
    parser.add_argument("--thinking", default="reasoning_content", choices=THINKING_STYLES, help="where")
    parser.add_argument(
        "--reasoning-model", action="store_true", help="refuse max_tokens and temperature != 1, as OpenAI's"
    )
    args = parser.parse_args()
    server = StubServer(
        answer=lambda prompt: args.answer,
        port=args.port,
        record=False,
        think_words=args.think_words,
        thinking=args.thinking,
        reasoning_model=args.reasoning_model,
        latency=args.latency,
        max_concurrent=args.max_concurrent or None,
        retry_after=args.retry_after,
    )
    print(f"listening on {server.url}", flush=True)
    server.serve()


if __name__ == "__main__":
    main()
