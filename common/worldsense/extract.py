"""Read JSON lines fast: whole files in one parse call, or chosen fields without parsing records.

Every function returns None when its shortcut cannot be trusted for the given bytes; the
caller then falls back to a plain line-by-line parse, which also names any bad line. The
shortcuts rely on one JSON property: inside a string every quote is escaped, so an
unescaped ``"name":`` can only be a member name.
"""

import bz2
import contextlib
import json
import multiprocessing
import os
import re
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from common.worldsense.bzip2 import split_blocks

RANGES_PER_WORKER = 4  # ranges per worker: one that finishes early takes another

# A member value that holds no object: a string, a number, true/false/null, or a flat list.
# The string branch is the "unrolled loop" form of "(?:[^"\\\n]|\\.)*": same strings, but runs of
# plain characters are consumed in one step, which makes long strings (tuple_ID) 3x faster.
_VALUE = rb'("[^"\\\n]*(?:\\.[^"\\\n]*)*"|-?\d[\d.eE+-]*|true|false|null|\[[^\[\]{}\n]*\])'
# A results line as the release and ResultsWriter write it (compact, Key then resp).
_SIMPLE_RESULT = re.compile(rb'^\{"Key": ?(-?\d{1,19}), ?"resp": ?"([^"\\\n]*)"\}\n', re.MULTILINE)


def parse_lines(data: bytes) -> list[Any] | None:
    """Return the values of JSON lines ``data`` parsed in one call, or None if that fails.

    Parsing ``[line1,line2,...]`` at once is several times faster than a loop over lines
    (a newline cannot occur inside a JSON value). None for blank lines, a missing final
    newline (maybe a torn write) or any malformed line.
    """
    if not data.endswith(b"\n") or b"\n\n" in data:
        return None
    try:
        return json.loads(b"[" + data[:-1].replace(b"\n", b",") + b"]")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None


def without_member(data: bytes, name: bytes) -> bytes:
    """Return JSON lines ``data`` with every ``"<name>":"..."`` string member cut out, unparsed.

    The value ends at the first quote preceded by an even number of backslashes. If the
    result were not valid JSON, the caller's parse fails and it parses ``data`` instead.
    """
    key = b'"' + name + b'":"'
    parts, pos, find = [], 0, data.find
    while (start := find(key, pos)) >= 0:
        end = start + len(key)
        while True:
            end = find(b'"', end)
            if end < 0:
                return data
            escapes = end
            while data[escapes - 1] == 0x5C:  # backslash
                escapes -= 1
            if (end - escapes) % 2 == 0:
                break
            end += 1
        if data[end + 1 : end + 2] == b",":  # drop the member and the comma after it
            parts.append(data[pos:start])
            pos = end + 2
        else:  # the last member: drop the comma before it
            parts.append(data[pos : start - 1] if data[start - 1 : start] == b"," else data[pos:start])
            pos = end + 1
    parts.append(data[pos:])
    return b"".join(parts)


def field_columns(data: bytes, names: list[str]) -> dict[str, Any] | None:
    """Return ``{name: column}`` for fields of JSON lines ``data``, read without parsing records.

    Only for flat records: when every line is one object and no other brace occurs, a member
    name appears at most once per line, so a field found as often as there are lines is
    found once in each, in order. A column is an int64, float or bool array, a categorical of
    strings, or for a list field the list lengths (int64). Returns None when the shortcut does
    not apply (nested objects, a field missing from any line, values of mixed kinds...).
    """
    lines = data.count(b"\n")
    if not data.endswith(b"\n") or b"\n\n" in data or not lines == data.count(b"{") == data.count(b"}"):
        return None
    columns: dict[str, Any] = {}
    for name in names:
        found = re.findall(b'"' + re.escape(name.encode()) + b'":[ \t]*' + _VALUE, data)
        if len(found) != lines:  # also when absent: the caller asks for fields it knows exist
            return None
        if found[0][:1] in b"-0123456789":  # numbers, often all distinct (Key): convert directly
            try:
                columns[name] = np.array([int(v) for v in found], dtype=np.int64)
                continue
            except (ValueError, OverflowError):
                pass  # floats, or mixed: decode each distinct value below
        codes, raw = pd.factorize(pd.Series(found, dtype=object))
        try:
            values = [_decode(v) for v in raw]  # distinct values only
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
        column = _column(codes, values)
        if column is None:
            return None
        columns[name] = column
    return columns


@contextlib.contextmanager
def worker_pool(workers: int | None = None) -> Iterator[ProcessPoolExecutor | None]:
    """Yield a pool of ``workers`` processes (default: one per usable core), or None on one core.

    The workers are forked, so they start at once with every module and byte already loaded,
    and only when the first task is submitted (a pool that gets no task costs nothing). Enter
    it before this process starts any thread: forking a process that has threads can deadlock.
    Callers share one pool so that independent parsing jobs fill the cores together.
    """
    workers = workers or len(os.sched_getaffinity(0))
    if workers < 2:
        yield None
        return
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        yield pool


def field_columns_bz2(
    raw: bytes, names: list[str], workers: int | None = None, pool: ProcessPoolExecutor | None = None
) -> dict[str, Any] | None:
    """Return what ``field_columns(bz2.decompress(raw), names)`` returns, decompressed and read in parallel.

    The bzip2 blocks are split into contiguous ranges, a few per worker so that none waits
    for the last; each worker process (of ``pool``, or of a pool of ``workers`` made for this
    call) decompresses a range and reads the complete lines inside it, so decompression and
    reading run on every core without sharing a GIL, and only the small columns come back.
    The lines cut by range boundaries are read here. None when the file cannot be split, a
    piece is invalid (the caller's plain path then reports it), or a shortcut does not apply.
    """
    if pool is None:
        with worker_pool(workers) as own:
            return None if own is None else field_columns_bz2(raw, names, workers, own)
    pieces = split_blocks(raw)
    if pieces is None or len(pieces) < 2:
        return None
    step = -(-len(pieces) // (RANGES_PER_WORKER * (workers or len(os.sched_getaffinity(0)))))
    ranges = [(pieces[i : i + step], names) for i in range(0, len(pieces), step)]
    try:
        parts = list(pool.map(_read_range, ranges))
    except (OSError, ValueError, EOFError):
        return None
    runs: list[dict[str, Any] | None] = []
    carry = b""
    for head, body, tail in parts:  # rows in file order: the line cut before a range, then its body
        runs += [field_columns(carry + head, names) if carry + head else {}, body]
        carry = tail
    if carry or any(run is None for run in runs):
        return None
    return _join_runs([run for run in runs if run])


def _read_range(task: tuple[list[bytes], list[str]]) -> tuple[bytes, dict[str, Any] | None, bytes]:
    """Decompress consecutive bzip2 pieces; return (text up to the first newline, columns of
    the complete lines after it, text after the last newline)."""
    pieces, names = task
    data = b"".join(bz2.decompress(piece) for piece in pieces)
    first, last = data.find(b"\n") + 1, data.rfind(b"\n") + 1
    if first == 0 or first == last:
        return data[:first], None, data[last:]
    return data[:first], field_columns(data[first:last], names), data[last:]


def _join_runs(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Return each field's runs joined in order; None if a field's kind differs between runs.

    Categories keep their order of first appearance, as one read of the whole data gives.
    """
    joined: dict[str, Any] = {}
    for name in runs[0]:
        columns = [run[name] for run in runs]
        if all(isinstance(c, pd.Categorical) for c in columns):
            joined[name] = union_categoricals(columns, sort_categories=False)
        elif all(isinstance(c, np.ndarray) and c.dtype == columns[0].dtype for c in columns):
            joined[name] = np.concatenate(columns)
        else:
            return None
    return joined


def simple_results(data: bytes) -> tuple[np.ndarray, pd.Categorical] | None:
    """Return (Keys, answers) if every line of ``data`` is a plain ``{"Key":..,"resp":".."}``.

    A regular expression reads such files about twice as fast as JSON; None when any line
    has another shape. Duplicate Keys are kept (the caller decides).
    """
    matches = _SIMPLE_RESULT.findall(data)  # anchored at line starts: every line must match whole
    if len(matches) != data.count(b"\n") or not data.endswith(b"\n"):
        return None
    try:
        keys = np.array([int(key) for key, _ in matches], dtype=np.int64)
    except OverflowError:
        return None
    codes, labels = pd.factorize(pd.Series([resp for _, resp in matches], dtype=object))
    return keys, pd.Categorical.from_codes(codes, categories=[label.decode() for label in labels])


def _decode(value: bytes) -> Any:
    """Return the JSON ``value``; a string without escapes is decoded directly (faster)."""
    if value[:1] == b'"' and b"\\" not in value:
        return value[1:-1].decode("utf-8")
    return json.loads(value)


def _column(codes: np.ndarray, values: list[Any]) -> Any:
    """Return the column whose row i holds ``values[codes[i]]``; None for mixed kinds."""
    kinds = {type(v) for v in values}
    if kinds == {list}:
        return np.array([len(v) for v in values], dtype=np.int64)[codes]
    if kinds == {int}:
        return np.array(values, dtype=np.int64)[codes]
    if kinds == {bool}:
        return np.array(values, dtype=bool)[codes]
    if kinds <= {int, float, type(None)} and kinds != {type(None)}:
        return np.array([np.nan if v is None else v for v in values], dtype=float)[codes]
    if kinds <= {str, type(None)}:
        labels = [v for v in values if v is not None]
        position = {label: i for i, label in enumerate(labels)}
        recode = np.array([-1 if v is None else position[v] for v in values], dtype=np.int64)
        return pd.Categorical.from_codes(recode[codes], categories=labels)
    return None
