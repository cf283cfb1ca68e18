"""The results database: every item of every run in one SQLite file, ``results/results.sqlite``.

The JSON-lines results files stay the source of truth; the database is derived from them by
``build`` (``make db``, rebuilt when a results file changes) and read by the explorer (``make
explore``, Datasette) and by the report's examples. One schema serves the four suites (every
column is described in docs/database.md):

- ``runs``: one row per results file: suite, set, model, prompting, the run's name in the
  report's tables (``label``), the model's settings (never a key), date and commit of its last
  run, the records read and the file's SHA-256;
- ``items``: what was asked, one row per (suite, set, Key): the unit of statistics it belongs
  to, task, size, variant, prompt, gold answer, other fields as JSON;
- ``answers``: one row per reply scored, (run, Key, turn): the reply, the reasoning, the parsed
  answer, its score under each rule of the suite, refused and truncated flags, tokens;
- ``units``: the unit of each suite's statistics and paired tests (a WorldSense tuple, a canvas
  item, a blocks problem, an Already Said That conversation), its score per run and rule;
- ``pairs``: the paired tests the report prints; the view ``paired`` recounts them from ``units``.

Each suite contributes an adapter, ``common/<suite>/rows.py`` (``ADAPTERS``), whose
``sets(roots)`` returns one ``SetRows`` per set found, scored by the suite's own code; this
module only writes them: one transaction, indexes created after the inserts.
"""

import importlib
import json
import os
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from common import paths
from common.jsonl import sha256_file
from common.results import metadata_path

SCHEMA_VERSION = 1
DEFAULT_PATH = paths.RESULTS / "results.sqlite"
# suite -> its adapter (a module with ``sets(roots) -> list[SetRows]``); the order of the runs
ADAPTERS = {
    "worldsense": "common.worldsense.rows",
    "blocks": "common.blocks.rows",
    "canvas": "common.canvas.rows",
    "already_said_that": "common.already_said_that.rows",
}
# suite -> (the unit of its statistics, its headline rule: the answers column ``correct``)
SUITES = {
    "worldsense": ("tuple (trials sharing a description)", "the answer is in the gold answer's class"),
    "blocks": ("problem (of a view)", "lenient: the plan reaches the goal, bad lines skipped"),
    "canvas": ("item (its variants share a canvas and a question)", "strict: the one answer read is gold"),
    "already_said_that": (
        "conversation (a sample)",
        "the turn's answer is right (main task: ends it if not)",
    ),
}

RUN_COLUMNS = [
    "run_id", "suite", "set_name", "method", "view", "prompting", "model", "label",
    "results_file", "records", "sha256", "settings", "date", "git_commit",
]  # fmt: skip
ITEM_COLUMNS = ["suite", "set_name", "Key", "unit", "task", "size", "variant", "prompt", "gold", "fields"]
ANSWER_COLUMNS = [
    "run_id", "Key", "turn", "question", "expected", "reply", "reasoning", "answer",
    "correct", "strict", "lenient", "contains", "invalid", "scored", "refused", "error",
    "truncated", "prompt_tokens", "completion_tokens", "reasoning_tokens", "finish_reason",
]  # fmt: skip
UNIT_COLUMNS = ["run_id", "unit", "rule", "score", "censored", "refused", "task", "size"]

SCHEMA = """
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT);
CREATE TABLE suites (suite TEXT PRIMARY KEY, unit TEXT NOT NULL, headline_rule TEXT NOT NULL);
CREATE TABLE runs (
  run_id INTEGER PRIMARY KEY, suite TEXT NOT NULL, set_name TEXT NOT NULL, method TEXT, view TEXT,
  prompting TEXT NOT NULL, model TEXT NOT NULL, label TEXT NOT NULL, results_file TEXT NOT NULL UNIQUE,
  records INTEGER NOT NULL, sha256 TEXT NOT NULL, settings TEXT, date TEXT, git_commit TEXT);
CREATE TABLE items (
  suite TEXT NOT NULL, set_name TEXT NOT NULL, Key INTEGER NOT NULL, unit TEXT NOT NULL, task TEXT,
  size INTEGER, variant TEXT, prompt TEXT, gold TEXT, fields TEXT);
CREATE TABLE answers (
  run_id INTEGER NOT NULL REFERENCES runs (run_id), Key INTEGER NOT NULL, turn INTEGER NOT NULL,
  question TEXT, expected TEXT, reply TEXT, reasoning TEXT, answer TEXT, correct INTEGER, strict INTEGER,
  lenient INTEGER, contains INTEGER, invalid INTEGER, scored INTEGER NOT NULL, refused TEXT, error TEXT,
  truncated INTEGER NOT NULL, prompt_tokens INTEGER, completion_tokens INTEGER, reasoning_tokens INTEGER,
  finish_reason TEXT);
CREATE TABLE units (
  run_id INTEGER NOT NULL REFERENCES runs (run_id), unit TEXT NOT NULL, rule TEXT NOT NULL,
  score REAL NOT NULL, censored INTEGER NOT NULL, refused INTEGER NOT NULL, task TEXT, size INTEGER);
CREATE TABLE pairs (
  pair_id INTEGER PRIMARY KEY, suite TEXT NOT NULL, set_name TEXT NOT NULL,
  run_a INTEGER NOT NULL REFERENCES runs (run_id), run_b INTEGER NOT NULL REFERENCES runs (run_id),
  rule TEXT NOT NULL);
CREATE VIEW answer_rows AS
  SELECT r.suite, r.set_name, r.model, r.prompting, r.label, r.view, a.*, i.unit, i.task, i.size, i.variant,
    coalesce(a.question, i.prompt) AS prompt, coalesce(a.expected, i.gold) AS gold
  FROM answers a JOIN runs r USING (run_id)
  JOIN items i ON i.suite = r.suite AND i.set_name = r.set_name AND i.Key = a.Key;
CREATE VIEW paired AS
  SELECT p.pair_id, p.suite, p.set_name, ra.view, ra.label AS a, rb.label AS b, p.rule, count(*) AS n,
    sum(x.score > y.score AND NOT y.censored) AS a_better,
    sum(y.score > x.score AND NOT x.censored) AS b_better, p.run_a, p.run_b
  FROM pairs p JOIN runs ra ON ra.run_id = p.run_a JOIN runs rb ON rb.run_id = p.run_b
  JOIN units x ON x.run_id = p.run_a AND x.rule = p.rule
  JOIN units y ON y.run_id = p.run_b AND y.rule = p.rule AND y.unit = x.unit
  GROUP BY p.pair_id ORDER BY p.pair_id;
"""
# created after the inserts (faster): the keys (unique), and what the queries filter and join by
INDEXES = """
CREATE UNIQUE INDEX items_key ON items (suite, set_name, Key);
CREATE UNIQUE INDEX answers_key ON answers (run_id, Key, turn);
CREATE UNIQUE INDEX units_key ON units (run_id, rule, unit);
CREATE INDEX items_unit ON items (suite, set_name, unit);
CREATE INDEX answers_flagged ON answers (truncated, refused);
CREATE INDEX runs_suite ON runs (suite, set_name);
"""


@dataclass
class Roots:
    """Where the results files and the data they answer are (the project's, or a test's)."""

    results: Path = paths.RESULTS  # results/<suite>/<set>/...
    data: Path = paths.DATA  # data/<suite>/<set>/... (WorldSense keeps its results there)


@dataclass
class RunRows:
    """One results file as rows: the run's fields, its answers and its units."""

    file: Path  # the results file
    prompting: str
    model: str
    label: str  # the run's name in the suite's report tables
    records: int  # records read (the first of each Key)
    answers: Any  # list of dicts or a DataFrame, columns of ANSWER_COLUMNS (run_id left out)
    units: Any  # list of dicts or a DataFrame, columns of UNIT_COLUMNS (run_id left out)
    method: str | None = None  # blocks: plan | LLM+planner
    view: str | None = None  # blocks: the view

    def __repr__(self) -> str:
        return f"<RunRows {self.label}: {self.records} records>"


@dataclass
class SetRows:
    """What one set of a suite contributes: its items, its runs, the paired tests of its report."""

    suite: str
    set_name: str
    items: Any  # list of dicts or a DataFrame, columns of ITEM_COLUMNS (suite and set_name left out)
    runs: list[RunRows] = field(default_factory=list)
    pairs: list[tuple[Path, Path, str]] = field(default_factory=list)  # (file of run a, file of run b, rule)

    def __repr__(self) -> str:
        return f"<SetRows {self.suite}/{self.set_name}: {len(self.runs)} runs>"


def collect(roots: Roots | None = None, suites: Sequence[str] = tuple(ADAPTERS)) -> list[SetRows]:
    """Return the rows of every set of ``suites`` found under ``roots`` (default: the project's
    results/ and data/), in the adapters' order."""
    roots = roots or Roots()
    return [rows for suite in suites for rows in importlib.import_module(ADAPTERS[suite]).sets(roots)]


def build(path: str | Path, sets: Sequence[SetRows]) -> dict[str, int]:
    """Write the database of ``sets`` to ``path`` (replaced atomically: a temporary file renamed
    once complete) and return the row count of each table. Runs are numbered in the order given."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)
    conn = sqlite3.connect(tmp)
    try:
        conn.executescript(BUILD_PRAGMAS + SCHEMA)
        with conn:  # one transaction
            _insert_all(conn, sets)
        conn.executescript(INDEXES + "PRAGMA analysis_limit = 1000; ANALYZE;")
        counts = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    finally:
        conn.close()
    os.replace(tmp, path)
    return counts


TABLES = ("runs", "items", "answers", "units", "pairs")
# a file written once, renamed when complete: no journal, no sync, a large cache for the indexes
BUILD_PRAGMAS = "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -262144;"


def _insert_all(conn: sqlite3.Connection, sets: Sequence[SetRows]) -> None:
    """Insert the rows of ``sets`` (the schema exists; the caller holds the transaction)."""
    conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
    conn.executemany("INSERT INTO suites VALUES (?, ?, ?)", [(s, *about) for s, about in SUITES.items()])
    run_ids: dict[str, int] = {}
    for rows in sets:
        _insert(conn, "items", ITEM_COLUMNS, rows.items, suite=rows.suite, set_name=rows.set_name)
        for run in rows.runs:
            run_id = len(run_ids) + 1
            run_ids[paths.shown(run.file)] = run_id
            conn.execute(
                f"INSERT INTO runs VALUES ({', '.join('?' * len(RUN_COLUMNS))})",
                _run_values(run_id, rows, run),
            )
            _insert(conn, "answers", ANSWER_COLUMNS, run.answers, run_id=run_id)
            _insert(conn, "units", UNIT_COLUMNS, run.units, run_id=run_id)
    pairs = [
        (rows.suite, rows.set_name, run_ids[paths.shown(a)], run_ids[paths.shown(b)], rule)
        for rows in sets
        for a, b, rule in rows.pairs
    ]
    conn.executemany("INSERT INTO pairs (suite, set_name, run_a, run_b, rule) VALUES (?, ?, ?, ?, ?)", pairs)


def _run_values(run_id: int, rows: SetRows, run: RunRows) -> tuple[Any, ...]:
    """Return the ``runs`` row of ``run``: its fields, its file's SHA-256, its last run's metadata."""
    meta = run_metadata(run.file)
    values = {
        "run_id": run_id,
        "suite": rows.suite,
        "set_name": rows.set_name,
        "method": run.method,
        "view": run.view,
        "prompting": run.prompting,
        "model": run.model,
        "label": run.label,
        "results_file": paths.shown(run.file),
        "records": run.records,
        "sha256": sha256_file(run.file),
        **meta,
    }
    return tuple(values.get(c) for c in RUN_COLUMNS)


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


def _insert(conn: sqlite3.Connection, table: str, columns: list[str], rows: Any, **fixed: Any) -> None:
    """Insert ``rows`` (dicts or a DataFrame) into ``table``: ``columns`` in order, ``fixed`` values
    for the columns named there, missing or NaN values as NULL, lists and dicts as JSON."""
    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    if frame.empty:
        return
    frame = frame.assign(**fixed).reindex(columns=columns)
    values = [_sql_column(frame[column]) for column in columns]
    marks = ", ".join("?" * len(columns))
    conn.executemany(
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", zip(*values, strict=True)
    )


def _sql_column(column: pd.Series) -> list[Any]:
    """Return a column's values as SQLite stores them: Python numbers and strings (numpy's
    converted), None for missing values, lists and dicts as sorted JSON."""
    values = column.astype(object).where(column.notna(), None).tolist()
    if column.dtype == object and any(isinstance(v, list | dict) for v in values):
        return [
            json.dumps(v, sort_keys=True, ensure_ascii=False) if isinstance(v, list | dict) else v
            for v in values
        ]
    return [v.item() if hasattr(v, "item") else v for v in values] if column.dtype == object else values


# ---- helpers the adapters share -----------------------------------------------------------------
def joined_text(parts: Any) -> str | None:
    """Return the text of one or several replies or reasonings: a string as it is; a list's
    non-empty texts separated by blank lines; a mapping per part (a blocks translation's init and
    goal) as "[part] text" blocks; None when there is no text."""
    if parts is None:
        return None
    if isinstance(parts, str):
        return parts
    if isinstance(parts, dict):
        return "\n".join(f"[{name}] {text}" for name, text in parts.items()) or None
    texts = [joined_text(part) for part in parts]
    return "\n\n".join(t for t in texts if t) or None


def reply_fields(record: dict[str, Any]) -> dict[str, Any]:
    """Return the answers fields every suite reads the same way from a results record (or an
    Already Said That turn line): reasoning, refused and error, truncated (the replies cut at the
    token limit, ``common.results.finish_reasons``), tokens and the finish reasons."""
    from common.results import finish_reasons

    reasons = finish_reasons(record)
    return {
        "reasoning": joined_text(record.get("reasoning")),
        "refused": str(record["refused"]) if record.get("refused") else None,
        "error": record.get("error") or None,
        "truncated": reasons.count("length"),
        "prompt_tokens": record.get("prompt_tokens"),
        "completion_tokens": record.get("completion_tokens"),
        "reasoning_tokens": record.get("reasoning_tokens"),
        "finish_reason": ", ".join(reasons) if any(reasons) else None,
    }


def json_fields(record: dict[str, Any], skip: Iterable[str]) -> str:
    """Return the fields of ``record`` not in ``skip`` as sorted JSON (an item's other fields)."""
    left_out = set(skip)
    return json.dumps({k: v for k, v in record.items() if k not in left_out}, sort_keys=True, default=str)
