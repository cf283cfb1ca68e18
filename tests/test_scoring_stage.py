"""Only the score stage writes the results database: an analysis reads it as scored, and says
how to score a set that is not there yet; the provenance reads what it recorded of each run."""

import hashlib

import pytest

from common import analysis, database, paths, scoring
from common.errors import UserError
from common.jsonl import write_json, write_jsonl
from common.provenance import provenance
from common.results import metadata_path, results_filename
from tests.worldsense.fixtures import answers_for, tf_tuple, write_testset


def test_an_analysis_reads_the_database_as_the_score_stage_left_it(tmp_path):
    trials = tf_tuple("t1", "Infer.normal", 3) + tf_tuple("t2", "Infer.normal", 3)
    testset = write_testset(tmp_path / "ts", trials, {"alpha": answers_for(trials, [1, 0])})
    db = tmp_path / "results.sqlite"
    refs = analysis.resolve(str(testset), suite="worldsense")
    with pytest.raises(UserError, match=r"no results database .*score_results.py -t worldsense/ts"):
        analysis.load(refs, db=db)
    assert not db.exists()  # the reader created nothing

    assert scoring.score(refs, db).scored == 1
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    write_jsonl(testset / "results" / results_filename("basic", "beta"), [{"Key": 100, "resp": "TRUE"}])
    _, scored = analysis.load(refs, db=db)
    assert scored.runs["model"].tolist() == ["alpha"]  # beta's file is not scored yet: not read
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before  # and nothing written

    _, scored = scoring.score_and_load(refs, db=db)  # what analyse_results.py does by hand
    assert sorted(scored.runs["model"]) == ["alpha", "beta"]


def test_the_provenance_reads_settings_and_token_use_as_the_database_recorded_them(tmp_path):
    trials = tf_tuple("t1", "Infer.normal", 3)
    testset = write_testset(tmp_path / "ts", trials, {})
    results = testset / "results" / results_filename("basic", "m")
    write_jsonl(
        results,
        [
            {
                "Key": 100,
                "resp": "TRUE",
                "finish_reason": ["stop"],
                "completion_tokens": 40,
                "reasoning_tokens": 30,
            },
            {"Key": 101, "resp": "", "finish_reason": ["length", "stop"], "completion_tokens": 64},
        ],
    )
    settings = {"name": "m", "base_url": "http://127.0.0.1:9/v1", "model": "m", "max_tokens": 64}
    write_json(
        metadata_path(results), {"runs": [{"model": settings, "prompt_tokens": 5, "completion_tokens": 104}]}
    )
    db = tmp_path / "results.sqlite"
    refs = analysis.resolve(str(testset), suite="worldsense")
    scoring.score(refs, db)
    results.write_text("")  # the provenance reads no results file: the database has what it needs
    section = {"suite": "worldsense", "inputs": [{"path": paths.shown(results)}]}
    with database.connection(db, readonly=True) as conn:
        (model,) = provenance([section], conn)["models"]
    assert model["settings"] == settings and (model["runs"], model["tokens"]) == (1, 109)
    assert model["use"] == {"replies": 3, "cut": 1, "reasoning_tokens": 30, "answer_tokens": 74}
