"""Which keys the response cache's file holds, kept in memory so that a miss costs no query.

A run asks the cache before every request, and on a first run every answer is a miss. Each
miss was an SQLite query, which lets go of the interpreter lock and must take it back among
the busy worker threads: waiting for it cost a worker far more than the query. ``KeyIndex``
answers "surely not there" from memory: a sorted array of the hashes (Python's ``hash``, 8
bytes each) of the keys in the file when it was opened, and a set of those that came later
(this process's commits, and rows other processes added, read by ``refresh``: the rows past
the last ``rowid`` seen). A key it may hold is looked up in the file as before; a hash that
two keys share only costs that query. Keys are never taken out of the index: a row deleted
from the file only makes its lookup a query that finds nothing.
"""

import bisect
import sqlite3
from array import array
from collections.abc import Iterable


class KeyIndex:
    """The keys of an ``answers`` table (key TEXT, rowid) as far as this process has looked."""

    def __init__(self, connection: sqlite3.Connection):
        self._rowid = connection.execute("SELECT coalesce(max(rowid), 0) FROM answers").fetchone()[0]
        keys = connection.execute("SELECT key FROM answers WHERE rowid <= ?", (self._rowid,))
        self._sorted = array("q", sorted(hash(key) for (key,) in keys))  # rows added meanwhile: refresh
        self._added: set[int] = set()

    def __len__(self) -> int:
        return len(self._sorted) + len(self._added)

    def may_hold(self, key: str) -> bool:
        """Return False when ``key`` is surely not in the file (as of the last look), else True."""
        hashed = hash(key)
        if hashed in self._added:
            return True
        at = bisect.bisect_left(self._sorted, hashed)
        return at < len(self._sorted) and self._sorted[at] == hashed

    def add(self, keys: Iterable[str]) -> None:
        """Note ``keys`` as in the file (this process committed them)."""
        self._added.update(hash(key) for key in keys)

    def refresh(self, connection: sqlite3.Connection) -> None:
        """Note the keys of the rows added to the file since the last look (by any process)."""
        rows = connection.execute("SELECT rowid, key FROM answers WHERE rowid > ?", (self._rowid,)).fetchall()
        self._added.update(hash(key) for _rowid, key in rows)
        self._rowid = max((rowid for rowid, _key in rows), default=self._rowid)
