"""A report of a hundred runs reads well: headlines sorted by their measure with the best runs and
the baselines open and the rest folded; the paired tests printed chosen by the rule the table
states, with the correction named; the examples drawn for those tests only; every pair's exact
test counted in one array operation, the same numbers as one test at a time."""

import itertools

import numpy as np
import pandas as pd

from common import leaderboard, render, stats
from tests.test_report_layout import _prov, _suite_sections


def _models(n: int) -> list[str]:
    return [f"model-{i:03d} (basic)" for i in range(n)]


def test_every_pair_counted_at_once_is_the_test_of_each_pair_alone():
    rng = np.random.default_rng(7)
    scores = pd.DataFrame((rng.random((300, 9)) < rng.random(9)).astype(float), columns=_models(9))
    scores = scores.mask(rng.random(scores.shape) < 0.2)  # units some runs did not score
    scores.iloc[:, 3] = rng.integers(0, 4, 300) / 3  # shares, not booleans: the sign test
    tests = stats.pairwise_exact_tests(scores)
    assert len(tests) == 36
    for row, (a, b) in zip(tests.itertuples(), itertools.combinations(scores.columns, 2), strict=True):
        both = scores[[a, b]].dropna()
        alone = stats.paired_exact_test(both[a].tolist(), both[b].tolist())
        assert (row.a, row.b, row.n) == (a, b, len(both))
        assert (row.a_better, row.b_better, row.p) == (alone.a_better, alone.b_better, alone.p)


def test_a_hundred_runs_print_each_against_the_next_and_the_best_baseline():
    ranked = ["model-a", *_models(98), "random (basic)"]  # best first; the only baseline last
    pairs = leaderboard.rule_pairs(ranked, frozenset({"random", "oracle"}))
    assert len(pairs) == 2 * (len(ranked) - 1) - 1  # the last run's next is the baseline itself
    assert all(frozenset(p) in pairs for p in itertools.pairwise(ranked))
    assert all(frozenset((run, "random (basic)")) in pairs for run in ranked[:-1])
    few = ranked[: leaderboard.ALL_PAIRS_UP_TO]
    assert len(leaderboard.rule_pairs(few, frozenset())) == len(few) * (len(few) - 1) // 2


def _paired_section(runs: list[str], values: list[float]) -> dict:
    rows = [[a, b, "10", "1", "2", "0.5"] for a, b in itertools.combinations(runs, 2)]
    title = "Paired exact tests"
    return {
        "suite": "canvas",
        "title": "Canvas: toy",
        "paired_table": title,
        "tables": [{"title": title, "columns": ["a", "b", "n", "a better", "b better", "p"], "rows": rows}],
        "headline": {
            "cells": [[r, "toy", f"{v:.1f} [0.0, 100.0]", 100] for r, v in zip(runs, values, strict=True)]
        },
    }


def test_the_paired_table_keeps_the_rule_s_pairs_and_names_the_rule_and_the_correction():
    runs = [*_models(20), "random"]
    values = [50.0 + i for i in range(20)] + [30.0]  # model-019 best, random the baseline
    chosen = leaderboard.choose_pairs(_paired_section(runs, values))
    table = chosen["tables"][0]
    kept = {frozenset(r[:2]) for r in table["rows"]}
    assert frozenset(("model-019 (basic)", "model-018 (basic)")) in kept  # next ranked
    assert frozenset(("model-000 (basic)", "random")) in kept  # against the best baseline
    assert frozenset(("model-019 (basic)", "model-000 (basic)")) not in kept
    assert len(kept) == 2 * 20 - 1
    assert (
        chosen["paired_table"] == table["title"] and "Bonferroni over the 39 tests printed" in table["title"]
    )
    # the examples: the printed tests between the open runs (the best 10 and the baseline), said so
    opened = {f"model-{i:03d} (basic)" for i in range(10, 20)} | {"random"}
    assert chosen["shown_pairs"] == [r[:2] for r in table["rows"] if set(r[:2]) <= opened]
    assert len(chosen["shown_pairs"]) == 9 + 10 and chosen["shown_pairs_partial"]
    small = leaderboard.choose_pairs(_paired_section(runs[:4], values[:4]))
    assert len(small["tables"][0]["rows"]) == 6 and small["shown_pairs"] is None  # every pair
    assert not small["shown_pairs_partial"]
    assert "every pair" in small["paired_table"]


def test_a_headline_is_sorted_best_first_and_folds_past_the_best_runs_keeping_the_baselines(tmp_path):
    records = _suite_sections(tmp_path)
    (part,) = render.suite_parts(records)
    assert part.table["rows"][0][0] == "oracle" and part.rest is None
    rows = [[name, f"{i}.0 [0.0, 100.0]"] for i, name in enumerate(_models(30))] + [
        ["random", "1.0 [0.0, 2.0]"]
    ]
    ordered = leaderboard.sort_rows(rows)
    assert [r[0] for r in ordered[:2]] == ["model-029 (basic)", "model-028 (basic)"]
    shown, rest = leaderboard.split_rows(ordered, frozenset({"random"}))
    assert len(shown) == leaderboard.OPEN_RUNS + 1 and shown[-1][0] == "random"
    assert len(rest) == 30 - leaderboard.OPEN_RUNS and rest[0][0] == "model-019 (basic)"
    # a figure of the runs draws the same runs as the headline opens
    assert leaderboard.open_runs([r[0] for r in ordered], frozenset({"random"})) == [r[0] for r in shown]
    records[0]["headline"]["cells"] += [[name, "one", cell, 100] for name, cell in rows]
    (part,) = render.suite_parts(records)
    assert len(part.table["rows"]) == leaderboard.OPEN_RUNS  # the toy suite has no baselines
    assert len(part.rest["rows"]) == 2 + 31 - leaderboard.OPEN_RUNS  # its two runs and the 31 added
    markdown = render.render_markdown(records, _prov(), {})
    assert f"<details><summary>The other {len(part.rest['rows'])} runs, best first" in markdown
    # one headline table per suite: the folded rest is not marked as one (the page's check counts them)
    page = render.render_html(records, _prov())
    assert page.count('<table class="headline">') == 1


def test_examples_of_a_table_the_rule_cannot_read_follow_the_rule_on_the_database_s_units():
    import sqlite3

    from common import examples

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE units (run_id INTEGER, unit TEXT, rule TEXT, score REAL)")
    runs = list(range(1, 13))  # 12 runs of one set: run 12 best, run 1 ("random") the baseline
    conn.executemany("INSERT INTO units VALUES (?, 'u', 'r', ?)", [(r, r / 100) for r in runs])
    label = {r: "random (s)" if r == 1 else f"m{r} (s)" for r in runs}
    tests = [
        {
            "pair_id": i,
            "set_id": 1,
            "view": float("nan"),
            "rule": "r",
            "run_a": a,
            "run_b": b,
            "a": label[a],
            "b": label[b],
        }
        for i, (a, b) in enumerate(itertools.combinations(runs, 2))
    ]
    kept, left_out = examples._rule_tests(conn, tests, frozenset({"random"}))
    pairs = {frozenset((t["run_a"], t["run_b"])) for t in kept}
    # the rule's pairs (each run with the next and the baseline) between the open runs: m12..m3
    # (the best 10) and random; m2, the eleventh, left to the explorer
    opened = [*range(3, 13), 1]
    rule = {frozenset((r, r - 1)) for r in runs[1:]} | {frozenset((r, 1)) for r in runs[1:]}
    assert pairs == {p for p in rule if p <= set(opened)} and left_out
    assert examples._rule_tests(conn, tests[:6], frozenset()) == (tests[:6], False)  # 4 runs: every pair


def test_already_said_that_tests_the_printed_pairs_only_past_eight_runs_a_set():
    """Its survival tests of a set's runs follow the report's rule: every pair up to eight runs,
    past that each run against the next ranked by average turns and against the best baseline,
    2(N - 1) tests of N runs (the rest stays in the explorer), not N(N - 1)/2."""
    from common.already_said_that.tables import _printed_pairs

    def runs(n):
        names = ["random", *(f"m{i:02d}" for i in range(n - 1))]
        return [{"model": name, "frame": pd.DataFrame({"turns": [i, i + 1]})} for i, name in enumerate(names)]

    assert len(_printed_pairs(runs(8))) == 28
    chosen = {frozenset((a["model"], b["model"])) for a, b in _printed_pairs(runs(30))}
    assert len(chosen) == 2 * 29 - 1  # the baseline ranks last: its neighbour's pair is counted once
    assert frozenset(("m28", "m27")) in chosen and frozenset(("m28", "random")) in chosen
    assert frozenset(("m28", "m10")) not in chosen


def test_a_figure_of_many_models_draws_the_headline_s_open_runs():
    """Already Said That's figures past OPEN_RUNS models draw the headline's open runs: the best
    by the headline's first cell and the baselines; none left out with fewer."""
    from common.report import headline

    cells = [(f"m{i:02d}", "set", f"{i}.0", 10) for i in range(14)] + [("random", "set", "0.5", 10)]
    drawn = leaderboard.open_headline_runs(headline("turns", "conversation", cells), "already_said_that")
    assert drawn == [f"m{i:02d}" for i in range(13, 13 - leaderboard.OPEN_RUNS, -1)] + ["random"]
    assert (
        leaderboard.open_headline_runs(headline("turns", "conversation", cells[:3]), "already_said_that")
        is None
    )


def test_failure_examples_past_the_open_runs_are_the_best_runs_and_the_baselines_s(monkeypatch):
    """A set of many runs shows the failures of its OPEN_RUNS most accurate runs and its baselines
    (the rest in the explorer, which the block says); a set of few shows every run's."""
    import sqlite3

    from common import examples

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE runs (run_id INTEGER, label TEXT, set_id INTEGER, results_file TEXT)")
    conn.execute("CREATE TABLE run_counts (run_id INTEGER, correct_pct REAL)")
    runs = [(r, "random (s)" if r == 1 else f"m{r:02d} (s)", 1, f"f{r}") for r in range(1, 16)]
    runs += [(100 + r, f"m{r} (t)", 2, f"g{r}") for r in range(3)]  # another set, three runs
    conn.executemany("INSERT INTO runs VALUES (?, ?, ?, ?)", runs)
    conn.executemany("INSERT INTO run_counts VALUES (?, ?)", [(r[0], r[0] % 17) for r in runs])
    asked = []
    monkeypatch.setattr(
        examples, "_failures", lambda conn, run, limit: asked.append(run) or pd.DataFrame({"unit": ["u"]})
    )
    found, left_out = examples.failure_examples(conn, [r[3] for r in runs], 2, frozenset({"random"}))
    best = list(range(15, 15 - leaderboard.OPEN_RUNS, -1))
    assert asked == sorted([1, *best, 100, 101, 102]) and left_out == 15 - 1 - leaderboard.OPEN_RUNS
    assert list(found["run"]) == [label for run, label, *_ in runs if run in asked]
    asked.clear()
    assert examples.failure_examples(conn, ["g0", "g1", "g2"], 2)[1] == 0 and asked == [100, 101, 102]
