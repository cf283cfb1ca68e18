"""Canvas in the results database (``common.database``): a set's trials as items, each results
file's answers, the items (a canvas and a question, several variants) as units, the paired tests.

Answers are scored by the suite's own code: ``scoring.score_rows`` (strict, contains, invalid,
refused) and ``scoring.extract`` (the answer read); the runs are named and the pairs chosen by
``analysis.score_files`` and ``analysis.paired_tests``, as in the report.
"""

from pathlib import Path
from typing import Any

import pandas as pd

from common.canvas.analysis import load_trials, paired_tests, results_files, score_files
from common.canvas.run import is_canvas_set
from common.canvas.scoring import extract, response_text
from common.database import Roots, RunRows, SetRows, json_fields, reply_fields
from common.results import find_results_files, parse_results_filename, read_results

RULE = "strict"  # the units' rule (the paired tests'): the share of an item's variants right
ITEM_FIELDS = ("Key", "item", "task", "num_shapes", "text", "goldresp")


def sets(roots: Roots) -> list[SetRows]:
    """Return every canvas set with results in results/canvas/<set>/ whose trials are in
    data/canvas/<set>/, as rows."""
    results = roots.results / "canvas"
    found = sorted(d for d in results.iterdir() if d.is_dir()) if results.is_dir() else []
    return [
        set_rows(roots.data / "canvas" / d.name, d)
        for d in found
        if find_results_files(d) and is_canvas_set(roots.data / "canvas" / d.name)
    ]


def set_rows(path: Path, results: Path | None = None) -> SetRows:
    """Return the rows of the canvas set ``path`` and of its results files (``analysis.results_files``,
    with those of the directory ``results`` too)."""
    trials = load_trials(path)
    files = results_files(path, [results] if results else [])
    runs, scored_all = [], []
    for file in files:
        records = read_results(file)
        scored, _ = score_files(trials, [file])
        scored_all.append(scored)
        prompting, model = parse_results_filename(file)
        label = str(scored["model"].iloc[0]) if len(scored) else model
        answers = _answers(trials, records, scored)
        units = scored.groupby("item", sort=True).agg(
            score=(RULE, "mean"), task=("task", "first"), size=("num_shapes", "first")
        )
        units = units.reset_index().assign(
            unit=lambda u: u["item"].astype(str), rule=RULE, censored=0, refused=0
        )
        runs.append(RunRows(file, prompting, model, label, len(answers), answers, units))
    tests = paired_tests(pd.concat(scored_all, ignore_index=True))
    by_label = {run.label: run.file for run in runs}
    pairs = [(by_label[a], by_label[b], RULE) for a, b in zip(tests["a"], tests["b"], strict=True)]
    return SetRows("canvas", path.name, _items(trials), runs, pairs)


def _items(trials: pd.DataFrame) -> list[dict[str, Any]]:
    """Return the items of the trials: the canvas item is the unit, the task, the number of shapes
    as size, description and few-shot style as variant, the prompt and the gold answer."""
    return [
        {
            "Key": trial["Key"],
            "unit": str(trial["item"]),
            "task": trial["task"],
            "size": trial["num_shapes"],
            "variant": f"{trial['description']} / {trial['fewshot']}",
            "prompt": trial["text"],
            "gold": str(trial["goldresp"]),
            "fields": json_fields(trial, ITEM_FIELDS),
        }
        for trial in trials.to_dict("records")
    ]


def _answers(
    trials: pd.DataFrame, records: list[dict[str, Any]], scored: pd.DataFrame
) -> list[dict[str, Any]]:
    """Return the answers rows of one results file: the reply scored (``scoring.response_text``),
    the answer the strict reader finds, the scores of ``score_rows`` (``scored``)."""
    options = dict(zip(trials["Key"], trials["expectedresp"], strict=True))
    questions = dict(zip(trials["Key"], trials["question"], strict=True))
    scores = {row["Key"]: row for row in scored.to_dict("records")}
    rows = []
    for record in records:
        score = scores.get(record["Key"])
        if score is None:
            continue  # not a trial of the set: the analysis ignores it too
        refused = bool(score["refused"])
        reply = "" if refused else response_text(record)
        rows.append(
            {
                "Key": record["Key"],
                "turn": 0,
                "reply": reply,
                "answer": None
                if refused
                else extract(reply, list(options[record["Key"]]), questions[record["Key"]]),
                "correct": int(score["strict"]),
                "strict": int(score["strict"]),
                "contains": int(score["contains"]),
                "invalid": int(score["invalid"]),
                "scored": 1,
                **reply_fields(record),
            }
        )
    return rows
