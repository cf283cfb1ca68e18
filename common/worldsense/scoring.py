"""Score WorldSense answers: one row per tuple with its weighted accuracy and bias (the release's rules).

An answer is right when it falls in the gold answer's class (``ANSWER_CLASS``); its bias is +1
when affirmative and -1 when negative (``BIAS``); within a tuple each answer class weighs
equally (``GOLD_WEIGHT``). The trials of a tuple are not independent, so ``compute_acc_table``
reduces them to one row, the unit of every statistic in ``common.worldsense.analysis``.
"""

import logging

import numpy as np
import pandas as pd

from common.errors import DataError
from common.results import draw_of

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


def draw_frame(records: list[dict], trials: pd.DataFrame) -> pd.DataFrame:
    """Return one row per answer of a results file, every draw (``common.sampling.DRAW_COLUMNS``):
    ``score`` from ``trial_correct`` (the answer in the gold answer's class), ``item`` the
    trial's tuple (its trials are not independent). ``trials`` needs Key, goldresp, tuple_ID."""
    known = trials.set_index("Key")
    answered = [record for record in records if record["Key"] in known.index]
    keys = [record["Key"] for record in answered]
    resp = pd.Series([record.get("resp") for record in answered], dtype=object)
    gold = known["goldresp"].loc[keys].astype(str).reset_index(drop=True)
    return pd.DataFrame(
        {
            "Key": keys,
            "draw": [draw_of(record) for record in answered],
            "score": trial_correct(resp, gold),
            "answer": [value or None for value in resp],
            "item": known["tuple_ID"].loc[keys].tolist(),
        },
        columns=["Key", "draw", "score", "answer", "item"],
    )


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
    first, group = _group_ids(df, keys)
    if filter_incomplete_tuples:
        complete = np.bincount(group)[group] == _n_options(df)
        if not complete.all():
            dropped = len(np.unique(group[~complete]))
            message = f"{dropped:,} incomplete tuples ({int((~complete).sum()):,} answers)"
            if require_complete:
                raise DataError(f"{message}: some results files are partial")
            log.warning("dropping %s: normal for partial results files", message)
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
    its own). Equivalent to a pandas groupby ``ngroup``, several times faster on categoricals.
    """
    ids = np.zeros(len(df), dtype=np.int64)
    for key in keys:
        column = df[key]
        codes = (
            column.cat.codes.to_numpy()
            if isinstance(column.dtype, pd.CategoricalDtype)
            else pd.factorize(column, use_na_sentinel=True)[0]
        )
        ids = ids * (int(codes.max(initial=-1)) + 2) + codes + 1
        _, ids = np.unique(ids, return_inverse=True)  # renumber densely: no overflow
    _, first, group = np.unique(ids, return_index=True, return_inverse=True)
    return first, group


def _n_options(df: pd.DataFrame) -> np.ndarray:
    """Return each row's number of options: ``n_options`` or ``len(expectedresp)``."""
    if "n_options" in df.columns:
        return df["n_options"].to_numpy()
    if "expectedresp" in df.columns:
        return np.array([len(x) for x in df["expectedresp"]])
    raise DataError("results table lacks 'expectedresp' (or 'n_options'): tuple sizes are unknown")
