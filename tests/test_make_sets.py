"""Every configs/<suite>/<set>.yaml is a set that Make builds through its baselines' scores; a
failed step never looks done; no recipe swallows a failing command.

The Make runs happen in a sandbox copy of the repository (tests/sandbox.py)."""

import bz2
import itertools
import json
import os
import re
import time
from pathlib import Path

import pytest

from common.paths import ROOT
from tests.sandbox import make_sandbox, run
from tests.test_docs import DOCUMENTS

MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")


def documented_commands(paragraph_start: str) -> str:
    """Return the first ```bash block after the paragraph starting with ``paragraph_start`` in the
    first of README.md and docs/*.md (tests/test_docs.py's order) that has one."""
    document = next(d for d in DOCUMENTS if paragraph_start in (ROOT / d).read_text(encoding="utf-8"))
    text = (ROOT / document).read_text(encoding="utf-8")
    return re.search(r"```bash\n(.*?)```", text[text.index(paragraph_start) :], re.S).group(1)


def recipes(makefile: str) -> list[str]:
    """Return each recipe of the Makefile as one string (continuation lines joined)."""
    found, current = [], []
    for line in makefile.splitlines():
        if line.startswith("\t"):
            current.append(line[1:])
        elif current:
            found.append("\n".join(current))
            current = []
    return found + (["\n".join(current)] if current else [])


@pytest.fixture
def sandbox(tmp_path) -> Path:
    return make_sandbox(tmp_path)


# ---- static checks of the Makefile -------------------------------------------------------------
def test_no_recipe_loops_over_a_command_substitution():
    # `for x in $$(python ...)`: a failing command gives an empty list and the loop "succeeds"
    bad = [r for r in recipes(MAKEFILE) if re.search(r"\bin\s+\$\$\(", r) or re.search(r"\bin\s+`", r)]
    assert not bad, bad
    assert len(recipes(MAKEFILE)) > 20  # the parser sees the recipes


def test_a_recipe_redirecting_into_a_temporary_file_removes_it_on_failure():
    # `cmd > $@` would leave a partial target; a fixed `$@.tmp` is shared by two makes at once (one
    # moves the other's file away); a temporary file is unique (mktemp) and removed on failure
    assert not [r for r in recipes(MAKEFILE) if re.search(r">>?\s*\$@", r)]
    redirected = [r for r in recipes(MAKEFILE) if re.search(r'>\s*"\$\$tmp"', r)]
    assert redirected and all(
        re.search(r"tmp=\$\$\(mktemp [^)]*\); trap 'rm -f \"\$\$tmp\"' EXIT", r) for r in redirected
    ), redirected


def test_recipes_run_under_errexit_and_pipefail():
    assert re.search(r"^\.SHELLFLAGS := -eu -o pipefail -c$", MAKEFILE, re.M)
    assert re.search(r"^\.DELETE_ON_ERROR:$", MAKEFILE, re.M)


def test_asat_model_plays_the_model_on_every_set(sandbox):
    # the model's stamp is a prerequisite of the suite's model target: it was empty when MODEL_RUN came later
    plan = run(sandbox, "make -n already_said_that-model MODEL=oracle LIMIT=2").stdout
    loop = re.search(
        r"for set in ([\w ]+); do for script in scripts/already_said_that\.py; do "
        r"\S+ \$script -t already_said_that/\$set --model oracle --limit 2\b",
        plan,
    )
    assert loop, plan
    defaults = re.search(r"^Default sets .*: (.*)$", run(sandbox, "make help").stdout, re.M).group(1).split()
    asat = [s.removeprefix("already_said_that/") for s in defaults if s.startswith("already_said_that/")]
    assert "mixed" in asat and sorted(loop.group(1).split()) == sorted(asat)  # every default set
    # the stamp names the model, the limit and a hash of what else decides the run
    assert re.search(r"results/runs/already_said_that/oracle\.limit2-[0-9a-f]{12}\.done", plan)


def test_every_config_is_a_set_without_editing_the_makefile(sandbox):
    """A config is a set, and a default one unless it says `default: false`: the same rule in every
    suite, which make help states."""
    (sandbox / "configs/blocks/extra.yaml").write_text("problems: [{num_obj: 3, test: true}]\n")
    (sandbox / "configs/canvas/extra.yaml").write_text("seed: 3\n")
    (sandbox / "configs/canvas/aside.yaml").write_text("default: false\nseed: 4\n")
    (sandbox / "configs/already_said_that/extra.yaml").write_text("variant: distractorless\nsources: []\n")
    result = run(sandbox, "make help")
    assert result.returncode == 0, result.stderr
    found = re.search(r"^Sets found .*: (.*)$", result.stdout, re.M).group(1).split()
    assert {
        "blocks/cogsci_problems",
        "blocks/extra",
        "canvas/standard",
        "canvas/extra",
        "canvas/aside",
    } <= set(found)
    defaults = re.search(r"^Default sets .*'default: false'\): (.*)$", result.stdout, re.M).group(1).split()
    assert {"blocks/extra", "canvas/extra", "already_said_that/extra", "canvas/standard"} <= set(defaults)
    assert "canvas/aside" not in defaults and "already_said_that/original_which_is_heavier" in defaults
    assert re.search(r"^  sets +Build every set", result.stdout, re.M)
    assert re.search(r"^  <suite>/<set> +Build one set", result.stdout, re.M)
    dry = run(sandbox, "make -n sets")
    assert dry.returncode == 0, dry.stderr
    for target in (
        "results/blocks/extra/report.txt",
        "results/canvas/aside/report.txt",
        "scripts/generate_problems.py -t blocks/extra",
        "scripts/generate_problems.py -t canvas/extra",
    ):
        assert target in dry.stdout
    # no file of any suite's chain is an intermediate (make would delete it after use)
    database = run(sandbox, "make -n -p sets all")
    assert database.returncode == 0, database.stderr
    intermediate = re.findall(
        r"^(\S+):.*\n(?:#.*\n)*?#  File is an intermediate prerequisite", database.stdout, re.M
    )
    assert not intermediate, intermediate
    dry_all = run(sandbox, "make -n all").stdout
    for default in (
        "blocks/cogsci_problems",
        "canvas/standard",
        "canvas/scaling",
        "canvas/extra",
        "blocks/extra",
    ):
        assert f"results/{default}/report.txt" in dry_all, default
    assert "results/canvas/aside/report.txt" not in dry_all


def test_a_set_report_goes_stale_when_a_results_file_is_added(sandbox):
    """The scoring step depends on the set's results files: a new one makes it, and the analysis
    after it, out of date (and only them)."""
    stamps = [
        "results/worldsense/test_set/.baselines",
        "results/worldsense/test_set/.scored",
        "results/worldsense/test_set/report.txt",
        "results/sections/worldsense/test_set.json",
    ]
    start = time.time() + 2
    for offset, name in enumerate(stamps):  # each newer than what it is made of
        (sandbox / name).parent.mkdir(parents=True, exist_ok=True)
        (sandbox / name).write_text("x\n")
        os.utime(sandbox / name, (start + offset, start + offset))
    report = "results/worldsense/test_set/report.txt"
    assert run(sandbox, f"make -q {report}").returncode == 0  # up to date
    new = sandbox / "data/worldsense/test_set/results/basic___mine___results.jsonl"
    new.unlink(missing_ok=True)
    new.write_text('{"Key": 1, "resp": "TRUE"}\n')
    later = start + 10
    os.utime(new, (later, later))
    assert run(sandbox, f"make -q {report}").returncode == 1  # stale now
    plan = run(sandbox, f"make -n {report}").stdout
    assert "score_results.py -t worldsense/test_set" in plan and "test_random_model.py" not in plan


# ---- building new sets ---------------------------------------------------------------------------
@pytest.mark.slow
def test_documented_new_blocks_set_builds_through_its_baselines(sandbox):
    commands = documented_commands("**A new problem set.**")
    assert "make blocks/mine" in commands
    result = run(sandbox, commands)
    assert result.returncode == 0, result.stderr[-3000:]
    config = (sandbox / "configs/blocks/mine.yaml").read_text()
    assert "seed: 7" in config
    manifest = json.loads((sandbox / "data/blocks/mine/problems/manifest.json").read_text())  # still there
    assert manifest["seed"] == 7
    tests = sum(p["test"] for p in manifest["problems"])
    views = manifest["views"]
    report = (sandbox / "results/blocks/mine/report.txt").read_text()
    assert report in result.stdout  # printed
    for view in views:
        for kind, model in [("nl", "noop"), ("nl", "random"), ("nl", "oracle"), ("pddl", "rules")]:
            rows = sandbox / f"results/blocks/mine/{kind}___{view}/paper___{model}___results.jsonl"
            assert len(rows.read_text().splitlines()) == tests
    success = success_rows(report)
    assert {(view, run) for view, run in success} == {
        (view, f"{model} ({method}, paper)")
        for view in views
        for method, model in [
            ("plan", "noop"),
            ("plan", "random"),
            ("plan", "oracle"),
            ("LLM+planner", "rules"),
        ]
    }
    assert all(cells[0] == str(tests) for cells in success.values())  # every problem of the run
    for view in views:  # lenient success of oracle and rules; noop fails where the goal needs a move
        assert (
            success[view, "oracle (plan, paper)"][1]
            == success[view, "rules (LLM+planner, paper)"][1]
            == "100.0"
        )
        assert float(success[view, "noop (plan, paper)"][1]) < 100
    assert run(sandbox, "make -q blocks/mine results/blocks/mine/report.txt").returncode in (0, 1)
    assert run(sandbox, "make -q results/blocks/mine/report.txt").returncode == 0  # up to date


@pytest.mark.slow
def test_documented_new_canvas_set_builds_through_its_baselines(sandbox):
    commands = documented_commands("**Make a new set.**")
    assert "make canvas/mine" in commands
    result = run(sandbox, commands)
    assert result.returncode == 0, result.stderr[-3000:]
    manifest = json.loads((sandbox / "data/canvas/mine/manifest.json").read_text())
    assert manifest["config"]["seed"] == 7
    trials = sum(1 for _ in bz2.open(sandbox / "data/canvas/mine/trials.jsonl.bz2", "rt"))
    check_canvas_scores(sandbox, "mine", trials, manifest["config"]["tasks"], result.stdout)


def success_rows(report: str) -> dict[tuple[str, str], list[str]]:
    """Return the first table of a blocks report (success by view and run): (view, "<model>
    (<method>, <prompting>)") -> [problems, lenient rate], read from its fixed-width lines (index
    levels by the columns of the "view method prompting model" header, blanks carried down)."""
    lines = report.split("SUCCESS by view and run")[1].split("\n\n")[0].splitlines()
    header = next(line for line in lines if line.startswith("view "))
    starts = [header.index(name) for name in ("view", "method", "prompting", "model")]
    rows, index = {}, ["", "", ""]
    for line in lines[lines.index(header) + 1 :]:
        for k, (a, b) in enumerate(itertools.pairwise(starts)):
            index[k] = line[a:b].strip() or index[k]
        model, problems, lenient = line[starts[3] :].split()[:3]  # the model is named on every line
        view, method, prompting = index
        rows[view, f"{model} ({method}, {prompting})"] = [problems, lenient]
    return rows


def check_canvas_scores(sandbox: Path, name: str, trials: int, tasks: list[str], printed: str) -> None:
    """Check the built-in models answered every trial of canvas set ``name`` and the printed
    analysis scores the oracle 100% on every task."""
    for model in ("random", "oracle"):
        answers = sandbox / f"results/canvas/{name}/basic___{model}___results.jsonl"
        assert len(answers.read_text().splitlines()) == trials
    report = (sandbox / f"results/canvas/{name}/report.txt").read_text()
    assert report in printed
    for task in tasks:
        assert re.search(rf"^(oracle)? +{task} +.*100\.0 \[", report, re.M), task


TINY_BLOCKS = (
    "seed: 5\nviews:\n  - {name: c2, constraints: 2, rename: all}\n"
    "problems:\n  - {num_obj: 3, count: 2}\n  - {num_obj: 4, test: true, count: 4}\n"
)


def test_a_failed_blocks_step_never_looks_done_and_a_rerun_after_the_fix_builds(sandbox):
    config = sandbox / "configs/blocks/tiny.yaml"
    # 1. a bad config field: the first step fails, nothing of the set is left
    config.write_text(TINY_BLOCKS.replace("seed: 5", "seed: 5\ncolour: red"))
    failed = run(sandbox, "make blocks/tiny")
    assert failed.returncode != 0
    assert "tiny.yaml:2: unknown config key: colour" in failed.stderr
    for path in (
        "data/blocks/tiny/problems/manifest.json",
        "data/blocks/tiny/.generated",
        "results/blocks/tiny",
    ):
        assert not (sandbox / path).exists(), path
    # 2. fixed config; then a later step's input breaks (an inner command of the baselines recipe
    # fails): the target fails, no file and no temporary file is left, and a second make fails too
    config.write_text(TINY_BLOCKS)
    assert run(sandbox, "make data/blocks/tiny/.generated").returncode == 0
    prompts = sandbox / "data/blocks/tiny/prompts/paper___nl___c2.jsonl"
    prompts.write_text("{not json\n")
    for _ in range(2):  # never "up to date" after a failure
        broken = run(sandbox, "make blocks/tiny")
        assert broken.returncode != 0
        assert "paper___nl___c2.jsonl:1" in broken.stderr
        assert not (sandbox / "results/blocks/tiny/report.txt").exists()
        assert not (sandbox / "results/blocks/tiny/.baselines").exists()
        assert not list((sandbox / "results/blocks/tiny").glob("*.tmp"))
    # 3. the fix (the config is newer: the set is generated again) and the set builds
    config.touch()
    fixed = run(sandbox, "make blocks/tiny")
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    report = (sandbox / "results/blocks/tiny/report.txt").read_text()
    assert {run for _, run in success_rows(report)} == {
        "noop (plan, paper)",
        "random (plan, paper)",
        "oracle (plan, paper)",
        "rules (LLM+planner, paper)",
    }
    assert all(cells[0] == "4" for cells in success_rows(report).values())  # 4 test problems each
    assert report in fixed.stdout
    assert (sandbox / "data/blocks/tiny/problems/manifest.json").is_file()  # not deleted as intermediate
    assert run(sandbox, "make -q results/blocks/tiny/report.txt").returncode == 0  # up to date


def test_a_bad_canvas_config_leaves_no_target_and_the_fixed_one_builds(sandbox):
    config = sandbox / "configs/canvas/tiny.yaml"
    good = "seed: 4\nnum_shapes: [3]\nitems: 2\ntasks: [existence, count]\nfewshot: [none]\n"
    config.write_text(good.replace("items: 2", "items: two"))
    failed = run(sandbox, "make canvas/tiny")
    assert failed.returncode != 0 and "tiny.yaml:3" in failed.stderr
    for path in (
        "data/canvas/tiny/trials.jsonl.bz2",
        "data/canvas/tiny/manifest.json",
        "data/canvas/tiny/.generated",
        "results/canvas/tiny/report.txt",
    ):
        assert not (sandbox / path).exists(), path
    config.write_text(good)
    fixed = run(sandbox, "make canvas/tiny")
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    trials = sum(1 for _ in bz2.open(sandbox / "data/canvas/tiny/trials.jsonl.bz2", "rt"))
    check_canvas_scores(sandbox, "tiny", trials, ["existence", "count"], fixed.stdout)
    assert run(sandbox, "make -q results/canvas/tiny/report.txt").returncode == 0  # up to date
