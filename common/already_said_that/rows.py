"""Already Said That in the results database (``common.database``): the samples of each set as
items (a conversation each), every turn played as an answer, the conversations as units.

The turns are those of the turn log, judged as the conversation went (``prompts.Conversation``:
``correct``; a wrong or malformed main-task answer ends the conversation); only main-task turns
are ``scored`` (a distractor answered wrong does not end it). A conversation's unit score is
its ``turns`` (those passed before the failing one), censored when it did not fail (it survived,
or the server refused a request), as in ``analysis.paired_survival``. The runs are those of
``report.load_runs``; the pairs those the report tests (``tables.py``): every two models on a
set, in turns (rule ``turns``), and each model on a set against its own distractorless run of the
same pairing (the same word samples and random streams), in main-task turns (rule
``main_turns``: a distractor turn cannot end a conversation).
"""

import itertools
from pathlib import Path
from typing import Any

from common.already_said_that.analysis import FAILURES
from common.already_said_that.generate import load_set
from common.already_said_that.report import load_runs
from common.already_said_that.wording import wording_of
from common.database import Roots, RunRows, SetRows, reply_fields
from common.errors import DataError, UserError

RULE = "turns"  # the units' rule: turns passed before the failing one
MAIN_RULE = "main_turns"  # the same in main-task turns: how the variants are compared
BASELINE = "distractorless"  # the variant each model's other variants are compared with


def sets(roots: Roots) -> list[SetRows]:
    """Return every set with runs under results/already_said_that/ as rows (the prompt from the
    set's data in data/already_said_that/<set>/, when it is there)."""
    results = roots.results / "already_said_that"
    runs = load_runs(results) if results.is_dir() else []
    by_set: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        by_set.setdefault(run["set"], []).append(run)
    baseline = {(run["model"], run["pairing"]): run["results"] for run in runs if run["variant"] == BASELINE}
    found = []
    for set_name, group in by_set.items():
        rows = SetRows(
            "already_said_that", set_name, _items(group, roots.data / "already_said_that" / set_name)
        )
        rows.runs = [_run(run) for run in group]
        rows.pairs = [(a["results"], b["results"], RULE) for a, b in itertools.combinations(group, 2)]
        rows.pairs += [
            (r["results"], baseline[r["model"], r["pairing"]], MAIN_RULE)
            for r in group
            if r["variant"] != BASELINE and (r["model"], r["pairing"]) in baseline
        ]
        found.append(rows)
    return found


def _items(group: list[dict[str, Any]], data: Path) -> list[dict[str, Any]]:
    """Return the items of a set: one per conversation played (the sample); its prompt is the
    task's system message in the set's wording when the set's data (and, for the original's
    wording, its texts) are at hand."""
    try:
        found = load_set(data)
        variant = found.config.get("variant")
        prompt = wording_of(found.config, found.example, found.has_distractors).system
    except (DataError, OSError):
        prompt, variant = None, None
    except UserError:  # the original's texts are not fetched (make asat-original)
        prompt = None
    keys = sorted({int(key) for run in group for key in run["frame"]["Key"]})
    return [
        {
            "Key": key,
            "unit": str(key),
            "task": variant or group[0]["set"],
            "variant": group[0]["set"],
            "prompt": prompt,
        }
        for key in keys
    ]


def _run(run: dict[str, Any]) -> RunRows:
    """Return one run (a results file and its turn log) as rows: a row per turn played, a unit per
    conversation."""
    frame = run["frame"]
    failed = frame["ended"].isin(FAILURES) & ~frame["refused"]  # as analysis.paired_survival reads it
    units = [
        {
            "unit": str(key),
            "rule": rule,
            "score": float(turns),
            "censored": int(not fail),
            "refused": int(refused),
        }
        for rule in (RULE, MAIN_RULE)
        for key, turns, fail, refused in zip(frame["Key"], frame[rule], failed, frame["refused"], strict=True)
    ]
    answers = [_answer(line) for line in run["turns"]]
    prompting = run["results"].name.split("___", 1)[0]
    label = f"{run['model']} ({run['set']})"  # the report's tables name a run by its set and model
    return RunRows(run["results"], prompting, run["model"], label, len(frame), answers, units)


def _answer(line: dict[str, Any]) -> dict[str, Any]:
    """Return the answers row of one turn line: what was asked and its gold answer, the reply,
    the answer read, whether it was right; only main-task turns are scored."""
    refused = "refused" in line
    return {
        "Key": line["Key"],
        "turn": line["turn"],
        "question": line["message"],
        "expected": line["gold"],
        "reply": "" if refused else line.get("reply"),
        "answer": line.get("answer"),
        "correct": None if refused else int(bool(line.get("correct"))),
        "invalid": int(bool(line.get("violation"))),
        "scored": int(line["kind"] == "main" and not refused),
        **reply_fields(line),
    }
