"""The four uses, walked on a fresh copy of the repository as a new user would: `make all`; a
script run by hand (trying things writes to a scratch directory: the report does not change);
a new problem set per suite from a copied config, reaching the report; and the template copied
under a new name with only its answer function edited, which `make all MODEL=<the copy>` runs
on every suite, its rows in every section of the report. Then more of what the README
describes (a copied model config, a built-in's 5 answers beside the released WorldSense
results, `make forget`, a set's config deleted and another set forgotten: both leave the report
and the database), after which `make test` passes in that copy: its lint leaves the copied
model file out, and its tests never check the user's results or configs. Slow: two full `make all`
runs and the fast tests."""

import re
import sqlite3
from contextlib import closing

import pytest

from tests.sandbox import copied_model, make_sandbox, run
from tests.test_make_sets import TINY_BLOCKS, documented_commands

pytestmark = pytest.mark.slow


def test_the_four_uses_on_a_fresh_copy(tmp_path):
    repo = make_sandbox(tmp_path, clone=True)
    assert run(repo, "make all").returncode == 0
    before = (repo / "results/report.txt").read_text()

    # a script by hand, trying a built-in: a scratch directory, nothing in the report
    command = ".venv/bin/python scripts/ask_model.py -t data/canvas/standard --model oracle --limit 5"
    tried = run(repo, f"{command} --results-dir {tmp_path / 'try'}")
    assert tried.returncode == 0, tried.stderr[-2000:]
    assert run(repo, "make all").returncode == 0
    assert (repo / "results/report.txt").read_text() == before

    # a new set per suite, from a copied config (the documented commands), then the report
    (repo / "configs/blocks/mine.yaml").write_text(TINY_BLOCKS)
    commands = [
        "make blocks/mine",
        documented_commands("**Make a new set.**"),  # canvas/mine
        documented_commands("**A new problem set**: every `configs/already_said_that"),  # mixed_seed7
    ]
    for command in commands:
        made = run(repo, command)
        assert made.returncode == 0, (command, made.stderr[-2000:])

    # the template copied, only its answer function edited (its import of text_of left unused)
    copied_model(repo, "first")
    made = run(repo, "make all MODEL=scripts/test_first_model.py LIMIT=2")
    assert made.returncode == 0, made.stderr[-3000:]

    report = (repo / "results/report.md").read_text()
    suites = dict(re.findall(r"^## (.+?)\n(.*?)(?=^## |\Z)", report, re.S | re.M))
    sets = re.findall(r"<details><summary>([^<]+?): every table", report)
    assert {"Blocks world: mine", "Canvas: mine", "Canvas: scaling", "Already Said That"} <= set(sets), sets
    assert "mixed_seed7" in suites["Already Said That"]
    for suite in ("WorldSense", "Blocks world", "Canvas", "Already Said That"):
        headline = suites[suite].split("\n### ", 1)[1].split("\n\n", 1)[1]  # the runs-by-sets table
        assert re.search(r"^\| first\b", headline, re.M), suite  # the copy's row in every suite's table

    # more of the README's uses, then the fast tests in the copy: green whatever the user did
    (repo / "configs/models/mine.yaml").write_text((repo / "configs/models/llamacpp.yaml").read_text())
    for command in ("make worldsense-model MODEL=oracle LIMIT=5", "make forget MODEL=first"):
        made = run(repo, command)
        assert made.returncode == 0, (command, made.stderr[-2000:])
    five = repo / "data/worldsense/test_set/results/basic___oracle___results.jsonl"
    assert five.read_text().count("\n") == 5

    # a set taken out: its config deleted (the next make all drops it), or make forget SET=...
    (repo / "configs/canvas/mine.yaml").unlink()
    for command in ("make all", "make forget SET=blocks/mine"):
        made = run(repo, command)
        assert made.returncode == 0, (command, made.stderr[-2000:])
    report = (repo / "results/report.md").read_text()
    assert (
        "Canvas: mine" not in report and "Blocks world: mine" not in report and "Canvas: standard" in report
    )
    with closing(sqlite3.connect(repo / "results/results.sqlite")) as conn:
        sets = {f"{suite}/{name}" for suite, name in conn.execute("SELECT suite, set_name FROM sets")}
    assert {"canvas/standard", "blocks/scaling"} <= sets and not {"canvas/mine", "blocks/mine"} & sets
    assert list((repo / "results/forgotten").glob("*/configs/blocks/mine.yaml"))  # nothing lost
    fast = run(repo, "make test", timeout=3600)  # lint (the copied model file left out) and the fast tests
    assert fast.returncode == 0, (fast.stdout[-5000:], fast.stderr[-2000:])
