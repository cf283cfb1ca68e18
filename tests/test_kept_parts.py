"""What an analysis keeps in the results database to do once: each run's part of the analysis
(``common.runparts``: computed once per run content and code, the section the same with it or
without) and the SHA-256 of its input files (``common.filehashes``: hashed once per content)."""

import os
import sqlite3
import time

import pytest

from common import analysis, filehashes, jsonl, paths, report, runparts, scoring
from common.already_said_that import report as asat_report
from tests.already_said_that.test_paper import played, refs_of  # noqa: F401 (a fixture)


def _section_text(refs, db):
    """Return the section text of ``refs`` scored into ``db``, as analyse_results.py computes it."""
    refs, scored = scoring.score_and_load(refs, db=db)
    return report.section_text(analysis.section(refs, scored))


def _counting(monkeypatch):
    """Count the runs whose part Already Said That's section computes (``report._run_of``)."""
    counted = []
    compute = asat_report._run_of

    def count(scored, run, parsed):
        counted.append(run.results_file)
        return compute(scored, run, parsed)

    monkeypatch.setattr(asat_report, "_run_of", count)
    return counted


def test_a_runs_part_is_computed_once_per_content_and_code(played, tmp_path, monkeypatch):  # noqa: F811
    sets, results = played
    db = tmp_path / "parts.sqlite"
    counted = _counting(monkeypatch)
    first = _section_text(refs_of(sets, results), db)
    assert len(counted) == 4  # two sets, two models
    counted.clear()
    assert _section_text(refs_of(sets, results), db) == first  # kept: the same section
    assert counted == []
    changed = next(results.glob("original_distractorless/*random*___results.jsonl"))
    lines = changed.read_text(encoding="utf-8").splitlines()
    changed.write_text("\n".join([lines[0] + " ", *lines[1:]]) + "\n", encoding="utf-8")  # new bytes
    assert _section_text(refs_of(sets, results), db) == first  # the same records
    assert [paths.ROOT / name for name in counted] == [changed]  # only the run scored again
    with sqlite3.connect(db) as conn:
        kept = conn.execute("SELECT run_id FROM run_parts").fetchall()
        runs = conn.execute("SELECT run_id FROM runs").fetchall()
    assert sorted(kept) == sorted(runs)  # a run scored again leaves no part behind
    counted.clear()
    monkeypatch.setattr(runparts, "code_key", lambda module: "other code")
    assert _section_text(refs_of(sets, results), db) == first
    assert len(counted) == 4  # parts of other code are not used


def test_an_input_is_hashed_once_per_content(tmp_path, monkeypatch):
    db = tmp_path / "hashes.sqlite"
    file = tmp_path / "input.jsonl"
    file.write_text('{"a": 1}\n', encoding="utf-8")
    old = time.time_ns() - 10_000_000_000
    os.utime(file, ns=(old, old))  # written well before it is looked at
    name = paths.shown(file)
    assert filehashes.digests([file], db) == {name: jsonl.sha256_file(file)}

    def fail(path):
        raise AssertionError(f"{path} hashed again")

    real = filehashes.sha256_file
    monkeypatch.setattr(filehashes, "sha256_file", fail)
    assert filehashes.digests([file], db) == {name: real(file)}  # kept
    file.write_text('{"a": 2}\n', encoding="utf-8")  # same size, a new time: hashed again
    with pytest.raises(AssertionError, match="hashed again"):
        filehashes.digests([file], db)
    monkeypatch.setattr(filehashes, "sha256_file", real)
    assert filehashes.digests([file], db) == {name: real(file)}  # written just now: racy, noted as such
    monkeypatch.setattr(filehashes, "sha256_file", fail)
    with pytest.raises(AssertionError, match="hashed again"):  # a file this fresh is hashed each time
        filehashes.digests([file], db)
