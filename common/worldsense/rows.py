"""WorldSense in the results database (``common.database``): the test set's trials as items, each
results file's answers, the tuples as units, the paired tests of the report.

An answer is scored by the release's rule (``scoring.trial_correct``: the answer is in the gold
answer's class); a tuple's score is its weighted accuracy (``scoring.compute_acc_table``, which
leaves out incomplete tuples, as the analysis does); the pairs are those of
``analysis.paired_tests``. Runs are named as the report names them: "<model> (<prompting>)".
"""

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from common.database import Roots, RunRows, SetRows, joined_text, reply_fields
from common.results import find_results_files, parse_results_filename, read_results
from common.worldsense.analysis import paired_tests
from common.worldsense.columns import load_results_columns
from common.worldsense.data import RESULTS_DIR, load_testset, trials_path
from common.worldsense.scoring import ANSWER_CLASS, compute_acc_table, trial_correct

ITEM_FIELDS = {
    "Key": "Key",
    "tuple_ID": "unit",
    "problemname": "task",
    "problemsize": "size",
    "skin": "variant",
}
RULE = "correct"  # the units' rule: the tuple's weighted accuracy of ``correct``


def sets(roots: Roots) -> list[SetRows]:
    """Return the official test set (data/worldsense/test_set) as rows, when it and a results
    file are there; else nothing."""
    testset = roots.data / "worldsense" / "test_set"
    try:
        trials_path(testset)
    except FileNotFoundError:
        return []
    return [set_rows(testset)] if find_results_files(testset / RESULTS_DIR) else []


def set_rows(testset: Path) -> SetRows:
    """Return the rows of a WorldSense test set directory and of every results file in its results/."""
    trials = load_testset(testset)
    trials["goldresp"] = pd.Categorical(trials["goldresp"].astype(str))  # scored by category: fast
    files = find_results_files(testset / RESULTS_DIR)
    runs, joined = [], []
    for file in files:
        prompting, model = parse_results_filename(file)
        answers, frame = _answers(trials, file)
        joined.append(frame.assign(prompting=prompting, modelname=model))
        label = f"{model} ({prompting})"
        runs.append(RunRows(file, prompting, model, label, len(answers), answers, units=[]))
    frame = pd.concat(joined, ignore_index=True)
    frame["resp"] = frame["resp"].astype("category")  # the files' categories differ: concat made objects
    tuples = compute_acc_table(frame)
    for run in runs:
        mine = tuples[(tuples["prompting"] == run.prompting) & (tuples["modelname"] == run.model)]
        run.units = pd.DataFrame(
            {
                "unit": mine["tuple_ID"].astype(str),
                "rule": RULE,
                "score": mine["acc"],
                "censored": 0,
                "refused": 0,
                "task": mine["problemname"].astype(str),
                "size": mine.get("problemsize"),
            }
        )
    by_label = {run.label: run.file for run in runs}
    tests = paired_tests(tuples)
    pairs = [(by_label[a], by_label[b], RULE) for a, b in zip(tests["a"], tests["b"], strict=True)]
    return SetRows("worldsense", testset.name, _items(trials), runs, pairs)


def _items(trials: pd.DataFrame) -> pd.DataFrame:
    """Return the items of the trials: Key, unit (the tuple), task (the problem), size, variant
    (the skin), the prompt, the gold answer in clear, the other fields as JSON."""
    items = pd.DataFrame({column: trials[field] for field, column in ITEM_FIELDS.items() if field in trials})
    items["unit"] = items["unit"].astype(str)
    items["prompt"] = trials["text"]
    items["gold"] = trials["goldresp"].astype(str)
    others = sorted(c for c in trials.columns if c not in {*ITEM_FIELDS, "text", "goldresp"})
    items["fields"] = (
        trials[others].to_json(orient="records", lines=True).rstrip("\n").split("\n") if others else None
    )
    return items


def _answers(trials: pd.DataFrame, file: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the answers rows of one results file (its records answering a trial, in file order)
    and those answers joined with their trials as ``compute_acc_table`` reads them. The Keys and
    answers come from the analysis's parsed-column cache (``columns.load_results_columns``); the
    other fields of a file the shared runner wrote (raw replies, reasoning, tokens...) from its
    records."""
    columns = load_results_columns(file)
    found = pd.Index(trials["Key"]).get_indexer(columns["Key"].to_numpy())
    known = found >= 0
    found = found[known]
    resp = pd.Series(pd.Categorical(columns["resp"]))[known].reset_index(drop=True)
    gold = trials["goldresp"].take(found).reset_index(drop=True)
    refused = (
        (columns["refused"][known] != "").to_numpy() if "refused" in columns else np.zeros(len(found), bool)
    )
    text = resp.astype(str)
    answers = pd.DataFrame(
        {
            "Key": trials["Key"].to_numpy()[found],
            "turn": 0,
            "reply": text,
            "answer": text.where(text != "", None),
            "correct": trial_correct(resp, gold).astype(int),
            "invalid": (~text.isin(list(ANSWER_CLASS)) & ~refused).astype(int),
            "scored": 1,
            "truncated": 0,
        }
    )
    if not _plain(file):  # written by the shared runner: replies, reasoning, tokens, refusals
        records = {r["Key"]: r for r in read_results(file)}
        extra = pd.DataFrame([_runner_fields(records[key]) for key in answers["Key"]])
        answers = pd.concat([answers.drop(columns=["reply", "truncated"]), extra], axis=1)
    joined = trials.iloc[found].drop(columns=["text"]).reset_index(drop=True).assign(resp=resp)
    return answers, joined


def _plain(file: Path) -> bool:
    """Return whether the results file holds only Key and resp (its first record says so), as the
    released files do."""
    with open(file, encoding="utf-8") as handle:
        first = handle.readline()
    try:
        return set(json.loads(first)) <= {"Key", "resp"}
    except (ValueError, TypeError):
        return False


def _runner_fields(record: dict[str, Any]) -> dict[str, Any]:
    """Return the answers fields of a record the shared runner wrote: the last reply (``raw``; the
    answer when there is none), then ``database.reply_fields``."""
    raw = record.get("raw") or [None]
    return {"reply": joined_text(raw[-1]) or str(record.get("resp") or ""), **reply_fields(record)}
