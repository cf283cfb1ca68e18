"""Columns parsed from WorldSense trials and results files, kept in a cache keyed by content.

The analysis needs only a few small per-trial fields and the answers, while a trials file is
72 MB of bzip2 text. ``TrialsFile`` reads a trials file once and decompresses it only when a
field must be parsed; ``cached_field_names`` and ``cached_fields`` return its fields from the
cache (``common.worldsense.cache``, one entry per field) or parse them (``extract``, on every
core for big files) and cache them. ``load_results_columns`` does the same for a results file's
answers. ``common.worldsense.data`` assembles these columns into the analysis' table.
"""

import bz2
import json
import logging
import re
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from common.errors import DataError
from common.jsonl import parse_json_line
from common.results import read_results
from common.worldsense import bzip2, cache, extract

log = logging.getLogger(__name__)


def decompress(path: Path, raw: bytes) -> bytes:
    """Return the JSON lines of a trials file's bytes (bzip2-decompressed when it ends in .bz2)."""
    if path.suffix != ".bz2":
        return raw
    try:
        return bzip2.decompress(raw)  # on every core
    except (OSError, ValueError, EOFError) as exc:
        raise DataError(f"{path}: not a valid bzip2 file ({exc})") from None


def parse_trials(path: Path, data: bytes, skip_text: bool = False) -> list[dict[str, Any]]:
    """Return the trial records of JSON lines ``data`` (read from ``path``).

    With ``skip_text`` the records may lack their ``text`` field (half the bytes, not needed
    to score answers), which makes parsing faster. Raises DataError naming ``path:line`` for
    a line that is not a JSON object.
    """
    records = extract.parse_lines(extract.without_member(data, b"text")) if skip_text else None
    if records is None:
        records = extract.parse_lines(data)
    if records is not None and all(type(r) is dict for r in records):
        return records
    # slow path, only to name the first bad line
    return [
        parse_json_line(line.decode("utf-8", "replace"), path, n)
        for n, line in enumerate(data.split(b"\n"), start=1)
        if line.strip()
    ]


class TrialsFile:
    """A trials file read once, decompressed only when some field must be parsed."""

    def __init__(self, path: Path):
        self.path = path
        self.raw = path.read_bytes()
        self.digest = cache.content_digest(self.raw)
        self._text: bytes | None = None

    def text(self) -> bytes:
        """Return the decompressed JSON lines."""
        if self._text is None:
            self._text = decompress(self.path, self.raw)
        return self._text

    def field_names(self) -> list[str]:
        """Return the field names of the first trial (decompressing only its beginning)."""
        if self._text is None and self.path.suffix == ".bz2":
            try:
                head = bz2.BZ2Decompressor().decompress(self.raw, max_length=1 << 20)
            except (OSError, ValueError) as exc:
                raise DataError(f"{self.path}: not a valid bzip2 file ({exc})") from None
        else:
            head = self.text()
        first = head.split(b"\n", 1)[0].strip()
        if not first:
            raise DataError(f"{self.path}: no trial on the first line")
        return list(parse_json_line(first.decode("utf-8", "replace"), self.path, 1))


def cached_field_names(source: TrialsFile, cache_dir: str | Path | None) -> list[str]:
    """Return ``source.field_names()``, from the cache when it holds them (saves a block's decompression)."""
    entry = cache.entry_path(cache_dir, "fieldnames", source.digest) if cache_dir else None
    stored = cache.load_frame(entry) if entry else None
    if stored is not None and "field" in stored.columns:
        return [str(name) for name in stored["field"]]
    names = source.field_names()
    if entry:
        cache.save_frame(entry, pd.DataFrame({"field": pd.Categorical(names)}))
    return names


def cached_fields(
    source: TrialsFile, names: list[str], cache_dir: str | Path | None, pool: ProcessPoolExecutor | None
) -> dict[str, Any]:
    """Return ``{name: column or None}`` for trial fields, from the cache or parsed (then cached).

    Lists become their lengths; fields that hold neither numbers nor strings map to None.
    """

    def entry(name: str) -> Path | None:
        safe = name if re.fullmatch(r"\w{1,64}", name) else cache.content_digest(name.encode())[:16]
        return cache.entry_path(cache_dir, f"trials-{safe}", source.digest) if cache_dir else None

    columns: dict[str, Any] = {}
    for name in names:
        stored = cache.load_frame(entry(name)) if cache_dir else None
        if stored is not None and name in stored.columns:
            column = stored[name]
            categorical = isinstance(column.dtype, pd.CategoricalDtype)
            columns[name] = column.array if categorical else column.to_numpy()
        elif stored is not None:
            columns[name] = None  # cached as: no such field, or not numbers nor strings
    todo = [name for name in names if name not in columns]
    if todo:
        big_bz2 = source.path.suffix == ".bz2" and len(source.raw) >= bzip2.MIN_PARALLEL_BYTES
        parsed = extract.field_columns_bz2(source.raw, todo, pool=pool) if big_bz2 else None
        if parsed is None:
            parsed = extract.field_columns(source.text(), todo)
        if parsed is None:  # not flat JSON lines: parse every record
            records = parse_trials(source.path, source.text(), skip_text=True)
            parsed = {name: _record_column([r.get(name) for r in records]) for name in todo}
        for name in todo:
            column = parsed[name]
            columns[name] = column
            if cache_dir:
                stored = pd.DataFrame() if column is None else pd.DataFrame({name: column})
                cache.save_frame(entry(name), stored)
    return columns


def _record_column(values: list[Any]) -> Any:
    """Return one field of parsed records as a column (see ``extract.field_columns``), or None."""
    if any(isinstance(v, list) for v in values):
        return np.array([len(v) if isinstance(v, list) else 0 for v in values], dtype=np.int64)
    return _scalar_column(pd.Series(values))


def _scalar_column(column: pd.Series) -> Any:
    """Return a parsed column as an int/float/bool array or a categorical of strings.

    None for lists, dicts or mixed types (not usable for grouping).
    """
    if column.dtype.kind in "iufb":
        return column.to_numpy()
    if pd.api.types.infer_dtype(column, skipna=True) == "string":  # strings and missing values
        return pd.Categorical(column.to_numpy(dtype=object))
    return None


def load_results_columns(path: str | Path, cache_dir: str | Path | None = cache.DEFAULT_DIR) -> pd.DataFrame:
    """Return a results file as a DataFrame with ``Key`` (int64) and ``resp`` (categorical string),
    plus ``refused`` (the refusal kind or "") when the server refused some items.

    Same semantics as ``common.results.read_results`` (torn last line ignored, first answer of
    a duplicated Key kept), with a fast path for well-formed files; a missing ``resp`` becomes
    "". With ``cache_dir`` the columns are cached by the file's SHA-256.
    """
    path = Path(path)
    data = path.read_bytes()
    entry = _results_entry(data, cache_dir)
    df = cache.load_frame(entry) if entry else None
    if df is None:
        df = _parse_results(path, data)
        if entry:
            cache.save_frame(entry, df)
    return df


def cached_results_columns(path: Path, cache_dir: str | Path | None) -> pd.DataFrame | None:
    """Return what ``load_results_columns`` returns if the cache holds it, else None."""
    entry = _results_entry(path.read_bytes(), cache_dir)
    return cache.load_frame(entry) if entry else None


def _results_entry(data: bytes, cache_dir: str | Path | None) -> Path | None:
    """Return the cache entry of a results file holding ``data`` (None without a cache)."""
    return cache.entry_path(cache_dir, "results", cache.content_digest(data)) if cache_dir else None


def _parse_results(path: Path, data: bytes) -> pd.DataFrame:
    """Return the ``Key`` and ``resp`` columns of the results file ``path`` holding ``data``."""
    simple = extract.simple_results(data)
    if simple is None:  # extra fields, escapes, a torn last line...: the careful reader
        return _results_frame(path, read_results(path))
    df = pd.DataFrame({"Key": simple[0], "resp": simple[1]})
    duplicated = df["Key"].duplicated()
    if duplicated.any():
        log.warning("%s: %d duplicate Keys ignored (first answer kept)", path, duplicated.sum())
        df = df[~duplicated].reset_index(drop=True)
    return df


def _results_frame(path: Path, records: list[dict[str, Any]]) -> pd.DataFrame:
    """Return Key and resp columns of parsed results records (a missing ``resp`` becomes ""), and
    ``refused`` (the refusal kind, "" for answered items) when some item was refused."""
    bad = next((r["Key"] for r in records if not is_int64(r["Key"])), None)
    if bad is not None:
        raise DataError(
            f"{path}:{_line_of_key(path, bad)}: 'Key' must be an integer, as in the trials file (got {bad!r})"
        )
    keys = np.array([r["Key"] for r in records], dtype=np.int64)
    resp = ["" if r.get("resp") is None else str(r["resp"]) for r in records]
    df = pd.DataFrame({"Key": keys, "resp": pd.Categorical(resp)})
    if any(r.get("refused") for r in records):
        df["refused"] = pd.Categorical([str(r.get("refused") or "") for r in records])
    return df


def is_int64(value: Any) -> bool:
    """Return whether ``value`` is an integer (not a bool) that fits a signed 64-bit column."""
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63


def _line_of_key(path: Path, key: Any) -> int | str:
    """Return the number of the first line of the results file ``path`` whose Key is ``key``
    (for error messages), or "?" when it cannot be found."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            try:
                if json.loads(line).get("Key") == key:
                    return number
            except (ValueError, AttributeError):
                continue
    return "?"
