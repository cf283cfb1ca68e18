"""A regenerated set: the answers to items it changed or dropped are set aside (moved, with their
turn log lines, and said so); the answers to unchanged items stay; nothing is deleted."""

import json

from common.results import find_results_files, read_results
from common.stale import ITEMS_FILE, set_aside_stale
from tests.already_said_that_fixtures import write_set
from tests.test_already_said_that_run import load_main
from tests.worldsense_fixtures import answers_for, tf_tuple, write_testset


def test_a_regenerated_conversation_set_sets_aside_the_changed_conversations(tmp_path):
    set_dir, results = tmp_path / "sets" / "distractorless", tmp_path / "results"
    write_set(set_dir, "distractorless", samples=6)
    assert set_aside_stale("already_said_that", set_dir, results) == []  # first time: fingerprints only
    arguments = [
        "-t",
        str(set_dir),
        "--model",
        "random",
        "--results-dir",
        str(results),
        "--loglevel",
        "WARNING",
    ]
    assert load_main()(arguments) == 0
    run = results / "distractorless"
    turns_before = (run / "direct___random___turns.jsonl").read_text().splitlines()

    write_set(set_dir, "distractorless", samples=4)  # the same first four conversations, two fewer
    [message] = set_aside_stale("already_said_that", set_dir, results)
    assert "2 answers to items the regenerated set changed or no longer has moved to" in message
    assert sorted(r["Key"] for r in read_results(run / "direct___random___results.jsonl")) == [0, 1, 2, 3]
    [stale] = list((run / "stale").iterdir())
    assert sorted(r["Key"] for r in read_results(stale / "direct___random___results.jsonl")) == [4, 5]
    moved = (stale / "direct___random___turns.jsonl").read_text().splitlines()
    kept = (run / "direct___random___turns.jsonl").read_text().splitlines()
    assert sorted(moved + kept) == sorted(turns_before) and {json.loads(t)["Key"] for t in moved} == {4, 5}

    write_set(set_dir, "distractorless", samples=4, seed=1)  # other words: every conversation changed
    assert set_aside_stale("already_said_that", set_dir, results)[0].startswith(
        f"{run.relative_to(run.anchor)}"[:0]
    )
    assert read_results(run / "direct___random___results.jsonl") == []
    assert set_aside_stale("already_said_that", set_dir, results) == []  # nothing changed since


def test_a_regenerated_trial_set_sets_aside_the_trials_whose_question_or_gold_changed(tmp_path):
    trials = tf_tuple("t1", "Infer.normal", 3) + tf_tuple("t2", "Infer.normal", 3)
    set_dir = write_testset(tmp_path / "mine", trials, {})
    results = tmp_path / "results"
    set_aside_stale("canvas", set_dir, results)
    assert (results / "mine" / ITEMS_FILE).is_file()
    answers = write_testset(tmp_path / "answers", trials, {"m": answers_for(trials, [1, 1])}) / "results"
    (results / "mine").mkdir(exist_ok=True)
    for file in find_results_files(answers):
        (results / "mine" / file.name).write_text(file.read_text())
    trials[3]["text"] += " (reworded)"
    set_dir = write_testset(tmp_path / "mine", trials, {})
    [message] = set_aside_stale("canvas", set_dir, results)
    assert "1 answers to items" in message
    kept = read_results(results / "mine" / "basic___m___results.jsonl")
    assert sorted(r["Key"] for r in kept) == [100, 101, 102]  # the fixture numbers trials from 100


def test_forget_moves_one_models_runs_out_of_every_suite_and_drops_what_showed_them(tmp_path, monkeypatch):
    from common import forget, paths

    monkeypatch.setattr(paths, "ROOT", tmp_path)
    monkeypatch.setattr(paths, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(paths, "DATA", tmp_path / "data")
    monkeypatch.setattr(forget, "FORGOTTEN", tmp_path / "results" / "forgotten")
    files = {
        "results/canvas/standard/basic___mine___results.jsonl": "{}",
        "results/canvas/standard/basic___mine___results.meta.json": "{}",
        "results/canvas/standard/basic___other___results.jsonl": "{}",
        "results/canvas/standard/report.txt": "",
        "results/already_said_that/mixed/direct___mine___results.jsonl": "{}",
        "results/already_said_that/mixed/direct___mine___turns.jsonl": "{}",
        "results/blocks/scaling/nl___v/paper___mine___results.jsonl": "{}",
        "results/blocks/scaling/report.txt": "",
        "data/worldsense/test_set/results/basic___mine___results.jsonl": "{}",
        "results/worldsense/test_set/report.txt": "",
        "results/runs/canvas/mine.limit3.done": "",
        "results/sections/canvas.json": "{}",
        "results/report.html": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    moves = forget.forget_model("mine")
    moved = {str(s.relative_to(tmp_path)): t for s, t in moves}
    assert sorted(k for k, t in moved.items() if t) == sorted(k for k in files if "___mine___" in k)
    assert all((tmp_path / "results" / "forgotten").glob(f"*/{k}") for k in files if "___mine___" in k)
    assert sorted(k for k, t in moved.items() if t is None) == sorted(
        k for k in files if k.endswith((".txt", ".done", ".json", ".html")) and "___" not in k
    )
    assert (tmp_path / "results/canvas/standard/basic___other___results.jsonl").is_file()
    assert forget.forget_model("mine") == []  # nothing left
