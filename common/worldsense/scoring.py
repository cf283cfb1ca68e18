"""Score WorldSense answers: one row per tuple with its weighted accuracy and bias (the release's rules).

An answer is right when it falls in the gold answer's class (``ANSWER_CLASS``); its bias is +1
when affirmative and -1 when negative (``BIAS``); within a tuple each answer class weighs
equally (``GOLD_WEIGHT``). The trials of a tuple are not independent, so ``compute_acc_table``
reduces them to one row, the unit of every statistic in ``common.worldsense.analysis``.
"""

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from common.errors import DataError
from common.jsonl import sha256_file
from common.results import draw_of, find_results_files, note_read, parse_results_filename, read_results
from common.scored import ScoredRun, joined_text, reply_fields
from common.suite import SetRef
from common.trials import extract
from common.trials.data import is_trial_set, load_testset, trials_path
from common.worldsense.data import REQUIRED_FIELDS

log = logging.getLogger(__name__)

TUPLE_KEYS = ("prompting", "modelname", "tuple_ID")

# An answer is right when it falls in the gold answer's class. For the 3-option
# (completeness) problems "1" and "2" both say the answer can be known.
ANSWER_CLASS = {
    "TRUE": "TRUE",
    "FALSE": "FALSE",
    "POSSIBLE": "POSSIBLE",
    "IMPOSSIBLE": "IMPOSSIBLE",
    "1": "KNOW",
    "2": "KNOW",
    "3": "UNKNOWN",
}
# Bias: +1 for the affirmative answers, -1 for the negative ones; anything else (e.g. "") is missing.
BIAS = {"TRUE": 1.0, "POSSIBLE": 1.0, "1": 1.0, "2": 1.0, "FALSE": -1.0, "IMPOSSIBLE": -1.0, "3": -1.0}
# Weight by gold answer, so that each answer class weighs equally within a tuple:
# "1" and "2" share the KNOW class, hence half the weight of "3".
GOLD_WEIGHT = {"TRUE": 0.5, "FALSE": 0.5, "POSSIBLE": 0.5, "IMPOSSIBLE": 0.5, "1": 0.25, "2": 0.25, "3": 0.5}


def compute_acc_table(
    df: pd.DataFrame, filter_incomplete_tuples: bool = True, require_complete: bool = False
) -> pd.DataFrame:
    """Return one row per (prompting, modelname, tuple_ID) with the tuple's ``acc`` and ``bias``.

    ``df`` holds one row per answered trial with ``resp``, ``goldresp``, ``tuple_ID``,
    ``modelname`` (``prompting`` optional) and ``n_options`` or ``expectedresp``. With
    ``filter_incomplete_tuples``, rows of a tuple whose number of answers differs from its
    number of options are dropped, with a warning (a DataError with ``require_complete``).
    Per row, ``acc`` is 1 when the answer is in the gold answer's class (``ANSWER_CLASS``)
    and ``bias`` follows ``BIAS``; the tuple's values are means weighted by ``GOLD_WEIGHT``
    of the gold answers, over the weight of the whole tuple (a missing bias counts as 0).
    The other columns keep the tuple's first row; ``resp``, ``goldresp`` and ``text`` are
    dropped. ``df`` is not modified.
    """
    keys = [k for k in TUPLE_KEYS if k in df.columns]
    missing = [c for c in ("resp", "goldresp", "tuple_ID", "modelname") if c not in df.columns]
    if missing:
        raise DataError(f"results table lacks the column(s) {', '.join(missing)}")
    if filter_incomplete_tuples:
        complete, dropped = complete_rows(df)
        if not complete.all():
            incomplete_said(dropped, int((~complete).sum()), require_complete)
            df = df.loc[complete]
    first, group = _group_ids(df, keys)
    weight = _lookup(df["goldresp"], GOLD_WEIGHT, np.nan)
    if np.isnan(weight).any():
        unknown = sorted({str(g) for g in df["goldresp"][np.isnan(weight)]})
        raise DataError(f"unknown gold answer(s) {unknown}: known are {list(GOLD_WEIGHT)}")
    bias = np.nan_to_num(_lookup(df["resp"], BIAS, np.nan))
    weight_sum = np.bincount(group, weights=weight)
    out = df.iloc[first].drop(columns=[c for c in ("resp", "goldresp", "text") if c in df.columns])
    out = out.reset_index(drop=True)
    out["acc"] = np.bincount(group, weights=weight * trial_correct(df["resp"], df["goldresp"])) / weight_sum
    out["bias"] = np.bincount(group, weights=weight * bias) / weight_sum
    return out


def complete_rows(df: pd.DataFrame) -> tuple[np.ndarray, int]:
    """Return whether each row's tuple (per prompting, modelname and tuple_ID) has as many answers
    as options, and how many tuples do not: what ``compute_acc_table`` keeps. ``df`` is not modified."""
    _, group = _group_ids(df, [k for k in TUPLE_KEYS if k in df.columns])
    complete = np.bincount(group)[group] == _n_options(df)
    return complete, len(np.unique(group[~complete]))


def incomplete_said(tuples: int, answers: int, require_complete: bool = False) -> None:
    """Say that ``tuples`` incomplete tuples (``answers`` answers) are left out: a warning, or a
    DataError with ``require_complete``."""
    message = f"{tuples:,} incomplete tuples ({answers:,} answers)"
    if require_complete:
        raise DataError(f"{message}: some results files are partial")
    log.warning("dropping %s: normal for partial results files", message)


def trial_correct(resp: pd.Series, gold: pd.Series) -> np.ndarray:
    """Return 1.0 for each answer ``resp`` in the class of its ``gold`` answer (``ANSWER_CLASS``),
    else 0.0 (an answer outside the options, such as "", is wrong): the score of one trial,
    which ``compute_acc_table`` averages over a tuple. The inputs are not modified."""
    return (_lookup(resp, _CLASS_CODE, -1.0) == _lookup(gold, _CLASS_CODE, -2.0)).astype(float)


_CLASSES = list(dict.fromkeys(ANSWER_CLASS.values()))
_CLASS_CODE = {answer: float(_CLASSES.index(cls)) for answer, cls in ANSWER_CLASS.items()}


def _lookup(column: pd.Series, table: dict[str, float], default: float) -> np.ndarray:
    """Return ``table[value]`` (``default`` when absent) for each value of ``column``, as floats."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        per_category = np.array([table.get(str(c), default) for c in column.cat.categories] + [default])
        return per_category[column.cat.codes.to_numpy()]  # code -1 (missing) picks the default
    return np.array([table.get(str(v), default) for v in column], dtype=float)


def _group_ids(df: pd.DataFrame, keys: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Return (first row of each group, group number of each row) for the groups of ``keys``.

    Groups are numbered in the sorted order of the keys' codes (a missing key is a group of
    its own). Equivalent to a pandas groupby ``ngroup``, several times faster on categoricals; a
    key with one value throughout (a run's model, when one run is grouped) changes neither the
    groups nor their order, and is skipped.
    """
    ids = np.zeros(len(df), dtype=np.int64)
    for key in keys:
        column = df[key]
        codes = (
            column.cat.codes.to_numpy()
            if isinstance(column.dtype, pd.CategoricalDtype)
            else pd.factorize(column, use_na_sentinel=True)[0]
        )
        if len(codes) and codes.min() == codes.max():
            continue
        ids = _dense(ids * (int(codes.max(initial=-1)) + 2) + codes + 1)[1]  # renumbered: no overflow
    return _dense(ids)


def _dense(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (first position of each distinct value, its rank among the distinct values) of the
    non-negative integers ``ids``, as ``np.unique`` with ``return_index`` and ``return_inverse``
    gives them: by counting when the values are at most a few times as many as the ids (a run's
    tuple codes: no sort), else by ``np.unique``."""
    if len(ids) == 0 or int(ids.max()) > 4 * len(ids) + 1024:
        _, first, rank = np.unique(ids, return_index=True, return_inverse=True)
        return first, rank.reshape(-1)
    seen = np.zeros(int(ids.max()) + 1, dtype=bool)
    seen[ids] = True
    rank = (np.cumsum(seen) - 1)[ids]
    first = np.empty(int(seen.sum()), dtype=np.int64)
    first[rank[::-1]] = np.arange(len(ids) - 1, -1, -1)  # the last write of each rank: its first position
    return first, rank


def _n_options(df: pd.DataFrame) -> np.ndarray:
    """Return each row's number of options: ``n_options`` or ``len(expectedresp)``."""
    if "n_options" in df.columns:
        return df["n_options"].to_numpy()
    if "expectedresp" in df.columns:
        return np.array([len(x) for x in df["expectedresp"]])
    raise DataError("results table lacks 'expectedresp' (or 'n_options'): tuple sizes are unknown")


# ---- the scorer of the results database (``common.database``) ----------------------------------------
# What a set's items are, and each results file scored once: ``correct`` is ``trial_correct`` (the
# release's rule), the tuple its unit (its score the weighted accuracy of ``compute_acc_table``).
RULE = "correct"  # the units' rule: the tuple's weighted accuracy of ``correct``
# the answers' columns the analysis reads (``report.section``: ``results_frame``, the sampling
# tables), kept per run as arrays (``common.dbarrays``)
ANSWER_ARRAYS = ("answer", "correct", "scored", "refused")
ITEM_FIELDS = {"tuple_ID": "unit", "problemname": "task", "problemsize": "size", "skin": "variant"}


def detect(path: Path) -> bool:
    """Return whether ``path`` holds a test set in the trial format, WorldSense's: a trials file
    (loading names a field it lacks). Other suites' sets may share the format (the suite declares
    ``detect_shared``): such a set is the suite's that claims it too, which the resolver finds by
    asking every suite (``common.suites.claimant``)."""
    return is_trial_set(path)


def data_fingerprint(ref: SetRef) -> str:
    """Return the fingerprint of a test set's trials: the trials file's SHA-256."""
    return sha256_file(trials_path(ref.data))


def results_files(ref: SetRef) -> list[Path]:
    """Return the results files of a test set (its ``results/`` directory), sorted by name."""
    return find_results_files(ref.results)


def items_frame(ref: SetRef) -> pd.DataFrame:
    """Return the trials of a test set as the database's items: Key, unit (the tuple), task (the
    problem), size, variant (the skin), the prompt, the gold answer in clear, the other fields as
    JSON (``expectedresp`` among them)."""
    trials = load_testset(ref.data)
    missing = [f for f in REQUIRED_FIELDS if f not in trials.columns]
    if missing:
        raise DataError(f"{trials_path(ref.data)}: trials lack the field(s) {', '.join(missing)}")
    items = pd.DataFrame({"Key": trials["Key"]})
    for name, column in ITEM_FIELDS.items():
        items[column] = trials.get(name)
    items["unit"] = items["unit"].astype(str)
    items["prompt"] = trials["text"]
    items["gold"] = trials["goldresp"].astype(str)
    others = [c for c in trials.columns if c not in {"Key", *ITEM_FIELDS, "text", "goldresp"}]
    items["fields"] = trials[sorted(others)].to_json(orient="records", lines=True).rstrip("\n").split("\n")
    items["n_options"] = trials["expectedresp"].map(len)  # for the scorer; not stored
    return items


def score_file(ref: SetRef, file: Path, items: pd.DataFrame) -> ScoredRun:
    """Return a results file of the test set scored: every answer (every draw) with ``correct``
    (``trial_correct``), ``invalid`` (not one of the options; a refused trial is not invalid),
    the reply (the runner's last raw reply, else ``resp``), and the tuples as units (draw 0)."""
    prompting, model = parse_results_filename(file)
    answers = read_answers(file)
    known = answers["Key"].isin(items["Key"])
    answers = answers[known].reset_index(drop=True)
    gold = answers["Key"].map(items.set_index("Key")["gold"]).astype("category")
    resp = answers["answer"].fillna("")
    answers["correct"] = trial_correct(resp.astype("category"), gold)
    refused = answers["refused"].notna()
    answers["invalid"] = (~resp.isin(list(ANSWER_CLASS)) & ~refused).astype(int)
    answers["answer"] = resp.where(resp != "", None)
    first = answers[answers["draw"] == 0]
    notes = (
        [f"{int((~known).sum()):,} answers to Keys not in the test set left out"] if (~known).any() else []
    )
    return ScoredRun(
        prompting=prompting,
        model=model,
        label=f"{model} ({prompting})",
        records=len(first),
        answers=answers,
        units=_tuple_units(first, items),
        notes=notes,
    )


def read_answers(file: Path) -> pd.DataFrame:
    """Return the answers of a WorldSense results file: Key, draw, answer (``resp``), and for a
    file the shared runner wrote the reply, reasoning, refusal, tokens and finish reasons. A file
    of plain ``{"Key", "resp"}`` lines (the release's) is read by ``extract.simple_results``."""
    data = file.read_bytes()
    simple = extract.simple_results(data)
    if simple is not None:
        keys, resp = simple
        frame = pd.DataFrame({"Key": keys, "answer": np.asarray(resp, dtype=object)})
        frame = frame.drop_duplicates("Key", keep="first").reset_index(drop=True)
        note_read(file, len(frame))
        return frame.assign(draw=0, turn=0, reply=frame["answer"], refused=None)
    rows = [
        {
            "Key": record["Key"],
            "draw": draw_of(record),
            "turn": 0,
            "answer": record.get("resp") or "",
            "reply": joined_text((record.get("raw") or [None])[-1]) or str(record.get("resp") or ""),
            **reply_fields(record),
        }
        for record in read_results(file, all_draws=True)
    ]
    return pd.DataFrame(rows) if rows else pd.DataFrame(columns=["Key", "draw", "turn", "answer", "refused"])


def _tuple_units(first: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Return the units of one run's first answers: each complete tuple's weighted accuracy
    (``compute_acc_table``: an incomplete tuple is left out, as the analysis leaves it out)."""
    fields = items.set_index("Key")
    joined = pd.DataFrame(
        {
            "tuple_ID": first["Key"].map(fields["unit"]),
            "problemname": first["Key"].map(fields["task"]),
            "problemsize": first["Key"].map(fields["size"]),
            "n_options": first["Key"].map(fields["n_options"]),
            "goldresp": first["Key"].map(fields["gold"]).astype("category"),
            "resp": first["answer"].fillna("").astype("category"),
            "modelname": "run",
        }
    )
    tuples = compute_acc_table(joined) if len(joined) else joined.assign(acc=[])
    return pd.DataFrame(
        {
            "unit": tuples["tuple_ID"].astype(str),
            "rule": RULE,
            "score": tuples["acc"],
            "censored": 0,
            "refused": 0,
            "task": tuples["problemname"].astype(str),
            "size": tuples["problemsize"],
        }
    )


def pairs(runs: pd.DataFrame, units: pd.DataFrame) -> list[tuple[int, int, str]]:
    """Return the paired tests of a test set's runs: every two runs sharing at least two complete
    tuples, in the order of ``analysis.paired_tests`` (by prompting, then model). The tuples two
    runs share are counted for every pair at once (a product of the runs' tuple indicators)."""
    found = []
    for _, group in runs.groupby("set_name", sort=False):
        ids = group.sort_values(["prompting", "model"], kind="stable")["run_id"].to_numpy()
        mine = units[units["run_id"].isin(ids)]
        row = pd.Index(ids).get_indexer(mine["run_id"])
        column = pd.factorize(mine["unit"])[0]  # a categorical (the score stage's): by its codes
        has = np.zeros((len(ids), int(column.max(initial=-1)) + 1))
        has[row, column] = 1.0
        shared = has @ has.T  # tuples each two runs both have (exact: counts far below 2**53)
        first, second = np.triu_indices(len(ids), k=1)
        keep = shared[first, second] >= 2
        found += [(int(a), int(b), RULE) for a, b in zip(ids[first[keep]], ids[second[keep]], strict=True)]
    return found
