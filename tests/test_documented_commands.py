"""Every command of the README, of the pages of docs/ and of every script's --help examples runs
as shown.

The commands are extracted (the ```bash blocks of README.md and docs/*.md, the documents in
tests/test_docs.py's DOCUMENTS order, then the `$ ...` lines of each script's help) and run one
by one, in that order, in one sandbox copy of the repository
(tests/sandbox.py) with .venv/bin first on PATH (`python` is the project's interpreter, as after
`source .venv/bin/activate`) and DATA_MIRROR=../shared when the offline mirror is there. A few
cannot run here; EXCLUDED says why for each, and a fast test checks every exclusion still
matches a documented command. Those that need a model server on a local port (llama.cpp,
vLLM) run against the stub server listening there.
"""

import ast
import contextlib
import os
import re
from pathlib import Path

import pytest

from common.models.stub_server import StubServer
from common.paths import ROOT
from tests.sandbox import make_sandbox, run
from tests.test_docs import DOCUMENTS
from tests.test_scripts import SCRIPTS

# documented command (a fragment of it) -> why it is not run by the tests
EXCLUDED = {
    "make test ": "the test suite itself (recursion)",
    "WS_ANCHOR=<dir>": "placeholder: a copy of the WorldSense release's own code, not in the repository",
    "--anchor /tmp/worldsense-release": "needs a copy of the WorldSense release's own code",
    "make bench-blocks": "benchmark (minutes) that installs pyperplan into .venv",
    "bench/bench_blocks.py": "benchmark (minutes; needs pyperplan from `make bench-blocks`)",
    "bench/bench_runner.py": "benchmark (minutes of saturated local HTTP traffic)",
    "bench/bench_worldsense.py --runs 3": "benchmark (several cold and warm analyses)",
    "bench/bench_database.py": "benchmark (repeated full builds of the results database)",
    "bench/bench_reader.py": "benchmark (repeated scoring of every canvas results file)",
    "bench/bench_make_all.py": "benchmark (make all on two fresh clones, several times each)",
    "bench/bench_blocks_scoring.py": "benchmark (needs --anchor: a checkout from before the database)",
    "make explore": "a server that runs until Ctrl-C (tests/test_explore_browser.py starts and stops it)",
    "OPENAI_API_KEY=...": "needs an OpenAI key and the network",
    "make asat-paper MODEL=openai-gpt-4-0125-preview": "needs an OpenAI key and the network",
    "-t data/worldsense/test_set --model vllm": "asks all 87,048 WorldSense trials (minutes)",
    "--model configs/models/vllm.yaml --set concurrency=32": "asks all 87,048 WorldSense trials (as above)",
    "--model human": "interactive: a person types the answers",
    "--model my/config.yaml": "placeholder: the reader's own model config",
    "--wheel ~/Downloads/": "placeholder: a wheel the reader downloaded by hand",
    "vllm serve": "starts vLLM on a GPU machine (not this project's command)",
    "llama-server": "starts llama.cpp's server with a vision model (not this project's command)",
    "bench/bench_pictures.py": "benchmark (repeated generation and drawing of a canvas set)",
    "vllm.entrypoints.openai.run_batch": "vLLM's offline engine on a GPU machine (not ours to run)",
    "configs/blocks/mine.yaml": "a new set: run and checked by tests/test_make_sets.py",
    "make blocks/mine": "a new set: run and checked by tests/test_make_sets.py",
    "configs/canvas/mine.yaml": "a new set: run and checked by tests/test_make_sets.py",
    "make canvas/mine": "a new set: run and checked by tests/test_make_sets.py",
    "MODEL=smollm2-135m": "a real model through every suite (20 minutes and the engine's build): "
    "tests/models/test_engine_real_models.py runs it end to end",
    "bench/bench_engine.py": "benchmark (a real model on the engine, several runs)",
    "bench/bench_scale.py": "benchmark (a hundred model runs per suite scored, analysed and reported)",
    "make bench-scale": "benchmark (as bench/bench_scale.py)",
}
# commands that need a model server at a config's local port: run with the stub server listening there
# (common/models/stub_server.py, answering "TRUE" to everything: the commands run, the answers are nonsense)
SERVED = {"MODEL=llamacpp": 8080, "configs/models/llamacpp.yaml": 8080, "configs/models/vllm.yaml": 8000}
# commands that need the four other WorldSense test sets (network only; not in the offline mirror)
NEEDS_OTHER_TESTS = ("other_tests/ood-size", "make analyse-worldsense-other")


def logical_lines(text: str) -> list[str]:
    """Return the commands of a shell snippet: continuation lines joined, blank lines dropped."""
    commands, current = [], ""
    for line in text.splitlines():
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        current += line
        if current.strip():
            commands.append(" ".join(current.split()))
        current = ""
    return commands


def document_commands() -> list[tuple[str, str]]:
    """Return (document, command) for every command of the ```bash blocks of README.md and
    docs/*.md, the documents in DOCUMENTS order, each document's commands in order."""
    return [
        (document, command)
        for document in DOCUMENTS
        for block in re.findall(r"```bash\n(.*?)```", (ROOT / document).read_text(encoding="utf-8"), re.S)
        for command in logical_lines(block)
    ]


def help_commands() -> list[tuple[str, str]]:
    """Return (script, command) for every `$ ...` example of every script's --help, in order
    (read from the module docstring, which is the help's description: no process started)."""
    found = []
    for script in SCRIPTS:
        doc = ast.get_docstring(ast.parse((ROOT / script).read_text(encoding="utf-8"))) or ""
        examples, current = [], None
        for line in doc.splitlines():
            if line.startswith("$ "):
                current = [line[2:]]
                examples.append(current)
            elif current is not None and current[-1].rstrip().endswith("\\"):
                current.append(line)
            else:
                current = None
        assert examples, f"{script}: no `$ python {script} ...` example in --help"
        found += [(script, command) for example in examples for command in logical_lines("\n".join(example))]
    return found


COMMANDS = document_commands() + help_commands()


def exclusion(command: str) -> str | None:
    """Return why ``command`` is not run here, or None."""
    for fragment, reason in EXCLUDED.items():
        if fragment in command + " ":
            return reason
    return None


def test_commands_are_found_and_every_exclusion_still_matches():
    assert len(COMMANDS) > 40
    for fragment in EXCLUDED:
        assert any(fragment in command + " " for _, command in COMMANDS), f"stale exclusion: {fragment}"
    assert not [c for _, c in COMMANDS if "data/blocks/cogsci/" in c]  # Make's set is cogsci_problems
    run_here = [c for _, c in COMMANDS if exclusion(c) is None]
    assert len(run_here) >= 0.6 * len(COMMANDS)  # exclusions stay the exception


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("documented")
    repo = make_sandbox(base)
    mirror = Path(os.environ.get("DATA_MIRROR") or ROOT.parent / "shared")
    if not mirror.is_absolute():
        mirror = ROOT / mirror
    if (mirror / "worldsense").is_dir():
        (base / "shared").symlink_to(mirror.resolve(), target_is_directory=True)  # ../shared of the copy
    return repo


@pytest.mark.slow
@pytest.mark.parametrize("where, command", COMMANDS, ids=[f"{w}: {c[:70]}" for w, c in COMMANDS])
def test_documented_command_runs_as_shown(sandbox, where, command):
    reason = exclusion(command)
    if reason:
        pytest.skip(reason)
    other_tests = sandbox / "data/worldsense/.fetched-other"
    if any(f in command for f in NEEDS_OTHER_TESTS) and not other_tests.exists():
        pytest.skip("needs the other WorldSense test sets (network once; not in the offline mirror)")
    mirror = "export DATA_MIRROR=../shared; " if (sandbox.parent / "shared").exists() else ""
    venv_bin = os.fspath(sandbox / ".venv" / "bin")
    port = next((port for fragment, port in SERVED.items() if fragment in command), None)
    with contextlib.ExitStack() as stack:
        if port is not None:
            try:
                stack.enter_context(StubServer(port=port, record=False))
            except OSError as exc:
                pytest.skip(f"needs a model server on port {port}, which is taken: {exc}")
        result = run(sandbox, f'export PATH="{venv_bin}:$PATH"; {mirror}{command}', timeout=1800)
    assert result.returncode == 0, f"{where}: {command}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
