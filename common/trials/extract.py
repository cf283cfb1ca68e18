"""Read JSON lines fast: whole files in one parse call, or chosen fields without parsing records.

Every function returns None when its shortcut cannot be trusted for the given bytes; the
caller then falls back to a plain line-by-line parse, which also names any bad line. The
shortcuts rely on one JSON property: inside a string every quote is escaped, so an
unescaped ``"name":`` can only be a member name.
"""

import re

import numpy as np
import pandas as pd

RANGES_PER_WORKER = 4  # ranges per worker: one that finishes early takes another

# A member value that holds no object: a string, a number, true/false/null, or a flat list.
# The string branch is the "unrolled loop" form of "(?:[^"\\\n]|\\.)*": same strings, but runs of
# plain characters are consumed in one step, which makes long strings (tuple_ID) 3x faster.
_VALUE = rb'("[^"\\\n]*(?:\\.[^"\\\n]*)*"|-?\d[\d.eE+-]*|true|false|null|\[[^\[\]{}\n]*\])'
# A results line as the release and ResultsWriter write it (compact, Key then resp).
_SIMPLE_RESULT = re.compile(rb'^\{"Key": ?(-?\d{1,19}), ?"resp": ?"([^"\\\n]*)"\}\n', re.MULTILINE)


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
