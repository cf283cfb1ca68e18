"""The results database: every answer read and scored once, in one SQLite file (results/results.sqlite).

The JSON-lines results files stay the source of truth (raw data); the database is what is
derived from them, and everything downstream reads it: the per-set analyses and their report
sections, the HTML report and its examples, the explorer (``make explore``, Datasette). So the
tables, the examples and the explorer cannot disagree: they read the same scored rows.

``update(conn, refs)`` brings the database up to date with the sets ``refs``, one results file
at a time: a set's items are (re)read when its data changed (its fingerprint), and a results
file is read and scored by its suite's scorer (``Suite.score``) only when its content or that
scorer's code changed; a file that is gone takes its rows with it. ``read(conn, refs)`` returns
the scored rows of sets as frames (``Scored``), the input of every analysis.

One schema serves every suite (docs/database.md describes each column):

- ``texts``: every distinct text (prompt, question, reply, reasoning) once; other tables refer to it;
- ``sets`` and ``items``: what was asked, one row per (set, Key): the unit of statistics it
  belongs to, task, size, variant, prompt, gold answer, other fields as JSON, and the item's
  picture (``image``) when its set shows pictures;
- ``images``: every picture once, by the SHA-256 of its PNG bytes, with a small thumbnail (what
  the report's examples and the explorer show beside the answers);
- ``runs``: one row per results file: suite, set, model, prompting, the modality it was asked in
  (``text``, ``image``, ``text+image``: the same items, so runs pair across modalities), the run's
  name in the tables (``label``), the file's SHA-256 and the scorer's version it was scored with, the
  model's settings (never a key);
- ``answers``: one row per (run, Key, draw, turn) scored: the reply, the reasoning, the answer
  read, ``correct`` (the suite's headline rule), invalid, refused, truncated, tokens;
  ``scores``: the value of each of the suite's other rules and measures (``Suite.rules``);
- ``units``: the unit of each suite's statistics and paired tests, its score per run and rule;
- ``pairs``: the paired tests of each set; the view ``paired`` recounts them from ``units``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from common import codedeps, paths, suites
from common.jsonl import sha256_file
from common.results import metadata_path
from common.scored import Scored, ScoredRun
from common.suite import SetRef, Suite

SCHEMA_VERSION = 8
DEFAULT_PATH = paths.RESULTS / "results.sqlite"
PATH_VARIABLE = "RESULTS_DATABASE"  # names another database file (tests keep theirs apart)
BUSY_TIMEOUT_MS = 600_000  # another process updating another set: wait for it (make -j)

RUN_COLUMNS = [
    "run_id", "set_id", "results_file", "sha256", "bytes", "mtime_ns", "checked_ns", "scorer", "prompting",
    "model", "label", "method", "view", "modality", "attributes", "records", "notes", "settings", "date",
    "git_commit",
]  # fmt: skip
ITEM_COLUMNS = ["Key", "position", "unit", "task", "size", "variant", "prompt", "gold", "fields", "image"]
THUMBNAIL_PX = 160  # the longer side of an image's thumbnail
ANSWER_COLUMNS = [
    "Key", "draw", "turn", "question", "expected", "reply", "reasoning", "answer", "correct", "invalid",
    "scored", "refused", "error", "truncated", "prompt_tokens", "completion_tokens", "reasoning_tokens",
    "finish_reason", "detail",
]  # fmt: skip
TEXT_COLUMNS = ("question", "reply", "reasoning")  # answers' columns kept in ``texts``
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
  git_commit TEXT);
CREATE TABLE answers (
  answer_id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs (run_id), Key INTEGER NOT NULL,
  draw INTEGER NOT NULL, turn INTEGER NOT NULL, question INTEGER REFERENCES texts (text_id), expected TEXT,
  reply INTEGER REFERENCES texts (text_id), reasoning INTEGER REFERENCES texts (text_id), answer TEXT,
  correct REAL, invalid INTEGER, scored INTEGER NOT NULL, refused TEXT, error TEXT,
  truncated INTEGER NOT NULL, prompt_tokens INTEGER, completion_tokens INTEGER, reasoning_tokens INTEGER,
  finish_reason TEXT, detail TEXT);
CREATE UNIQUE INDEX answers_key ON answers (run_id, Key, draw, turn);
CREATE TABLE scores (
  answer_id INTEGER NOT NULL REFERENCES answers (answer_id), rule TEXT NOT NULL, value REAL,
  PRIMARY KEY (answer_id, rule)) WITHOUT ROWID;
CREATE TABLE units (
  run_id INTEGER NOT NULL REFERENCES runs (run_id), unit TEXT NOT NULL, rule TEXT NOT NULL,
  score REAL NOT NULL, censored INTEGER NOT NULL, refused INTEGER NOT NULL, task TEXT, size INTEGER,
  PRIMARY KEY (run_id, rule, unit)) WITHOUT ROWID;
CREATE TABLE pairs (
  pair_id INTEGER PRIMARY KEY, set_id INTEGER NOT NULL REFERENCES sets (set_id),
  run_a INTEGER NOT NULL REFERENCES runs (run_id), run_b INTEGER NOT NULL REFERENCES runs (run_id),
  rule TEXT NOT NULL);
CREATE INDEX items_unit ON items (set_id, unit);
CREATE INDEX runs_set ON runs (set_id);
CREATE INDEX pairs_set ON pairs (set_id);
CREATE VIEW run_rows AS
  SELECT r.run_id, s.suite, s.set_name, r.label, r.model, r.prompting, r.method, r.view, r.modality,
    r.records, r.results_file, r.settings, r.date, r.git_commit
  FROM runs r JOIN sets s USING (set_id);
CREATE VIEW answer_rows AS
  SELECT s.suite, s.set_name, r.model, r.prompting, r.label, r.view, r.modality, a.answer_id, a.run_id,
    a.Key, a.draw, a.turn, q.text AS question, a.expected, y.text AS reply, z.text AS reasoning, a.answer,
    a.correct, a.invalid, a.scored, a.refused, a.error, a.truncated, a.prompt_tokens, a.completion_tokens,
    a.reasoning_tokens, a.finish_reason, a.detail, i.unit, i.task, i.size, i.variant, i.image,
    coalesce(q.text, p.text) AS prompt, coalesce(a.expected, i.gold) AS gold
  FROM answers a JOIN runs r USING (run_id) JOIN sets s USING (set_id)
  LEFT JOIN items i ON i.set_id = r.set_id AND i.Key = a.Key
  LEFT JOIN texts q ON q.text_id = a.question LEFT JOIN texts y ON y.text_id = a.reply
  LEFT JOIN texts z ON z.text_id = a.reasoning LEFT JOIN texts p ON p.text_id = i.prompt;
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
    exist, or is of another schema version (the database is derived data: it is rebuilt).
    ``readonly`` opens an existing file without writing (FileNotFoundError when it is missing)."""
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
        if _version(conn) != SCHEMA_VERSION:
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


# ---- the scorer's version ----------------------------------------------------------------------
def scorer_version(suite: Suite) -> str:
    """Return the version of ``suite``'s scoring code: a fingerprint of its score stage's import
    closure (``common.codedeps``), as the Makefile's scoring code list has it (worked out once
    per process and set of modules: the code does not change while it runs)."""
    return _code_version(tuple(suite.stage_modules("score")))


@functools.cache
def _code_version(modules: tuple[str, ...]) -> str:
    """Return the fingerprint of the import closure of ``modules``."""
    return codedeps.fingerprint(codedeps.closure(modules))


# ---- updating ----------------------------------------------------------------------------------
@dataclass
class Counts:
    """What an update did: results files scored, left as they were, removed; answers written."""

    scored: int = 0
    unchanged: int = 0
    removed: int = 0
    answers: int = 0
    sets: list[str] = field(default_factory=list)  # the sets whose items were (re)read
    texts_removed: int = 0  # texts no row refers to any more, deleted

    def __str__(self) -> str:
        return (
            f"{self.scored} results files scored ({self.answers:,} answers), {self.unchanged} unchanged, "
            f"{self.removed} removed"
        )


def update(conn: sqlite3.Connection, refs: Sequence[SetRef]) -> Counts:
    """Bring the rows of the sets ``refs`` up to date with their data and results files, and
    return what was done (see the module docstring). Each set is updated in a transaction of its
    own, so another process may update other sets meanwhile."""
    counts = Counts()
    for ref in refs:
        _update_set(conn, ref, counts)
    return counts


def _update_set(conn: sqlite3.Connection, ref: SetRef, counts: Counts) -> None:
    """Update one set: its items when its data changed (then every run is scored again), the
    results files whose content or scorer changed, the runs whose file is gone, its pairs."""
    suite = suites.get(ref.suite)
    scorer = scorer_version(suite)
    files = {paths.shown(f): f for f in suite.part("results_files")(ref)}
    known = _known_runs(conn, ref)
    row = conn.execute(
        "SELECT set_id, fingerprint FROM sets WHERE suite = ? AND set_name = ?", (ref.suite, ref.name)
    ).fetchone()
    set_id, old_fingerprint = row if row else (None, None)
    if not files and not known:
        return  # a set nobody answered yet: nothing to keep
    fingerprint = suite.part("fingerprint")(ref)
    new_items = fingerprint != old_fingerprint
    checked = time.time_ns()  # before the files are looked at: a later write shows as newer
    stats = {name: file.stat() for name, file in files.items()}
    moved = [name for name in files if new_items or not _same_file(known.get(name), stats[name], scorer)]
    gone = [name for name in known if name not in files]
    if not new_items and not moved and not gone:
        counts.unchanged += len(files)
        return
    digests = {name: sha256_file(files[name]) for name in moved}
    to_score = [
        name
        for name in moved
        if new_items
        or name not in known
        or (known[name]["sha256"], known[name]["scorer"]) != (digests[name], scorer)
    ]
    items = suite.part("items")(ref) if new_items or to_score else None
    runs = {name: suite.part("score")(ref, files[name], items) for name in to_score}  # before the lock
    texts = TextRefs()
    with _transaction(conn):
        if new_items:
            set_id = _write_items(conn, ref, items, fingerprint, set_id, texts)
            counts.sets.append(ref.key)
        for name in [*gone, *(n for n in to_score if n in known)]:
            texts.dropped.update(_run_texts(conn, known[name]["run_id"]))
            _delete_run(conn, known[name]["run_id"])
        counts.removed += len(gone)
        for name in moved:
            stat = stats[name]
            if name in runs:
                _write_run(
                    conn, suite, set_id, files[name], stat, digests[name], scorer, runs[name], checked, texts
                )
                counts.answers += len(runs[name].answers)
            else:  # the same bytes (touched, or copied back): only the file's stat changed
                conn.execute(
                    "UPDATE runs SET bytes = ?, mtime_ns = ?, checked_ns = ? WHERE run_id = ?",
                    (stat.st_size, stat.st_mtime_ns, checked, known[name]["run_id"]),
                )
        counts.scored += len(runs)
        counts.unchanged += len(files) - len(runs)
        _write_pairs(conn, suite)
        counts.texts_removed += _delete_unused(conn, texts, images=new_items)


def _same_file(known: dict[str, Any] | None, stat: os.stat_result, scorer: str) -> bool:
    """Return whether a results file is as it was scored: the same size and modification time, the
    same scorer, and a modification time well before the file was looked at (a file written in the
    same instant as it was scored could change again without its time changing: it is hashed,
    as git does with a "racy" file); a file written since, or scored by other code, is hashed."""
    if not known or known["scorer"] != scorer:
        return False
    same = (known["bytes"], known["mtime_ns"]) == (stat.st_size, stat.st_mtime_ns)
    return same and stat.st_mtime_ns + RACY_NS < known["checked_ns"]


RACY_NS = 2_000_000_000  # a file modified less than 2 s before it was looked at is hashed next time


def _known_runs(conn: sqlite3.Connection, ref: SetRef) -> dict[str, dict[str, Any]]:
    """Return the runs the database has of ``ref``, by results file (as ``paths.shown`` names it)."""
    rows = conn.execute(
        "SELECT r.run_id, r.results_file, r.sha256, r.bytes, r.mtime_ns, r.checked_ns, r.scorer FROM runs r "
        "JOIN sets s USING (set_id) WHERE s.suite = ? AND s.set_name = ?",
        (ref.suite, ref.name),
    ).fetchall()
    names = ("run_id", "results_file", "sha256", "bytes", "mtime_ns", "checked_ns", "scorer")
    return {row[1]: dict(zip(names, row, strict=True)) for row in rows}


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """Hold a write transaction (BEGIN IMMEDIATE: another writer waits, up to BUSY_TIMEOUT_MS)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _write_items(
    conn: sqlite3.Connection,
    ref: SetRef,
    items: pd.DataFrame,
    fingerprint: str,
    set_id: int | None,
    texts: TextRefs,
) -> int:
    """Replace the set's items and fingerprint (registering the set when new); return its id."""
    if set_id is None:
        set_id = conn.execute(
            "INSERT INTO sets (suite, set_name, fingerprint) VALUES (?, ?, ?)",
            (ref.suite, ref.name, fingerprint),
        ).lastrowid
    else:
        conn.execute("UPDATE sets SET fingerprint = ? WHERE set_id = ?", (fingerprint, set_id))
        prompts = conn.execute("SELECT prompt FROM items WHERE set_id = ? AND prompt IS NOT NULL", (set_id,))
        texts.dropped.update(p for (p,) in prompts)
        conn.execute("DELETE FROM items WHERE set_id = ?", (set_id,))
    frame = items.reset_index(drop=True).assign(position=lambda f: f.index).reindex(columns=ITEM_COLUMNS)
    frame = frame.assign(
        prompt=_text_ids(conn, frame["prompt"], texts), image=_image_ids(conn, frame["image"])
    )
    _insert(conn, "items", ["set_id", *ITEM_COLUMNS], frame.assign(set_id=set_id))
    return set_id


def _write_run(
    conn: sqlite3.Connection,
    suite: Suite,
    set_id: int,
    file: Path,
    stat: os.stat_result,
    digest: str,
    scorer: str,
    run: ScoredRun,
    checked: int,
    texts: TextRefs,
) -> None:
    """Insert one scored results file (looked at at time ``checked``, ns): its ``runs`` row,
    answers, scores and units (the texts they refer to noted in ``texts.ids``)."""
    meta = run_metadata(file)
    values = {
        "set_id": set_id,
        "results_file": paths.shown(file),
        "sha256": digest,
        "bytes": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "checked_ns": checked,
        "scorer": scorer,
        "prompting": run.prompting,
        "model": run.model,
        "label": run.label,
        "method": run.method,
        "view": run.view,
        "modality": run.modality,
        "records": run.records,
        "notes": json.dumps(run.notes, ensure_ascii=False) if run.notes else None,
        "attributes": json.dumps(run.attributes, sort_keys=True) if run.attributes else None,
        **meta,
    }
    columns = [c for c in RUN_COLUMNS if c != "run_id"]
    run_id = conn.execute(
        f"INSERT INTO runs ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
        [values.get(c) for c in columns],
    ).lastrowid
    if run.items is not None and not run.items.empty:  # items only its records describe
        frame = run.items.reindex(columns=ITEM_COLUMNS).assign(
            prompt=lambda f: _text_ids(conn, f["prompt"], texts),
            image=lambda f: _image_ids(conn, f["image"]),
        )
        frame["position"] = frame["position"].fillna(-1)
        _insert(
            conn, "items", ["set_id", *ITEM_COLUMNS], frame.assign(set_id=set_id), verb="INSERT OR IGNORE"
        )
    answers = run.answers.reset_index(drop=True)
    if answers.empty:
        return
    frame = answers.reindex(columns=ANSWER_COLUMNS)
    frame["draw"] = frame["draw"].fillna(0)
    frame["turn"] = frame["turn"].fillna(0)
    frame["scored"] = frame["scored"].fillna(1)
    frame["truncated"] = frame["truncated"].fillna(0)
    for column in TEXT_COLUMNS:
        frame[column] = _text_ids(conn, frame[column], texts)
    first = conn.execute("SELECT coalesce(max(answer_id), 0) + 1 FROM answers").fetchone()[0]
    ids = pd.RangeIndex(first, first + len(frame))
    _insert(
        conn, "answers", ["answer_id", "run_id", *ANSWER_COLUMNS], frame.assign(answer_id=ids, run_id=run_id)
    )
    rules = [rule for rule in suite.rules if rule in answers.columns]
    if rules:
        long = pd.DataFrame(
            {
                "answer_id": list(ids) * len(rules),
                "rule": [rule for rule in rules for _ in range(len(answers))],
                "value": pd.concat([answers[rule] for rule in rules], ignore_index=True),
            }
        )
        _insert(conn, "scores", ["answer_id", "rule", "value"], long[long["value"].notna()])
    if not run.units.empty:
        _insert(
            conn,
            "units",
            ["run_id", *UNIT_COLUMNS],
            run.units.reindex(columns=UNIT_COLUMNS).assign(run_id=run_id),
        )


def _run_texts(conn: sqlite3.Connection, run_id: int) -> set[int]:
    """Return the texts a run's answers refer to (questions, replies, reasoning)."""
    rows = conn.execute("SELECT question, reply, reasoning FROM answers WHERE run_id = ?", (run_id,))
    return {text for row in rows for text in row if text is not None}


def _delete_run(conn: sqlite3.Connection, run_id: int) -> None:
    """Delete a run and its answers, scores, units and pairs (its texts: ``_delete_unused``)."""
    conn.execute(
        "DELETE FROM scores WHERE answer_id IN (SELECT answer_id FROM answers WHERE run_id = ?)", (run_id,)
    )
    for table in ("answers", "units", "runs"):
        conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
    conn.execute("DELETE FROM pairs WHERE run_a = ? OR run_b = ?", (run_id, run_id))


def delete_set(conn: sqlite3.Connection, suite: str, set_name: str) -> bool:
    """Delete the set ``suite``/``set_name`` with its items, its runs and all they hold, the texts
    and pictures no other row uses, and choose the suite's paired tests again; return whether the
    set was there (``common.forget``: a set forgotten, or whose config is gone)."""
    row = conn.execute(
        "SELECT set_id FROM sets WHERE suite = ? AND set_name = ?", (suite, set_name)
    ).fetchone()
    if row is None:
        return False
    texts = TextRefs()
    with _transaction(conn):
        for (run_id,) in conn.execute("SELECT run_id FROM runs WHERE set_id = ?", row).fetchall():
            texts.dropped.update(_run_texts(conn, run_id))
            _delete_run(conn, run_id)
        prompts = conn.execute("SELECT prompt FROM items WHERE set_id = ? AND prompt IS NOT NULL", row)
        texts.dropped.update(text for (text,) in prompts)
        for table in ("items", "pairs", "sets"):
            conn.execute(f"DELETE FROM {table} WHERE set_id = ?", row)
        _write_pairs(conn, suites.get(suite))
        _delete_unused(conn, texts, images=True)
    return True


def _write_pairs(conn: sqlite3.Connection, suite: Suite) -> None:
    """Replace the suite's paired tests by those it chooses for its runs (``Suite.pairs``, given
    every run of the suite, with its set's name, and their units): a pair may join two sets."""
    conn.execute("DELETE FROM pairs WHERE set_id IN (SELECT set_id FROM sets WHERE suite = ?)", (suite.name,))
    runs = pd.read_sql_query(
        "SELECT r.run_id, r.set_id, s.set_name, r.results_file, r.prompting, r.model, r.label, r.method, "
        "r.view, r.modality, r.attributes, r.settings FROM runs r JOIN sets s USING (set_id) "
        "WHERE s.suite = ? "
        "ORDER BY s.set_name, r.results_file",
        conn,
        params=(suite.name,),
    )
    if runs.empty or not suite.pairs:
        return
    runs["attributes"] = [json.loads(a) if a else {} for a in runs["attributes"]]
    units = pd.read_sql_query(
        "SELECT u.run_id, u.unit, u.rule, u.score, u.censored FROM units u JOIN runs r USING (run_id) "
        "JOIN sets s USING (set_id) WHERE s.suite = ?",
        conn,
        params=(suite.name,),
    )
    set_of = dict(zip(runs["run_id"], runs["set_id"], strict=True))
    chosen = suite.part("pairs")(runs, units)
    conn.executemany(
        "INSERT INTO pairs (set_id, run_a, run_b, rule) VALUES (?, ?, ?, ?)",
        [(int(set_of[a]), int(a), int(b), rule) for a, b, rule in chosen],
    )


# ---- texts: each distinct one stored once --------------------------------------------------------
def text_digest(text: str) -> int:
    """Return the 64-bit digest (BLAKE2b, signed, as SQLite stores integers) that identifies a text."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big", signed=True)


def _text_ids(conn: sqlite3.Connection, texts: pd.Series, refs: TextRefs | None = None) -> list[int | None]:
    """Return the ``texts`` id of each text (inserted when new), None for a missing text; with
    ``refs`` (the update's), each text's id is noted in ``refs.ids`` for the rest of the
    transaction: the texts the update refers to, and a text its other runs repeat is not looked
    up again."""
    values = texts.astype(object).where(texts.notna(), None).tolist()
    keyed = [v if v is None or isinstance(v, str) else json.dumps(v) for v in values]
    ids = refs.ids if refs is not None else {}
    distinct = list(dict.fromkeys(k for k in keyed if k is not None))
    new = [text for text in distinct if text not in ids]
    if new:
        digests = {text: text_digest(text) for text in new}
        conn.executemany(
            "INSERT OR IGNORE INTO texts (digest, text) VALUES (?, ?)", [(d, t) for t, d in digests.items()]
        )
        found: dict[int, int] = {}
        wanted = list(digests.values())
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            found.update(
                conn.execute(f"SELECT digest, text_id FROM texts WHERE digest IN ({marks})", chunk).fetchall()
            )
        ids.update((text, found[digest]) for text, digest in digests.items())
    return [None if k is None else ids[k] for k in keyed]


# ---- images: each distinct picture stored once ----------------------------------------------------
def _image_ids(conn: sqlite3.Connection, files: pd.Series) -> list[str | None]:
    """Return the ``images`` digest of each picture file of ``files`` (paths; a missing value:
    None), storing each distinct picture once: its PNG bytes, size and thumbnail. Raises
    DataError naming a file that is missing or not a PNG."""
    values = files.astype(object).where(files.notna(), None).tolist()
    digests: dict[str, str] = {}
    for path in dict.fromkeys(str(v) for v in values if v is not None):
        data = _png(Path(path))
        digest = hashlib.sha256(data).hexdigest()
        digests[path] = digest
        if conn.execute("SELECT 1 FROM images WHERE digest = ?", (digest,)).fetchone() is None:
            width, height, thumbnail = _thumbnail(data)
            conn.execute(
                "INSERT INTO images VALUES (?, ?, ?, ?, ?)", (digest, width, height, data, thumbnail)
            )
    return [None if v is None else digests[str(v)] for v in values]


def _png(path: Path) -> bytes:
    """Return the bytes of the PNG file ``path``; raise DataError when it is missing or another kind."""
    from common.errors import DataError

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataError(
            f"{path}: an item's picture cannot be read ({exc.strerror}): generate its set again"
        ) from None
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        raise DataError(f"{path}: an item's picture is not a PNG file: generate its set again")
    return data


def _thumbnail(data: bytes) -> tuple[int, int, bytes]:
    """Return ``(width, height, thumbnail)`` of a PNG: its size, and a PNG of it shrunk to at most
    THUMBNAIL_PX on its longer side (area-averaged: deterministic)."""
    import io

    from PIL import Image

    from common.pictures.store import png_bytes

    image = Image.open(io.BytesIO(data)).convert("RGB")
    width, height = image.size
    scale = min(1.0, THUMBNAIL_PX / max(width, height))
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    return width, height, png_bytes(image.resize(size, Image.Resampling.BOX))


@dataclass
class TextRefs:
    """The texts one set's update stopped referring to (rows deleted) and referred to (rows written)."""

    dropped: set[int] = field(default_factory=set)  # ids
    ids: dict[str, int] = field(default_factory=dict)  # text -> id, of every text written or found


def _delete_unused(conn: sqlite3.Connection, texts: TextRefs, images: bool) -> int:
    """Delete, in the update's transaction, the texts it dropped that no row refers to any more
    (and with ``images``, the pictures no item shows); return how many texts. Only a text dropped
    and not written again can have become unused, so a rescoring that gives the same texts (most
    of them) scans nothing; otherwise every answer is looked at once."""
    if images:
        conn.execute(
            "DELETE FROM images WHERE digest NOT IN (SELECT image FROM items WHERE image IS NOT NULL)"
        )
    maybe = sorted(texts.dropped.difference(texts.ids.values()))
    if not maybe:
        return 0
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS maybe_unused (text_id INTEGER PRIMARY KEY)")
    conn.execute("DELETE FROM maybe_unused")
    conn.executemany("INSERT INTO maybe_unused VALUES (?)", [(t,) for t in maybe])
    before = conn.total_changes
    conn.execute(
        "DELETE FROM texts WHERE text_id IN (SELECT text_id FROM maybe_unused) AND text_id NOT IN ("
        "SELECT prompt FROM items WHERE prompt IS NOT NULL "
        "UNION SELECT question FROM answers WHERE question IS NOT NULL "
        "UNION SELECT reply FROM answers WHERE reply IS NOT NULL "
        "UNION SELECT reasoning FROM answers WHERE reasoning IS NOT NULL)"
    )
    return conn.total_changes - before


# ---- reading -----------------------------------------------------------------------------------
def read(conn: sqlite3.Connection, refs: Sequence[SetRef], texts: bool = False) -> Scored:
    """Return the scored rows of the sets ``refs`` (of one suite): runs, answers with the suite's
    rules as columns (and the reply, question and reasoning texts with ``texts``), items, units,
    pairs; runs in their order in the database (the order their files were first scored)."""
    names = [ref.name for ref in refs]
    suite = suites.get(refs[0].suite) if refs else None
    marks = ", ".join("?" * len(names))
    where = f"s.suite = ? AND s.set_name IN ({marks})"
    params = [refs[0].suite if refs else "", *names]
    runs = pd.read_sql_query(
        f"SELECT r.*, s.suite, s.set_name FROM runs r JOIN sets s USING (set_id) WHERE {where} "
        "ORDER BY s.set_name, r.results_file",
        conn,
        params=params,
    )
    runs["notes"] = [json.loads(n) if isinstance(n, str) else [] for n in runs["notes"]]  # NULL: NaN or None
    runs["attributes"] = [json.loads(a) if isinstance(a, str) else {} for a in runs["attributes"]]
    order = {run_id: position for position, run_id in enumerate(runs["run_id"])}
    text_columns = (
        ", q.text AS question, y.text AS reply, z.text AS reasoning"
        if texts
        else ", a.question AS question_id"
    )
    joins = (
        " LEFT JOIN texts q ON q.text_id = a.question LEFT JOIN texts y ON y.text_id = a.reply"
        " LEFT JOIN texts z ON z.text_id = a.reasoning"
        if texts
        else ""
    )
    plain = [c for c in ANSWER_COLUMNS if c not in TEXT_COLUMNS]
    answers = pd.read_sql_query(
        f"SELECT a.answer_id, a.run_id, {', '.join('a.' + c for c in plain)}{text_columns} FROM answers a "
        f"JOIN runs r USING (run_id) JOIN sets s USING (set_id){joins} WHERE {where} ORDER BY a.answer_id",
        conn,
        params=params,
    )
    answers = answers.iloc[
        np.lexsort((answers["answer_id"].to_numpy(), answers["run_id"].map(order).to_numpy()))
    ].reset_index(drop=True)
    if suite is not None and suite.rules:
        scores = pd.read_sql_query(
            f"SELECT c.answer_id, c.rule, c.value FROM scores c JOIN answers a USING (answer_id) "
            f"JOIN runs r USING (run_id) JOIN sets s USING (set_id) WHERE {where}",
            conn,
            params=params,
        )
        wide = scores.pivot(index="answer_id", columns="rule", values="value")
        for rule in suite.rules:
            answers[rule] = answers["answer_id"].map(wide[rule]) if rule in wide else float("nan")
    items = pd.read_sql_query(
        f"SELECT s.set_name, i.Key, i.unit, i.task, i.size, i.variant, i.gold, i.fields, i.image"
        f"{', p.text AS prompt' if texts else ''} FROM items i JOIN sets s USING (set_id)"
        f"{' LEFT JOIN texts p ON p.text_id = i.prompt' if texts else ''} WHERE {where} "
        "ORDER BY s.set_name, i.position",
        conn,
        params=params,
    )
    units = pd.read_sql_query(
        f"SELECT u.* FROM units u JOIN runs r USING (run_id) JOIN sets s USING (set_id) WHERE {where}",
        conn,
        params=params,
    )
    pairs = pd.read_sql_query(
        f"SELECT s.set_name, p.run_a, p.run_b, p.rule FROM pairs p JOIN sets s USING (set_id) WHERE {where} "
        "ORDER BY p.pair_id",
        conn,
        params=params,
    )
    return Scored(runs=runs, answers=answers, items=items, units=units, pairs=pairs)


# ---- helpers -----------------------------------------------------------------------------------
def _insert(
    conn: sqlite3.Connection, table: str, columns: list[str], frame: pd.DataFrame, verb: str = "INSERT"
) -> None:
    """Insert ``frame``'s ``columns`` into ``table`` (those it lacks or holds only missing values
    in are left to their default, NULL): NaN as NULL, numpy numbers as Python ones, lists and
    dicts as sorted JSON."""
    if frame.empty:
        return
    present = [c for c in columns if c in frame and frame[c].notna().any()]
    values = [_sql_column(frame[column]) for column in present]
    marks = ", ".join("?" * len(present))
    conn.executemany(
        f"{verb} INTO {table} ({', '.join(present)}) VALUES ({marks})", zip(*values, strict=True)
    )


def _sql_column(column: pd.Series) -> list[Any]:
    """Return a column's values as SQLite stores them (see ``_insert``)."""
    if column.dtype.kind in "iub":
        return column.astype("int64").tolist()
    if column.dtype.kind == "f":  # Python floats already: NaN as NULL
        return [None if v != v else v for v in column.tolist()]
    values = column.astype(object).tolist()
    return [v if type(v) is str else _sql_value(v) for v in values]  # most cells are text: no checks


def _sql_value(value: Any) -> Any:
    """Return one value as SQLite stores it: None and NaN as NULL, lists and dicts as sorted JSON,
    numpy numbers as Python ones."""
    if value is None:
        return None
    if isinstance(value, list | dict):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    if isinstance(value, np.generic):
        value = value.item()
    return None if value != value else value


def run_metadata(results_file: str | Path) -> dict[str, Any]:
    """Return what the run metadata beside a results file says of its last run: ``settings``
    (JSON of the model's settings as recorded, never a key; None values left out), ``date`` (when
    it started) and ``git_commit``; all None without metadata (released results, template scripts)."""
    try:
        last = json.loads(metadata_path(results_file).read_text(encoding="utf-8"))["runs"][-1]
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return {"settings": None, "date": None, "git_commit": None}
    settings = {k: v for k, v in (last.get("model") or {}).items() if v is not None}
    return {
        "settings": json.dumps(settings, sort_keys=True),
        "date": last.get("started"),
        "git_commit": last.get("commit"),
    }
