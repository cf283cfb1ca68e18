"""An on-disk cache of model answers, shared safely by threads and processes (SQLite, WAL mode).

The key is a SHA-256 of the request as sent (endpoint, model, messages or prompt, decoding
settings), never of its headers, so the API key is never part of it. Only answers worth
reusing are stored: callers never put errors or empty answers here.
"""

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

BUSY_TIMEOUT_MS = 60_000  # wait this long for another process's write lock before failing


def request_key(endpoint: str, payload: dict[str, Any]) -> str:
    """Return the cache key of a request: SHA-256 hex of its endpoint URL and canonical JSON body."""
    canonical = json.dumps({"endpoint": endpoint, "payload": payload}, sort_keys=True,
                           ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """A key -> JSON value store in one SQLite file; each thread gets its own connection.

    WAL mode lets readers and one writer work at once across processes; a busy timeout makes
    concurrent writers wait instead of failing. Writes commit at once (autocommit).
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        connection = self._connection()
        connection.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    def __repr__(self) -> str:
        return f"<ResponseCache {self.path}>"

    def get(self, key: str) -> Any | None:
        """Return the value stored under ``key``, or None."""
        row = self._connection().execute("SELECT value FROM answers WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, value: Any) -> None:
        """Store ``value`` (JSON-serialisable) under ``key``, replacing an older one."""
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        # One writer at a time inside this process: threads queue on a lock instead of meeting
        # SQLite's busy handler, which sleeps for milliseconds; other processes still wait on it.
        with self._write_lock:
            self._connection().execute("INSERT OR REPLACE INTO answers (key, value) VALUES (?, ?)",
                                       (key, text))

    def __len__(self) -> int:
        return self._connection().execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def close(self) -> None:
        """Close every thread's connection."""
        with self._lock:
            for connection in self._connections:
                connection.close()
            self._connections.clear()
        self._local = threading.local()

    def _connection(self) -> sqlite3.Connection:
        """Return this thread's connection, opening it (WAL, busy timeout, autocommit) on first use."""
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000,
                                         isolation_level=None, check_same_thread=False)
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")  # WAL stays consistent; fsync at checkpoints
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        return connection
