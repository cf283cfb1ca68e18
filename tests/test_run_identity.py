"""A results file says which runs wrote it (its run records), the score stage stores that in the
``runs`` table, and the provenance reads it there: no run metadata file is read downstream."""

import json
from pathlib import Path

from common import analysis, database, paths, run_identity, scoring
from common.jsonl import write_json, write_jsonl
from common.provenance import provenance
from common.results import RUN_FIELD, metadata_path, results_filename
from tests.worldsense.fixtures import tf_tuple, write_testset

SECRET = "sk-never-in-the-database-93b1"
PRICE = {"input": 1.0, "output": 2.0}  # dollars per 1,000 tokens


def _run(commit: str, **settings) -> dict:
    """Return the run record a run's first record carries (as ``RunMetadata.stamp`` makes it)."""
    model = {"name": "m", "base_url": "http://127.0.0.1:9/v1", "model": "m-1", **settings}
    return {"prompting": "basic", "modelname": "m", "commit": commit, "model": model}


def _scored_runs(testset, db):
    """Return the ``runs`` rows of the test set, scored into ``db``, by results file."""
    scoring.score(analysis.resolve(str(testset), suite="worldsense"), db)
    with database.connection(db, readonly=True) as conn:
        conn.row_factory = lambda cursor, row: dict(zip([c[0] for c in cursor.description], row, strict=True))
        return {Path(r["results_file"]).name: r for r in conn.execute("SELECT * FROM runs")}


def test_a_results_files_run_records_reach_the_runs_table(tmp_path):
    trials = tf_tuple("t1", "Infer.normal", 3) + tf_tuple("t2", "Infer.normal", 3)
    testset = write_testset(tmp_path / "ts", trials, {})
    first = _run("c0ffee", max_tokens=8, api_key_env="M_KEY", price_per_1k_tokens=PRICE)
    second = _run("decaf", max_tokens=16, api_key_env="M_KEY", price_per_1k_tokens=PRICE)
    second["model"]["api_key"] = SECRET  # a settings dict that holds a key never gives it away
    records = [
        {"Key": 100, "resp": "TRUE", "prompt_tokens": 10, "completion_tokens": 2, RUN_FIELD: first},
        {"Key": 101, "resp": "FALSE", "prompt_tokens": 10, "completion_tokens": 2},
        {"Key": 102, "resp": "TRUE", "prompt_tokens": 100, "completion_tokens": 20, RUN_FIELD: second},
        {"Key": 103, "resp": "TRUE", "prompt_tokens": 100, "completion_tokens": 20, "cached": True},  # free
    ]
    write_jsonl(testset / "results" / results_filename("basic", "m"), records)
    db = tmp_path / "results.sqlite"
    run = _scored_runs(testset, db)["basic___m___results.jsonl"]
    settings = {k: v for k, v in second["model"].items() if k != "api_key"}
    assert json.loads(run["settings"]) == settings and "api_key_env" in run["settings"]
    assert json.loads(run["labels"]) == {"prompting": "basic", "modelname": "m"}
    # the last run's commit; no time in a run record (results files stay deterministic), no metadata
    assert (run["date"], run["git_commit"], run["model"], run["prompting"]) == (None, "decaf", "m", "basic")
    # two runs; the cached answer's tokens cost nothing: (20 in, 4 out) + (100 in, 20 out)
    assert (run["run_count"], run["tokens"]) == (2, 144)
    assert run["cost_usd"] == round((20 * 1.0 + 4 * 2.0) / 1000 + (100 * 1.0 + 20 * 2.0) / 1000, 6)
    with database.connection(db, readonly=True) as conn:
        assert not any(SECRET in line for line in conn.iterdump())


def test_a_file_without_run_records_scores_as_before_from_its_name_and_run_metadata(tmp_path):
    trials = tf_tuple("t1", "Infer.normal", 3) + tf_tuple("t2", "Infer.normal", 3)
    answers = {"old": ["TRUE", "FALSE", "TRUE", "TRUE"], "released": ["TRUE", "TRUE", "TRUE", "TRUE"]}
    testset = write_testset(tmp_path / "ts", trials, answers)
    old = testset / "results" / results_filename("basic", "old")
    entry = {"started": "2025-05-05T00:00:00Z", "commit": "abc", "model": {"name": "old", "api_key_env": "K"}}
    write_json(
        metadata_path(old),
        {"runs": [entry | {"prompt_tokens": 7, "completion_tokens": 3, "cost_usd": 0.25}, entry]},
    )
    db = tmp_path / "results.sqlite"
    runs = _scored_runs(testset, db)
    found = runs[old.name]
    assert (found["settings"], found["date"], found["git_commit"], found["labels"]) == (
        '{"api_key_env": "K", "name": "old"}',
        "2025-05-05T00:00:00Z",
        "abc",
        None,
    )
    assert (found["run_count"], found["tokens"], found["cost_usd"]) == (2, 10, 0.25)
    released = runs["basic___released___results.jsonl"]
    assert (released["settings"], released["run_count"], released["tokens"]) == (None, 0, 0)
    # the same records with a run record on the first: the same scored answers
    with database.connection(db, readonly=True) as conn:
        before = conn.execute(ANSWERS, (found["run_id"],)).fetchall()
    lines = old.read_text().splitlines()
    lines[0] = json.dumps({**json.loads(lines[0]), RUN_FIELD: _run("c0ffee")})
    old.write_text("\n".join(lines) + "\n")
    stamped = _scored_runs(testset, db)[old.name]
    with database.connection(db, readonly=True) as conn:
        assert conn.execute(ANSWERS, (stamped["run_id"],)).fetchall() == before
    # one run now, its commit from the file; the date, which no run record holds, from the metadata
    assert (stamped["run_count"], stamped["git_commit"], stamped["date"]) == (
        1,
        "c0ffee",
        "2025-05-05T00:00:00Z",
    )


ANSWERS = (
    "SELECT Key, draw, turn, answer, correct, invalid, scored FROM answers WHERE run_id = ? ORDER BY Key"
)


def test_the_provenance_reads_no_run_metadata_and_no_results_file(tmp_path):
    trials = tf_tuple("t1", "Infer.normal", 3)
    testset = write_testset(tmp_path / "ts", trials, {"old": ["TRUE", "FALSE"]})
    old = testset / "results" / results_filename("basic", "old")
    settings = {"name": "old", "base_url": "http://127.0.0.1:9/v1", "model": "o", "max_tokens": 4}
    write_json(
        metadata_path(old), {"runs": [{"model": settings, "prompt_tokens": 5, "completion_tokens": 4}]}
    )
    new = testset / "results" / results_filename("basic", "m")
    stamp = _run("c0ffee", price_per_1k_tokens=PRICE)
    write_jsonl(
        new, [{"Key": 100, "resp": "TRUE", "prompt_tokens": 9, "completion_tokens": 1, RUN_FIELD: stamp}]
    )
    write_json(metadata_path(new), {"runs": [{"model": {"name": "other"}, "prompt_tokens": 999}]})  # not read
    db = tmp_path / "results.sqlite"
    scoring.score(analysis.resolve(str(testset), suite="worldsense"), db)
    section = {"suite": "worldsense", "inputs": [{"path": paths.shown(f)} for f in (old, new)]}
    with database.connection(db, readonly=True) as conn:
        before = provenance([section], conn)["models"]
    for file in (old, new):  # the sidecars gone, the results files emptied: the same provenance
        metadata_path(file).unlink()
        file.write_text("")
    with database.connection(db, readonly=True) as conn:
        after = provenance([section], conn)["models"]
    assert after == before
    assert [(m["runs"], m["tokens"], m["cost_usd"]) for m in after] == [(1, 9, 0.0), (1, 10, 0.011)]
    assert after[0]["settings"] == settings and after[1]["settings"]["model"] == "m-1"


def test_a_file_with_no_run_records_and_no_metadata_records_no_run(tmp_path):
    path = tmp_path / results_filename("basic", "x")
    write_jsonl(path, [{"Key": 1, "resp": "a", "completion_tokens": 3}])
    assert run_identity.recorded(path) == {**run_identity.NO_RUN, "cost_usd": 0.0}
