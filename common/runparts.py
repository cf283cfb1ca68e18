"""Each run's part of an analysis, computed once per run and code, kept in the results database.

An analysis of a hundred runs that recomputes every run's part each time it runs makes `make
all` after adding one model cost as much as analysing all of them again. What an analysis
computes of one run alone (Already Said That: its conversations, turns and metrics,
``report.runs_of``) is asked of ``Scored.run_part``; a ``Store`` keeps it in the database's
``run_parts`` table under the run, the SHA-256 and scorer of its results file, and a digest of
the code that computes it (the module's import closure, ``codedeps.behaviour_fingerprint``, and
the versions of Python, numpy and pandas), so a part is used again only for the same run, file
content, scorer and code; a run scored again (``database._delete_run``) drops its parts, and a
part of other code is replaced when it is computed anew. Only the run's own part is kept: what
compares runs (tests, rankings, tables) is assembled from the parts at each analysis.

The parts are pickled (zlib-compressed): the database is this checkout's derived data, made and
read by its own code, as the score stage's other tables are; a database from elsewhere is not
to be trusted any more than code from there.
"""

from __future__ import annotations

import functools
import pickle
import platform
import sqlite3
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from common import codedeps
from common.dbfile import connection


@functools.cache
def code_key(module: str) -> str:
    """Return the digest of the code of ``module`` and all it imports, with the versions of the
    libraries a pickled frame depends on: a part computed by other code is not used."""
    files = codedeps.closure([module])
    versions = f"{platform.python_version()} numpy {np.__version__} pandas {pd.__version__}"
    return f"{codedeps.behaviour_fingerprint(files)} {versions}"


class Store:
    """The run parts of the results database at ``path``, for the runs ``runs`` (rows of the
    ``runs`` table: run_id, sha256, scorer): read once per part name, written by ``save``."""

    def __init__(self, path: str | Path, runs: pd.DataFrame) -> None:
        self.path = Path(path)
        # what identifies a run's content: its results file's SHA-256 and the scorer it was scored by
        self.content = {
            int(r): f"{s} {v}" for r, s, v in zip(runs["run_id"], runs["sha256"], runs["scorer"], strict=True)
        }
        self.kept: dict[str, dict[int, tuple[str, bytes]]] = {}
        self.pending: list[tuple[int, str, str, str, bytes]] = []

    def get(self, what: str, run_id: int, compute: Callable[[], Any]) -> Any:
        """Return run ``run_id``'s part ``what`` ("<module>:<name>", computed by that module's
        code): as kept for this run, content and code, else ``compute()`` (kept by ``save``)."""
        run_id, content = int(run_id), self.content.get(int(run_id))
        if content is None:  # not a run this store was given: computed, not kept
            return compute()
        if what not in self.kept:
            self.kept[what] = self._read(what)
        found = self.kept[what].get(run_id)
        if found is not None and found[0] == content:
            return pickle.loads(zlib.decompress(found[1]))
        part = compute()
        data = zlib.compress(pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL), 6)
        self.pending.append((run_id, what, content, code_key(what.partition(":")[0]), data))
        return part

    def _read(self, what: str) -> dict[int, tuple[str, bytes]]:
        """Return the parts ``what`` of this code kept for this store's runs: (content, data) by run."""
        code = code_key(what.partition(":")[0])
        try:
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
            try:
                rows = conn.execute(
                    "SELECT run_id, content, data FROM run_parts WHERE what = ? AND code = ?", (what, code)
                ).fetchall()
            finally:
                conn.close()
        except sqlite3.OperationalError:  # no database yet
            return {}
        return {run_id: (content, data) for run_id, content, data in rows if run_id in self.content}

    def save(self) -> int:
        """Write the parts computed since the last save (each replacing that run's part of other
        content or code); return how many. A database that cannot be written (read-only, or
        locked past the busy timeout) keeps none: the parts are computed again next time."""
        pending, self.pending = self.pending, []
        if not pending:
            return 0
        try:
            with connection(self.path) as conn:
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany(
                    "DELETE FROM run_parts WHERE run_id = ? AND what = ?", [p[:2] for p in pending]
                )
                conn.executemany("INSERT INTO run_parts VALUES (?, ?, ?, ?, ?)", pending)
                conn.execute("COMMIT")
        except sqlite3.OperationalError:
            return 0
        return len(pending)
