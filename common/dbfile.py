"""The results database's file: its schema, one for every suite, and opening it (``connect``).

One schema serves every suite (docs/database.md describes each column):

- ``texts``: every distinct text (prompt, question, reply, reasoning, an answer's detail) once;
  other tables refer to it;
- ``sets`` and ``items``: what was asked, one row per (set, Key): the unit of statistics it
  belongs to, task, size, variant, prompt, gold answer, other fields as JSON, and the item's
  picture (``image``) when its set shows pictures;
- ``images``: every picture once, by the SHA-256 of its PNG bytes, with a small thumbnail (what
  the report's examples and the explorer show beside the answers);
- ``runs``: one row per results file: suite, set, model, prompting, the modality it was asked in
  (``text``, ``image``, ``text+image``: the same items, so runs pair across modalities), the run's
  name in the tables (``label``), the file's SHA-256 and the scorer's version it was scored with, the
  model's settings (never a key), the run's labels, and how many runs wrote the file with the tokens
  and cost they spent (``common.run_identity``: from the file's run records);
- ``answers``: one row per (run, Key, draw, turn) scored: the reply, the reasoning, the answer
  read, ``correct`` (the suite's headline rule), invalid, refused, truncated, tokens;
  ``scores``: the value of each of the suite's other rules and measures (``Suite.rules``);
- ``units``: the unit of each suite's statistics and paired tests, its score per run and rule;
- ``answer_arrays``: a run's first answers in compact form, one array per column in the order of
  its set's items (``common.dbarrays``: what an analysis reads instead of every answer row), for the
  suites that ask for them;
- ``run_counts``: each run's answers, failures, refused, truncated and share right, and what its
  records' first turns spent (replies, cut, tokens), counted when it is scored (the explorer's
  first page and the report's provenance read them, not every answer);
- ``unit_groups``: each run's units per rule, task and size, counted and summed when it is scored
  (a suite's canned query of its headline by task and size reads them, not every unit);
- ``run_units``: the units each run has, listed once per run (zlib of one per line) when it is
  scored: what the choice of the paired tests reads, not every unit row;
- ``pairs``: the paired tests of each set; the view ``paired`` recounts them from ``units``;
- ``run_parts``: what an analysis computed of one run alone, kept for the run's content and the
  code that computed it (``common.runparts``);
- ``file_hashes``: the SHA-256 of the other files the analyses read (turn logs, trials), by
  size and time, so that each is hashed once per content (``common.filehashes``).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from common import paths, suites

SCHEMA_VERSION = 14
DEFAULT_PATH = paths.RESULTS / "results.sqlite"
PATH_VARIABLE = "RESULTS_DATABASE"  # names another database file (tests keep theirs apart)
BUSY_TIMEOUT_MS = 600_000  # another process updating another set: wait for it (make -j)

RUN_COLUMNS = [
    "run_id", "set_id", "results_file", "sha256", "bytes", "mtime_ns", "checked_ns", "scorer", "prompting",
    "model", "label", "method", "view", "modality", "attributes", "records", "notes", "settings", "date",
    "git_commit", "labels", "run_count", "tokens", "cost_usd",
]  # fmt: skip
ITEM_COLUMNS = ["Key", "position", "unit", "task", "size", "variant", "prompt", "gold", "fields", "image"]
THUMBNAIL_PX = 160  # the longer side of an image's thumbnail
ANSWER_COLUMNS = [
    "Key", "draw", "turn", "question", "expected", "reply", "reasoning", "answer", "correct", "invalid",
    "scored", "refused", "error", "truncated", "prompt_tokens", "completion_tokens", "reasoning_tokens",
    "finish_reason", "detail",
]  # fmt: skip
# answers' columns kept in ``texts`` (each distinct text once; the column holds its id): the long
# ones, read only when asked for (``dbread.read``'s ``texts``), and ``detail``, a short text that
# many rows repeat (an Already Said That turn's kind), always read as text
LONG_TEXT_COLUMNS = ("question", "reply", "reasoning")
TEXT_COLUMNS = (*LONG_TEXT_COLUMNS, "detail")
UNIT_COLUMNS = ["unit", "rule", "score", "censored", "refused", "task", "size"]

SCHEMA = """
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT);
CREATE TABLE suites (suite TEXT PRIMARY KEY, unit TEXT NOT NULL, headline_rule TEXT NOT NULL);
CREATE TABLE texts (text_id INTEGER PRIMARY KEY, digest INTEGER NOT NULL UNIQUE, text TEXT NOT NULL);
CREATE TABLE sets (
  set_id INTEGER PRIMARY KEY, suite TEXT NOT NULL, set_name TEXT NOT NULL, fingerprint TEXT NOT NULL,
  UNIQUE (suite, set_name));
CREATE TABLE images (
  digest TEXT PRIMARY KEY, width INTEGER NOT NULL, height INTEGER NOT NULL, png BLOB NOT NULL,
  thumbnail BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE items (
  set_id INTEGER NOT NULL REFERENCES sets (set_id), Key INTEGER NOT NULL, position INTEGER NOT NULL,
  unit TEXT NOT NULL, task TEXT,
  size INTEGER, variant TEXT, prompt INTEGER REFERENCES texts (text_id), gold TEXT, fields TEXT,
  image TEXT REFERENCES images (digest),
  PRIMARY KEY (set_id, Key)) WITHOUT ROWID;
CREATE TABLE runs (
  run_id INTEGER PRIMARY KEY, set_id INTEGER NOT NULL REFERENCES sets (set_id),
  results_file TEXT NOT NULL UNIQUE, sha256 TEXT NOT NULL, bytes INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
  checked_ns INTEGER NOT NULL,
  scorer TEXT NOT NULL, prompting TEXT NOT NULL, model TEXT NOT NULL, label TEXT NOT NULL, method TEXT,
  view TEXT, modality TEXT, attributes TEXT, records INTEGER NOT NULL, notes TEXT, settings TEXT, date TEXT,
  git_commit TEXT, labels TEXT, run_count INTEGER NOT NULL, tokens INTEGER NOT NULL, cost_usd REAL NOT NULL);
CREATE TABLE answers (
  answer_id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs (run_id), Key INTEGER NOT NULL,
  draw INTEGER NOT NULL, turn INTEGER NOT NULL, question INTEGER REFERENCES texts (text_id), expected TEXT,
  reply INTEGER REFERENCES texts (text_id), reasoning INTEGER REFERENCES texts (text_id), answer TEXT,
  correct REAL, invalid INTEGER, scored INTEGER NOT NULL, refused TEXT, error TEXT,
  truncated INTEGER NOT NULL, prompt_tokens INTEGER, completion_tokens INTEGER, reasoning_tokens INTEGER,
  finish_reason TEXT, detail INTEGER REFERENCES texts (text_id));
CREATE UNIQUE INDEX answers_key ON answers (run_id, Key, draw, turn);
-- the answers cut or refused only (a few): the explorer's truncated_or_refused reads no other
CREATE INDEX answers_flagged ON answers (run_id, Key, turn) WHERE truncated > 0 OR refused IS NOT NULL;
CREATE TABLE scores (
  answer_id INTEGER NOT NULL REFERENCES answers (answer_id), rule TEXT NOT NULL, value REAL,
  PRIMARY KEY (answer_id, rule)) WITHOUT ROWID;
CREATE TABLE units (
  run_id INTEGER NOT NULL REFERENCES runs (run_id), unit TEXT NOT NULL, rule TEXT NOT NULL,
  score REAL NOT NULL, censored INTEGER NOT NULL, refused INTEGER NOT NULL, task TEXT, size INTEGER,
  PRIMARY KEY (run_id, rule, unit)) WITHOUT ROWID;
CREATE TABLE answer_arrays (
  run_id INTEGER NOT NULL REFERENCES runs (run_id), name TEXT NOT NULL, about TEXT NOT NULL,
  data BLOB NOT NULL, PRIMARY KEY (run_id, name)) WITHOUT ROWID;
CREATE TABLE run_counts (
  run_id INTEGER PRIMARY KEY REFERENCES runs (run_id), answers INTEGER NOT NULL, failures INTEGER,
  refused INTEGER, truncated INTEGER, correct_pct REAL, replies INTEGER NOT NULL, cut INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL, reasoning_tokens INTEGER NOT NULL);
CREATE TABLE unit_groups (
  run_id INTEGER NOT NULL REFERENCES runs (run_id), rule TEXT NOT NULL, task TEXT, size INTEGER,
  units INTEGER NOT NULL, score_sum REAL NOT NULL);
CREATE INDEX unit_groups_run ON unit_groups (run_id);
CREATE TABLE run_units (
  run_id INTEGER PRIMARY KEY REFERENCES runs (run_id), units BLOB NOT NULL);
CREATE TABLE pairs (
  pair_id INTEGER PRIMARY KEY, set_id INTEGER NOT NULL REFERENCES sets (set_id),
  run_a INTEGER NOT NULL REFERENCES runs (run_id), run_b INTEGER NOT NULL REFERENCES runs (run_id),
  rule TEXT NOT NULL);
CREATE TABLE file_hashes (
  path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, bytes INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
  checked_ns INTEGER NOT NULL);
CREATE TABLE run_parts (
  run_id INTEGER NOT NULL, what TEXT NOT NULL, content TEXT NOT NULL, code TEXT NOT NULL, data BLOB NOT NULL,
  PRIMARY KEY (run_id, what));
CREATE INDEX items_unit ON items (set_id, unit);
CREATE INDEX runs_set ON runs (set_id);
CREATE INDEX pairs_set ON pairs (set_id);
CREATE VIEW run_rows AS
  SELECT r.run_id, s.suite, s.set_name, r.label, r.model, r.prompting, r.method, r.view, r.modality,
    r.records, r.results_file, r.settings, r.date, r.git_commit, r.labels, r.run_count, r.tokens, r.cost_usd
  FROM runs r JOIN sets s USING (set_id);
CREATE VIEW answer_rows AS
  SELECT s.suite, s.set_name, r.model, r.prompting, r.label, r.view, r.modality, a.answer_id, a.run_id,
    a.Key, a.draw, a.turn, q.text AS question, a.expected, y.text AS reply, z.text AS reasoning, a.answer,
    a.correct, a.invalid, a.scored, a.refused, a.error, a.truncated, a.prompt_tokens, a.completion_tokens,
    a.reasoning_tokens, a.finish_reason, d.text AS detail, i.unit, i.task, i.size, i.variant, i.image,
    coalesce(q.text, p.text) AS prompt, coalesce(a.expected, i.gold) AS gold
  FROM answers a JOIN runs r USING (run_id) JOIN sets s USING (set_id)
  LEFT JOIN items i ON i.set_id = r.set_id AND i.Key = a.Key
  LEFT JOIN texts q ON q.text_id = a.question LEFT JOIN texts y ON y.text_id = a.reply
  LEFT JOIN texts z ON z.text_id = a.reasoning LEFT JOIN texts d ON d.text_id = a.detail
  LEFT JOIN texts p ON p.text_id = i.prompt;
CREATE VIEW paired AS
  SELECT p.pair_id, s.suite, s.set_name, ra.view, ra.label AS a, rb.label AS b, p.rule, count(*) AS n,
    sum(x.score > y.score AND NOT y.censored) AS a_better,
    sum(y.score > x.score AND NOT x.censored) AS b_better, p.run_a, p.run_b
  FROM pairs p JOIN sets s USING (set_id) JOIN runs ra ON ra.run_id = p.run_a
  JOIN runs rb ON rb.run_id = p.run_b
  JOIN units x ON x.run_id = p.run_a AND x.rule = p.rule
  JOIN units y ON y.run_id = p.run_b AND y.rule = p.rule AND y.unit = x.unit
  GROUP BY p.pair_id ORDER BY p.pair_id;
"""


# ---- opening -----------------------------------------------------------------------------------


def default_path() -> Path:
    """Return the results database's path: $RESULTS_DATABASE when set, else results/results.sqlite."""
    return Path(os.environ.get(PATH_VARIABLE) or DEFAULT_PATH)


@contextlib.contextmanager
def connection(path: str | Path | None = None, readonly: bool = False) -> Iterator[sqlite3.Connection]:
    """Yield a connection to the database at ``path`` (``connect``; default ``default_path()``),
    closed afterwards."""
    conn = connect(path or default_path(), readonly)
    try:
        yield conn
    finally:
        conn.close()


def connect(path: str | Path, readonly: bool = False) -> sqlite3.Connection:
    """Return a connection to the database at ``path``, created with the schema when it does not
    exist, or is of another schema version (the database is derived data: it is rebuilt, and the
    file shrunk to what it then holds). ``readonly`` opens an existing file without writing
    (FileNotFoundError when it is missing)."""
    path = Path(path)
    if readonly:
        if not path.is_file():
            raise FileNotFoundError(2, "No results database (make db builds it)", str(path))
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
        return conn
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA cache_size = -131072")
    conn.execute("BEGIN IMMEDIATE")  # one process creates the schema
    try:
        rebuilt = _version(conn) != SCHEMA_VERSION
        if rebuilt:
            _drop_all(conn)
            for statement in SCHEMA.split(";"):  # not executescript: it would commit
                if statement.strip():
                    conn.execute(statement)
            conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        _register_suites(conn)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    if rebuilt:  # the dropped tables' pages are free, not given back: an older file keeps its size
        conn.execute("PRAGMA busy_timeout = 0")
        with contextlib.suppress(sqlite3.OperationalError):  # another process at it: left as is
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the file's pages as VACUUM left them
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return conn


def _version(conn: sqlite3.Connection) -> int | None:
    """Return the schema version the database holds, None when it has none."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone()
    except sqlite3.OperationalError:
        return None
    return int(row[0]) if row else None


def _drop_all(conn: sqlite3.Connection) -> None:
    """Drop every table, view and index (a database of another schema version)."""
    objects = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('view', 'table') AND name NOT LIKE 'sqlite_%'"
    ).fetchall()
    for kind, name in sorted(objects, key=lambda o: o[0] != "view"):  # views first
        conn.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')


def _register_suites(conn: sqlite3.Connection) -> None:
    """Write what a unit is and what ``correct`` means for each suite (``suites`` table)."""
    rows = [(s.name, s.unit, s.headline) for s in suites.all_suites()]
    conn.executemany("INSERT OR REPLACE INTO suites VALUES (?, ?, ?)", rows)
