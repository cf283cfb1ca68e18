"""Re-scoring the released outputs reproduces every number of the release README exactly."""

import pytest

from common.blocks.reproduce import disagreements, format_report, paired_tests, rescore, summary
from tests.conftest import run_script

EXPECTED = {  # (measure, method): (one, two, all) as "successes/n"
    ("published", "codex"): ("99/100", "92/100", "72/100"),
    ("published", "gpt"): ("40/100", "19/100", "0/100"),
    ("lenient", "codex"): ("99/100", "92/100", "72/100"),
    ("lenient", "gpt"): ("40/100", "19/100", "0/100"),
    ("strict", "codex"): ("99/100", "92/100", "72/100"),
    ("strict", "gpt"): ("9/100", "5/100", "0/100"),
    ("empty plan", "-"): ("40/100", "16/100", "2/100"),
    ("needs a move", "gpt"): ("3/60", "4/84", "0/98"),
    ("needs a move", "codex"): ("59/60", "76/84", "71/98"),
}


@pytest.fixture(scope="module")
def rows(release):
    return rescore(release)


def test_every_number_of_the_release_readme(rows):
    table = summary(rows)
    got = {}
    for (measure, method), group in table.groupby(["measure", "method"]):
        cells = group.set_index("view")
        got[(measure, method)] = tuple(f"{cells.successes[v]}/{cells.n[v]}" for v in ("one", "two", "all"))
    assert got == EXPECTED


def test_every_problem_verdict_equals_the_recorded_flag(rows):
    assert len(rows) == 600 and disagreements(rows).empty
    codex = rows[rows.method == "codex"]
    assert (codex.recorded_plan_ok.fillna(False) == codex.lenient).all()  # the recorded plans agree too


def test_problem_026_fails_for_the_recorded_reason(rows):
    row = rows[(rows.method == "codex") & (rows.view == "all") & (rows.id == "026")].iloc[0]
    assert row.trivial and not row.lenient and not row.recorded
    assert row.reason == "planner found no plan: (clear chainsaw) contradicts (on dryer-sheets chainsaw)"


def test_wilson_intervals_and_paired_tests(rows):
    table = summary(rows).set_index(["measure", "method", "view"])
    bounds = ["ci95_lo", "ci95_hi"]
    assert table.loc[("lenient", "codex", "one"), bounds].round(4).tolist() == [0.9455, 0.9982]
    assert table.loc[("strict", "gpt", "one"), bounds].round(4).tolist() == [0.0481, 0.1623]
    tests = paired_tests(rows).set_index("view")
    assert tests.loc["one", ["a", "b", "n"]].tolist() == ["codex", "gpt", 100]
    assert tests.loc["one", ["a_better", "b_better"]].tolist() == [59, 0]
    assert tests.loc["two", ["a_better", "b_better"]].tolist() == [73, 0]
    assert tests.loc["all", ["a_better", "b_better"]].tolist() == [72, 0]
    assert tests.loc["one", "p"] == pytest.approx(2 * 0.5**59)


def test_report_prints_the_published_table_exactly(rows):
    report = format_report(rows)
    assert "constraints  one  two  all\ncodex         99   92   72\ngpt           40   19    0\n" in report
    assert "strict        gpt    9 [4.8, 16.2]" in report
    assert "needs a move  codex  59/60 [91.1, 99.7]" in report


def test_reproduce_script_prints_the_report_and_succeeds(tmp_path):
    result = run_script("scripts/reproduce_blocks.py", "--summary", str(tmp_path / "s.csv"))
    assert result.returncode == 0, result.stderr
    assert "codex         99   92   72" in result.stdout and (tmp_path / "s.csv").is_file()
