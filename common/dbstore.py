"""What the results database stores once: every distinct text (``texts``, by its digest) and every
picture (``images``, by the SHA-256 of its PNG bytes, with a thumbnail), and how rows are
inserted (``insert``: NaN as NULL, lists and dicts as sorted JSON). ``common.database`` writes
through these when it scores a results file.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from common.dbfile import TEXT_COLUMNS, THUMBNAIL_PX


# ---- texts: each distinct one stored once --------------------------------------------------------
def text_digest(text: str) -> int:
    """Return the 64-bit digest (BLAKE2b, signed, as SQLite stores integers) that identifies a text."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big", signed=True)


def text_ids(conn: sqlite3.Connection, texts: pd.Series, refs: TextRefs | None = None) -> list[int | None]:
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
def image_ids(conn: sqlite3.Connection, files: pd.Series) -> list[str | None]:
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


def delete_unused(conn: sqlite3.Connection, texts: TextRefs, images: bool) -> int:
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
        + " ".join(f"UNION SELECT {c} FROM answers WHERE {c} IS NOT NULL" for c in TEXT_COLUMNS)
        + ")"
    )
    return conn.total_changes - before


# ---- helpers -----------------------------------------------------------------------------------
def insert(
    conn: sqlite3.Connection, table: str, columns: list[str], frame: pd.DataFrame, verb: str = "INSERT"
) -> None:
    """Insert ``frame``'s ``columns`` into ``table`` (those it lacks or holds only missing values
    in are left to their default, NULL): NaN as NULL, numpy numbers as Python ones, lists and
    dicts as sorted JSON."""
    if frame.empty:
        return
    present = [c for c in columns if c in frame and frame[c].notna().any()]
    values = [sql_column(frame[column]) for column in present]
    marks = ", ".join("?" * len(present))
    conn.executemany(
        f"{verb} INTO {table} ({', '.join(present)}) VALUES ({marks})", zip(*values, strict=True)
    )


def sql_column(column: pd.Series) -> list[Any]:
    """Return a column's values as SQLite stores them (see ``insert``)."""
    if column.dtype.kind in "iub":
        return column.astype("int64").tolist()
    if column.dtype.kind == "f":  # Python floats already: NaN as NULL
        return [None if v != v else v for v in column.tolist()]
    values = column.astype(object).tolist()
    return [v if type(v) is str else sql_value(v) for v in values]  # most cells are text: no checks


def sql_value(value: Any) -> Any:
    """Return one value as SQLite stores it: None and NaN as NULL, lists and dicts as sorted JSON,
    numpy numbers as Python ones."""
    if value is None:
        return None
    if isinstance(value, list | dict):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    if isinstance(value, np.generic):
        value = value.item()
    return None if value != value else value
