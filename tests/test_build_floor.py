"""bench/build_floor.py, the floor of a full build: it parses what it reads (a bad line fails it)
and inserts every row of the database it is given into an empty one of the same schema."""

import bz2
import importlib.util
import json
import sqlite3
from contextlib import closing

import pytest

from common.paths import ROOT


def load_floor():
    spec = importlib.util.spec_from_file_location("build_floor", ROOT / "bench" / "build_floor.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_floor_parses_what_it_reads_and_inserts_every_row(tmp_path, capsys):
    floor = load_floor()
    lines = "".join(json.dumps({"Key": k, "resp": "TRUE"}) + "\n" for k in range(50))
    (tmp_path / "a.jsonl").write_text(lines + "\n")  # a blank line is allowed
    (tmp_path / "b.jsonl.bz2").write_bytes(bz2.compress(lines.encode()))
    (tmp_path / "c.json").write_text('{"x": 1}')
    listing = tmp_path / "opened.txt"
    listing.write_text("".join(f"{tmp_path / n}\n" for n in ("a.jsonl", "b.jsonl.bz2", "c.json")))
    database = tmp_path / "built.sqlite"
    with closing(sqlite3.connect(database)) as conn, conn:
        conn.execute("CREATE TABLE answers (answer_id INTEGER PRIMARY KEY, Key INTEGER, reply TEXT)")
        conn.execute("CREATE UNIQUE INDEX answers_key ON answers (Key)")
        conn.execute("CREATE TABLE runs (run_id INTEGER PRIMARY KEY, label TEXT)")
        conn.executemany("INSERT INTO answers (Key, reply) VALUES (?, ?)", [(k, "TRUE") for k in range(300)])

    assert floor.main(["--inputs", str(listing), "--database", str(database)]) == 0
    figures = dict(line.split() for line in capsys.readouterr().out.splitlines())
    read, insert = float(figures["read"]), float(figures["insert"])
    assert float(figures["floor"]) == pytest.approx(read + insert, abs=2e-3)

    copy = tmp_path / "copy.sqlite"
    floor.insert_rows(database, copy)
    with closing(sqlite3.connect(copy)) as conn:
        assert conn.execute("SELECT count(*), count(DISTINCT Key) FROM answers").fetchone() == (300, 300)
        indexes = conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'").fetchall()
        assert ("answers_key",) in indexes  # the schema's index is maintained as in the build

    (tmp_path / "b.jsonl.bz2").write_bytes(bz2.compress(lines.encode() + b"{not json\n"))
    with pytest.raises(ValueError):  # it really parses what it reads
        floor.main(["--inputs", str(listing), "--database", str(database)])
