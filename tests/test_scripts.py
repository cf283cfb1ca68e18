"""Every script: --help works, and user mistakes exit 2 with one line and no traceback."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from common.jsonl import write_jsonl
from common.paths import ROOT
from tests.conftest import run_script, write_unreachable_source
from tests.sandbox import copied_model, make_sandbox, run, shipped
from tests.test_cli_help import check_help_defaults
from tests.timing import timeout

# the pipeline's scripts, then the benchmarks (bench/bench_*.py; bench/ also holds their helpers)
SCRIPTS = [
    p.relative_to(ROOT).as_posix()
    for p in shipped(ROOT / "scripts", "[!_]*.py") + sorted((ROOT / "bench").glob("bench_*.py"))
]


@pytest.mark.parametrize("script", SCRIPTS)
def test_help(script):
    result = run_script(script, "--help")
    assert result.returncode == 0, result.stderr
    assert "usage:" in result.stdout and f"$ python {script}" in result.stdout  # docstring examples
    check_help_defaults(result.stdout)  # each useful default once, none on required options


def assert_user_error(result, *fragments):
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr


def test_random_model_missing_test_set(tmp_path):
    result = run_script("scripts/test_random_model.py", "-t", str(tmp_path / "nowhere"))
    assert_user_error(result, "error: no set", "nowhere")
    assert len(result.stderr.strip().splitlines()) == 1


def test_random_model_bad_argument():
    result = run_script("scripts/test_random_model.py", "-t", "x", "--seed", "abc")
    assert_user_error(result, "invalid int value")


def test_fetch_data_unknown_group():
    result = run_script("scripts/fetch_data.py", "configs/data/worldsense.yaml", "--group", "nope")
    assert_user_error(result, "unknown group(s) nope (known: test_set, training_set, other_tests)")


def test_fetch_data_bad_config_names_line(tmp_path):
    bad = tmp_path / "source.yaml"
    bad.write_text("name: x\nurl: http://127.0.0.1:9\nmirorr: x\n")
    result = run_script("scripts/fetch_data.py", str(bad))
    assert_user_error(result, "source.yaml:3: unknown config key: mirorr")


def test_fetch_data_offline_is_an_error_unless_the_data_is_optional(tmp_path):
    args = [
        "scripts/fetch_data.py",
        str(write_unreachable_source(tmp_path)),
        "--retries",
        "0",
        "--stamp",
        str(tmp_path / "stamp"),
    ]
    offline = {"DATA_MIRROR": ""}
    failed = run_script(*args, env=offline)
    assert_user_error(failed, "could not download a.jsonl: cannot reach", "No network?")
    skipped = run_script(*args, "--skip-offline", env=offline)
    assert skipped.returncode == 0, skipped.stderr
    assert "demo (all): skipped: 127.0.0.1:" in skipped.stderr
    assert not (tmp_path / "data" / "sub" / "a.jsonl").exists()
    # the stamp says it was skipped offline: make is done with it (it asks again only when told to)
    assert (tmp_path / "stamp").read_text().startswith("offline: 127.0.0.1:")


def test_fetch_data_missing_config():
    assert_user_error(run_script("scripts/fetch_data.py", "configs/data/nope.yaml"), "nope.yaml")


def tiny_test_set(directory: Path) -> Path:
    """Write a 3-tuple test set in the official (obfuscated) format and return its directory."""
    trials = []
    for t, (size, gold) in enumerate(
        [(2, ["Emmanuel", "Megi"]), (2, ["Dieuwke", "Pascal"]), (3, ["Mark", "Youssef", "Yoda"])]
    ):
        options = [["TRUE", "FALSE"], ["POSSIBLE", "IMPOSSIBLE"], ["1", "2", "3"]][t]
        for i in range(size):
            trials.append(
                {
                    "Key": 1000 * t + i,
                    "problemname": "Infer.trivial",
                    "tuple_ID": t,
                    "text": f"question {t}.{i}",
                    "expectedresp": options,
                    "problemsize": 3,
                    "goldresp_obfusc": gold[i],
                }
            )
    write_jsonl(directory / "trials.jsonl.bz2", trials)
    return directory


def test_random_model_writes_valid_answers_and_resumes_identically(tmp_path):
    testset = tiny_test_set(tmp_path / "ts")
    out = testset / "results" / "basic___random___results.jsonl"
    assert run_script("scripts/test_random_model.py", "-t", str(testset)).returncode == 0
    full = out.read_bytes()
    records = [json.loads(line) for line in full.decode().splitlines()]
    assert [r["Key"] for r in records] == [0, 1, 1000, 1001, 2000, 2001, 2002]
    options = {0: ["TRUE", "FALSE"], 1: ["POSSIBLE", "IMPOSSIBLE"], 2: ["1", "2", "3"]}
    assert all(r["resp"] in options[r["Key"] // 1000] for r in records)
    # simulate a run killed after 3 answers, the last one torn; the restart completes it identically
    lines = full.split(b"\n")
    out.write_bytes(b"\n".join(lines[:3]) + b"\n" + lines[3][:9])
    assert run_script("scripts/test_random_model.py", "-t", str(testset)).returncode == 0
    assert out.read_bytes() == full


def test_random_model_is_independent_of_hash_seed(tmp_path):
    outputs = []
    for hash_seed in ("0", "12345"):
        testset = tiny_test_set(tmp_path / f"ts{hash_seed}")
        run_script(
            "scripts/test_random_model.py",
            "-t",
            str(testset),
            "--seed",
            "7",
            env={"PYTHONHASHSEED": hash_seed},
        )
        outputs.append((testset / "results" / "basic___random___results.jsonl").read_bytes())
    assert outputs[0] == outputs[1]


def make_help() -> str:
    """Return what `make help` prints in the project's root."""
    return subprocess.run(
        ["make", "--no-print-directory", "help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "MAKEFLAGS": ""},
        check=True,
    ).stdout


def help_targets(help_text: str) -> set[str]:
    """Return the targets a `make help` output lists (its first word of each line after the first)."""
    return {line.split()[0] for line in help_text.splitlines()[1:] if line.strip()}


def test_make_help_lists_every_phony_target():
    files = [ROOT / "Makefile", *sorted((ROOT / "common").glob("*/rules.mk"))]  # the map and each suite's
    makefile = "\n".join(f.read_text() for f in files).replace("\\\n", " ")  # join continued lines
    phony = {t for line in re.findall(r"^\.PHONY:(.*)$", makefile, flags=re.M) for t in line.split()}
    stdout = make_help()
    listed = help_targets(stdout)
    assert "$(ALL_SETS)" in phony and "<suite>/<set>" in listed  # the sets: one line for them all
    assert "$(1)-model" in phony and "<suite>-model" in listed  # a suite's model step: one line for them all
    phony -= {"$(ALL_SETS)", "$(1)-model"}
    assert phony <= listed, f"targets without a '## ' help line: {sorted(phony - listed)}"
    assert all(len(line.split(None, 1)) == 2 for line in stdout.splitlines()[1:])


# `make <name>` in backquotes, a name not followed by "/" (a set or a file is not a named target)
NAMED_TARGET = re.compile(r"`make ([a-z][\w.-]*[\w])(?![\w./<-])")


def unknown_make_targets(texts: dict[str, str], listed: set[str]) -> list[str]:
    """Return "<file>: make <name>" for every target named in ``texts`` ({file: text}) that `make
    help` does not list (``listed``); "<suite>-model" stands for every suite's model step."""
    from common import suites

    known = listed | {f"{name}-model" for name in suites.names()}
    return [
        f"{name}: make {target}"
        for name, text in texts.items()
        for target in NAMED_TARGET.findall(text)
        if target not in known
    ]


def test_every_make_target_the_code_and_docs_name_exists():
    """A message that says "run `make X`" (a fix, a docstring, a page of docs) names a target make has."""
    files = [
        *sorted(ROOT.glob("common/**/*.py")),
        *sorted(ROOT.glob("common/**/*.md")),
        *shipped(ROOT / "scripts", "*.py"),
        *sorted((ROOT / "bench").glob("*.py")),
        *sorted((ROOT / "docs").glob("*.md")),
        ROOT / "README.md",
    ]
    texts = {f.relative_to(ROOT).as_posix(): f.read_text(encoding="utf-8") for f in files}
    listed = help_targets(make_help())
    assert unknown_make_targets(texts, listed) == []
    planted = {"x.py": "run `make asat-originals` first; `make already_said_that/mixed`, `make data/x`"}
    assert unknown_make_targets(planted, listed) == ["x.py: make asat-originals"]  # the check can fail


def test_output_into_a_closed_pipe_ends_quietly(tmp_path):
    """`analyse_results.py ... | head -1`: the reader leaves early; no traceback, exit 141 like SIGPIPE."""
    testset = tiny_test_set(tmp_path / "ts")
    assert run_script("scripts/test_random_model.py", "-t", str(testset)).returncode == 0
    read, write = os.pipe()
    os.close(read)  # nobody will read: the first write fails with EPIPE
    with os.fdopen(write, "wb") as stdout:
        command = [sys.executable, "scripts/analyse_results.py", "-t", str(testset)]
        done = subprocess.run(
            command, cwd=ROOT, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=timeout(300)
        )
    assert done.returncode == 141, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


def test_make_clean_keeps_model_results_and_the_response_cache(tmp_path):
    from tests import sandbox

    repo = sandbox.make_sandbox(tmp_path / "repo")
    kept = [
        "results/blocks/cogsci_problems/nl___one/paper___m___results.jsonl",
        "data/worldsense/test_set/results/basic___m___results.jsonl",
        ".cache/models/responses.sqlite",
        "data/cogsci22_blocks/.fetched",
    ]
    removed = [
        "results/blocks/cogsci22_rescored.csv",
        "results/blocks/cogsci_problems/report.txt",
        "results/blocks/cogsci_problems/.scored",
        "results/sections/canvas/standard.json",
        "results/worldsense/test_set/report.txt",
        "results/results.sqlite",
        "data/blocks/scaling/problems/manifest.json",
    ]
    for name in kept + removed:
        path = repo / name
        if path.is_symlink() or path.exists():  # the shared release (a symlink into this checkout)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    done = sandbox.run(repo, "make clean")
    assert done.returncode == 0, done.stderr
    assert [name for name in kept if not (repo / name).exists()] == []
    assert [name for name in removed if (repo / name).exists()] == []


def test_a_copied_model_file_is_left_out_of_the_lint_and_the_template_is_not(tmp_path):
    repo = make_sandbox(tmp_path)
    copied = copied_model(repo, "mine")  # its answer() replaced: the template's text_of import unused
    copied.write_text(copied.read_text() + "import os\n")  # and whatever else the user writes
    lint = run(repo, "make lint")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    template = repo / "scripts/test_random_model.py"
    template.write_text(template.read_text() + "import os\n")
    lint = run(repo, "make lint")
    assert lint.returncode != 0 and "scripts/test_random_model.py" in lint.stdout, lint.stdout
