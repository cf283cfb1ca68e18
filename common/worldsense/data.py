"""Load WorldSense test sets (trials), training sets and model results files.

A test set is a directory holding ``trials.jsonl.bz2`` and a ``results/`` subdirectory. The
official file stores the gold answer obfuscated (``goldresp_obfusc``) so that answers do not
leak into training corpora; loading maps it back to ``goldresp``.

``load_testset`` returns every field. The analysis needs only the small per-trial fields, so
``load_trial_columns`` and ``load_results_columns`` parse those once and keep them in a cache
keyed by the files' content hash (see ``common.worldsense.cache``); ``assemble_results`` joins
them into one row per (results file, answered trial).
"""

import bz2
import json
import logging
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from common.errors import DataError
from common.jsonl import parse_json_line, read_jsonl
from common.results import find_results_files, parse_results_filename, read_results
from common.worldsense import cache

log = logging.getLogger(__name__)

TRIALS_FILE = "trials.jsonl.bz2"
RESULTS_DIR = "results"
REQUIRED_FIELDS = ("Key", "tuple_ID", "problemname", "expectedresp")

# The release's obfuscation: each gold answer is replaced by an author's first name.
DEOBFUSCATE = {
    "Emmanuel": "TRUE", "Megi": "FALSE", "Dieuwke": "POSSIBLE", "Pascal": "IMPOSSIBLE",
    "Mark": "1", "Youssef": "2", "Yoda": "3",
}


def trials_path(testset_dir: str | Path) -> Path:
    """Return the trials file of a test set directory (``trials.jsonl.bz2``, or plain ``.jsonl``).

    Raises FileNotFoundError naming the directory when neither exists.
    """
    testset_dir = Path(testset_dir)
    for name in (TRIALS_FILE, "trials.jsonl"):
        if (testset_dir / name).is_file():
            return testset_dir / name
    raise FileNotFoundError(2, f"No {TRIALS_FILE} (or trials.jsonl) in test set directory",
                            str(testset_dir))


def load_testset(testset_dir: str | Path) -> pd.DataFrame:
    """Return the trials of a test set as a DataFrame, one row per trial, with ``goldresp`` in clear.

    Generated sets carry ``goldresp`` already; the official one has ``goldresp_obfusc``,
    which is mapped back and dropped. Raises DataError for an unknown obfuscated answer or a
    file with neither field.
    """
    path = trials_path(testset_dir)
    records = _parse_trials(path, path.read_bytes())
    df = pd.DataFrame({name: [r.get(name) for r in records] for name in _field_names(records)})
    return _with_clear_gold(df, path)


def load_trainset(path: str | Path) -> pd.DataFrame:
    """Return a training file (chat format) as a DataFrame with ``prompt`` and ``target`` columns.

    Each record holds ``dialog_history.messages`` (role/content) and ``target_message``;
    ``prompt`` is the content of the last user message. The raw fields are kept.
    """
    records = read_jsonl(path)
    df = pd.DataFrame.from_records(records)
    for field in ("dialog_history", "target_message"):
        if field not in df.columns:
            raise DataError(f"{path}: training records need '{field}' (chat fine-tuning format)")
    df["prompt"] = [
        next((m["content"] for m in reversed(r["dialog_history"]["messages"]) if m["role"] == "user"), "")
        for r in records
    ]
    df["target"] = df["target_message"]
    return df


def load_trial_columns(
    testset_dir: str | Path, cache_dir: str | Path | None = cache.DEFAULT_DIR
) -> pd.DataFrame:
    """Return the analysis columns of a test set's trials: one row per trial, in file order.

    Kept: every field holding numbers or strings (strings as categoricals), except ``text``;
    ``goldresp`` in clear; ``n_options`` = ``len(expectedresp)``. List fields are dropped.
    With ``cache_dir`` (None disables the cache) the columns are read from, or stored in, a
    cache entry keyed by the trials file's SHA-256. Raises DataError for a missing field.
    """
    path = trials_path(testset_dir)
    data = path.read_bytes()
    entry = cache.entry_path(cache_dir, "trials", cache.content_digest(data)) if cache_dir else None
    df = cache.load_frame(entry) if entry else None
    if df is None:
        df = _trial_columns(path, _parse_trials(path, data, skip_text=True))
        if entry:
            cache.save_frame(entry, df)
    log.info("trials %s: %s rows", path, f"{len(df):,}")
    return df


def load_results_columns(
    path: str | Path, cache_dir: str | Path | None = cache.DEFAULT_DIR
) -> pd.DataFrame:
    """Return a results file as a DataFrame with ``Key`` (int64) and ``resp`` (categorical string).

    Same semantics as ``common.results.read_results`` (torn last line ignored, first answer of
    a duplicated Key kept), with a fast path for well-formed files; a missing ``resp`` becomes
    "". With ``cache_dir`` the columns are cached by the file's SHA-256.
    """
    path = Path(path)
    data = path.read_bytes()
    digest = cache.content_digest(data)
    entry = cache.entry_path(cache_dir, "results", digest) if cache_dir else None
    df = cache.load_frame(entry) if entry else None
    if df is None:
        df = _simple_results(data)
        if df is None:  # extra fields, escapes, a torn last line...: the careful reader
            df = _results_frame(path, read_results(path))
        elif df["Key"].duplicated().any():
            duplicated = df["Key"].duplicated()
            log.warning("%s: %d duplicate Keys ignored (first answer kept)", path, duplicated.sum())
            df = df[~duplicated].reset_index(drop=True)
        if entry:
            cache.save_frame(entry, df)
    return df


def load_results_in_testset_dir(
    testset_dir: str | Path, cache_dir: str | Path | None = cache.DEFAULT_DIR
) -> pd.DataFrame:
    """Return the trials of ``testset_dir`` joined with every results file of its ``results/``.

    One row per answered trial and results file (see ``assemble_results``). Raises
    FileNotFoundError for a missing directory or trials file, DataError when there is no
    results file.
    """
    testset_dir = Path(testset_dir)
    if not testset_dir.is_dir():
        raise FileNotFoundError(2, "No such test set directory", str(testset_dir))
    trials = load_trial_columns(testset_dir, cache_dir)
    files = find_results_files(testset_dir / RESULTS_DIR)
    if not files:
        raise DataError(f"{testset_dir / RESULTS_DIR}: no <prompting>___<modelname>___results.jsonl file "
                        "to analyse (write one with scripts/test_random_model.py)")
    results = {parse_results_filename(f): load_results_columns(f, cache_dir) for f in files}
    return assemble_results(trials, results, source=testset_dir / RESULTS_DIR)


def assemble_results(
    trials: pd.DataFrame, results: dict[tuple[str, str], pd.DataFrame], source: str | Path = "results"
) -> pd.DataFrame:
    """Return the inner join of ``trials`` with each results table on ``Key``, stacked.

    ``results`` maps ``(prompting, modelname)`` to a DataFrame with ``Key`` and ``resp``. Rows
    come in results order (as given), then trials order; ``prompting``, ``modelname`` and
    ``resp`` are added as categoricals. A partial results file (fewer answers than trials) is
    analysed with a warning; answers whose Key is not in the trials are ignored with a warning.
    The inputs are not modified.
    """
    if not results:
        raise DataError(f"{source}: no results to analyse")
    keys = pd.Index(trials["Key"])
    if not keys.is_unique:
        raise DataError(f"{source}: the trials file has duplicate Keys")
    rows, resps, sizes = [], [], []
    for (prompting, modelname), res in results.items():
        found = keys.get_indexer(res["Key"].to_numpy())
        known = np.flatnonzero(found >= 0)
        if len(known) < len(found):
            log.warning("%s/%s: %d answers for Keys not in the test set are ignored",
                        prompting, modelname, len(found) - len(known))
        if len(known) < len(trials):
            log.warning("%s/%s: partial results file: %s of %s trials answered", prompting, modelname,
                        f"{len(known):,}", f"{len(trials):,}")
        known = known[np.argsort(found[known], kind="stable")]  # trials order
        rows.append(found[known])
        resp = pd.Categorical(res["resp"])
        labels = pd.Index([str(c) for c in resp.categories], dtype=object)  # one category dtype for all
        resps.append(pd.Categorical.from_codes(resp.codes[known], categories=labels))
        sizes.append(len(known))
    df = trials.take(np.concatenate(rows)).reset_index(drop=True)
    df["resp"] = union_categoricals(resps)
    which = np.repeat(np.arange(len(results)), sizes)  # the results table of each row
    for position, name in enumerate(("prompting", "modelname")):
        labels, codes = np.unique([label[position] for label in results], return_inverse=True)
        df[name] = pd.Categorical.from_codes(codes[which], categories=labels.tolist())
    return df


def _parse_trials(path: Path, data: bytes, skip_text: bool = False) -> list[dict[str, Any]]:
    """Return the records of a trials file's bytes (bzip2-decompressed when ``path`` ends in .bz2).

    With ``skip_text`` the records may lack their ``text`` field (half the bytes, not needed
    to score answers), which makes parsing faster. Raises DataError naming ``path:line`` for
    a line that is not a JSON object, or for a corrupt bzip2 stream.
    """
    if path.suffix == ".bz2":
        try:
            data = bz2.decompress(data)
        except (OSError, ValueError) as exc:
            raise DataError(f"{path}: not a valid bzip2 file ({exc})") from None
    records = _parse_complete_file(_without_text(data)) if skip_text else None
    if records is None:
        records = _parse_complete_file(data)
    if records is not None and all(type(r) is dict for r in records):
        return records
    # slow path, only to name the first bad line
    return [parse_json_line(line.decode("utf-8", "replace"), path, n)
            for n, line in enumerate(data.split(b"\n"), start=1) if line.strip()]


def _parse_complete_file(data: bytes) -> list[Any] | None:
    """Return the values of JSON lines ``data`` parsed in one call, or None if that fails.

    Parsing ``[line1,line2,...]`` at once is several times faster than a loop over lines
    (a newline cannot occur inside a JSON value). None for blank lines, a missing final
    newline (maybe a torn write) or any malformed line: the caller then reads line by line.
    """
    if not data.endswith(b"\n") or b"\n\n" in data:
        return None
    try:
        return json.loads(b"[" + data[:-1].replace(b"\n", b",") + b"]")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None


def _without_text(data: bytes) -> bytes:
    """Return JSON lines ``data`` with every ``"text":"..."`` member cut out, unparsed.

    Inside a JSON string every quote is escaped, so ``"text":"`` can only start a member,
    and the value ends at the first quote preceded by an even number of backslashes. If the
    result were not valid JSON, the caller's parse fails and it parses ``data`` instead.
    """
    parts, pos, find = [], 0, data.find
    while (start := find(b'"text":"', pos)) >= 0:
        end = start + 8
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


# A results line as the release and ResultsWriter write it (compact, Key then resp).
_SIMPLE_RESULT = re.compile(rb'^\{"Key": ?(-?\d{1,19}), ?"resp": ?"([^"\\]*)"\}\n', re.MULTILINE)


def _simple_results(data: bytes) -> pd.DataFrame | None:
    """Return Key and resp columns if every line of ``data`` is a plain ``{"Key":..,"resp":".."}``.

    A regular expression reads such files about twice as fast as JSON; None when any line
    has another shape (the caller then parses JSON).
    """
    matches = _SIMPLE_RESULT.findall(data)  # anchored at line starts: every line must match whole
    if len(matches) != data.count(b"\n") or not data.endswith(b"\n"):
        return None
    try:
        keys = np.array([int(key) for key, _ in matches], dtype=np.int64)
    except OverflowError:
        return None
    codes, labels = pd.factorize(pd.Series([resp for _, resp in matches], dtype=object))
    resp = pd.Categorical.from_codes(codes, categories=[label.decode() for label in labels])
    return pd.DataFrame({"Key": keys, "resp": resp})


def _results_frame(path: Path, records: list[dict[str, Any]]) -> pd.DataFrame:
    """Return Key and resp columns of parsed results records (a missing ``resp`` becomes "")."""
    try:
        keys = np.array([r["Key"] for r in records], dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        raise DataError(f"{path}: every 'Key' must be an integer, as in the trials file") from None
    resp = ["" if r.get("resp") is None else str(r["resp"]) for r in records]
    return pd.DataFrame({"Key": keys, "resp": pd.Categorical(resp)})


def _field_names(records: list[dict[str, Any]]) -> list[str]:
    """Return the field names of ``records``: the first record's order, then any others sorted."""
    first = list(records[0]) if records else []
    others = set().union(*records) - set(first)
    return first + sorted(others)


def _with_clear_gold(df: pd.DataFrame, path: Path) -> pd.DataFrame:
    """Return ``df`` with ``goldresp`` in clear (mapped from ``goldresp_obfusc`` if needed)."""
    if "goldresp_obfusc" in df.columns:
        gold = df["goldresp_obfusc"].map(DEOBFUSCATE)
        if gold.isna().any():
            bad = df.loc[gold.isna(), "goldresp_obfusc"].iloc[0]
            raise DataError(f"{path}: unknown obfuscated gold answer {bad!r}")
        df = df.drop(columns="goldresp_obfusc").assign(goldresp=gold)
    if "goldresp" not in df.columns:
        raise DataError(f"{path}: trials have neither 'goldresp' nor 'goldresp_obfusc'")
    return df


def _trial_columns(path: Path, records: list[dict[str, Any]]) -> pd.DataFrame:
    """Return the analysis columns of parsed trial records (see ``load_trial_columns``)."""
    names = [name for name in _field_names(records) if name != "text"]
    missing = [f for f in REQUIRED_FIELDS if f not in names]
    if missing:
        raise DataError(f"{path}: trials lack the field(s) {', '.join(missing)}")
    raw = pd.DataFrame.from_records(records, columns=names)
    columns: dict[str, Any] = {}
    for name in raw.columns:
        column = _scalar_column(raw[name])
        if column is not None:
            columns[name] = column
    if "Key" not in columns or columns["Key"].dtype != np.int64:
        raise DataError(f"{path}: every trial needs an integer 'Key'")
    columns["n_options"] = np.array([len(r.get("expectedresp") or ()) for r in records], dtype=np.int64)
    df = _with_clear_gold(pd.DataFrame(columns), path)
    df["goldresp"] = pd.Categorical(df["goldresp"].tolist())
    return df


def _scalar_column(column: pd.Series) -> Any:
    """Return a parsed column as an int/float/bool array or a categorical of strings.

    None for lists, dicts or mixed types (not usable for grouping).
    """
    if column.dtype.kind in "iufb":
        return column.to_numpy()
    if pd.api.types.infer_dtype(column, skipna=True) == "string":  # strings and missing values
        return pd.Categorical(column.to_numpy(dtype=object))
    return None
