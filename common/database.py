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

The database's parts, one module each: its file, schema and opening (``common.dbfile``: the
tables are described there and in docs/database.md), texts and pictures stored once
(``common.dbstore``), reading the scored rows (``common.dbread``); updating them is here.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sqlite3
import time
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from common import codedeps, dbarrays, paths, run_identity, suites
from common.dbfile import ANSWER_COLUMNS, ITEM_COLUMNS, RUN_COLUMNS, TEXT_COLUMNS, UNIT_COLUMNS
from common.dbfile import connect as connect
from common.dbfile import connection as connection
from common.dbfile import default_path as default_path
from common.dbread import read as read
from common.dbstore import TextRefs, delete_unused, image_ids, insert, text_ids
from common.jsonl import sha256_file
from common.scored import ScoredRun
from common.suite import SetRef, Suite


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
    changed = [ref.suite for ref in refs if _update_set(conn, ref, counts)]
    for suite in dict.fromkeys(changed):  # once per suite, not per set: a pair may join two sets
        with _transaction(conn):
            _write_pairs(conn, suites.get(suite))
    return counts


def _update_set(conn: sqlite3.Connection, ref: SetRef, counts: Counts) -> bool:
    """Update one set: its items when its data changed (then every run is scored again), the
    results files whose content or scorer changed, the runs whose file is gone; return whether
    a set, a run or an answer changed (then the suite's pairs are chosen again, ``update``), not
    when a file was only hashed again and found the same (its times noted)."""
    suite = suites.get(ref.suite)
    scorer = scorer_version(suite)
    files = {paths.shown(f): f for f in suite.part("results_files")(ref)}
    known = _known_runs(conn, ref)
    row = conn.execute(
        "SELECT set_id, fingerprint FROM sets WHERE suite = ? AND set_name = ?", (ref.suite, ref.name)
    ).fetchone()
    set_id, old_fingerprint = row if row else (None, None)
    if not files and not known:
        return False  # a set nobody answered yet: nothing to keep
    fingerprint = suite.part("fingerprint")(ref)
    new_items = fingerprint != old_fingerprint
    checked = time.time_ns()  # before the files are looked at: a later write shows as newer
    stats = {name: file.stat() for name, file in files.items()}
    moved = [name for name in files if new_items or not _same_file(known.get(name), stats[name], scorer)]
    gone = [name for name in known if name not in files]
    if not new_items and not moved and not gone:
        counts.unchanged += len(files)
        return False
    digests = {name: sha256_file(files[name]) for name in moved}
    to_score = [
        name
        for name in moved
        if new_items
        or name not in known
        or (known[name]["sha256"], known[name]["scorer"]) != (digests[name], scorer)
    ]
    items = suite.part("items")(ref) if new_items or to_score else None
    texts = TextRefs()
    with _transaction(conn):
        if new_items:
            set_id = _write_items(conn, ref, items, fingerprint, set_id, texts)
            counts.sets.append(ref.key)
        for name in [*gone, *(n for n in to_score if n in known)]:
            texts.dropped.update(_run_texts(conn, known[name]["run_id"]))
            _delete_run(conn, known[name]["run_id"])
        counts.removed += len(gone)
        for name in (n for n in moved if n not in to_score):  # the same bytes: only the stat changed
            conn.execute(
                "UPDATE runs SET bytes = ?, mtime_ns = ?, checked_ns = ? WHERE run_id = ?",
                (stats[name].st_size, stats[name].st_mtime_ns, checked, known[name]["run_id"]),
            )
        counts.unchanged += len(files) - len(to_score)
    # one results file at a time: scored outside the lock, written in a transaction of its own,
    # then let go (the memory of scoring a set is one run's, whatever the number of runs)
    for name in to_score:
        run = suite.part("score")(ref, files[name], items)
        with _transaction(conn):
            _write_run(
                conn, suite, set_id, files[name], stats[name], digests[name], scorer, run, checked, texts
            )
        counts.answers += len(run.answers)
        counts.scored += 1
        del run
    with _transaction(conn):
        counts.texts_removed += delete_unused(conn, texts, images=new_items)
    return bool(new_items or to_score or gone)


def _same_file(known: dict[str, Any] | None, stat: os.stat_result, scorer: str) -> bool:
    """Return whether a results file is as it was scored: the same size and modification time, the
    same scorer, and a modification time well before the file was looked at (a file written in the
    same instant as it was scored could change again without its time changing: it is hashed,
    as git does with a "racy" file); a file written since, or scored by other code, is hashed."""
    if not known or known["scorer"] != scorer:
        return False
    return unchanged(known["bytes"], known["mtime_ns"], known["checked_ns"], stat)


def unchanged(size: int, mtime_ns: int, checked_ns: int, stat: os.stat_result) -> bool:
    """Return whether a file hashed when it had ``size`` and ``mtime_ns`` (looked at ``checked_ns``)
    is as it was: the same size and time, and that time well before it was looked at (RACY_NS: a
    file written in the instant it was hashed may have changed since without its time changing)."""
    same = (size, mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    return same and stat.st_mtime_ns + RACY_NS < checked_ns


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
    frame = frame.assign(prompt=text_ids(conn, frame["prompt"], texts), image=image_ids(conn, frame["image"]))
    insert(conn, "items", ["set_id", *ITEM_COLUMNS], frame.assign(set_id=set_id))
    return set_id


# a run's counts, as the explorer's ``runs`` query shows them (``common.queries``), and what its
# records spent, as the report's provenance shows it (``common.run_records``: each record's first
# turn, every draw; a reply per finish reason), counted once
RUN_COUNTS = """
INSERT INTO run_counts
SELECT run_id, count(*), sum(scored AND correct = 0), sum(refused IS NOT NULL), sum(truncated > 0),
  round(100.0 * avg(CASE WHEN scored THEN correct END), 1),
  coalesce(sum(CASE WHEN turn = 0 AND finish_reason IS NOT NULL
    THEN length(finish_reason) - length(replace(finish_reason, ',', '')) + 1 END), 0),
  coalesce(sum(CASE WHEN turn = 0 THEN truncated END), 0),
  coalesce(sum(CASE WHEN turn = 0 THEN completion_tokens END), 0),
  coalesce(sum(CASE WHEN turn = 0 THEN reasoning_tokens END), 0)
FROM answers WHERE run_id = ? GROUP BY run_id"""
# its units per rule, task and size, counted and summed once (``unit_groups``)
UNIT_GROUPS = """
INSERT INTO unit_groups
SELECT run_id, rule, task, size, count(*), sum(score) FROM units WHERE run_id = ? GROUP BY rule, task, size"""


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
    """Insert one scored results file (looked at at time ``checked``, ns): its ``runs`` row (with
    what the file records of the runs that wrote it: ``run_identity.recorded``), answers (and
    their counts, ``run_counts``), scores and units (and their sums by rule, task and size,
    ``unit_groups``); the texts they refer to are noted in ``texts.ids``."""
    meta = run_identity.recorded(file)
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
            prompt=lambda f: text_ids(conn, f["prompt"], texts),
            image=lambda f: image_ids(conn, f["image"]),
        )
        frame["position"] = frame["position"].fillna(-1)
        insert(conn, "items", ["set_id", *ITEM_COLUMNS], frame.assign(set_id=set_id), verb="INSERT OR IGNORE")
    answers = run.answers.reset_index(drop=True)
    if answers.empty:
        return
    frame = answers.reindex(columns=ANSWER_COLUMNS)
    frame["draw"] = frame["draw"].fillna(0)
    frame["turn"] = frame["turn"].fillna(0)
    frame["scored"] = frame["scored"].fillna(1)
    frame["truncated"] = frame["truncated"].fillna(0)
    for column in TEXT_COLUMNS:
        frame[column] = text_ids(conn, frame[column], texts)
    first = conn.execute("SELECT coalesce(max(answer_id), 0) + 1 FROM answers").fetchone()[0]
    ids = pd.RangeIndex(first, first + len(frame))
    insert(
        conn, "answers", ["answer_id", "run_id", *ANSWER_COLUMNS], frame.assign(answer_id=ids, run_id=run_id)
    )
    conn.execute(RUN_COUNTS, (run_id,))
    if "answer_arrays" in suite.extra:  # what its analysis reads: the first answers, compact
        dbarrays.write(conn, set_id, run_id, frame.assign(answer_id=ids), suite.part("answer_arrays"))
    rules = [rule for rule in suite.rules if rule in answers.columns]
    if rules:
        long = pd.DataFrame(
            {
                "answer_id": list(ids) * len(rules),
                "rule": [rule for rule in rules for _ in range(len(answers))],
                "value": pd.concat([answers[rule] for rule in rules], ignore_index=True),
            }
        )
        insert(conn, "scores", ["answer_id", "rule", "value"], long[long["value"].notna()])
    if not run.units.empty:
        insert(
            conn,
            "units",
            ["run_id", *UNIT_COLUMNS],
            run.units.reindex(columns=UNIT_COLUMNS).assign(run_id=run_id),
        )
        conn.execute(UNIT_GROUPS, (run_id,))
        names = "\n".join(dict.fromkeys(str(unit) for unit in run.units["unit"]))  # each once, in order
        conn.execute("INSERT INTO run_units VALUES (?, ?)", (run_id, zlib.compress(names.encode())))


def _run_texts(conn: sqlite3.Connection, run_id: int) -> set[int]:
    """Return the texts a run's answers refer to (questions, replies, reasoning, details)."""
    rows = conn.execute(f"SELECT {', '.join(TEXT_COLUMNS)} FROM answers WHERE run_id = ?", (run_id,))
    return {text for row in rows for text in row if text is not None}


def _delete_run(conn: sqlite3.Connection, run_id: int) -> None:
    """Delete a run and its answers, scores, units (and their sums), pairs and kept analysis parts
    (texts: ``delete_unused``)."""
    conn.execute(
        "DELETE FROM scores WHERE answer_id IN (SELECT answer_id FROM answers WHERE run_id = ?)", (run_id,)
    )
    of_run = ("answers", "answer_arrays", "units", "run_counts", "unit_groups", "run_units", "run_parts")
    for table in (*of_run, "runs"):
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
        delete_unused(conn, texts, images=True)
    return True


def _write_pairs(conn: sqlite3.Connection, suite: Suite) -> None:
    """Replace the suite's paired tests by those it chooses for its runs (``Suite.pairs``, given
    every run of the suite, with its set's name, and the units each has, ``_run_units``): a pair
    may join two sets."""
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
    units = _run_units(conn, suite.name)
    set_of = dict(zip(runs["run_id"], runs["set_id"], strict=True))
    chosen = suite.part("pairs")(runs, units)
    conn.executemany(
        "INSERT INTO pairs (set_id, run_a, run_b, rule) VALUES (?, ?, ?, ?)",
        [(int(set_of[a]), int(a), int(b), rule) for a, b, rule in chosen],
    )


def _run_units(conn: sqlite3.Connection, suite: str) -> pd.DataFrame:
    """Return the units each run of ``suite`` has (``run_id``, ``unit``: a row per run and unit), as
    the score stage listed them once per run (``run_units``), not read from every row of ``units``
    (one per rule: 4.3 million rows at 100 WorldSense runs, 10 s of every update's choice of pairs);
    ``unit`` categorical, each distinct list decoded once."""
    rows = conn.execute(
        "SELECT u.run_id, u.units FROM run_units u JOIN runs r USING (run_id) JOIN sets s USING (set_id) "
        "WHERE s.suite = ? ORDER BY u.run_id",
        (suite,),
    ).fetchall()
    vocabulary: dict[str, int] = {}
    coded: dict[bytes, np.ndarray] = {}  # runs of a set mostly list the same units: each list read once
    for _, blob in rows:
        if blob not in coded:
            names = zlib.decompress(blob).decode().split("\n")
            coded[blob] = np.array(
                [vocabulary.setdefault(name, len(vocabulary)) for name in names], dtype=np.int64
            )
    codes = [coded[blob] for _, blob in rows]
    run_ids = np.repeat([run_id for run_id, _ in rows], [len(c) for c in codes]).astype("int64")
    unit = pd.Categorical.from_codes(np.concatenate(codes) if codes else [], categories=list(vocabulary))
    return pd.DataFrame({"run_id": run_ids, "unit": unit})
