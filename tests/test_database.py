"""The results database: its rows are the results files' (counts and a content checksum per run),
its paired tests and canned queries give the figures each suite's report prints, each distinct
text is stored once, it is updated one results file at a time, and it is the same whatever the
hash seed. Built from small sets of every suite written in a temporary directory."""

import contextlib
import hashlib
import json
import os
import re
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from common import (
    analysis,
    database,
    dbarrays,
    dbfile,
    examples,
    forget,
    queries,
    render,
    report,
    run_identity,
    suites,
)
from common.canvas.scoring import response_text
from common.jsonl import sha256_file, write_jsonl
from common.paths import ROOT
from common.results import RUN_FIELD, read_results, token_use
from common.suite import SetRef
from tests.already_said_that.fixtures import write_set
from tests.conftest import run_script
from tests.sandbox import shipped
from tests.worldsense.fixtures import answers_for, compl_tuple, tf_tuple, write_testset


def _worldsense(data: Path) -> None:
    """Three runs of a 5-tuple test set: two plain files and one as the shared runner writes, with a
    reply cut at the token limit, a refused trial and a reasoning model's thinking."""
    trials = [*tf_tuple("t1", "Infer.normal", 3), *tf_tuple("t2", "Infer.trivial", 4)]
    trials += [*tf_tuple("t3", "Infer.normal", 4), *compl_tuple("t4"), *tf_tuple("t5", "Infer.trivial", 3)]
    answers = [*answers_for(trials[:6], [1, 0, 1]), "1", "3", "3", *answers_for(trials[9:], [0])]
    others = [*answers_for(trials[:6], [0, 1, 1]), "1", "2", "3", *answers_for(trials[9:], [1])]
    testset = write_testset(data / "worldsense" / "test_set", trials, {"A": answers, "B": others})
    runner = []
    for key, trial in enumerate(trials, start=100):
        record = {
            "Key": key,
            "resp": trial["goldresp"],
            "raw": [trial["goldresp"]],
            "finish_reason": ["stop"],
        }
        record.update(completion_tokens=5, reasoning_tokens=3, reasoning=["<think> & \x1b[31m"])
        runner.append(record)
    cut = "<script>alert('x')</script>\x00\x1b[31m|thinking..."  # model text: escaped wherever shown
    runner[0] = {**runner[0], "resp": "", "raw": [cut], "finish_reason": ["length"]}
    runner[3] = {"Key": 103, "resp": "", "refused": "context_length_exceeded", "error": "too long"}
    write_jsonl(testset / "results" / "basic___C___results.jsonl", runner)


def _blocks(results: Path) -> None:
    """Two planners on view one, one on view all, scores as recorded (no prompts at hand)."""

    def records(outcomes: str, view: str) -> list[dict]:
        rows = []
        for n, outcome in enumerate(outcomes):
            record = {"Key": 1000 * (view == "all") + n, "id": f"{n:03d}", "view": view, "optimal_length": n}
            record["goal_held_initially"] = False
            if outcome == "r":
                record.update(resp="", refused="context_length_exceeded", error="HTTP 400")
            else:
                record.update(
                    raw=f"plan {n}", lenient=outcome in "Ll", strict=outcome == "L", plan=["Move x."]
                )
            rows.append(record)
        return rows

    root = results / "blocks" / "myset"
    write_jsonl(root / "nl___one" / "paper___alpha___results.jsonl", records("LLlxxr", "one"))
    write_jsonl(root / "nl___one" / "paper___beta___results.jsonl", records("xLLLxL", "one"))
    write_jsonl(root / "nl___all" / "paper___alpha___results.jsonl", records("Lx", "all"))


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> dict[str, list[SetRef]]:
    """Results of every suite under a temporary results/ and data/: the sets, by suite."""
    base = tmp_path_factory.mktemp("project")
    data, results = base / "data", base / "results"
    _worldsense(data)
    _blocks(results)
    canvas = data / "canvas" / "small"
    done = run_script(
        "scripts/generate_problems.py", "-t", "canvas/standard", "--out", str(canvas),
        "--set", "items=2", "--set", "num_shapes=[3, 12]",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for model in ("oracle", "random"):
        done = run_script("scripts/ask_model.py", "-t", str(canvas), "--model", model, "--results-dir",
                          str(results / "canvas"))  # fmt: skip
        assert done.returncode == 0, done.stderr
    asat = []
    for variant in ("mixed", "distractorless"):
        set_dir = write_set(data / "already_said_that" / variant, variant, samples=8)
        for model in ("oracle", "random"):
            done = run_script("scripts/already_said_that.py", "-t", str(set_dir), "--model", model,
                              "--results-dir", str(results / "already_said_that"))  # fmt: skip
            assert done.returncode == 0, done.stderr
        asat.append(suites.get("already_said_that").ref(variant, set_dir, results / "already_said_that"))
    return {
        "worldsense": [suites.get("worldsense").ref("test_set", data / "worldsense" / "test_set")],
        "blocks": [suites.get("blocks").ref("myset", data / "blocks" / "myset", results / "blocks")],
        "canvas": [suites.get("canvas").ref("small", canvas, results / "canvas")],
        "already_said_that": asat,
    }


def _all(project: dict[str, list[SetRef]]) -> list[SetRef]:
    return [ref for refs in project.values() for ref in refs]


@pytest.fixture(scope="module")
def db(project, tmp_path_factory) -> sqlite3.Connection:
    path = tmp_path_factory.mktemp("db") / "results.sqlite"
    conn = database.connect(path)
    counts = database.update(conn, _all(project))
    assert counts.scored == 3 + 3 + 2 + 4 and conn.execute("SELECT count(*) FROM pairs").fetchone()[0] > 0
    yield conn
    conn.close()


def _sections(project: dict[str, list[SetRef]], db_path: Path) -> dict[str, analysis.Section]:
    """The report's section of each suite on the project's sets, from the database ``db_path``."""
    return {suite: analysis.analyse(refs, db=db_path) for suite, refs in project.items()}


@pytest.fixture(scope="module")
def sections(project, db):
    path = Path(db.execute("PRAGMA database_list").fetchone()[2])
    return _sections(project, path)


# ---- the rows are the results files' --------------------------------------------------------------
def _checksum(rows) -> str:
    """SHA-256 of rows (Key, turn, reply), sorted: the content a run's answers must carry."""
    text = json.dumps(sorted((int(k), int(t), str(r or "")) for k, t, r in rows), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _file_rows(suite: str, file: Path) -> list[tuple]:
    """The (Key, turn, reply) of a results file, read the way each suite's scorer reads a reply."""
    records = read_results(file)
    if suite == "already_said_that":
        lines = [json.loads(line) for line in file.with_name(file.name.replace("results", "turns")).open()]
        return [(x["Key"], x["turn"], "" if "refused" in x else x["reply"]) for x in lines]
    if suite == "worldsense":
        return [(r["Key"], 0, (r.get("raw") or [r["resp"]])[-1]) for r in records]
    if suite == "canvas":
        return [(r["Key"], 0, "" if r.get("refused") else response_text(r)) for r in records]
    return [(r["Key"], 0, r.get("raw") or "") for r in records]  # blocks, as recorded


def test_every_run_holds_its_results_file_rows_counts_and_content(db):
    runs = pd.read_sql_query("SELECT * FROM run_rows JOIN runs USING (run_id)", db)
    assert sorted(set(runs["suite"])) == sorted(suites.names())
    for run in runs.itertuples():
        file = Path(run.results_file)
        assert run.sha256 == sha256_file(file) and run.records == len(read_results(file))
        stored = db.execute(
            "SELECT a.Key, a.turn, y.text FROM answers a LEFT JOIN texts y ON y.text_id = a.reply "
            "WHERE a.run_id = ? AND (a.turn > 0 OR a.question IS NULL) AND a.detail IS NOT 'conversation'",
            (run.run_id,),
        ).fetchall()
        if run.suite == "already_said_that":  # turn 0 is the conversation itself, not a reply
            stored = [row for row in stored if row[1] > 0]
        assert len({key for key, _, _ in stored}) == run.records, run.label
        assert _checksum(stored) == _checksum(_file_rows(run.suite, file)), run.label


def test_every_distinct_text_is_stored_once(db):
    texts, distinct = db.execute("SELECT count(*), count(DISTINCT text) FROM texts").fetchone()
    assert texts == distinct > 0
    shown = db.execute(
        "SELECT count(*), count(DISTINCT question) FROM answer_rows WHERE question IS NOT NULL"
    )
    cells, kept = shown.fetchone()
    assert cells > kept  # Already Said That's questions repeat across conversations: kept once


def test_items_say_what_was_asked_and_every_answer_has_its_item(db):
    missing = db.execute("SELECT count(*) FROM answer_rows WHERE unit IS NULL").fetchone()[0]
    assert missing == 0  # the blocks set's answers as recorded (prompts not at hand) say their items
    item = db.execute(
        "SELECT i.unit, i.task, i.size, p.text, i.gold FROM items i JOIN sets s USING (set_id) "
        "JOIN texts p ON p.text_id = i.prompt WHERE s.suite = 'worldsense' AND i.Key = 100"
    )
    assert item.fetchone() == ("t1", "Infer.normal", 3, "t1 question 0", "TRUE")
    canvas = db.execute(
        "SELECT count(*), count(DISTINCT unit) FROM items JOIN sets USING (set_id) WHERE suite = 'canvas'"
    ).fetchone()
    assert canvas[0] > canvas[1] > 0  # an item's variants share one unit


def test_reasoning_refusals_and_cut_replies_are_kept(db):
    row = db.execute(
        "SELECT reasoning, truncated, finish_reason, correct FROM answer_rows WHERE model = 'C' AND Key = 100"
    ).fetchone()
    assert row == ("<think> & \x1b[31m", 1, "length", 0)
    flagged = queries.run_query(db, "truncated_or_refused").query("suite == 'worldsense'")
    assert len(flagged) == 2 and list(flagged["refused"].dropna()) == ["context_length_exceeded"]


# ---- the figures the report prints ----------------------------------------------------------------
def _paired(section: analysis.Section) -> pd.DataFrame:
    """The section's paired tests as (a, b, a_better, b_better), in the database's run names."""
    tests = section.data.get("paired", section.data.get("logrank"))
    if section.suite == "worldsense":
        from common.worldsense.analysis import analyse_results_in_testset_dir, paired_tests

        tests = paired_tests(analyse_results_in_testset_dir(section.inputs[0].parent).tuples)
    if section.suite == "already_said_that":  # "<set>: <model> vs <model>" or "<model>: <set> vs <set>"
        tests = pd.concat([section.data["logrank"], section.data["variants"]], ignore_index=True)
        sets = {p.parent.name for p in section.inputs}
        prefix = tests["comparison"].str.split(":").str[0]
        tests = tests.assign(
            a=[f"{a} ({p})" if p in sets else f"{p} ({a})" for p, a in zip(prefix, tests["a"], strict=True)],
            b=[f"{b} ({p})" if p in sets else f"{p} ({b})" for p, b in zip(prefix, tests["b"], strict=True)],
        )
    return tests[["a", "b", "a_better", "b_better"]].reset_index(drop=True)


@pytest.mark.parametrize("suite", suites.names())
def test_the_paired_tests_and_the_disagreements_query_give_the_report_s_counts(db, sections, suite):
    rule = {"blocks": "lenient"}.get(suite)
    found = pd.read_sql_query(
        "SELECT a, b, a_better, b_better, run_a, run_b FROM paired "
        "WHERE suite = ? AND rule = coalesce(?, rule)",
        db,
        params=(suite, rule),
    )
    expected = _paired(sections[suite])
    assert not expected.empty
    records = found[["a", "b", "a_better", "b_better"]].to_dict("records")
    assert sorted(records, key=str) == sorted(expected.to_dict("records"), key=str)
    for test in found.itertuples():
        pages, page = [], 1
        while page == 1 or len(pages[-1]) == queries.PAGE:  # every page of PAGE units, then a short one
            given = {"run_a": str(test.run_a), "run_b": str(test.run_b), "rule": "", "page": str(page)}
            pages.append(queries.run_query(db, "disagreements", **given))
            page += 1
        rows = pd.concat(pages, ignore_index=True)
        assert len(rows) == test.a_better + test.b_better and len(pages[0]) <= queries.PAGE
        assert not rows.duplicated(["better", "unit"]).any()
        if len(rows):
            runs = rows["runs"][0]  # every row names both runs: model, prompting, set, id
            assert (
                runs.startswith("a: ")
                and f"[run {test.run_a}]; b: " in runs
                and runs.endswith(f"[run {test.run_b}]")
            )
            assert (rows["discordant"] == len(rows)).all() and rows["a_better"].iloc[0] == test.a_better
            assert rows["reply_a"].notna().all() and rows["reply_b"].notna().all()


def test_the_headline_queries_give_the_report_s_figures(db, sections):
    average = sections["worldsense"].data["stats"].query("metric == 'average_accuracy'")
    found = queries.run_query(db, "worldsense_average_accuracy")
    assert list(found["accuracy_pct"]) == [round(100 * m, 1) for m in average["mean"]]
    by_task = sections["canvas"].data["accuracy_by_task"]
    overall = (by_task["strict"] * by_task["trials"]).groupby(by_task["model"], sort=False).sum()
    overall /= by_task.groupby("model", sort=False)["trials"].sum()
    found = queries.run_query(db, "canvas_strict_accuracy").set_index("label")
    assert {m: found.loc[m, "strict_pct"] for m in overall.index} == {
        m: round(100 * v, 1) for m, v in overall.items()
    }
    success = sections["blocks"].data["success"]
    found = queries.run_query(db, "blocks_success_by_view")
    assert list(found["lenient_pct"]) == [
        round(r, 1) for r in success.sort_values(["view", "model"])["lenient_rate"]
    ]
    metrics = sections["already_said_that"].data["metrics"]
    found = queries.run_query(db, "already_said_that_average_turns")
    expected = {(m.set, m.model): round(m.avg_num_turns, 1) for m in metrics.itertuples()}
    assert {(r.set_name, r.model): r.avg_turns for r in found.itertuples()} == expected


def test_failures_by_group_sum_to_the_report_s_accuracy_by_task_and_size(db, sections):
    by_size = sections["canvas"].data["accuracy_by_size"]
    for run_id, label in db.execute("SELECT run_id, label FROM run_rows WHERE suite = 'canvas'").fetchall():
        found = queries.run_query(db, "failures_by_group", run=str(run_id)).groupby(["task", "size"]).sum()
        mine = by_size[by_size["model"] == label].set_index(["task", "num_shapes"])
        assert (found["answers"] - found["failures"]).to_dict() == (
            mine["strict"] * mine["trials"]
        ).round().to_dict()
        listed = queries.run_query(db, "failures", run=str(run_id))
        assert len(listed) == min(queries.PAGE, found["failures"].sum())
        assert (listed["failures"] == found["failures"].sum()).all() and (found["counted"] != "").all()


def test_the_runs_query_counts_each_run_and_its_failures_show_why(db):
    runs = queries.run_query(db, "runs")
    assert sorted(runs["run_id"]) == [i for (i,) in db.execute("SELECT run_id FROM runs ORDER BY 1")]
    for run in runs.itertuples():  # each count as the run's own queries give it
        groups = queries.run_query(db, "failures_by_group", run=str(run.run_id))
        listed = queries.run_query(db, "failures", run=str(run.run_id))
        assert run.failures == groups["failures"].sum() == (listed["failures"].iloc[0] if len(listed) else 0)
        answers = db.execute("SELECT count(*) FROM answers WHERE run_id = ?", (run.run_id,)).fetchone()[0]
        scored = groups["answers"].sum()
        assert run.answers == answers and run.correct_pct == round(100 * (1 - run.failures / scored), 1)
    c = runs.query("model == 'C' and `set` == 'worldsense/test_set'").iloc[0]
    assert (c["prompting"], c["refused"], c["truncated"], c["counted"]) == (
        "basic",
        1,
        1,
        "trial (report: tuple)",
    )
    # a failure says why: the server's message (a refusal), the scorer's findings (a blocks plan)
    failures = queries.run_query(db, "failures", run=str(c["run_id"]))
    assert failures.query("Key == 103")[["refused", "error"]].values.tolist() == [
        ["context_length_exceeded", "too long"]
    ]
    blocks = db.execute("SELECT run_id FROM run_rows WHERE suite = 'blocks' ORDER BY run_id").fetchall()
    details = [d for (run,) in blocks for d in queries.run_query(db, "failures", run=str(run))["detail"]]
    assert details and all(json.loads(d) for d in details)


def test_the_flagged_answers_are_the_token_budget_s_cut_replies_and_the_refusals(db):
    files = [Path(f) for (f,) in db.execute("SELECT results_file FROM runs").fetchall()]
    cut = sum(token_use(read_results(f))["cut"] for f in files)
    refused = sum(bool(r.get("refused")) for f in files for r in read_results(f))
    flagged = queries.run_query(db, "truncated_or_refused")
    assert (flagged["all_cut"].iloc[0], flagged["all_refused"].iloc[0]) == (cut, refused) == (1, 2)


# ---- the report's examples -----------------------------------------------------------------------
def test_the_report_shows_examples_from_the_database_escaped(db, sections, tmp_path):
    records = []
    for name, section in sections.items():
        report.save_section(section, tmp_path / f"{name}.json")
        records.append(examples.attach(report.load_section(tmp_path / f"{name}.json"), db))
    prov = {
        "date": "d",
        "commit": "c",
        "uncommitted_changes": False,
        "pinned_data": [],
        "inputs": [],
        "models": [],
    }
    prov["configs"] = []
    page, markdown = render.render_html(records, prov), render.render_markdown(records, prov, {})
    for record in records:
        pairs = record["examples"]["pairs"]
        of_suite = (
            "SELECT run_a, run_b, rule FROM pairs JOIN sets USING (set_id) WHERE suite = ? ORDER BY pair_id"
        )
        listed = db.execute(of_suite, (record["suite"],)).fetchall()
        assert len(pairs) == len(listed)
        for pair, test in zip(pairs, listed, strict=True):
            found = queries.run_query(db, "disagreements", run_a=test[0], run_b=test[1], rule=test[2])
            for table in pair["tables"]:
                cell = "a" if table["title"].startswith("a better") else "b"
                units = [row[0] for row in table["rows"]]
                assert units == list(found[found["better"] == cell]["unit"][: len(units)]) and len(units) <= 3
                assert all(f"<td>{unit}</td>" in page for unit in units)
        assert record["examples"]["failures"]["tables"][0]["rows"]
    assert "Examples behind the paired test" in page and "Failures: the first 2 wrong answers" in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;\\x00\\x1b[31m|thinking" in page
    assert "<script>" not in page and "\x1b" not in page and "\x00" not in page
    assert "&lt;script&gt;alert('x')&lt;/script&gt;\\x00\\x1b[31m\\|thinking" in markdown
    assert "<script>" not in markdown and "\x1b" not in markdown


def test_the_report_s_failures_are_the_failures_query_s_first_rows(db):
    # the report walks a run's items in unit order and stops (examples.FIRST_FAILURES); the
    # explorer's query sorts and counts every wrong answer: the same first rows
    columns = ["unit", "Key", "turn", "gold", "answer", "reply", "prompt", "picture"]
    for (run_id,) in db.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall():
        listed = queries.run_query(db, "failures", run=str(run_id))
        for limit in (1, 2, queries.PAGE):
            found = examples._failures(db, run_id, limit)
            assert found[columns].equals(listed[columns].head(limit).reset_index(drop=True))


# ---- determinism, the script, the explorer's metadata ------------------------------------------------
def _content(path: Path) -> dict[str, list]:
    """Every table's rows in a fixed order, the file's own stats left out: the database's content
    (not its bytes, nor when it was built)."""
    with sqlite3.connect(path) as conn:
        found = {}
        for table in ("sets", "items", "texts", "answers", "scores", "units", "pairs", "meta"):
            found[table] = conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
        found["runs"] = conn.execute(
            "SELECT run_id, set_id, results_file, sha256, scorer, label, records, notes FROM runs ORDER BY 1"
        ).fetchall()
        return found


def test_the_script_builds_the_same_content_under_any_hash_seed(project, tmp_path):
    built = []
    for seed in ("0", "12345"):
        out = tmp_path / seed / "results.sqlite"
        for ref in _all(project):  # every set with its data at hand (the blocks set here has results only)
            if ref.data.is_dir():
                where = (
                    [] if ref.results == ref.data / "results" else ["--results-dir", str(ref.results.parent)]
                )
                done = run_script(
                    "scripts/score_results.py", "--database", str(out),
                    "--metadata", str(out.with_suffix(".json")), "-t", str(ref.data), *where,
                    env={"PYTHONHASHSEED": seed},
                )  # fmt: skip
                assert done.returncode == 0, done.stderr
        built.append(_content(out))
    assert (
        built[0] == built[1] and len(built[0]["runs"]) == 3 + 2 + 4
    )  # WorldSense, canvas, Already Said That
    metadata = json.loads((tmp_path / "0" / "results.json").read_text())
    canned = metadata["databases"]["results"]["queries"]
    assert set(canned) == set(queries.all_queries()) and ":run_a" in canned["disagreements"]["sql"]


def test_a_results_file_is_scored_again_only_when_it_changes_and_its_rows_go_with_it(project, tmp_path):
    path = tmp_path / "results.sqlite"
    with database.connection(path) as conn:
        first = database.update(conn, _all(project))
        again = database.update(conn, _all(project))
        assert (first.scored, again.scored, again.unchanged) == (12, 0, 12)
        [canvas] = project["canvas"]
        [random] = [f for f in suites.get("canvas").part("results_files")(canvas) if "random" in f.name]
        kept = random.read_bytes()
        try:
            random.write_bytes(kept[: kept.rindex(b"\n", 0, len(kept) - 1) + 1])  # its last answer gone
            changed = database.update(conn, _all(project))
            assert (changed.scored, changed.unchanged) == (1, 11)
            (answers,) = conn.execute(
                "SELECT count(*) FROM answers JOIN runs USING (run_id) WHERE results_file LIKE ?",
                (f"%{random.name}",),
            ).fetchone()
            assert answers == len(read_results(random))
            assert not _unused_texts(conn)
            # a reply no other answer gives, then the file as it was: the text is stored, then gone
            lines = kept.decode().splitlines(keepends=True)
            odd = json.loads(lines[-1]) | {"raw": ["a reply no other answer gives"]}
            random.write_text("".join(lines[:-1]) + json.dumps(odd) + "\n")
            database.update(conn, _all(project))
            assert _text_count(conn, "a reply no other answer gives") == 1 and not _unused_texts(conn)
            random.write_bytes(kept)
            back = database.update(conn, _all(project))
            assert (back.scored, back.texts_removed) == (1, 1)
            assert _text_count(conn, "a reply no other answer gives") == 0 and not _unused_texts(conn)
            # its items read again (the set's data changed): the same texts, nothing to delete
            conn.execute("UPDATE sets SET fingerprint = 'edited' WHERE set_name = ?", (canvas.name,))
            again = database.update(conn, _all(project))
            assert (again.scored, again.texts_removed) == (2, 0) and not _unused_texts(conn)
            random.unlink()
            gone = database.update(conn, _all(project))
            assert gone.removed == 1 and not _unused_texts(conn)
            assert not conn.execute(
                "SELECT count(*) FROM runs WHERE results_file LIKE ?", (f"%{random.name}",)
            ).fetchone()[0]
        finally:
            random.write_bytes(kept)


def test_a_file_only_touched_is_hashed_again_and_its_suite_s_pairs_are_not_chosen_again(
    project, tmp_path, monkeypatch
):
    """A results file written just before scoring is hashed at the next update (it could have
    changed within its clock tick); found the same, it changes no row: the suite's paired tests
    (a pass over every run's units) are not chosen again, as they are when a file changes."""
    chosen = []
    write_pairs = database._write_pairs
    monkeypatch.setattr(
        database, "_write_pairs", lambda conn, suite: chosen.append(suite.name) or write_pairs(conn, suite)
    )
    with database.connection(tmp_path / "results.sqlite") as conn:
        database.update(conn, _all(project))
        [canvas] = project["canvas"]
        [random] = [f for f in suites.get("canvas").part("results_files")(canvas) if "random" in f.name]
        pairs = conn.execute("SELECT run_a, run_b, rule FROM pairs ORDER BY pair_id").fetchall()
        chosen.clear()
        random.touch()  # the same bytes, a new time
        touched = database.update(conn, _all(project))
        assert (touched.scored, touched.unchanged, chosen) == (0, 12, [])
        assert conn.execute("SELECT run_a, run_b, rule FROM pairs ORDER BY pair_id").fetchall() == pairs
        kept = random.read_bytes()
        try:
            random.write_bytes(kept[: kept.rindex(b"\n", 0, len(kept) - 1) + 1])
            assert database.update(conn, _all(project)).scored == 1 and chosen == ["canvas"]
        finally:
            random.write_bytes(kept)


def _text_count(conn: sqlite3.Connection, text: str) -> int:
    """Return how many rows of ``texts`` hold ``text``."""
    return conn.execute("SELECT count(*) FROM texts WHERE text = ?", (text,)).fetchone()[0]


def _dangling_texts(conn: sqlite3.Connection) -> int:
    """Return how many answers name a text that is not there."""
    return sum(
        conn.execute(
            f"SELECT count(*) FROM answers WHERE {c} IS NOT NULL AND {c} NOT IN (SELECT text_id FROM texts)"
        ).fetchone()[0]
        for c in dbfile.TEXT_COLUMNS
    )


def _unused_texts(conn: sqlite3.Connection) -> int:
    """Return how many texts no item or answer refers to."""
    used = " ".join(f"UNION SELECT {c} FROM answers WHERE {c} IS NOT NULL" for c in dbfile.TEXT_COLUMNS)
    return conn.execute(
        "SELECT count(*) FROM texts WHERE text_id NOT IN "
        f"(SELECT prompt FROM items WHERE prompt IS NOT NULL {used})"
    ).fetchone()[0]


def test_no_key_reaches_the_database(tmp_path):
    """A run records the name of its key's variable, never a key: neither a results file's run
    record nor the run metadata beside an older file gives a key to ``runs`` (a setting named as a
    key would be is left out, should one ever be recorded)."""
    settings = {"name": "A", "api_key_env": "K", "api_key": "sk-1", "access_token": "t-1", "max_tokens": 8}
    entry = {"started": "2026-01-01T00:00:00Z", "commit": "abc", "model": settings}
    old = tmp_path / "basic___A___results.jsonl"
    old.write_text('{"Key": 1, "resp": "a"}\n')
    (tmp_path / "basic___A___results.meta.json").write_text(json.dumps({"runs": [entry]}))
    new = tmp_path / "basic___B___results.jsonl"
    new.write_text(json.dumps({"Key": 1, "resp": "a", RUN_FIELD: entry}) + "\n")
    for file in (old, new):
        found = run_identity.recorded(file)
        assert (found["settings"], found["git_commit"]) == (
            '{"api_key_env": "K", "max_tokens": 8, "name": "A"}',
            "abc",
        )
        assert "sk-1" not in json.dumps(found) and "t-1" not in json.dumps(found)


@pytest.mark.parametrize("suite", ["worldsense", "already_said_that"])
def test_the_answer_arrays_give_the_rows_of_the_answers_table(db, project, suite):
    """WorldSense's and Already Said That's analyses read the answer columns they name, each run's
    first answers from their arrays (``common.dbarrays``), not every answer row: they give the rows
    the answers table holds, in its order, with its values (a refused trial, an empty answer, a
    cut reply's; a conversation's turns), for every run."""
    refs = project[suite]
    columns = suites.get(suite).part("answer_arrays")
    lean, full = dbarrays.read(db, refs, columns).rows(), database.read(db, refs)
    assert len(lean.answers) == len(full.answers) and (full.answers["turn"] > 0).any() == (
        suite != "worldsense"
    )
    assert full.answers["refused"].notna().any() or suite != "worldsense"

    def values(frame: pd.DataFrame) -> list[list]:  # a missing value as None, whatever its type
        return frame.astype(object).where(frame.notna(), None).to_numpy().tolist()

    assert values(lean.answers) == values(full.answers[list(lean.answers.columns)])
    assert lean.runs.equals(full.runs) and lean.items.equals(full.items) and lean.pairs.equals(full.pairs)
    stored = db.execute(
        "SELECT count(DISTINCT run_id) FROM answer_arrays JOIN runs USING (run_id) JOIN sets USING (set_id) "
        "WHERE suite = ?",
        (suite,),
    ).fetchone()[0]
    assert stored == len(full.runs)


@pytest.mark.parametrize("suite", ["worldsense", "already_said_that"])
def test_the_lean_reading_gives_the_tables_of_every_row(db, project, suite):
    """The analyses read each run's first answers from their arrays one run at a time, Already Said
    That's turns counted (``dbarrays.Lean``, what ``analysis.load`` reads): their sections are the
    ones every answer row gives (``database.read``), table for table and line for line."""
    refs = project[suite]
    columns = suites.get(suite).part("answer_arrays")
    lean = dbarrays.read(db, refs, columns, counted=suite == "already_said_that")
    full = database.read(db, refs)
    assert isinstance(lean, dbarrays.Lean) and len(lean.first) == len(full.runs)
    assert len(lean.answers) < len(full.answers) / 2  # the rows not in the arrays (or counted)
    path = Path(db.execute("PRAGMA database_list").fetchone()[2])
    assert isinstance(analysis.load(refs, db=path)[1], dbarrays.Lean)
    one, other = analysis.section(refs, lean), analysis.section(refs, full)
    assert report.section_text(one) == report.section_text(other)
    assert [title for title, _ in one.tables] == [title for title, _ in other.tables]
    for (_, mine), (_, theirs) in zip(one.tables, other.tables, strict=True):
        pd.testing.assert_frame_equal(mine, theirs)
    assert list(one.data) == list(other.data)
    for name, frame in other.data.items():
        pd.testing.assert_frame_equal(one.data[name], frame)
    assert (one.summary, one.notes, one.headline) == (other.summary, other.notes, other.headline)
    for ref in refs:  # each set's own report (``analyse_results.py --set-reports``)
        alone = analysis.section([ref], lean.of_set(ref.name))
        assert report.section_text(alone) == report.section_text(
            analysis.section([ref], full.of_set(ref.name))
        )


def test_the_documented_queries_run(db):
    text = (ROOT / "docs" / "database.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sql\n(.*?)```", text, re.S)
    assert len(blocks) == 3
    for sql in blocks:
        db.execute(sql).fetchall()


def test_a_set_no_longer_found_leaves_the_database_with_all_it_held(db, tmp_path):
    copy = tmp_path / "results.sqlite"
    db.execute("VACUUM INTO ?", (str(copy),))
    conn = database.connect(copy)
    # the project's canvas and blocks sets have no config here; WorldSense's is released data and
    # Already Said That's carry the names of shipped configs
    shipped_sets = {s.name: [p.stem for p in shipped(s.config_dir())] for s in suites.all_suites()}
    assert forget.removed_sets(conn, shipped_sets) == ["blocks/myset", "canvas/small"]
    runs = (
        "SELECT r.run_id, count(a.answer_id) FROM runs r JOIN sets s USING (set_id) "
        "LEFT JOIN answers a USING (run_id) WHERE s.suite NOT IN ('blocks', 'canvas') GROUP BY r.run_id"
    )
    kept = conn.execute(runs).fetchall()
    assert forget.prune(conn, forget.removed_sets(conn, shipped_sets)) == ["blocks/myset", "canvas/small"]
    assert forget.removed_sets(conn, shipped_sets) == []
    assert conn.execute("SELECT suite FROM sets ORDER BY set_id").fetchall() == [
        ("worldsense",),
        ("already_said_that",),
        ("already_said_that",),
    ]
    assert conn.execute(runs).fetchall() == kept  # the other sets' runs and answers as they were
    for table in ("items", "runs", "pairs"):  # nothing left that pointed at the sets
        assert not conn.execute(
            f"SELECT 1 FROM {table} WHERE set_id NOT IN (SELECT set_id FROM sets)"
        ).fetchall()
    unused = _unused_texts(conn)
    assert unused == 0 and conn.execute("SELECT count(*) FROM images").fetchone()[0] == 0
    assert not database.delete_set(conn, "canvas", "small")  # no more
    conn.close()


def test_a_text_two_sets_share_stays_when_one_goes(db, tmp_path):
    """Already Said That's turn details (a turn's kind) are texts every set's runs repeat: forgetting
    one set keeps those the other's answers still name, and drops the rest."""
    copy = tmp_path / "results.sqlite"
    db.execute("VACUUM INTO ?", (str(copy),))
    conn = database.connect(copy)
    details = (
        "SELECT d.text, count(*) FROM answers a JOIN runs r USING (run_id) JOIN sets s USING (set_id) "
        "JOIN texts d ON d.text_id = a.detail WHERE s.set_name = 'distractorless' "
        "GROUP BY d.text ORDER BY d.text"
    )
    kept = conn.execute(details).fetchall()
    shared = conn.execute(
        "SELECT count(DISTINCT a.detail) FROM answers a JOIN runs r USING (run_id) "
        "JOIN sets s USING (set_id) WHERE s.set_name = 'mixed' AND a.detail IN (SELECT a2.detail "
        "FROM answers a2 JOIN runs r2 USING (run_id) JOIN sets s2 USING (set_id) "
        "WHERE s2.set_name = 'distractorless')"
    ).fetchone()[0]
    assert shared >= 3 and len(kept) > shared  # the two sets share some details, not all
    assert database.delete_set(conn, "already_said_that", "mixed")
    assert conn.execute(details).fetchall() == kept and not _dangling_texts(conn) and not _unused_texts(conn)
    conn.close()


def test_a_database_of_another_schema_version_is_rebuilt_and_shrinks(tmp_path):
    """The database is derived data: a file of an older schema is emptied into the new schema, and
    the space its rows held is given back (not kept as free pages)."""
    path = tmp_path / "older.sqlite"
    dbfile.connect(path).close()
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:  # an older version's, some MB
        conn.execute(
            "UPDATE meta SET value = ? WHERE name = 'schema_version'", (str(dbfile.SCHEMA_VERSION - 1),)
        )
        conn.execute("CREATE TABLE old_rows (x BLOB)")
        conn.executemany("INSERT INTO old_rows VALUES (?)", [(os.urandom(4096),) for _ in range(1000)])
    assert path.stat().st_size > 4_000_000
    conn = dbfile.connect(path)
    tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    version = conn.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone()[0]
    conn.close()
    assert "old_rows" not in tables and {"answers", "run_parts", "file_hashes"} <= tables
    assert version == str(dbfile.SCHEMA_VERSION) and path.stat().st_size < 1_000_000
