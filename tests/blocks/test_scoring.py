"""The blocks score stage: a set's items, and each results file read once and scored into the
results database, whose rows are the file's (records, and a checksum of Key, turn and reply)."""

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from common import database
from common.blocks import SUITE, scoring
from common.blocks.items import load_items, prompt_key
from common.blocks.runs import AS_RECORDED, directory_parts
from common.jsonl import sha256_file
from common.results import metadata_path, read_results
from common.scored import joined_text


@pytest.fixture(scope="module")
def db(blocks_tiny, tmp_path_factory):
    """The results database of the set ``tiny`` (tests/blocks/fixtures.py), built from nothing."""
    _, ref = blocks_tiny
    path = tmp_path_factory.mktemp("blocks_db") / "results.sqlite"
    with database.connection(path) as conn:
        counts = database.update(conn, [ref])
    assert (counts.scored, counts.unchanged, counts.sets) == (11, 0, ["blocks/tiny"])
    conn = sqlite3.connect(path)
    yield conn
    conn.close()


def _checksum(rows) -> str:
    """SHA-256 of rows (Key, turn, reply), sorted: the content a run's answers must carry."""
    text = json.dumps(sorted((int(k), int(t), str(r or "")) for k, t, r in rows), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _file_rows(file: Path, keys: set[int] | None) -> list[tuple]:
    """The (Key, turn, reply) a results file holds: one per record (every draw) and feedback round
    asked; only the records of ``keys`` (the prompts its run asked) unless None."""
    rows = []
    for record in read_results(file, all_draws=True):
        if keys is not None and record["Key"] not in keys:
            continue
        rounds = (
            [record.get("raw"), *record.get("feedback_raw", [])]
            if record.get("feedback")
            else [record.get("raw")]
        )
        rows += [
            (record["Key"], turn, "" if record.get("refused") else joined_text(raw))
            for turn, raw in enumerate(rounds)
        ]
    return rows


def test_every_run_holds_its_results_file_rows_counts_and_content(blocks_tiny, db):
    _, ref = blocks_tiny
    runs = pd.read_sql_query("SELECT * FROM runs", db)
    assert sorted(runs["label"].str.cat(runs["view"], ", ")) == sorted(
        [f"{m} (plan, paper), c{v}" for m in ("noop", "oracle", "random") for v in (1, 3)]
        + [f"rules (LLM+planner, paper), c{v}" for v in (1, 3)]
        + ["hand (plan, paper), c1", "hand (LLM+planner, paper-feedback1), c3", "recorded (plan, paper), c3"]
    )
    for run in runs.itertuples():
        file = Path(run.results_file)
        meta = metadata_path(file)
        prompts = Path(json.loads(meta.read_text())["runs"][-1]["prompts"]) if meta.is_file() else None
        kind = directory_parts(file.parent.name)[0]
        keys = {item["Key"] for item in load_items(prompts, ref.data / "problems", kind)} if prompts else None
        first = [r for r in read_results(file) if keys is None or r["Key"] in keys]
        assert run.sha256 == sha256_file(file) and run.records == len(first), run.label
        stored = db.execute(
            "SELECT a.Key, a.turn, t.text FROM answers a LEFT JOIN texts t ON t.text_id = a.reply "
            "WHERE a.run_id = ?",
            (run.run_id,),
        ).fetchall()
        assert _checksum(stored) == _checksum(_file_rows(file, keys)), run.label
    draws = db.execute(
        "SELECT draw, count(*) FROM answers JOIN runs USING (run_id) "
        "WHERE label = 'random (plan, paper)' AND view = 'c1' GROUP BY draw"
    ).fetchall()
    assert draws == [(0, 8), (1, 8), (2, 8)]


def test_items_are_the_prompts_of_every_view_and_method(blocks_tiny, db):
    _, ref = blocks_tiny
    items = pd.read_sql_query(
        "SELECT i.*, t.text AS prompt_text FROM items i JOIN texts t ON t.text_id = i.prompt", db
    )
    assert len(items) == 8 * 2 * 2 and items["Key"].is_unique
    nl = load_items(ref.data / "prompts" / "paper___nl___c3.jsonl", ref.data / "problems", "nl")
    row = items.set_index("Key").loc[nl[0]["Key"]]
    assert (row.unit, row.task, row["size"], row.variant) == (
        nl[0]["id"],
        "plan",
        nl[0]["optimal_length"],
        "c3",
    )
    assert row.prompt_text == nl[0]["texts"]["plan"] and row.gold.endswith(
        f"(optimal plan: {row['size']} moves)"
    )
    assert json.loads(row.fields) == {
        "goal_held_initially": not nl[0]["optimal_length"],
        "prompting": "paper",
        "prompts": "paper___nl___c3",
        "view_rank": 1,
    }
    assert nl[0]["Key"] == prompt_key(nl[0]["id"], "c3", [nl[0]["texts"]["plan"]])


def _answers(db, label: str, view: str) -> pd.DataFrame:
    """The answers of one run, with its rules' scores as columns."""
    frame = pd.read_sql_query(
        "SELECT *, reply AS reply_text FROM answer_rows WHERE label = ? AND view = ? ORDER BY answer_id",
        db,
        params=(label, view),
    )
    scores = pd.read_sql_query("SELECT * FROM scores", db).pivot(
        index="answer_id", columns="rule", values="value"
    )
    return frame.join(scores, on="answer_id")


def test_each_answer_is_scored_by_the_one_scorer_from_its_raw_reply(blocks_tiny, db):
    hand = _answers(db, "hand (plan, paper)", "c1")
    assert len(hand) == 4 and hand["scored"].all()  # the row for a prompt no longer in the set is left out
    ghost, refused, right, prose = (hand.iloc[n] for n in range(4))
    assert ghost.invalid and json.loads(ghost.detail)["first_error"] == "step 1: unknown object: 'ghost'"
    assert (refused.refused, refused.correct, refused.strict, refused.invalid) == (
        "context_length_exceeded",
        0,
        0,
        0,
    )
    assert (right.correct, right.strict, right.invalid) == (1, 1, 0) and right.answer.startswith("Move the ")
    assert prose.invalid and prose.reply_text == "I cannot do that."
    notes = json.loads(db.execute("SELECT notes FROM runs WHERE label = 'hand (plan, paper)'").fetchone()[0])
    stale = "1 row(s) answer prompts that are no longer in its prompts file (regenerated since)"
    assert notes == [f"nl___c1/paper___hand___results.jsonl: {stale}: left out; a rerun asks them again"]


def test_feedback_rounds_are_one_answer_each_and_the_last_is_scored(db):
    rounds = _answers(db, "hand (LLM+planner, paper-feedback1)", "c3")
    turns = rounds.groupby("Key")["turn"].max()
    assert sorted(turns.value_counts().items()) == [(0, 4), (1, 4)]  # half needed the feedback round
    fixed = rounds[rounds["Key"].isin(turns[turns == 1].index)]
    assert list(fixed.groupby("turn")["correct"].sum()) == [0, 4] and list(fixed["scored"]) == [0, 1] * 4
    assert fixed["reply_text"].iloc[0].endswith("[goal] on ghost shelf)\n")  # the reply as written
    detail = json.loads(fixed["detail"].iloc[1])
    assert (detail["feedback"], detail["rounds_used"], detail["round_errors"][1]) == (1, 1, None)
    assert detail["round_errors"][0].startswith("goal facts: undeclared object")
    last = rounds[rounds["scored"] == 1]
    assert (last[["init_precision", "init_recall", "goal_precision", "goal_recall"]] == 1.0).all().all()


def test_a_file_without_its_prompts_is_taken_as_recorded_and_said_so(db):
    recorded = _answers(db, "recorded (plan, paper)", "c3")
    assert list(recorded["correct"]) == [1, 1, 1, 1, 1, 0, 0, 0] and list(recorded["strict"]) == [
        1,
        1,
        1,
        0,
        0,
        0,
        0,
        0,
    ]
    assert list(recorded["invalid"]) == [0] * 7 + [1] and recorded["refused"].notna().sum() == 1
    assert json.loads(recorded["detail"].iloc[0]) == {
        "goal_held_initially": True,
        "id": "003",
        "optimal_length": 0,
    }
    notes = db.execute("SELECT notes FROM runs WHERE label = 'recorded (plan, paper)'").fetchone()[0]
    assert json.loads(notes) == [AS_RECORDED]
    units = pd.read_sql_query(
        "SELECT u.* FROM units u JOIN runs r USING (run_id) WHERE r.label = 'recorded (plan, paper)'", db
    )
    assert len(units) == 16 and sorted(set(units["rule"])) == ["lenient", "strict"]


def test_the_fingerprint_follows_the_prompts_and_the_files_are_found_in_order(blocks_tiny, tmp_path):
    _, ref = blocks_tiny
    files = scoring.results_files(ref)
    assert [f"{f.parent.name}/{f.name}" for f in files] == sorted(f"{f.parent.name}/{f.name}" for f in files)
    assert len(files) == 11 and all(f.name.endswith("___results.jsonl") for f in files)
    copy = SUITE.ref("tiny", data=tmp_path / "tiny", results_root=tmp_path)
    shutil.copytree(ref.data, copy.data)
    before = scoring.data_fingerprint(copy)
    assert before == scoring.data_fingerprint(ref)
    prompts = copy.data / "prompts" / "paper___nl___c1.jsonl"
    prompts.write_text(prompts.read_text().replace("Move", "Put", 1))
    assert scoring.data_fingerprint(copy) != before
