"""WorldSense's own data: its test sets' layout and fields, and the release's training sets.

A WorldSense test set is a trial set (``common.trials.data``: ``trials.jsonl.bz2``, loaded by
``load_testset``) with a ``results/`` subdirectory, as the release keeps it; its trials carry the
tuple fields the analysis groups by (``REQUIRED_FIELDS``). The names are the release's
``worldsense.benchmark`` names, so ``load_testset`` is reachable from here too.
"""

from pathlib import Path

import pandas as pd

from common.errors import DataError
from common.jsonl import read_jsonl
from common.trials.data import load_testset, trials_path

__all__ = ["REQUIRED_FIELDS", "RESULTS_DIR", "load_testset", "load_trainset", "trials_path"]

RESULTS_DIR = "results"
REQUIRED_FIELDS = ("Key", "tuple_ID", "problemname", "expectedresp")  # and a gold answer


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
