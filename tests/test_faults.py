"""Faults a run must survive: a killed run's costs counted from what it wrote, a turn log torn by
a kill repaired before the next run appends to it."""

import json

import pytest

from common.already_said_that.run import read_turns, run_paths
from common.models.base import Counters
from common.models.builtin import BuiltinModel
from common.models.metadata import RunMetadata
from common.results import metadata_path
from tests.already_said_that.fixtures import write_set
from tests.already_said_that.test_run import load_main


def test_a_killed_runs_requests_tokens_and_cost_are_counted_from_the_records_it_wrote(tmp_path):
    results = tmp_path / "basic___m___results.jsonl"
    paid = {"resp": "a", "attempts": 1, "cached": False, "prompt_tokens": 10, "completion_tokens": 2}
    records = [{"Key": i, **paid} for i in range(3)]
    records.append({"Key": 3, "resp": "a", "attempts": 0, "cached": True, "prompt_tokens": 10})
    results.write_text("".join(json.dumps(r) + "\n" for r in records))
    price = {"input": 1.0, "output": 2.0, "cached_input": None}
    killed = {"status": "running", "keys_at_start": 0, "requests": 1, "prompt_tokens": 0}
    killed["model"] = {"name": "m", "price_per_1k_tokens": price}
    metadata_path(results).write_text(json.dumps({"runs": [killed]}))
    meta = RunMetadata(BuiltinModel(), results, {}, 0.0, 4, Counters())
    [run] = meta.runs
    assert (run["status"], run["answered"], run["requests"]) == ("killed", 4, 3)
    assert (run["prompt_tokens"], run["completion_tokens"]) == (30, 6)  # the cached answer cost nothing
    assert run["cost_usd"] == pytest.approx((30 * 1.0 + 6 * 2.0) / 1000) and run["counted_from_results"]


def test_a_turn_log_torn_by_a_kill_is_cut_before_the_next_run_appends(tmp_path, caplog):
    set_dir = write_set(tmp_path / "sets" / "mixed", "mixed", samples=6)
    arguments = ["-t", str(set_dir), "--model", "random", "--results-dir", str(tmp_path / "results")]
    assert load_main()([*arguments, "--limit", "3", "--loglevel", "WARNING"]) == 0
    files = run_paths("mixed", "random", tmp_path / "results")
    with open(files["turns"], "a") as handle:
        handle.write('{"Key": 4, "turn": 1, "kind": "ma')  # killed inside the turn writer
    assert load_main()([*arguments, "--loglevel", "WARNING"]) == 0
    assert "cut a torn last line" in caplog.text
    turns = read_turns(files["turns"])  # every line parses: the fragment is gone
    assert sorted({t["Key"] for t in turns}) == list(range(6))
