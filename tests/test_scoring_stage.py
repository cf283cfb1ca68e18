"""Only the score stage writes the results database: an analysis reads it as scored, and says
how to score a set that is not there yet."""

import hashlib

import pytest

from common import analysis, scoring
from common.errors import UserError
from common.jsonl import write_jsonl
from common.results import results_filename
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
