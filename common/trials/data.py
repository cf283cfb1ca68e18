"""The trial format and its loading: a set of question-and-answer trials, one JSON object a line.

A trial set is a directory holding ``trials.jsonl.bz2`` (or plain ``trials.jsonl``). A trial has
an integer ``Key``, its prompt ``text``, the allowed answers ``expectedresp`` and the gold answer
``goldresp``, and any other fields its suite reads. The format is the WorldSense release's, which
WorldSense's test set and the canvas sets are in; the release's file stores the gold answer
obfuscated (``goldresp_obfusc``) so that answers do not leak into training corpora, and loading
maps it back to ``goldresp``.

``load_testset`` returns every field, read fast: the bzip2 file decompressed on every core
(``bzip2``), its lines parsed in one call (``extract``). It is read once per version of the
file: the results database keeps its items (``common.database``), which the analysis reads.
"""

import bz2
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from common.errors import DataError
from common.jsonl import parse_json_line, parse_lines
from common.trials import bzip2, extract

log = logging.getLogger(__name__)

TRIALS_FILE = "trials.jsonl.bz2"
TRIALS_FILES = (TRIALS_FILE, "trials.jsonl")  # a trials file's names, compressed or not

# The release's obfuscation: each gold answer is replaced by an author's first name.
DEOBFUSCATE = {
    "Emmanuel": "TRUE",
    "Megi": "FALSE",
    "Dieuwke": "POSSIBLE",
    "Pascal": "IMPOSSIBLE",
    "Mark": "1",
    "Youssef": "2",
    "Yoda": "3",
}


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
    records = parse_lines(extract.without_member(data, b"text")) if skip_text else None
    if records is None:
        records = parse_lines(data)
    if records is not None and all(type(r) is dict for r in records):
        return records
    # slow path, only to name the first bad line
    return [
        parse_json_line(line.decode("utf-8", "replace"), path, n)
        for n, line in enumerate(data.split(b"\n"), start=1)
        if line.strip()
    ]


def is_int64(value: Any) -> bool:
    """Return whether ``value`` is an integer (not a bool) that fits a signed 64-bit column."""
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63


def trials_path(testset_dir: str | Path) -> Path:
    """Return the trials file of a test set directory (``trials.jsonl.bz2``, or plain ``.jsonl``).

    Raises FileNotFoundError naming the directory when neither exists.
    """
    testset_dir = Path(testset_dir)
    for name in TRIALS_FILES:
        if (testset_dir / name).is_file():
            return testset_dir / name
    raise FileNotFoundError(2, f"No {TRIALS_FILE} (or trials.jsonl) in test set directory", str(testset_dir))


def is_trial_set(directory: str | Path) -> bool:
    """Return whether ``directory`` holds a trials file: whether its set is in the trial format
    (asked with ``common.trials.protocol``), whatever suite it is of."""
    return any((Path(directory) / name).is_file() for name in TRIALS_FILES)


def first_trial(testset_dir: str | Path) -> dict[str, Any] | None:
    """Return the first trial of a test set (read alone, streaming the bzip2 file), or None when
    the directory has no trials file or its first line is not a JSON object: enough for a suite
    to tell its sets from another's by content (``Suite.detect``)."""
    try:
        path = trials_path(testset_dir)
        opener = bz2.open if path.suffix == ".bz2" else open
        with opener(path, "rt", encoding="utf-8") as handle:
            line = handle.readline()
        trial = json.loads(line)
    except (OSError, ValueError, EOFError):
        return None
    return trial if isinstance(trial, dict) else None


def load_testset(testset_dir: str | Path) -> pd.DataFrame:
    """Return the trials of a test set as a DataFrame, one row per trial, with ``goldresp`` in clear.

    Generated sets carry ``goldresp`` already; the official one has ``goldresp_obfusc``,
    which is mapped back and dropped. Raises DataError for an unknown obfuscated answer, a
    file with neither field, or a trial without an integer ``Key`` (naming its line).
    """
    path = trials_path(testset_dir)
    data = decompress(path, path.read_bytes())
    records = parse_trials(path, data)
    if not records:
        raise DataError(
            f"{path}: the file holds no trials; fetch or generate the set again "
            "(`make data`, or `make <suite>/<set>` for a generated set)"
        )
    if not all(is_int64(r.get("Key")) for r in records):
        _raise_bad_key(path, data)
    df = pd.DataFrame({name: [r.get(name) for r in records] for name in _field_names(records)})
    return _with_clear_gold(df, path)


def _raise_bad_key(path: Path, data: bytes) -> None:
    """Raise DataError naming ``path:line`` of the first trial of JSON lines ``data`` whose
    ``Key`` is missing or not an integer."""
    for number, line in enumerate(data.split(b"\n"), start=1):
        if line.strip():
            record = parse_json_line(line.decode("utf-8", "replace"), path, number)
            if not is_int64(record.get("Key")):
                raise DataError(
                    f"{path}:{number}: every trial needs an integer 'Key' (got "
                    f"{record.get('Key')!r}); Keys are unique integers"
                )
    raise DataError(f"{path}: every trial needs an integer 'Key'")


def _field_names(records: list[dict[str, Any]]) -> list[str]:
    """Return the field names of ``records``: the first record's order, then any others sorted."""
    first = list(records[0]) if records else []
    others = set().union(*records) - set(first)
    return first + sorted(others)


def _with_clear_gold(df: pd.DataFrame, path: Path) -> pd.DataFrame:
    """Return ``df`` with ``goldresp`` in clear (mapped from ``goldresp_obfusc`` if needed)."""
    if "goldresp_obfusc" in df.columns:
        gold = _clear_gold(path, df["goldresp_obfusc"], obfuscated=True)
        df = df.drop(columns="goldresp_obfusc").assign(goldresp=np.asarray(gold, dtype=object))
    if "goldresp" not in df.columns:
        raise DataError(f"{path}: trials have neither 'goldresp' nor 'goldresp_obfusc'")
    return df


def _clear_gold(path: Path, column: Any, obfuscated: bool) -> pd.Categorical:
    """Return the gold answers as a categorical of clear answers."""
    gold = pd.Categorical(column)
    if gold.isna().any():
        raise DataError(f"{path}: a trial has no gold answer")
    if not obfuscated:
        return gold
    unknown = [c for c in gold.categories if c not in DEOBFUSCATE]
    if unknown:
        raise DataError(f"{path}: unknown obfuscated gold answer {unknown[0]!r}")
    return pd.Categorical.from_codes(gold.codes, categories=[DEOBFUSCATE[c] for c in gold.categories])
