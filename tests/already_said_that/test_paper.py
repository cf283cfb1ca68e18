"""The original's plots (its make_plots.py) from the runs on the original_* sets: drawn by the
section (the report) and by scripts/already_said_that_paper.py (make asat-paper), the numbers
behind them each seed's metric, the mean and both standard errors; nothing drawn where no run
played the original's sets. The sets here are small hand-written ones under the original_*
names, their data and results in the test's own directories."""

import math

import numpy as np
import pandas as pd
import pytest

from common import analysis, scoring
from common import suites as registry
from common.already_said_that import paper
from common.already_said_that.report import runs_of
from common.results import read_results
from tests.already_said_that.fixtures import write_set
from tests.already_said_that.test_reproduction import original_aggregate, run
from tests.test_scripts import run_script

VARIANTS = {"original_which_is_heavier": "which_is_heavier", "original_distractorless": "distractorless"}


@pytest.fixture
def played(tmp_path):
    """Two original_* sets (40 samples, seeds 1-3 playing 20 each) played by random and oracle;
    return (data directory, results directory)."""
    for name, variant in VARIANTS.items():
        data = write_set(tmp_path / "sets" / name, variant, samples=40, seeds=3, first_seed=1, play=20)
        for model in ("random", "oracle"):
            assert run(tmp_path, data, model) == 0
    return tmp_path / "sets", tmp_path / "results"


def refs_of(sets, results, names=tuple(VARIANTS)):
    """The SetRefs of ``names``, their data and results in the test's directories."""
    suite = registry.get("already_said_that")
    return [suite.ref(name, data=sets / name, results_root=results) for name in names]


def test_the_section_draws_the_originals_plots_from_its_sets(played, tmp_path):
    sets, results = played
    refs, scored = scoring.score_and_load(refs_of(sets, results))
    section = analysis.section(refs, scored, tmp_path / "figures")
    [figure] = [path for _, path in section.figures if path.name == "already_said_that_paper.png"]
    assert figure.stat().st_size > 10_000
    numbers = section.data["seeds"]
    assert sorted(set(zip(numbers["set"], numbers["model"], strict=True))) == sorted(
        (name, model) for name in VARIANTS for model in ("oracle", "random")
    )
    rows = paper.paper_rows(paper.seed_numbers(runs_of(scored)))
    assert set(rows["variant"]) == {"which-is-heavier", "distractorless"}
    again = paper.plot_paper(rows, tmp_path / "again.png")[1]
    assert again.read_bytes() == figure.read_bytes()  # deterministic PNG


def test_no_plot_where_no_run_played_the_originals_sets(tmp_path):
    data = write_set(
        tmp_path / "sets" / "mine", "which_is_heavier", samples=30, seeds=3, first_seed=1, play=10
    )
    assert run(tmp_path, data, "random") == 0
    refs, scored = scoring.score_and_load(refs_of(tmp_path / "sets", tmp_path / "results", ("mine",)))
    section = analysis.section(refs, scored, tmp_path / "figures")
    assert not any(path.name == "already_said_that_paper.png" for _, path in section.figures)
    assert len(section.data["seeds"]) == len(paper.SEED_METRICS)  # the seeds table is there all the same


def test_the_script_writes_the_figure_and_the_numbers(played, tmp_path):
    sets, results = played
    out = tmp_path / "paper"
    argv = ["--data-dir", str(sets), "--results-dir", str(results), "--out", str(out)]
    done = run_script("scripts/already_said_that_paper.py", *argv)
    assert done.returncode == 0, done.stderr
    assert (out / "already_said_that_paper.png").stat().st_size > 10_000
    assert done.stdout == (out / "numbers.txt").read_text() and "numbers.csv" in done.stdout
    numbers = pd.read_csv(out / "numbers.csv")
    assert len(numbers) == 2 * 2 * len(paper.SEED_METRICS)  # sets x models x metrics
    records = read_results(
        results / "original_which_is_heavier" / "direct___random___results.jsonl", all_draws=True
    )
    per_seed = [original_aggregate([r for r in records if r.get("draw", 0) == d]) for d in range(3)]
    mine = numbers[(numbers["set"] == "original_which_is_heavier") & (numbers["model"] == "random")]
    for name in paper.SEED_METRICS:
        values = [seed[name] for seed in per_seed]
        row = mine[mine["metric"] == name].iloc[0]
        assert (row["k"], row["seeds"], row["variant"]) == (3, "1, 2, 3", "which-is-heavier")
        assert row["mean"] == pytest.approx(np.mean(values))
        assert row["se_original"] == pytest.approx(np.std(values) / math.sqrt(3))
        assert row["se_sample"] == pytest.approx(np.std(values, ddof=1) / math.sqrt(3))


def test_the_script_says_what_to_do_without_runs(tmp_path):
    argv = ["--data-dir", str(tmp_path), "--results-dir", str(tmp_path), "--out", str(tmp_path / "paper")]
    done = run_script("scripts/already_said_that_paper.py", *argv)
    assert done.returncode == 2 and "make asat-paper MODEL=<config>" in done.stderr
    assert not (tmp_path / "paper").exists()
