"""Load WorldSense test sets (trials) and training sets.

A test set is a directory holding ``trials.jsonl.bz2`` and a ``results/`` subdirectory. The
official file stores the gold answer obfuscated (``goldresp_obfusc``) so that answers do not
leak into training corpora; loading maps it back to ``goldresp``.
"""

from pathlib import Path

import pandas as pd

from common.errors import DataError
from common.jsonl import read_jsonl

TRIALS_FILE = "trials.jsonl.bz2"
RESULTS_DIR = "results"

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
    df = pd.DataFrame.from_records(read_jsonl(path))
    if "goldresp_obfusc" in df.columns:
        gold = df["goldresp_obfusc"].map(DEOBFUSCATE)
        if gold.isna().any():
            bad = df.loc[gold.isna(), "goldresp_obfusc"].iloc[0]
            raise DataError(f"{path}: unknown obfuscated gold answer {bad!r}")
        df = df.drop(columns="goldresp_obfusc").assign(goldresp=gold)
    if "goldresp" not in df.columns:
        raise DataError(f"{path}: trials have neither 'goldresp' nor 'goldresp_obfusc'")
    return df


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
