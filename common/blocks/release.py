"""Read the CogSci 2022 release (data/cogsci22_blocks): raw model outputs and BFS plan files.

Layout (see the release README): ``dataset/simple_stack/problems/`` (problem files and
``plans/<view>/problem_<id>.json``), ``nl_plans/<view>/collated.json`` (GPT-Neo) and
``codex_translations/<view>/collated.json`` (Codex + planner). Plans in the release are
pyperplan's output: a list whose items are a name (move it to the table) or ``[item, dest]``,
in PDDL names.
"""

import json
from pathlib import Path
from typing import Any

from common import paths
from common.blocks.nlplan import Step
from common.blocks.pddl import object_key
from common.blocks.state import Move
from common.errors import DataError

RELEASE = paths.DATA / "cogsci22_blocks"
VIEWS = ("one", "two", "all")
METHOD_DIRS = {"gpt": "nl_plans", "codex": "codex_translations"}
RECORD_KEYS = {
    "gpt": ("id", "lm_plan", "succeed"),
    "codex": ("id", "init_res", "goal_res", "plan", "succeed"),
}


def problems_dir(root: str | Path = RELEASE) -> Path:
    """Return the directory of the released problem files."""
    return Path(root) / "dataset" / "simple_stack" / "problems"


def plans_dir(root: str | Path = RELEASE) -> Path:
    """Return the directory of the released plans of the training problems (``<view>/`` inside)."""
    return problems_dir(root) / "plans"


def collated_files(root: str | Path = RELEASE) -> list[Path]:
    """Return the release's raw output files (one per method and view) that re-scoring reads."""
    return [
        Path(root) / METHOD_DIRS[method] / view / "collated.json" for method in METHOD_DIRS for view in VIEWS
    ]


def load_records(method: str, view: str, root: str | Path = RELEASE) -> list[dict[str, Any]]:
    """Return the 100 raw records of ``method`` (gpt or codex) for ``view``, sorted by id.

    Raises FileNotFoundError when the release is missing (run ``make data``) and DataError
    naming the file for a record without the expected keys.
    """
    path = Path(root) / METHOD_DIRS[method] / view / "collated.json"  # as collated_files
    if not path.is_file():
        raise FileNotFoundError(2, "No such file (run `make data`)", str(path))
    records = json.loads(path.read_text(encoding="utf-8"))
    for index, record in enumerate(records):
        missing = [key for key in RECORD_KEYS[method] if key not in record]
        if missing:
            raise DataError(f"{path}: record {index} lacks {', '.join(missing)}")
    return sorted(records, key=lambda record: record["id"])


def planner_steps(plan: list[Any], objects: list[str]) -> list[Step]:
    """Return the Steps of a plan in the release's planner format, names resolved to ``objects``.

    A name that is not an object gives a Step with an ``unknown object`` error.
    """
    names = {object_key(name): name for name in objects}
    steps = []
    for entry in plan:
        item, dest = (entry, None) if isinstance(entry, str) else entry
        text = f"{item} -> {dest or 'table'}"
        unknown = [x for x in (item, dest) if x is not None and object_key(x) not in names]
        if unknown:
            steps.append(Step(text, error=f"unknown object: {unknown[0]!r}"))
        else:
            steps.append(Step(text, Move(names[object_key(item)], names[object_key(dest)] if dest else None)))
    return steps


def training_plan(directory: str | Path, view: str, pid: str, objects: list[str]) -> list[Move]:
    """Return the plan of training problem ``pid`` in ``view`` stored in ``directory`` (laid out
    as the release's ``plans/<view>/problem_<id>.json``) as moves.

    Raises FileNotFoundError if there is no such plan file, DataError if it names unknown items.
    """
    path = Path(directory) / view / f"problem_{pid}.json"
    if not path.is_file():
        raise FileNotFoundError(2, "No such plan file", str(path))
    steps = planner_steps(json.loads(path.read_text(encoding="utf-8")), objects)
    bad = [step.error for step in steps if step.move is None]
    if bad:
        raise DataError(f"{path}: {bad[0]}")
    return [step.move for step in steps if step.move is not None]
