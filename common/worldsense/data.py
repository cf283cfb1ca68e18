"""Load WorldSense test sets (trials), training sets and model results files.

A test set is a directory holding ``trials.jsonl.bz2`` and a ``results/`` subdirectory. The
official file stores the gold answer obfuscated (``goldresp_obfusc``) so that answers do not
leak into training corpora; loading maps it back to ``goldresp``.

``load_testset`` returns every field. The analysis needs only a few small per-trial fields,
so ``load_trial_columns`` reads just those and ``load_results_columns`` the answers; both keep
what they parsed in a cache keyed by the files' content hash, one entry per trial field
(``common.worldsense.columns``). ``assemble_results`` joins them into one row per (results
file, answered trial).
"""

import bz2
import json
import logging
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from common.errors import DataError, UserError
from common.jsonl import parse_json_line, read_jsonl
from common.results import find_results_files, parse_results_filename
from common.worldsense import bzip2, cache, extract
from common.worldsense.columns import (
    TrialsFile,
    cached_field_names,
    cached_fields,
    cached_results_columns,
    decompress,
    is_int64,
    load_results_columns,
    parse_trials,
)

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


def first_trial(testset_dir: str | Path) -> dict[str, Any] | None:
    """Return the first trial of a test set (read alone, streaming the bzip2 file), or None when
    the directory has no trials file or its first line is not a JSON object: enough to tell a
    canvas set (``task`` and ``item`` fields) from a WorldSense one by content."""
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
    source = TrialsFile(path)
    available = [name for name in cached_field_names(source, cache_dir) if name != "text"]
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
    columns = cached_fields(source, names, cache_dir, pool)
    if columns["Key"] is None or columns["Key"].dtype != np.int64:
        _raise_bad_key(path, decompress(path, path.read_bytes()))
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
            job = cached_results_columns(path, cache_dir)
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


def _answered(found: np.ndarray, trials: int, label: str) -> np.ndarray:
    """Return the positions of the answers whose Key is a trial (``found``: each answer's trial
    row, -1 for an unknown Key), in trials order; warn about unknown Keys and a partial file."""
    known = np.flatnonzero(found >= 0)
    if len(known) < len(found):
        log.warning("%s: %d answers for Keys not in the test set are ignored", label, len(found) - len(known))
    if len(known) < trials:
        log.warning(
            "%s: partial results file: %s of %s trials answered", label, f"{len(known):,}", f"{trials:,}"
        )
    return known[np.argsort(found[known], kind="stable")]


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
        known = _answered(found, len(trials), f"{prompting}/{modelname}")
        refused = int((res["refused"].to_numpy()[known] != "").sum()) if "refused" in res.columns else 0
        counts = {"trials": len(trials), "answered": len(known), "refused": refused}
        coverage.append({"prompting": prompting, "modelname": modelname, **counts})
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
