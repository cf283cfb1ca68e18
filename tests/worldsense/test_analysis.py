"""WorldSense analysis: hand-computed statistics on tiny test sets, and the published table."""

import logging
import math
from pathlib import Path

import pandas as pd
import pytest
import scipy.stats

from common.errors import DataError, UserError
from common.report import section_text
from common.worldsense import report, scoring
from common.worldsense.analysis import (
    Analysis,
    accuracy_by_group,
    analyse_results_in_testset_dir,
    bias_by_group,
    compute_acc_table,
    format_cell,
    pivot_pretty,
)
from tests.worldsense.fixtures import answers_for, compl_tuple, results_df, section, tf_tuple, write_testset


def _two_problem_set(tmp_path: Path) -> Path:
    """P1 = Infer.normal: size 3 tuples scored 1,0,1,1 and size 4 tuples 0,1; P2 = Infer.trivial: 1,1,0."""
    trials, acc = [], []
    for i, (size, a) in enumerate([(3, 1), (3, 0), (3, 1), (3, 1), (4, 0), (4, 1)]):
        trials += tf_tuple(f"p1-{i}", "Infer.normal", size)
        acc.append(a)
    for i, a in enumerate([1, 1, 0]):
        trials += tf_tuple(f"p2-{i}", "Infer.trivial", 3)
        acc.append(a)
    return write_testset(tmp_path / "ts", trials, {"M": answers_for(trials, acc)})


def _stat(table: pd.DataFrame, key: tuple) -> pd.Series:
    return table.loc[key]


def test_rebalanced_accuracy_and_interval_by_hand(tmp_path):
    tuples = compute_acc_table(results_df(_two_problem_set(tmp_path)))
    plain = accuracy_by_group(tuples, ["modelname", "problemname", "problemsize"])
    # size 3 of P1: values 1,0,1,1 -> mean .75, sample var .25, sem sqrt(.25)/sqrt(4)
    assert _stat(plain, ("M", "Infer.normal", 3))["mean"] == pytest.approx(0.75)
    assert _stat(plain, ("M", "Infer.normal", 3))["sem"] == pytest.approx(0.25)
    per_problem = accuracy_by_group(tuples, ["modelname", "problemname"])
    # sizes 3 (mean .75, var .25) and 4 (mean .5, var .5) get the same effective count 2:
    # mean (.75+.5)/2; mean of squares ((.25+.75**2)+(.5+.5**2))/2; sem = sqrt(var)/sqrt(2+2)
    mean_p1 = (0.75 + 0.5) / 2
    meansq_p1 = ((0.25 + 0.75**2) + (0.5 + 0.5**2)) / 2
    p1 = _stat(per_problem, ("M", "Infer.normal"))
    assert p1["mean"] == pytest.approx(0.625)
    assert p1["count"] == 4
    assert p1["sem"] == pytest.approx(math.sqrt(meansq_p1 - mean_p1**2) / 2)
    assert p1["sem"] == pytest.approx(0.3125)
    assert p1["conf95"] == pytest.approx(1.96 * 0.3125)
    # P2: 1,1,0 -> mean 2/3, sample variance 1/3, count 3 (nothing to rebalance)
    p2 = _stat(per_problem, ("M", "Infer.trivial"))
    assert p2["mean"] == pytest.approx(2 / 3)
    assert p2["sem"] == pytest.approx(math.sqrt(1 / 3) / math.sqrt(3))
    # average: both problems get the effective count min(4, 3) = 3
    average = accuracy_by_group(tuples, ["modelname"]).loc["M"]
    mean = (mean_p1 + 2 / 3) / 2
    meansq = (meansq_p1 + (1 / 3 + (2 / 3) ** 2)) / 2
    assert average["count"] == 6
    assert average["mean"] == pytest.approx(mean)
    assert average["sem"] == pytest.approx(math.sqrt(meansq - mean**2) / math.sqrt(6))


def test_three_option_weighting_and_bias(tmp_path):
    trials = compl_tuple("c1") + compl_tuple("c2")
    # c1: answers 1,3,3 to gold 1,2,3: right, wrong, right -> (.25*1 + .25*0 + .5*1) / 1 = .75
    #     bias +1,-1,-1 -> (.25 - .25 - .5) / 1 = -.5
    # c2: answers 2,1,1: right, right, wrong -> (.25 + .25) / 1 = .5; bias +1 everywhere -> 1
    directory = write_testset(tmp_path / "ts", trials, {"M": ["1", "3", "3", "2", "1", "1"]})
    tuples = compute_acc_table(results_df(directory)).set_index("tuple_ID")
    assert tuples.loc["c1", "acc"] == pytest.approx(0.75)
    assert tuples.loc["c1", "bias"] == pytest.approx(-0.5)
    assert tuples.loc["c2", "acc"] == pytest.approx(0.5)
    assert tuples.loc["c2", "bias"] == pytest.approx(1.0)
    assert scoring.GOLD_WEIGHT["1"] == scoring.GOLD_WEIGHT["2"] == 0.25
    assert scoring.GOLD_WEIGHT["3"] == 0.5


def test_the_summary_says_first_which_results_files_are_partial(tmp_path):

    trials = tf_tuple("t1", "Infer.normal", 3) + tf_tuple("t2", "Consist.normal", 3)  # two problems
    directory = write_testset(
        tmp_path / "ts", trials, {"A": ["TRUE", "FALSE", "TRUE", "FALSE"], "B": ["TRUE", "FALSE", None, None]}
    )
    summary = section(directory).summary
    assert summary[0] == "PARTIAL results in the test set: B (basic) 2 of 4 trials"  # make all shows it
    assert "A (basic): 100.0, 2 tuples: no interval" in summary  # not "+- 0.0" from two tuples
    b_line = next(line for line in summary if line.startswith("B (basic): "))
    assert b_line == "B (basic): 100.0, 1 tuple: no interval (partial: 2 of 4 trials)"


def test_bias_with_empty_responses(tmp_path):
    trials = tf_tuple("t1", "Infer.normal", 3) + tf_tuple("t2", "Infer.normal", 3)
    # t1: "" (no valid answer) and FALSE: acc (0 + .5)/1; bias (missing, -1) -> (.5 * -1) / 1
    # t2: both empty: acc 0, bias 0 (no signed answer, over the whole tuple's weight)
    directory = write_testset(tmp_path / "ts", trials, {"M": ["", "FALSE", "", ""]})
    tuples = compute_acc_table(results_df(directory)).set_index("tuple_ID")
    assert tuples.loc["t1", ["acc", "bias"]].tolist() == [0.5, -0.5]
    assert tuples.loc["t2", ["acc", "bias"]].tolist() == [0.0, 0.0]
    bias = bias_by_group(tuples.reset_index(), ["modelname", "problemname"]).loc[("M", "Infer.normal")]
    assert bias["mean"] == pytest.approx(-0.25)


def test_incomplete_tuples_are_dropped_with_a_warning(tmp_path, caplog):
    trials = tf_tuple("t1", "Infer.normal", 3) + tf_tuple("t2", "Infer.normal", 3)
    directory = write_testset(tmp_path / "ts", trials, {"M": ["TRUE", "FALSE", "FALSE", None]})
    with caplog.at_level(logging.WARNING):
        tuples = compute_acc_table(results_df(directory))
    assert tuples["tuple_ID"].tolist() == ["t1"]
    assert tuples["acc"].tolist() == [1.0]
    assert "1 incomplete tuples (1 answers)" in caplog.text
    assert "M (basic): PARTIAL results, 3 of 4 trials answered" in section(directory).notes[0]
    with pytest.raises(DataError, match="incomplete tuples"):
        analyse_results_in_testset_dir(directory, require_complete=True)


def test_refused_trials_are_scored_wrong_and_counted_apart(tmp_path):
    trials = tf_tuple("t1", "Infer.normal", 3) + tf_tuple("t2", "Infer.trivial", 3)
    directory = write_testset(tmp_path / "ts", trials, {"A": ["TRUE", "FALSE", "TRUE", ""]})
    path = directory / "results" / "basic___A___results.jsonl"
    lines = path.read_text().splitlines()
    lines[3] = '{"Key": 103, "resp": "", "refused": "context_length_exceeded", "error": "too long"}'
    lines[2] = '{"Key": 102, "resp": "", "raw": ["maybe", "maybe"], "error": "no valid option"}'
    path.write_text("\n".join(lines) + "\n")
    result = analyse_results_in_testset_dir(directory)
    coverage = result.coverage.loc[("basic", "A")]
    assert coverage.to_dict() == {"trials": 4, "answered": 4, "invalid": 1, "refused": 1}
    assert result.accuracy.loc[("basic", "A", "Infer.trivial"), "mean"] == 0.0  # both wrong
    assert result.accuracy.loc[("basic", "A", "Infer.normal"), "mean"] == 1.0
    assert "refused" in section_text(section(directory))
    assert "refused" not in report.format_report(result, "ts")  # the release's tables only


def test_a_results_file_without_answers_adds_no_row(tmp_path):
    trials = tf_tuple("t1", "Infer.normal", 3) + tf_tuple("t2", "Infer.trivial", 3)
    answers = {"A": ["TRUE", "FALSE", "TRUE", "FALSE"], "B": [None] * 4}
    result = analyse_results_in_testset_dir(write_testset(tmp_path / "ts", trials, answers))
    assert result.average.loc[("basic", "A"), "mean"] == 1.0
    assert list(result.average.index) == [("basic", "A")]


def test_single_problem_set_has_no_average_and_unknown_problems_sort_last(tmp_path):
    trials = [
        *tf_tuple("a", "Zeta.new", 3),
        *tf_tuple("b", "Infer.extrema", 3),
        *tf_tuple("c", "Infer.normal", 3),
    ]
    answers = {"zz-model": answers_for(trials, [1, 0, 1]), "GPT4": answers_for(trials, [0, 1, 1])}
    single = write_testset(tmp_path / "single", trials[2:4], {"M": answers["GPT4"][2:4]})
    assert analyse_results_in_testset_dir(single).average is None
    assert "AVERAGE" not in report.format_report(analyse_results_in_testset_dir(single), "s")
    result = analyse_results_in_testset_dir(write_testset(tmp_path / "ts", trials, answers))
    table = pivot_pretty(result.accuracy, index=["prompting", "modelname"], columns=["problemname"])
    assert list(table.columns) == ["Infer.normal", "Infer.extrema", "Zeta.new"]
    assert [m for _, m in table.index] == ["GPT4", "zz-model"]
    assert table.loc[("basic", "GPT4"), "Infer.extrema"] == "100.0 (0.0)"


def test_columns_grouped_by_two_fields_follow_the_display_order(tmp_path):
    """The first trials seen are Zeta.new size 4: the columns still start with Infer.normal, size 3."""
    trials = [
        *tf_tuple("a", "Zeta.new", 4),
        *tf_tuple("b", "Infer.normal", 4),
        *tf_tuple("c", "Zeta.new", 3),
        *tf_tuple("d", "Infer.normal", 3),
    ]
    testset = write_testset(tmp_path / "ts", trials, {"M": answers_for(trials, [1, 0, 1, 1])})
    result = analyse_results_in_testset_dir(testset, by=["problemname", "problemsize"])
    table = pivot_pretty(result.accuracy, columns=["problemname", "problemsize"])
    assert list(table.columns) == [("Infer.normal", 3), ("Infer.normal", 4), ("Zeta.new", 3), ("Zeta.new", 4)]


def test_format_cell_styles():
    assert format_cell(0.756, 0.002) == "75.6 (0.4)"
    assert format_cell(-0.001, 0.005, scale=1.0) == "-0.00 (0.01)"
    assert format_cell(0.5, 0.01, "mean") == 50.0
    assert format_cell(0.5, 0.01, "conf") == pytest.approx(1.96)
    assert format_cell(0.5, 0.01, "tuple") == (50.0, pytest.approx(1.96))
    assert format_cell(0.5, 0.01, "latex") == r"50.0{\tiny $\pm 2.0$}"
    assert format_cell(0.5, 0.01, "str", scale=1000.0, decimals=0) == "500 (20)"
    with pytest.raises(ValueError, match="cell_style"):
        format_cell(0.5, 0.01, "html")


def test_grouping_by_an_unknown_field_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match=r"unknown trial field\(s\) \[.colour.\]; the trials have: .*skin"):
        analyse_results_in_testset_dir(_two_problem_set(tmp_path), by=["colour"])


def test_unknown_gold_answer_is_refused(tmp_path):
    trials = [dict(t, goldresp="MAYBE") for t in tf_tuple("t", "Infer.normal", 3)]
    directory = write_testset(tmp_path / "ts", trials, {"M": ["TRUE", "FALSE"]})
    with pytest.raises(DataError, match="unknown gold answer"):
        analyse_results_in_testset_dir(directory)


# ---- the published table (../shared/worldsense/README.md), every cell ----
# configs/papers/worldsense.yaml holds it (the report shows it next to the reproduced numbers).
PROBLEMS = [
    "Infer.trivial",
    "Infer.normal",
    "Consist.trivial",
    "Consist.normal",
    "Compl.trivial",
    "Compl.normal",
]


def test_published_table_is_reproduced_exactly(worldsense_test_set):
    result = analyse_results_in_testset_dir(worldsense_test_set)
    comparison = report.paper_comparison(result)
    assert len(comparison) == 4 + 4 * 6 * 2  # average, accuracy and bias of the four published models
    assert comparison["same"].all(), comparison[~comparison["same"]].to_string()
    first = ["average accuracy", "GPT3.5", "all", "55.6 (0.4)", "55.6 (0.4)", True]
    assert comparison.iloc[0].tolist() == first
    _, accuracy, _ = (table for _, table in report.release_tables(result))
    [(_, answers)] = report.coverage_table(result)
    assert set(answers["answered"]) == {"87,048"} and set(answers["refused"]) == {"0"}
    assert list(accuracy.columns) == PROBLEMS
    published_models = ["GPT3.5", "GPT4", "Llama2-chat", "Llama2-FT+1M"]
    assert [m for _, m in accuracy.index] == published_models  # the release's results only


def test_a_changed_cell_is_reported_as_not_reproduced(tmp_path):
    trials = tf_tuple("t1", "Infer.normal", 3) + tf_tuple("t2", "Infer.trivial", 3)
    result = analyse_results_in_testset_dir(
        write_testset(tmp_path / "ts", trials, {"GPT4": ["TRUE", "FALSE", "TRUE", "FALSE"]})
    )
    comparison = report.paper_comparison(result).set_index(["metric", "model", "problem"])
    assert comparison.loc[("accuracy", "GPT4", "Infer.normal"), "reproduced"] == "100.0 (0.0)"
    assert not comparison.loc[("accuracy", "GPT4", "Infer.normal"), "same"]
    assert comparison.loc[("accuracy", "GPT3.5", "Infer.normal"), "reproduced"] == "-"


def test_paired_tests_compare_two_models_on_the_tuples_both_answered():
    from common.worldsense.analysis import paired_tests

    acc_a = [1.0, 1.0, 0.5, 1.0, 0.5, 1.0]
    acc_b = [0.5, 1.0, 0.0, 0.5, 0.5, 0.0]
    rows = [{"prompting": "basic", "modelname": "a", "tuple_ID": t, "acc": x} for t, x in enumerate(acc_a)]
    rows += [{"prompting": "basic", "modelname": "b", "tuple_ID": t, "acc": x} for t, x in enumerate(acc_b)]
    rows.append({"prompting": "basic", "modelname": "b", "tuple_ID": 99, "acc": 1.0})  # a did not answer it
    [test] = paired_tests(pd.DataFrame(rows)).to_dict("records")
    diffs = [x - y for x, y in zip(acc_a, acc_b, strict=True)]
    assert (test["a"], test["b"], test["n"]) == ("a (basic)", "b (basic)", 6)
    assert test["diff"] == pytest.approx(sum(diffs) / 6)
    assert test["diff_low"] < test["diff"] < test["diff_high"]
    assert test["t_p"] == pytest.approx(scipy.stats.ttest_rel(acc_a, acc_b).pvalue)
    # the exact test of every suite: a is better on 4 tuples, b on none, 2 ties
    assert (test["a_better"], test["b_better"], test["p"]) == (4, 0, pytest.approx(2 * 0.5**4))
    one = pd.DataFrame([r for r in rows if r["modelname"] == "a"])
    assert paired_tests(one).empty


def test_the_figure_of_many_runs_draws_the_best_and_the_baselines_and_says_so(tmp_path, monkeypatch):
    """Past OPEN_RUNS runs the accuracy figure draws the best runs by their mean over the groups and
    the baselines (the headline's open runs), and its caption says how many it leaves out."""
    from common import leaderboard

    names = [f"m{i:02d}" for i in range(14)] + ["random"]
    rows = [
        {"prompting": "basic", "modelname": name, "problemname": problem, "mean": i / 100, "conf95": 0.01}
        for i, name in enumerate(names)
        for problem in ("Infer.trivial", "Compl.normal")
    ]
    result = Analysis(
        pd.DataFrame(),
        pd.DataFrame(rows).set_index(["prompting", "modelname", "problemname"]),
        pd.DataFrame(),
        None,
    )
    drawn = []
    monkeypatch.setattr(
        report,
        "save_png",
        lambda fig, path: drawn.extend(t.get_text() for t in fig.axes[0].get_legend().get_texts()),
    )
    caption, _ = report.plot_accuracy(result, tmp_path)
    best = [f"m{i:02d}" for i in range(13, 13 - leaderboard.OPEN_RUNS, -1)]
    assert sorted(drawn) == sorted(["chance", "random", *best])
    assert caption.endswith(
        f"the {leaderboard.OPEN_RUNS} best of 15 runs by their mean over the groups, and the baselines"
    )
    few = result.accuracy.query("modelname in ['m00', 'random']")
    drawn.clear()
    caption, _ = report.plot_accuracy(Analysis(pd.DataFrame(), few, pd.DataFrame(), None), tmp_path)
    assert sorted(drawn) == ["chance", "m00", "random"] and caption.endswith("chance 50%)")


@pytest.mark.parametrize("high", [3, 500, 10**12])  # few codes, many, too many to count (np.unique)
def test_groups_numbered_by_counting_are_np_unique_s(high):
    """``scoring._dense`` (how ``compute_acc_table`` numbers a run's tuples without sorting) gives
    what np.unique's first positions and inverse give."""
    import numpy as np

    rng = np.random.default_rng(high)
    for size in (0, 1, 257):
        ids = rng.integers(0, high, size)
        first, rank = scoring._dense(ids)
        _, expected_first, expected_rank = np.unique(ids, return_index=True, return_inverse=True)
        assert first.tolist() == expected_first.tolist() and rank.tolist() == expected_rank.tolist()
