"""Start llama.cpp's OpenAI-compatible server (llama-cpp-python) on the tiny GGUF the tests write.

Shared by the engine tests (`make test-engine`); the model has random weights, so its answers are
nonsense: the point is that every request, refusal, parsing and reporting path meets a real server.
"""

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests
from tiny_gguf import write_tiny_llama

from common.models.engine import free_port
from tests.timing import timeout, wait_for


@contextmanager
def llama_server(directory: Path, n_ctx: int) -> Iterator[tuple[str, Path]]:
    """Yield (base URL, server log) of a llama.cpp server on a tiny model with an ``n_ctx`` context;
    skip when llama-cpp-python is not installed (`make test-engine` installs it)."""
    pytest.importorskip("llama_cpp.server", reason="needs llama-cpp-python[server]: make test-engine")
    pytest.importorskip("gguf", reason="needs gguf: make test-engine")
    model = write_tiny_llama(directory / "tiny-llama.gguf")
    port, log_path = free_port(), directory / "server.log"
    with open(log_path, "w") as log:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(model),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_threads",
                "1",
                "--n_threads_batch",
                "1",
                "--n_ctx",
                str(n_ctx),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}/v1"
        try:
            wait_for(lambda: _answers(url, server, log_path), 120, "the llama.cpp server to come up")
            yield url, log_path
        finally:
            server.terminate()
            server.wait(timeout=timeout(30))


def _answers(url: str, server: subprocess.Popen, log_path: Path) -> bool:
    """Return whether the server at ``url`` lists its models; fail at once (with its log) when
    its process has ended."""
    assert server.poll() is None, log_path.read_text()[-2000:]
    try:
        return requests.get(url + "/models", timeout=timeout(2)).ok
    except requests.ConnectionError:
        return False
