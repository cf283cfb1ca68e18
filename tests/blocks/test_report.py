"""The blocks section: a pure function of a set's scored rows (the results database), the same as
the analysis computed from the results files before the database; refused items apart, exact
McNemar tests, figures, and the published table checked cell by cell."""

import json
from pathlib import Path

import pandas as pd
import pytest

from common import analysis, database, paths, scoring, suites
from common.blocks import SUITE
from common.blocks.items import RELEASED
from common.blocks.paper import paper_comparison, paper_table, published, released, released_runs
from common.blocks.release_runs import write_prompts, write_runs
from common.blocks.reproduce import rescore, summary
from common.jsonl import write_jsonl
from common.report import section_text
from common.stats import paired_exact_test, wilson_interval
from tests.blocks.fixtures import SECTION_BEFORE
from tests.conftest import run_script


def rows(
    outcomes: str, view: str, trivial: str = "", refused: str = "", lengths: list[int] | None = None
) -> list:
    """Results records: ``outcomes`` one character per problem: L lenient and strict, l lenient
    only, x failed, i invalid (an error), r refused; ``trivial`` marks goals that held at the start."""
    records = []
    for n, outcome in enumerate(outcomes):
        record = {"Key": n, "id": f"{n:03d}", "view": view}
        record.update(
            {
                "goal_held_initially": n < len(trivial) and trivial[n] == "t",
                "optimal_length": (lengths or [1] * len(outcomes))[n],
            }
        )
        if outcome == "r":  # what lm_plan.py records: no answer, the problem's own facts
            record.update({"resp": "", "refused": "context_length_exceeded", "error": "HTTP 400: too long"})
        else:
            record.update(
                {
                    "raw": f"plan {n}",
                    "lenient": outcome in "Ll",
                    "strict": outcome == "L",
                    "error": "no move" if outcome == "i" else None,
                }
            )
        records.append(record)
    return records


@pytest.fixture
def results_set(tmp_path):
    """A set without prompts at hand (scores as recorded): two planners and a translator with a
    feedback round, on views one and all."""
    root = tmp_path / "results" / "myset"
    write_jsonl(
        root / "nl___one" / "paper___alpha___results.jsonl",
        rows("LLLLlxxxir", "one", "tt", lengths=[0, 0, 1, 1, 2, 2, 3, 3, 3, 3]),
    )
    write_jsonl(
        root / "nl___one" / "paper___beta___results.jsonl",
        rows("LxxxxxxxLL", "one", "tt", lengths=[0, 0, 1, 1, 2, 2, 3, 3, 3, 3]),
    )
    write_jsonl(root / "nl___all" / "paper___alpha___results.jsonl", rows("xxxx", "all"))
    feedback = rows("LLxxr", "one")  # the refused problem has no rounds: it fails every one
    for record, by_round in zip(
        feedback[:4], ([True, True], [False, True], [False, False], [False, False]), strict=True
    ):
        record.update(
            {
                "feedback": 1,
                "feedback_raw": [] if by_round[0] else [f"round 1 of {record['id']}"],
                "lenient_by_round": by_round,
                "strict_by_round": by_round,
                "init_precision": 1.0,
                "init_recall": 0.5,
                "goal_precision": 1.0,
                "goal_recall": 1.0,
            }
        )
    write_jsonl(root / "pddl___one" / "paper-feedback1___gamma___results.jsonl", feedback)
    (root / "nl___two").mkdir()  # an empty run directory is not a view with results
    return SUITE.ref("myset", data=tmp_path / "data" / "myset", results_root=tmp_path / "results")


def analyse(ref, tmp_path: Path, **options) -> analysis.Section:
    """Return the section of ``ref``, its files scored into a database of ``tmp_path``."""
    scoring.score([ref], tmp_path / "results.sqlite")
    return analysis.analyse([ref], db=tmp_path / "results.sqlite", **options)


def test_the_section_is_the_one_the_analysis_computed_before_the_database(blocks_tiny, tmp_path):
    _, ref = blocks_tiny
    text = section_text(analyse(ref, tmp_path, figures_dir=tmp_path / "figures")).split("\n")
    assert text[2] == f"*  BLOCKS WORLD RESULTS IN {paths.shown(ref.results)}"
    assert "\n".join(text[5:]) == SECTION_BEFORE.read_text(encoding="utf-8")


def test_a_blocks_data_directory_is_found_by_its_path(blocks_tiny):
    repo, ref = blocks_tiny
    assert SUITE.claims(ref.data) and not SUITE.claims(ref.results) and not SUITE.claims(repo)
    assert suites.resolve_set(ref.data).key == "blocks/tiny"


def test_analyse_results_scores_the_set_once_and_prints_its_section(blocks_tiny, tmp_path):
    repo, _ = blocks_tiny
    argv = ["scripts/analyse_results.py", "-t", "data/blocks/tiny", "--csv", str(tmp_path / "s.csv")]
    first = run_script(*argv, "--database", str(tmp_path / "db.sqlite"), cwd=repo)
    assert first.returncode == 0, first.stderr
    for title in ("SUCCESS by view and run", "NEED A MOVE", "OPTIMAL PLAN LENGTH", "FEEDBACK", "PAIRED"):
        assert title in first.stdout
    assert "after round 1" in first.stdout and "REPEATED SAMPLES" in first.stdout
    assert pd.read_csv(tmp_path / "s.csv")["table"].nunique() == 5
    with database.connection(tmp_path / "db.sqlite") as conn:
        before = conn.execute("SELECT run_id, scorer FROM runs ORDER BY run_id").fetchall()
        again = run_script(*argv, "--database", str(tmp_path / "db.sqlite"), cwd=repo)
        assert again.stdout == first.stdout  # nothing changed: nothing scored again
        assert conn.execute("SELECT run_id, scorer FROM runs ORDER BY run_id").fetchall() == before
    assert len(before) == 11


def test_success_counts_refused_as_failures_and_in_a_column_of_their_own(results_set, tmp_path):
    section = analyse(results_set, tmp_path, figures_dir=tmp_path / "figures")
    table = section.data["success"].set_index(["view", "method", "prompting", "model"])
    alpha = table.loc[("one", "plan", "paper", "alpha")]
    # the same denominator as beta, who answered all 10: the refused problem is a failure
    assert (alpha.problems, alpha.lenient, alpha.strict, alpha.invalid, alpha.refused) == (10, 5, 4, 1, 1)
    assert (alpha.lenient_lo, alpha.lenient_hi) == pytest.approx([100 * b for b in wilson_interval(5, 10)])
    assert table.loc[("one", "plan", "paper", "beta")].problems == 10
    assert table.loc[("one", "LLM+planner", "paper-feedback1", "gamma")].lenient == 2
    shown = dict(section.tables)[
        "SUCCESS by view and run (%, 95% Wilson interval; a refused problem is a failure)"
    ]
    assert shown.loc[("one", "plan", "paper", "alpha"), "lenient"] == " 50.0 [ 23.7,  76.3]"
    assert shown.loc[("one", "plan", "paper", "alpha"), "refused"] == 1
    assert any("alpha (plan, paper), view one: 1 problem(s) refused" in note for note in section.notes)
    assert section.notes[0].startswith("scores as recorded (prompts or problems not at hand to re-score): ")
    hard = section.data["needs_a_move"].set_index(["view", "method", "prompting", "model"])
    assert hard.loc[("one", "plan", "paper", "alpha")].problems == 8  # 10 problems, 2 whose goal held
    assert hard.loc[("one", "plan", "paper", "alpha")].lenient == 3
    lengths = section.data["by_length"].set_index(["model", "optimal_length"])
    # the refused problem (optimal length 3, from the problem) fails in its length too
    assert lengths.loc[("alpha", 3)].problems == 4 and lengths.loc[("alpha", 3)].lenient == 0
    shown = dict(section.tables)["SUCCESS by OPTIMAL PLAN LENGTH (%, 95% Wilson interval; all views pooled)"]
    # a row per length and run (lengths in order, runs in their order), lenient and strict side by side
    assert list(shown.index)[:4] == [
        (0, "plan", "paper", "alpha"),
        (0, "plan", "paper", "beta"),
        (1, "plan", "paper", "alpha"),
        (1, "plan", "paper", "beta"),
    ]
    one = shown.loc[(1, "plan", "paper", "alpha")]  # views one and all pooled: 2 of 6
    assert (one.problems, one.lenient, one.strict) == (6, " 33.3 [  9.7,  70.0]", " 33.3 [  9.7,  70.0]")
    rounds = section.data["feedback"]
    assert list(rounds["lenient"]) == [1, 2] and list(rounds["round"]) == [0, 1]
    assert list(rounds["problems"]) == [5, 5] and list(rounds["lenient_rate"]) == [20.0, 40.0]
    assert [v for v, *_ in section.data["success"][["view"]].drop_duplicates().values] == ["one", "all"]
    assert 1 <= len(section.summary) <= 3 and section.paper is None  # not one of the paper's sets
    assert len(section.figures) == 2 and all(path.stat().st_size > 10_000 for _, path in section.figures)
    assert section.figures[0][1].read_bytes()[:4] == b"\x89PNG"


def test_the_exact_paired_test_between_every_two_runs_on_the_problems_both_files_hold(results_set, tmp_path):
    tests = analyse(results_set, tmp_path).data["paired"].set_index(["view", "a", "b"])
    pair = tests.loc[("one", "alpha (plan, paper)", "beta (plan, paper)")]
    # alpha LLLLlxxxir, beta LxxxxxxxLL: 10 shared, alpha's refused 9 a failure where beta succeeded;
    # lenient alpha only 4 (1-4), beta only 2 (8, 9)
    assert (pair.n, pair.a_better, pair.b_better) == (10, 4, 2)
    expected = paired_exact_test([True] * 5 + [False] * 5, [True] + [False] * 7 + [True, True])
    assert pair.p == pytest.approx(expected.p) and (pair.strict_a_better, pair.strict_b_better) == (3, 2)
    assert ("one", "alpha (plan, paper)", "gamma (LLM+planner, paper-feedback1)") in tests.index
    assert len(tests) == 3  # view all has one run: no pair


def test_the_database_pairs_are_the_section_s_paired_tests_in_its_order(blocks_tiny, tmp_path):
    _, ref = blocks_tiny
    section = analyse(ref, tmp_path)
    shown = section.data["paired"]
    with database.connection(tmp_path / "results.sqlite") as conn:
        paired = pd.read_sql_query("SELECT view, a, b, rule, n, a_better, b_better FROM paired", conn)
    expected = [
        (row.view, row.a, row.b, rule, row.n, *better)
        for row in shown.itertuples()
        for rule, better in (
            ("lenient", (row.a_better, row.b_better)),
            ("strict", (row.strict_a_better, row.strict_b_better)),
        )
    ]
    assert [tuple(row) for row in paired.itertuples(index=False)] == expected and len(expected) == 50


def test_the_published_table_is_reproduced_cell_by_cell(release):
    comparison = paper_comparison(summary(rescore(release)))
    paper = published()
    expected = sum(
        len(views)
        for source in ("published", "measured")
        for methods in paper[source].values()
        for views in methods.values()
    )
    assert len(comparison) == expected == 21
    assert comparison["same"].all(), comparison[~comparison["same"]]
    cells = comparison.set_index(["measure", "method", "view"])
    assert cells.loc[("lenient", "codex", "all"), "reproduced"] == "72"
    assert cells.loc[("needs a move", "gpt", "one"), "reproduced"] == "3/60"
    assert cells.loc[("lenient", "gpt", "two"), "published"] == str(
        paper["published"]["lenient"]["gpt"]["two"]
    )


def test_a_changed_cell_is_shown_as_different(release):
    reproduced = summary(rescore(release))
    changed = reproduced.copy()
    target = (changed.measure == "lenient") & (changed.method == "codex") & (changed.view == "two")
    changed.loc[target, "successes"] = 91
    comparison = paper_comparison(changed)
    assert list(comparison.loc[~comparison["same"], "reproduced"]) == ["91"]
    table = paper_table(comparison)
    assert table.loc[("published", "lenient", "codex"), "two"] == "92 ≠ 91"
    assert table.loc[("published", "lenient", "gpt"), "one"] == "40 ✓"


def test_the_release_is_scored_like_any_run_and_the_paper_table_read_from_the_database(
    results_set, release, tmp_path
):
    paper_set = SUITE.ref("cogsci_problems", data=results_set.data, results_root=tmp_path / "paper")
    paper_set.results.parent.mkdir()
    results_set.results.rename(paper_set.results)
    missing = analyse(paper_set, tmp_path)
    assert missing.paper is None and any("results/blocks/released/.scored" in note for note in missing.notes)
    # the release's answers as runs of the set `released`, scored into the database like any run
    released_set = SUITE.ref(RELEASED, data=tmp_path / "data" / RELEASED, results_root=tmp_path / "runs")
    write_prompts(released_set.data, release)
    files = write_runs(released_set.data, released_set.results, release)
    db = tmp_path / "results.sqlite"  # the database the section reads (not the default one)
    assert scoring.score([released_set], db).scored == len(files) == 6
    with database.connection(db, readonly=True) as conn:
        runs = conn.execute(
            "SELECT model, view, records, settings, labels FROM run_rows WHERE set_name = 'released' "
            "ORDER BY 1, 2"
        ).fetchall()
    assert [(model, view, records, settings) for model, view, records, settings, _ in runs] == [
        (model, view, 100, None)
        for model in ("cogsci22-codex", "cogsci22-gpt-neo")
        for view in ("all", "one", "two")
    ]
    assert json.loads(runs[0][4])["source"].endswith("cogsci22_blocks/codex_translations/all/collated.json")
    # read back from the database: every answer scored as the reproduction scores the release
    assert released_runs() is None or released_runs().runs.empty  # the default database holds none
    rows = released(released_runs(db))
    expected = rescore(release)[["method", "view", "id", "recorded", "lenient", "strict", "trivial"]]
    pd.testing.assert_frame_equal(rows, expected.sort_values(["method", "view", "id"]).reset_index(drop=True))
    section = analyse(paper_set, tmp_path)
    assert section.summary[0] == (
        "blocks paper table: 6 of 6 published cells reproduced exactly (21 of 21 with the measured facts)"
    )
    assert "Paper vs reproduced" in section_text(section) and not set(files) & set(section.inputs)


def test_paired_tests_never_join_two_sets_whose_problem_ids_agree():
    """A problem's id names a different problem in each set (003 of cogsci_problems is not 003 of
    scaling): the suite pairs two runs of one set only, however their ids agree."""
    runs = pd.DataFrame(
        {
            "run_id": [1, 2, 3, 4],
            "set_name": ["alpha", "alpha", "beta", "beta"],
            "results_file": [
                f"results/blocks/{s}/one/paper___{m}___results.jsonl"
                for s, m in [("alpha", "a"), ("alpha", "b"), ("beta", "a"), ("beta", "b")]
            ],
            "method": ["plan"] * 4,
            "prompting": ["paper"] * 4,
            "model": ["a", "b", "a", "b"],
            "view": ["one"] * 4,
        }
    )
    units = pd.DataFrame({"run_id": [1, 2, 3, 4] * 2, "unit": ["003"] * 4 + ["004"] * 4})
    chosen = SUITE.part("pairs")(runs, units)
    assert sorted({(a, b) for a, b, _ in chosen}) == [(1, 2), (3, 4)]
    assert len(chosen) == 4  # each pair under the lenient and the strict rule
