"""The SHA-256 of the files an analysis read, hashed once per content and kept in the results database.

A saved section names every input file with its SHA-256 and size (``report.save_section``), the
report's provenance table. Hashing them all at every analysis costs as much as reading them:
Already Said That's turn logs of a hundred models are 12 GB, read again for each model added. As
git's index does, a file's digest is kept with its size and modification time (table
``file_hashes``, and the ``runs`` the score stage hashed) and used again while both are unchanged
and the file was last modified well before it was hashed (``database.RACY_NS``: a file written
in the instant it was looked at is hashed again); any other file is hashed and noted.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

from common import paths
from common.database import unchanged
from common.dbfile import connection
from common.jsonl import sha256_file


def digests(files: Sequence[str | Path], db: str | Path | None = None) -> dict[str, str]:
    """Return the SHA-256 of each of ``files`` by its ``paths.shown`` name: the one the results
    database ``db`` (default: ``dbfile.default_path()``) holds for it while the file's size and time
    are those it was hashed at and it was not modified within RACY_NS of that; every other file
    hashed now and its digest kept for the next time."""
    names = {paths.shown(f): Path(f) for f in files}
    with connection(db) as conn:
        known = _known(conn, list(names))
        found, fresh = {}, []
        for name, file in names.items():
            checked = time.time_ns()  # before the file is looked at: a later write shows as newer
            stat = file.stat()
            entry = known.get(name)
            if entry and unchanged(*entry[1:], stat):
                found[name] = entry[0]
                continue
            found[name] = sha256_file(file)
            fresh.append((name, found[name], stat.st_size, stat.st_mtime_ns, checked))
        if fresh:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("INSERT OR REPLACE INTO file_hashes VALUES (?, ?, ?, ?, ?)", fresh)
            conn.execute("COMMIT")
    return found


def _known(conn: sqlite3.Connection, names: list[str]) -> dict[str, tuple[str, int, int, int]]:
    """Return (sha256, bytes, mtime_ns, checked_ns) of each of ``names`` the database has hashed: in
    ``file_hashes``, else as a results file the score stage hashed (``runs``)."""
    wanted = set(names)
    rows = conn.execute("SELECT results_file, sha256, bytes, mtime_ns, checked_ns FROM runs").fetchall()
    rows += conn.execute("SELECT path, sha256, bytes, mtime_ns, checked_ns FROM file_hashes").fetchall()
    return {name: (sha, size, mtime, checked) for name, sha, size, mtime, checked in rows if name in wanted}
