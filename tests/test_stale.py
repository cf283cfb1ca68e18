"""A regenerated set: the answers to items it changed or dropped are set aside (moved, with their
turn log lines, and said so); the answers to unchanged items stay; nothing is deleted."""

import bz2
import json

import pytest

from common import paths
from common.results import read_results
from common.stale import fingerprint, set_aside_stale
from tests.already_said_that.fixtures import write_set
from tests.already_said_that.test_run import load_main


def test_a_regenerated_conversation_set_sets_aside_the_changed_conversations(tmp_path):
    set_dir, results = tmp_path / "sets" / "distractorless", tmp_path / "results"

    def fingerprints():  # as the Already Said That generator gives them: a conversation's words
        samples = [json.loads(line) for line in (set_dir / "samples.jsonl").read_text().splitlines()]
        return {"": {str(s["sample"]): fingerprint(s["words"]) for s in samples}}

    write_set(set_dir, "distractorless", samples=6)
    first = fingerprints()
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
    second = fingerprints()
    [message] = set_aside_stale(run.parent / "distractorless", first, second)
    assert "2 answers to items the regenerated set changed or no longer has moved to" in message
    assert sorted(r["Key"] for r in read_results(run / "direct___random___results.jsonl")) == [0, 1, 2, 3]
    [stale] = list((run / "stale").iterdir())
    assert sorted(r["Key"] for r in read_results(stale / "direct___random___results.jsonl")) == [4, 5]
    moved = (stale / "direct___random___turns.jsonl").read_text().splitlines()
    kept = (run / "direct___random___turns.jsonl").read_text().splitlines()
    assert sorted(moved + kept) == sorted(turns_before) and {json.loads(t)["Key"] for t in moved} == {4, 5}

    write_set(set_dir, "distractorless", samples=4, seed=1)  # other words: every conversation changed
    third = fingerprints()
    assert "4 answers to items" in set_aside_stale(run, second, third)[0]
    assert read_results(run / "direct___random___results.jsonl") == []
    assert set_aside_stale(run, third, third) == []  # nothing changed since
    assert set_aside_stale(run, None, third) == []  # no fingerprints of before: nothing is moved


def test_generating_a_set_again_sets_aside_the_answers_to_its_changed_items(tmp_path):
    """Through the one generator: the canvas set's trials whose question or gold changed lose their
    answers to stale/, the others keep them; the fingerprints come from the generator (items.json),
    no set is read back."""
    from common import generation, suites

    ref = suites.get("canvas").ref("mine", data=tmp_path / "data" / "mine", results_root=tmp_path / "results")
    ref = type(ref)(ref.suite, ref.name, ref.data, ref.results, paths.CONFIGS / "canvas" / "standard.yaml")
    overrides = {"items": 2, "num_shapes": [3, 12]}
    assert generation.generate(ref, None, overrides) == []
    trials = [
        json.loads(line) for line in bz2.decompress((ref.data / "trials.jsonl.bz2").read_bytes()).splitlines()
    ]
    ref.results.mkdir(parents=True)
    answers = [{"Key": t["Key"], "resp": t["goldresp"]} for t in trials]
    (ref.results / "basic___m___results.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    assert generation.generate(ref, None, overrides) == []  # the same set: nothing moves
    [message] = generation.generate(ref, 7, overrides)  # another seed: other trials
    assert f"{len(trials):,} answers to items the regenerated set changed" in message
    assert read_results(ref.results / "basic___m___results.jsonl") == []


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
        "results/runs/canvas/mine.limit3-0123456789ab.done": "",
        "results/runs/blocks/mine-0123456789ab.pending": "",  # a step whose batches are out
        "results/canvas/standard/.scored": "",
        "results/blocks/scaling/.scored": "",
        "results/already_said_that/mixed/.scored": "",
        "results/worldsense/test_set/.scored": "",
        "results/canvas/scaling/.scored": "",  # a set it did not answer: its stamp stays
        "results/sections/canvas/standard.json": "{}",
        "results/report.html": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    moves = forget.forget_model("mine")
    moved = {str(s.relative_to(tmp_path)): t for s, t in moves}
    assert sorted(k for k, t in moved.items() if t) == sorted(k for k in files if "___mine___" in k)
    assert all((tmp_path / "results" / "forgotten").glob(f"*/{k}") for k in files if "___mine___" in k)
    # its make stamps and the scoring stamps of the sets it answered go: make rescores those sets only
    assert sorted(k for k, t in moved.items() if t is None) == sorted(
        k for k in files if k.endswith((".done", ".pending", ".scored")) and "canvas/scaling" not in k
    )
    assert (tmp_path / "results/report.html").is_file()  # the report stays until make rebuilds it
    assert (tmp_path / "results/canvas/standard/basic___other___results.jsonl").is_file()
    assert forget.forget_model("mine") == []  # nothing left


def test_forget_set_moves_its_config_data_and_results_out_and_drops_what_was_made_of_them(
    tmp_path, monkeypatch
):
    from common import forget, paths
    from common.errors import UserError

    for name, value in (("ROOT", tmp_path), ("RESULTS", tmp_path / "results"), ("DATA", tmp_path / "data")):
        monkeypatch.setattr(paths, name, value)
    monkeypatch.setattr(paths, "CONFIGS", tmp_path / "configs")
    monkeypatch.setattr(forget, "FORGOTTEN", tmp_path / "results" / "forgotten")
    kept = [
        "configs/canvas/mine.yaml",
        "data/canvas/mine/trials.jsonl",
        "results/canvas/mine/basic___oracle___results.jsonl",
        "results/canvas/mine/report.txt",
    ]
    made = ["results/sections/canvas/mine.json", "results/figures/canvas/mine/canvas_accuracy.png"]
    others = ["configs/canvas/standard.yaml", "results/canvas/standard/basic___oracle___results.jsonl"]
    for name in kept + made + others:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    moves = forget.forget_set("canvas/mine")
    moved = {str(s.relative_to(tmp_path)): t for s, t in moves}
    assert sorted(k for k, t in moved.items() if t) == [
        "configs/canvas/mine.yaml",
        "data/canvas/mine",
        "results/canvas/mine",
    ]
    assert sorted(k for k, t in moved.items() if t is None) == [
        "results/figures/canvas/mine",
        "results/sections/canvas/mine.json",
    ]
    for name in kept:  # every file kept, under its own path
        assert len(list((tmp_path / "results" / "forgotten").glob(f"*/{name}"))) == 1, name
    assert not any((tmp_path / name).exists() for name in kept + made)
    assert all((tmp_path / name).is_file() for name in others)
    assert forget.forget_set("canvas/mine") == []  # nothing left
    with pytest.raises(UserError, match="released data of worldsense"):
        forget.forget_set("worldsense/test_set")
    with pytest.raises(UserError, match="unknown suite"):
        forget.forget_set("nosuch/mine")
