"""Blocks world in the results database (``common.database``): the prompts of each view as items,
each results file's answers (one a problem, or one a feedback round), the problems as units.

A results file is re-scored from its raw answers as the analysis does (``analysis.rescore_inputs``
and ``scoring.rescore``), or read as recorded when its prompts are not at hand; a record's
verdicts are those of ``analysis.record_row`` (a refused problem fails both rules). The runs are
named and the pairs chosen by ``analysis.run_label`` and ``analysis.paired_tests``, per view,
under the lenient and the strict rule, as in the report.
"""

from pathlib import Path
from typing import Any

import pandas as pd

from common.blocks import analysis, scoring
from common.blocks.state import relation_english
from common.database import Roots, RunRows, SetRows, joined_text, reply_fields
from common.results import find_results_files, parse_results_filename, read_results

RULES = ("lenient", "strict")


def sets(roots: Roots) -> list[SetRows]:
    """Return every blocks results set results/blocks/<set>/ (one with ``<nl|pddl>___<view>``
    directories of results files) as rows."""
    results = roots.results / "blocks"
    found = sorted(d for d in results.iterdir() if d.is_dir()) if results.is_dir() else []
    return [set_rows(d) for d in found if analysis.run_directories(d)]


def set_rows(path: Path) -> SetRows:
    """Return the rows of the blocks results set ``path``: items, runs, and the paired tests."""
    items: dict[int, dict[str, Any]] = {}
    runs, rows = [], []
    for directory in analysis.run_directories(path):
        prefix, view = directory.name.split("___", 1)
        method = analysis.METHODS[prefix]
        for file in find_results_files(directory):
            prompting, model = parse_results_filename(file)
            records = _records(file, prefix, items, method)
            verdicts = [analysis.record_row(r, method, view, prompting, model, file) for r in records]
            rows += verdicts
            label = analysis.run_label(method, prompting, model)
            answers = [a for r, v in zip(records, verdicts, strict=True) for a in _answers(r, v)]
            run = RunRows(file, prompting, model, label, len(records), answers, _units(records, verdicts))
            run.method, run.view = method, view
            runs.append(run)
    return SetRows("blocks", path.name, list(items.values()), runs, _pairs(runs, rows))


def _records(file: Path, prefix: str, items: dict[int, dict[str, Any]], method: str) -> list[dict[str, Any]]:
    """Return the records of a results file, re-scored when its prompts are at hand (as
    ``analysis.load_set`` reads them), and add the items they answer to ``items`` (by Key)."""
    found = analysis.rescore_inputs(file, prefix)
    if found is None:  # scores as recorded; the item is what the record says of its problem
        records = read_results(file)
        for r in records:
            items.setdefault(
                r["Key"], _item(r["Key"], r.get("id"), method, r.get("view"), r.get("optimal_length"))
            )
        return records
    prompts, objects = found
    for item in prompts:
        if item["Key"] not in items:
            goal = "; ".join(relation_english(relation) for relation in item["problem"].goal)
            items[item["Key"]] = _item(
                item["Key"], item["id"], method, item["view"], item["optimal_length"],
                prompt="\n\n".join(item["texts"].values()), gold=goal,
            )  # fmt: skip
    return scoring.rescore(read_results(file), prompts, prefix, objects)


def _item(key: int, pid: Any, method: str, view: Any, length: Any, prompt: Any = None, gold: Any = None):
    """Return an items row: the problem is the unit, the method the task, the optimal plan length
    the size, the view the variant; the gold is the goal to reach."""
    gold = f"{gold} (optimal plan: {length} moves)" if gold is not None and length is not None else gold
    return {
        "Key": key, "unit": str(pid), "task": method, "size": length, "variant": view,
        "prompt": prompt, "gold": gold,
    }  # fmt: skip


def _answers(record: dict[str, Any], verdict: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the answers rows of one record: one row (turn 0), or with feedback rounds one per
    round asked (``turn`` the round; its verdicts those after that round). Only the last row is
    ``scored``: it carries the record's verdicts."""
    rounds = (
        [record.get("raw"), *record.get("feedback_raw", [])]
        if record.get("feedback")
        else [record.get("raw")]
    )
    plan = record.get("plan")
    common = {"Key": record["Key"], "invalid": int(verdict["invalid"]), **reply_fields(record)}
    rows = []
    for turn, raw in enumerate(rounds):
        last = turn == len(rounds) - 1
        lenient, strict = (
            (verdict["lenient"], verdict["strict"])
            if last
            else (record["lenient_by_round"][turn], record["strict_by_round"][turn])
        )
        rows.append(
            {
                **common,
                "turn": turn,
                "reply": "" if verdict["refused"] else joined_text(raw) or "",
                "answer": "; ".join(plan) if last and plan else None,
                "correct": int(bool(lenient)),
                "lenient": int(bool(lenient)),
                "strict": int(bool(strict)),
                "scored": int(last),
            }
        )
    return rows


def _units(records: list[dict[str, Any]], verdicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the units of one results file: each problem's verdict under each rule (its first
    record, as the paired tests take it)."""
    units, seen = [], set()
    for record, verdict in zip(records, verdicts, strict=True):
        if verdict["id"] is None or (verdict["id"], verdict["view"]) in seen:
            continue
        seen.add((verdict["id"], verdict["view"]))
        for rule in RULES:
            units.append(
                {
                    "unit": str(verdict["id"]),
                    "rule": rule,
                    "score": float(verdict[rule]),
                    "censored": 0,
                    "refused": int(bool(verdict["refused"])),
                    "task": verdict["method"],
                    "size": record.get("optimal_length"),
                }
            )
    return units


def _pairs(runs: list[RunRows], rows: list[dict[str, Any]]) -> list[tuple[Path, Path, str]]:
    """Return the report's paired tests (``analysis.paired_tests``) as (file a, file b, rule)."""
    if not rows:
        return []
    tests = analysis.paired_tests(pd.DataFrame(rows))
    files = {(run.view, run.label): run.file for run in runs}
    return [
        (files[(view, a)], files[(view, b)], rule)
        for view, a, b in zip(tests["view"], tests["a"], tests["b"], strict=True)
        for rule in RULES
    ]
