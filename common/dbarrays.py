"""Each run's first answers in compact form: what an analysis reads instead of every answer row.

A suite that names ``answer_arrays`` (its ``Suite.extra``: a tuple of answer columns) has the
score stage store, beside each run's answer rows, its first answers (draw 0, turn 0) as one array
per column in the fixed order of the set's items (``answer_arrays`` table): each value a small
integer code into the column's distinct values (kept as JSON beside it; the text ids of a column
the answers keep in ``texts``, read as the texts), zlib-compressed; plus the
offset of each item's answer among the run's answer ids (-1: not answered), so the rows come back
in the order the database keeps them. ``read`` returns the scored rows an analysis reads (as
``database.read`` does) as a ``Lean``: the first answers left in their arrays, made rows one run
at a time when the analysis asks for that run's (``run_answers``), and only the runs' other
answers (later draws and turns) read from the answer rows, those after turn 0 counted when asked
(a conversation's turns: a row per kind of turn, with how many): an analysis of N runs holds about
N x items bytes, not every row with its texts, nor every answer of every run at once. Nothing is
lost: ``Lean.rows`` gives the rows of ``database.read`` in its order, restricted to the columns
stored (the later turns counted when ``read`` counted them).

The arrays' coding is part of the database's format, not of a suite's scorer (whose version says
when a run is scored again): a change to it goes with a new ``dbfile.SCHEMA_VERSION``.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from common.dbfile import TEXT_COLUMNS
from common.dbread import read_runs
from common.scored import Scored
from common.suite import SetRef

ROW_COLUMNS = ["answer_id", "run_id", "Key", "draw", "turn"]  # every row read has these
OFFSETS = "answer_id"  # the array of each item's answer's offset among the run's answer ids


# ---- writing (the score stage: ``common.database``) --------------------------------------------
def write(
    conn: sqlite3.Connection, set_id: int, run_id: int, answers: pd.DataFrame, columns: Sequence[str]
) -> None:
    """Store the arrays of one run's answers as written (``answers``: with ``answer_id``): its
    first answers' ``columns`` in the order of the set's items, and how many other rows it has.
    Writes nothing when an answer's Key is not among the set's items (the run is then read from
    its rows)."""
    keys = pd.Index(_item_keys(conn, set_id))
    first = answers[(answers["draw"] == 0) & (answers["turn"] == 0)]
    position = keys.get_indexer(first["Key"])
    if (position < 0).any() or not keys.is_unique:
        return
    base = int(answers["answer_id"].min())
    offsets = np.full(len(keys), -1, dtype=np.int64)
    offsets[position] = first["answer_id"].to_numpy() - base
    rows = [
        (run_id, OFFSETS, json.dumps({"base": base, "others": len(answers) - len(first)}), _pack(offsets))
    ]
    for column in columns:
        codes, values = pd.factorize(first[column].astype(object), use_na_sentinel=True)
        full = np.zeros(len(keys), dtype=np.int64)
        full[position] = codes + 1  # 0: no value (NULL), or no answer (its offset says which)
        vocab = [v.item() if isinstance(v, np.generic) else v for v in values]
        rows.append((run_id, column, json.dumps({"values": vocab}), _pack(full)))
    conn.executemany("INSERT INTO answer_arrays (run_id, name, about, data) VALUES (?, ?, ?, ?)", rows)


def _pack(values: np.ndarray) -> bytes:
    """Return ``values`` (integers) as the differences of each from the one before (an item's
    answer id or code is often its neighbour's plus 0 or 1: they compress to next to nothing) in the
    smallest signed type that holds them, compressed, with the type's name first ("<i1", "<i2",
    "<i4" or "<i8", then a newline)."""
    values = np.diff(values, prepend=0)
    dtype = next(
        t for t in ("<i1", "<i2", "<i4", "<i8") if values.size == 0 or np.abs(values).max() < np.iinfo(t).max
    )
    return dtype.encode() + b"\n" + zlib.compress(values.astype(dtype).tobytes(), 6)


def _unpack(data: bytes) -> np.ndarray:
    """Return the integers ``_pack`` stored."""
    dtype, _, packed = data.partition(b"\n")
    return np.cumsum(np.frombuffer(zlib.decompress(packed), dtype=dtype.decode()).astype(np.int64))


def _item_keys(conn: sqlite3.Connection, set_id: int) -> list[int]:
    """Return the Keys of a set's items in their order (those its data has: position >= 0)."""
    rows = conn.execute(
        "SELECT Key FROM items WHERE set_id = ? AND position >= 0 ORDER BY position", (set_id,)
    )
    return [key for (key,) in rows]


# ---- reading (the analyses: ``common.analysis.load``) ------------------------------------------
@dataclass(repr=False)
class Lean(Scored):
    """Scored rows whose runs' first answers stay in their arrays until asked for, one run at a time
    (``run_answers``): ``answers`` holds only the other rows (later draws and turns, every row of a
    run stored without arrays), the rows after turn 0 counted when ``read`` was asked to."""

    first: dict[int, tuple[np.ndarray, dict[str, tuple[str, bytes]]]] = field(default_factory=dict)
    columns: tuple[str, ...] = ()  # the answer columns read (besides ``ROW_COLUMNS``)
    # the database file read: with ``counted`` the other rows are read from it, one run at a time
    # when asked (``answers`` is then empty: a run whose part of the analysis is kept is never
    # read), and the texts of the arrays' columns kept in ``texts`` (their codes are text ids)
    source: str | None = None
    counted: bool = False
    _positions: dict[int, np.ndarray] | None = field(default=None, init=False)  # each run's other rows
    _conn: sqlite3.Connection | None = field(default=None, init=False)

    def __repr__(self) -> str:
        return f"<Lean {len(self.runs)} runs, {len(self.first)} as arrays, {len(self.answers):,} other rows>"

    def run_answers(self, run_id: int) -> pd.DataFrame:
        """Return every row of one run in the database's order: its first answers made rows from
        their arrays, and its other rows."""
        if self.counted:
            others = self._others_of(run_id)
        else:
            if self._positions is None:  # once: a scan of every row per run grows as runs squared
                self._positions = self.answers.groupby("run_id", sort=False).indices
            others = self.answers.iloc[self._positions.get(run_id, np.zeros(0, dtype=np.int64))]
        if run_id not in self.first:
            return others.reset_index(drop=True)
        keys, arrays = self.first[run_id]
        first = _first_answers(run_id, keys, arrays, self.columns)
        if any(c in TEXT_COLUMNS for c in self.columns):
            first = _as_texts(self._connection(), first, self.columns)
        if "count" in self.answers.columns:
            first["count"] = 1
        rows = pd.concat([first, others], ignore_index=True) if len(others) else first
        return rows.iloc[np.argsort(rows["answer_id"].to_numpy(), kind="stable")].reset_index(drop=True)

    def _others_of(self, run_id: int) -> pd.DataFrame:
        """Return one run's rows not in its arrays, read from ``source`` (as ``read`` reads them)."""
        arrays = self.first.get(run_id, (None, None))[1]
        if arrays is not None and not json.loads(arrays[OFFSETS][0])["others"]:
            return self.answers.iloc[:0]
        frames = _other_rows(self._connection(), int(run_id), self.columns, arrays is not None, self.counted)
        rows = pd.concat(frames, ignore_index=True)
        return rows.iloc[np.argsort(rows["answer_id"].to_numpy(), kind="stable")].reset_index(drop=True)

    def _connection(self) -> sqlite3.Connection:
        """Return a read-only connection to ``source``, opened when first asked for."""
        if self._conn is None:
            if not self.source:
                raise ValueError(
                    "these rows were read from a database without a file: nothing to read more from"
                )
            self._conn = sqlite3.connect(f"file:{self.source}?mode=ro", uri=True)
        return self._conn

    def rows(self) -> Scored:
        """Return these rows as ``database.read`` gives them: every run's first answers made rows."""
        frames = [self.run_answers(run_id) for run_id in self.runs["run_id"]]
        answers = pd.concat(frames, ignore_index=True) if frames else self.answers.iloc[:0]
        return Scored(
            self.runs, answers, self.items, self.units, self.pairs, memo=self.memo, parts=self.parts
        )

    def of_set(self, set_name: str) -> Lean:
        """Return the rows of one set."""
        plain = super().of_set(set_name)
        ids = set(plain.runs["run_id"])
        first = {run_id: stored for run_id, stored in self.first.items() if run_id in ids}
        return Lean(
            **vars(plain), first=first, columns=self.columns, source=self.source, counted=self.counted
        )


def run_answers(scored: Scored, run_id: int) -> pd.DataFrame:
    """Return every answer row of one run of ``scored`` (a ``Lean`` or ``database.read``'s rows)
    in the database's order: what an analysis that goes one run at a time reads."""
    if isinstance(scored, Lean):
        return scored.run_answers(run_id)
    return scored.answers[scored.answers["run_id"] == run_id].reset_index(drop=True)


def rows(scored: Scored) -> Scored:
    """Return ``scored`` with every answer a row (a ``Lean``'s first answers made rows; other
    scored rows as they are)."""
    return scored.rows() if isinstance(scored, Lean) else scored


def read(
    conn: sqlite3.Connection, refs: Sequence[SetRef], columns: Sequence[str], counted: bool = False
) -> Lean:
    """Return the scored rows of the sets ``refs`` as ``database.read`` does (without texts), their
    answers restricted to ``ROW_COLUMNS`` and ``columns``, as a ``Lean``: the first answers left in
    their arrays, the other rows (later draws and turns, runs stored without arrays) read from the
    answers table one run at a time; with ``counted`` a run's rows after turn 0 that agree on
    ``draw`` and every one of ``columns`` come as one row with their ``count`` (its ``Key``,
    ``turn`` and ``answer_id`` the least of them; every other row has a count of 1), and read
    when a run's rows are asked for (``Lean.run_answers``: a run whose part of the analysis is
    kept, ``common.runparts``, is never read); units left out (empty: an analysis that reads
    these rows does not read units)."""
    runs, items, pairs, where, params = read_runs(conn, refs)
    order = {run_id: position for position, run_id in enumerate(runs["run_id"])}
    stored = pd.read_sql_query(
        f"SELECT x.run_id, x.name, x.about, x.data FROM answer_arrays x JOIN runs r USING (run_id) "
        f"JOIN sets s USING (set_id) WHERE {where}",
        conn,
        params=params,
    )
    by_run = {
        run_id: dict(zip(group["name"], zip(group["about"], group["data"], strict=True), strict=True))
        for run_id, group in stored.groupby("run_id")
    }
    set_ids = dict(zip(runs["run_id"], runs["set_id"], strict=True))
    keys: dict[int, np.ndarray] = {}
    first = {}
    for run_id, arrays in by_run.items():
        if set_ids[run_id] not in keys:
            keys[set_ids[run_id]] = np.asarray(_item_keys(conn, set_ids[run_id]), dtype=np.int64)
        first[int(run_id)] = (keys[set_ids[run_id]], arrays)
    others = [
        run_id
        for run_id in runs["run_id"]
        if not counted and (run_id not in by_run or json.loads(by_run[run_id][OFFSETS][0])["others"])
    ]  # counted: each run's read when asked (``Lean.run_answers``)
    frames, shared = [], {}  # each distinct text once (N runs of a set repeat its turns' details)
    for run_id in others:  # one run at a time: the index on (run_id, Key, draw, turn) serves it
        for rows_ in _other_rows(conn, int(run_id), columns, run_id in by_run, counted):
            for column in columns:
                if not pd.api.types.is_numeric_dtype(rows_[column]):
                    rows_[column] = _shared(rows_[column], shared)
            frames.append(rows_)
    names = [*ROW_COLUMNS, *columns, *(["count"] if counted else [])]
    answers = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=names)
    answers = answers.iloc[
        np.lexsort((answers["answer_id"].to_numpy(), answers["run_id"].map(order).to_numpy()))
    ]
    units = pd.DataFrame(columns=["run_id", "unit", "rule", "score", "censored", "refused", "task", "size"])
    return Lean(
        runs=runs,
        answers=answers.reset_index(drop=True),
        items=items,
        units=units,
        pairs=pairs,
        first=first,
        columns=tuple(columns),
        source=conn.execute("PRAGMA database_list").fetchone()[2],
        counted=counted,
    )


def _other_rows(
    conn: sqlite3.Connection, run_id: int, columns: Sequence[str], arrays: bool, counted: bool
) -> list[pd.DataFrame]:
    """Return a run's rows not in its arrays (``arrays``: it has some; else every row), those
    after turn 0 grouped and counted with ``counted`` (``read``)."""
    selected = ", ".join(f"a.{c}" for c in [*ROW_COLUMNS, *columns])  # texts as ids: ``_as_texts``
    first = " AND (a.draw > 0 OR a.turn > 0)" if arrays else ""
    if not counted:
        rows = pd.read_sql_query(
            f"SELECT {selected} FROM answers a WHERE a.run_id = ?{first}", conn, params=(run_id,)
        )
        return [_as_texts(conn, rows, columns)]
    turn0 = " AND a.draw > 0" if arrays else ""
    rows = pd.read_sql_query(
        f"SELECT {selected}, 1 AS count FROM answers a WHERE a.run_id = ? AND a.turn = 0{turn0}",
        conn,
        params=(run_id,),
    )
    grouped = ", ".join(f"a.{c}" for c in ["draw", *columns])
    later = pd.read_sql_query(
        f"SELECT min(a.answer_id) AS answer_id, a.run_id, min(a.Key) AS Key, {grouped}, min(a.turn) AS turn, "
        f"count(*) AS count FROM answers a WHERE a.run_id = ? AND a.turn > 0 GROUP BY {grouped}",
        conn,
        params=(run_id,),
    )
    return [
        _as_texts(conn, rows, columns),
        _as_texts(conn, later[[*ROW_COLUMNS, *columns, "count"]], columns),
    ]


def _as_texts(conn: sqlite3.Connection, rows: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Return ``rows`` with the columns the answers keep in ``texts`` (their ids) as the texts."""
    for column in (c for c in columns if c in TEXT_COLUMNS):
        ids = rows[column].astype(object).where(rows[column].notna(), None)
        found = _texts_of(conn, ids)
        rows[column] = [None if i is None else found[int(i)] for i in ids]
    return rows


def _texts_of(conn: sqlite3.Connection, ids: Iterable[Any]) -> dict[int, str]:
    """Return the text of each id of ``ids`` (``texts`` table; None and repeats ignored), in one
    query: the columns the answers keep there hold ids (``dbfile.TEXT_COLUMNS``)."""
    wanted = sorted({int(i) for i in ids if i is not None and i == i})
    if not wanted:
        return {}
    rows = conn.execute(
        "SELECT text_id, text FROM texts WHERE text_id IN (SELECT value FROM json_each(?))",
        (json.dumps(wanted),),
    )
    return dict(rows)


def _shared(column: pd.Series, shared: dict[str, str]) -> np.ndarray:
    """Return ``column``'s values (objects; None for a missing one), each distinct text the one
    object ``shared`` holds for it (added there when new)."""
    codes, values = pd.factorize(column)
    table = np.array([None, *(shared.setdefault(v, v) for v in values)], dtype=object)
    return table[codes + 1]


def _first_answers(
    run_id: int, keys: np.ndarray, arrays: dict[str, tuple[str, bytes]], columns: Sequence[str]
) -> pd.DataFrame:
    """Return a run's first answers from its arrays: one row per item answered, in item order."""
    about, data = arrays[OFFSETS]
    offsets = _unpack(data)
    answered = offsets >= 0
    frame = {
        "answer_id": offsets[answered] + json.loads(about)["base"],
        "run_id": np.full(int(answered.sum()), run_id, dtype=np.int64),
        "Key": keys[answered],
        "draw": np.zeros(int(answered.sum()), dtype=np.int64),
        "turn": np.zeros(int(answered.sum()), dtype=np.int64),
    }
    for column in columns:
        about, data = arrays[column]
        values = np.array([None, *json.loads(about)["values"]], dtype=object)
        frame[column] = values[_unpack(data)[answered]]
    return pd.DataFrame(frame)
