"""Load WorldSense test sets (trials), training sets and model results files.

A test set is a directory holding ``trials.jsonl.bz2`` and a ``results/`` subdirectory. The
official file stores the gold answer obfuscated (``goldresp_obfusc``) so that answers do not
leak into training corpora; loading maps it back to ``goldresp``.

``load_testset`` returns every field. The analysis needs only a few small per-trial fields,
so ``load_trial_columns`` reads just those (``common.worldsense.extract``) and
``load_results_columns`` the answers; both keep what they parsed in a cache keyed by the
files' content hash (``common.worldsense.cache``), one entry per trial field.
``assemble_results`` joins them into one row per (results file, answered trial).
"""

import bz2
import json
import logging
import re
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from common.errors import DataError, UserError
from common.jsonl import parse_json_line, read_jsonl
from common.results import find_results_files, parse_results_filename, read_results
from common.worldsense import bzip2, cache, extract

log = logging.getLogger(__name__)

TRIALS_FILE = "trials.jsonl.bz2"
RESULTS_DIR = "results"
REQUIRED_FIELDS = ("Key", "tuple_ID", "problemname", "expectedresp")  # and a gold answer

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


def trials_path(testset_dir: str | Path) -> Path:
    """Return the trials file of a test set directory (``trials.jsonl.bz2``, or plain ``.jsonl``).

    Raises FileNotFoundError naming the directory when neither exists.
    """
    testset_dir = Path(testset_dir)
    for name in (TRIALS_FILE, "trials.jsonl"):
        if (testset_dir / name).is_file():
            return testset_dir / name
    raise FileNotFoundError(2, f"No {TRIALS_FILE} (or trials.jsonl) in test set directory", str(testset_dir))


def load_testset(testset_dir: str | Path) -> pd.DataFrame:
    """Return the trials of a test set as a DataFrame, one row per trial, with ``goldresp`` in clear.

    Generated sets carry ``goldresp`` already; the official one has ``goldresp_obfusc``,
    which is mapped back and dropped. Raises DataError for an unknown obfuscated answer, a
    file with neither field, or a trial without an integer ``Key`` (naming its line).
    """
    path = trials_path(testset_dir)
    data = _decompress(path, path.read_bytes())
    records = _parse_trials(path, data)
    if not all(_is_int64(r.get("Key")) for r in records):
        _raise_bad_key(path, data)
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
    testset_dir: str | Path,
    cache_dir: str | Path | None = cache.DEFAULT_DIR,
    fields: Sequence[str] | None = None,
    pool: ProcessPoolExecutor | None = None,
) -> pd.DataFrame:
    """Return the analysis columns of a test set's trials: one row per trial, in file order.

    Columns: ``Key``, ``tuple_ID``, ``problemname``, ``problemsize`` (when present), the
    requested ``fields`` (None: every field of the first trial holding numbers or strings,
    except ``text``), ``n_options`` = ``len(expectedresp)`` and ``goldresp`` in clear; strings
    as categoricals. Each field is parsed once and cached on its own, keyed by the trials
    file's SHA-256 (``cache_dir`` None: no cache). Fields not cached are read by the worker
    processes of ``pool`` (``extract.worker_pool``; None: a pool made for this call). Raises
    DataError for a missing required field, UserError for an unknown field in ``fields``.
    """
    path = trials_path(testset_dir)
    source = _TrialsFile(path)
    available = [name for name in _cached_field_names(source, cache_dir) if name != "text"]
    unknown = [f for f in (fields or ()) if f not in available]
    if unknown:
        raise UserError(f"{path}: unknown trial field(s) {unknown}; the trials have: {', '.join(available)}")
    missing = [f for f in REQUIRED_FIELDS if f not in available]
    gold = next((f for f in ("goldresp", "goldresp_obfusc") if f in available), None)
    if missing or gold is None:
        raise DataError(f"{path}: trials lack the field(s) {', '.join(missing or ['goldresp'])}")
    wanted = available if fields is None else [f for f in available if f in fields]
    names = list(
        dict.fromkeys([*REQUIRED_FIELDS, *[f for f in ("problemsize",) if f in available], *wanted, gold])
    )
    columns = _cached_fields(source, names, cache_dir, pool)
    if columns["Key"] is None or columns["Key"].dtype != np.int64:
        _raise_bad_key(path, _decompress(path, path.read_bytes()))
    if columns["expectedresp"] is None or columns["expectedresp"].dtype != np.int64:
        raise DataError(f"{path}: every trial needs an 'expectedresp' list")
    df = pd.DataFrame(
        {
            name: columns[name]
            for name in names
            if columns[name] is not None and name not in ("expectedresp", gold)
        }
    )
    df["n_options"] = columns["expectedresp"]
    df["goldresp"] = _clear_gold(path, columns[gold], obfuscated=gold == "goldresp_obfusc")
    log.info("trials %s: %s rows", path, f"{len(df):,}")
    return df


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


def _cached_results_columns(path: Path, cache_dir: str | Path | None) -> pd.DataFrame | None:
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


def load_results_in_testset_dir(
    testset_dir: str | Path,
    cache_dir: str | Path | None = cache.DEFAULT_DIR,
    fields: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Return the trials of ``testset_dir`` joined with every results file of its ``results/``.

    One row per answered trial and results file (see ``assemble_results``); the trial
    columns are those of ``load_trial_columns`` with ``fields`` (None: all). Raises
    FileNotFoundError for a missing directory or trials file, DataError when there is no
    results file.
    """
    testset_dir = Path(testset_dir)
    if not testset_dir.is_dir():
        raise FileNotFoundError(2, "No such test set directory", str(testset_dir))
    files = find_results_files(testset_dir / RESULTS_DIR)
    if not files:
        raise DataError(
            f"{testset_dir / RESULTS_DIR}: no <prompting>___<modelname>___results.jsonl file "
            "to analyse (write one with scripts/test_random_model.py)"
        )
    with extract.worker_pool() as pool:  # one pool: results files are parsed while trials decompress
        jobs: dict[tuple[str, str], Future | pd.DataFrame | Path] = {}
        for path in files:
            job = _cached_results_columns(path, cache_dir)
            if job is None:  # to parse: by a worker (big files), or here after the trials
                big = path.stat().st_size >= bzip2.MIN_PARALLEL_BYTES
                job = pool.submit(load_results_columns, path, cache_dir) if pool and big else path
            jobs[parse_results_filename(path)] = job
        trials = load_trial_columns(testset_dir, cache_dir, fields, pool)
        results = {label: _result_of(job, cache_dir) for label, job in jobs.items()}
    return assemble_results(trials, results, source=testset_dir / RESULTS_DIR)


def _result_of(job: Future | pd.DataFrame | Path, cache_dir: str | Path | None) -> pd.DataFrame:
    """Return the results columns of ``job``: loaded, being parsed by a worker, or still to load."""
    if isinstance(job, Future):
        return job.result()
    return job if isinstance(job, pd.DataFrame) else load_results_columns(job, cache_dir)


def assemble_results(
    trials: pd.DataFrame, results: dict[tuple[str, str], pd.DataFrame], source: str | Path = "results"
) -> pd.DataFrame:
    """Return the inner join of ``trials`` with each results table on ``Key``, stacked.

    ``results`` maps ``(prompting, modelname)`` to a DataFrame with ``Key`` and ``resp``. Rows
    come in results order (as given), then trials order; ``prompting``, ``modelname`` and
    ``resp`` are added as categoricals. A partial results file (fewer answers than trials) is
    analysed with a warning; answers whose Key is not in the trials are ignored with a warning.
    ``attrs["coverage"]`` holds one row per results file: prompting, modelname, trials,
    answered, refused (items the server refused; their ``resp`` is ""). The inputs are not
    modified.
    """
    if not results:
        raise DataError(f"{source}: no results to analyse")
    keys = pd.Index(trials["Key"])
    if not keys.is_unique:
        raise DataError(f"{source}: the trials file has duplicate Keys")
    rows, resps, sizes, coverage = [], [], [], []
    for (prompting, modelname), res in results.items():
        found = keys.get_indexer(res["Key"].to_numpy())
        known = np.flatnonzero(found >= 0)
        if len(known) < len(found):
            log.warning(
                "%s/%s: %d answers for Keys not in the test set are ignored",
                prompting,
                modelname,
                len(found) - len(known),
            )
        if len(known) < len(trials):
            log.warning(
                "%s/%s: partial results file: %s of %s trials answered",
                prompting,
                modelname,
                f"{len(known):,}",
                f"{len(trials):,}",
            )
        known = known[np.argsort(found[known], kind="stable")]  # trials order
        refused = int((res["refused"].to_numpy()[known] != "").sum()) if "refused" in res.columns else 0
        coverage.append(
            {
                "prompting": prompting,
                "modelname": modelname,
                "trials": len(trials),
                "answered": len(known),
                "refused": refused,
            }
        )
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
    df.attrs["coverage"] = coverage
    return df


def _decompress(path: Path, raw: bytes) -> bytes:
    """Return the JSON lines of a trials file's bytes (bzip2-decompressed when it ends in .bz2)."""
    if path.suffix != ".bz2":
        return raw
    try:
        return bzip2.decompress(raw)  # on every core
    except (OSError, ValueError, EOFError) as exc:
        raise DataError(f"{path}: not a valid bzip2 file ({exc})") from None


def _parse_trials(path: Path, data: bytes, skip_text: bool = False) -> list[dict[str, Any]]:
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


def _results_frame(path: Path, records: list[dict[str, Any]]) -> pd.DataFrame:
    """Return Key and resp columns of parsed results records (a missing ``resp`` becomes ""), and
    ``refused`` (the refusal kind, "" for answered items) when some item was refused."""
    bad = next((r["Key"] for r in records if not _is_int64(r["Key"])), None)
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


def _is_int64(value: Any) -> bool:
    """Return whether ``value`` is an integer (not a bool) that fits a signed 64-bit column."""
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63


def _raise_bad_key(path: Path, data: bytes) -> None:
    """Raise DataError naming ``path:line`` of the first trial of JSON lines ``data`` whose
    ``Key`` is missing or not an integer."""
    for number, line in enumerate(data.split(b"\n"), start=1):
        if line.strip():
            record = parse_json_line(line.decode("utf-8", "replace"), path, number)
            if not _is_int64(record.get("Key")):
                raise DataError(
                    f"{path}:{number}: every trial needs an integer 'Key' (got "
                    f"{record.get('Key')!r}); Keys are unique integers"
                )
    raise DataError(f"{path}: every trial needs an integer 'Key'")


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


class _TrialsFile:
    """A trials file read once, decompressed only when some field must be parsed."""

    def __init__(self, path: Path):
        self.path = path
        self.raw = path.read_bytes()
        self.digest = cache.content_digest(self.raw)
        self._text: bytes | None = None

    def text(self) -> bytes:
        """Return the decompressed JSON lines."""
        if self._text is None:
            self._text = _decompress(self.path, self.raw)
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


def _cached_field_names(source: _TrialsFile, cache_dir: str | Path | None) -> list[str]:
    """Return ``source.field_names()``, from the cache when it holds them (saves a block's decompression)."""
    entry = cache.entry_path(cache_dir, "fieldnames", source.digest) if cache_dir else None
    stored = cache.load_frame(entry) if entry else None
    if stored is not None and "field" in stored.columns:
        return [str(name) for name in stored["field"]]
    names = source.field_names()
    if entry:
        cache.save_frame(entry, pd.DataFrame({"field": pd.Categorical(names)}))
    return names


def _cached_fields(
    source: _TrialsFile, names: list[str], cache_dir: str | Path | None, pool: ProcessPoolExecutor | None
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
            records = _parse_trials(source.path, source.text(), skip_text=True)
            parsed = {name: _record_column([r.get(name) for r in records]) for name in todo}
        for name in todo:
            column = parsed[name]
            columns[name] = column
            if cache_dir:
                stored = pd.DataFrame() if column is None else pd.DataFrame({name: column})
                cache.save_frame(entry(name), stored)
    return columns


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
