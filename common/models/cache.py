"""An on-disk cache of model answers, shared safely by threads and processes (SQLite, WAL mode).

The key is a SHA-256 of the request as sent (endpoint, model, messages or prompt, decoding
settings), never of its headers, so the API key is never part of it. Only answers worth
reusing are stored: callers never put errors or empty answers here.

Writes are batched: ``put`` keeps an answer in memory (``get`` sees it at once, and until it is
committed: never a moment where it is in neither place) and a writer
thread of its own commits the batch in one transaction when it reaches ``BATCH_SIZE`` answers
or ``BATCH_SECONDS`` of age, and on ``flush`` and ``close``. One commit per answer cost about as
much CPU as the HTTP request itself, and a commit made by the worker that happened to fill the
batch kept that worker from its requests meanwhile; a process killed with SIGKILL loses at most
its last batch, which only means asking again.

Lookups of keys the file surely does not hold are answered from memory (``cache_index``): the
keys in the file when it was opened, this process's commits, and, looked up at most every
``REFRESH_SECONDS`` when a miss comes, the rows other processes added since. Another process's
answer is seen up to that much later than it is committed, as its batch already delays it.
"""

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from common.models.cache_index import KeyIndex

BUSY_TIMEOUT_MS = 60_000  # wait this long for another process's write lock before failing
BATCH_SIZE = 64  # answers per write transaction
BATCH_SECONDS = 1.0  # ... or fewer, once the oldest has waited this long
REFRESH_SECONDS = 1.0  # a miss looks for other processes' new rows at most this often


def request_key(endpoint: str, payload: dict[str, Any], draw: int = 0) -> str:
    """Return the cache key of a request: SHA-256 hex of its endpoint URL and canonical JSON body,
    and of ``draw`` when it is not the first answer to its item (so that repeated samples of one
    request are cached apart even where no seed is sent; the first keeps the key it always had)."""
    return key_of_canonical(endpoint, canonical_json(payload), draw)


def canonical_json(value: Any) -> str:
    """Return ``value`` as canonical JSON: keys sorted, no spaces, UTF-8 left as is."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def key_of_canonical(endpoint: str, payload_json: str, draw: int = 0) -> str:
    """Return ``request_key`` of a payload already in canonical JSON (``canonical_json``): the
    same hash as of ``{"draw", "endpoint", "payload"}`` canonically encoded, built by joining
    the parts (so a client that sends the canonical body encodes it once)."""
    head = f'{{"draw":{draw},' if draw else "{"
    canonical = f'{head}"endpoint":{canonical_json(endpoint)},"payload":{payload_json}}}'
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """A key -> JSON value store in one SQLite file; each thread reads through its own connection.

    WAL mode lets readers and one writer work at once across processes; a busy timeout makes
    concurrent writers wait instead of failing. Call ``close`` (or ``flush``) to commit the
    answers still in memory.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()  # guards _connections and _pending
        self._write_lock = threading.Lock()  # one writer at a time inside this process
        self._pending: dict[str, str] = {}
        self._due = threading.Event()  # wakes the writer thread
        self._writer: threading.Thread | None = None
        self._refresh_lock = threading.Lock()  # one look for other processes' rows at a time
        self._refreshed = time.monotonic()
        connection = self._connection()
        connection.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self._index = KeyIndex(connection)

    def __repr__(self) -> str:
        return f"<ResponseCache {self.path}>"

    def get(self, key: str) -> Any | None:
        """Return the value stored under ``key`` (committed or still pending), or None."""
        with self._lock:
            text = self._pending.get(key)
        if text is None and (self._index.may_hold(key) or self._refresh_holds(key)):
            row = self._connection().execute("SELECT value FROM answers WHERE key = ?", (key,)).fetchone()
            text = row[0] if row else None
        return json.loads(text) if text is not None else None

    def _refresh_holds(self, key: str) -> bool:
        """Return whether the file may hold ``key`` after a look for the rows other processes
        added, if the last look is ``REFRESH_SECONDS`` old and no other thread is looking;
        else False (the index as it stands)."""
        if time.monotonic() - self._refreshed < REFRESH_SECONDS or not self._refresh_lock.acquire(False):
            return False
        try:
            self._index.refresh(self._connection())
            self._refreshed = time.monotonic()
        finally:
            self._refresh_lock.release()
        return self._index.may_hold(key)

    def put(self, key: str, value: Any) -> None:
        """Store ``value`` (JSON-serialisable) under ``key``, replacing an older one; the writer
        thread commits it with its batch."""
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        with self._lock:
            self._pending[key] = text
            due = len(self._pending) >= BATCH_SIZE
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_batches, name="cache-writer", daemon=True)
                self._writer.start()
        if due:
            self._due.set()

    def _write_batches(self) -> None:
        """The writer thread: commit the pending answers when a batch is full or BATCH_SECONDS old;
        end when ``close`` has taken the thread away."""
        while self._writer is threading.current_thread():
            self._due.wait(BATCH_SECONDS)
            self._due.clear()
            with self._lock:
                waiting = bool(self._pending)
            if waiting:
                self.flush()

    def flush(self) -> None:
        """Commit the pending answers in one transaction. They stay in memory until it is
        committed (a ``get`` meanwhile finds them there); an answer ``put`` again meanwhile
        stays pending, for the next commit."""
        with self._write_lock:
            with self._lock:
                batch = list(self._pending.items())
            if not batch:
                return
            connection = self._connection()
            with connection:  # BEGIN ... COMMIT (rolled back on error)
                connection.execute("BEGIN IMMEDIATE")
                connection.executemany("INSERT OR REPLACE INTO answers (key, value) VALUES (?, ?)", batch)
            self._index.add(key for key, _text in batch)  # before they leave memory
            with self._lock:
                for key, text in batch:
                    if self._pending.get(key) is text:  # not replaced since
                        del self._pending[key]

    def __len__(self) -> int:
        self.flush()
        return self._connection().execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def close(self) -> None:
        """Stop the writer thread, commit what is pending and close every thread's connection."""
        with self._lock:
            writer, self._writer = self._writer, None
        if writer is not None:
            self._due.set()
            writer.join()
        self.flush()
        with self._lock:
            for connection in self._connections:
                connection.close()
            self._connections.clear()
        self._local = threading.local()

    def _connection(self) -> sqlite3.Connection:
        """Return this thread's connection, opening it (WAL, busy timeout, autocommit) on first use."""
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
            )
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")  # WAL stays consistent; fsync at checkpoints
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        return connection
