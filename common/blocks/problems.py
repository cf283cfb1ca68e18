"""Problems: an initial board, a goal board and goal views, as in the released JSON files.

A problem file holds the released keys ``init_board``, ``goal_board`` (stacks bottom to top),
``views`` ({name: [relation, ...]} in the original item names) and ``vocab_map`` (original name
-> weird name), plus what this project adds: ``schema_version``, ``content_hash``, ``id``,
``test``, ``view_specs`` (per view: number of constraints and renaming rule),
``optimal_plan_length`` and ``trivial_goal`` per view. Released files (without the additions)
load unchanged; their views use the paper's renaming rule.

Renaming rules of a view: ``none``; ``added`` (the paper's: items named in the constraints after
the first one but not in the first one get their weird name, everywhere in the view); ``all``
(every item gets its weird name).
"""

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common.blocks.state import Relation, rename_board, rename_relation
from common.errors import DataError
from common.jsonl import write_json, write_text

SCHEMA_VERSION = 1
RENAME_RULES = ("none", "added", "all")
DEFAULT_TRAIN_IDS = ("000", "001", "002")  # the paper's few-shot problems (released files lack `test`)
HASHED_KEYS = ("init_board", "goal_board", "views", "vocab_map", "view_specs")


@dataclass(frozen=True)
class View:
    """One planning task: the (renamed) initial board and goal relations, and the renaming used."""

    name: str
    init_board: list[list[str]]
    goal: list[Relation]
    renamed: dict[str, str]

    @property
    def items(self) -> list[str]:
        """Return the (renamed) item names, sorted."""
        return sorted(item for stack in self.init_board for item in stack)


@dataclass
class Problem:
    """A problem as stored in a problem file (see the module docstring)."""

    id: str
    init_board: list[list[str]]
    goal_board: list[list[str]]
    views: dict[str, list[Relation]]
    vocab_map: dict[str, str]
    view_specs: dict[str, dict[str, Any]] = field(default_factory=dict)
    test: bool = True
    extra: dict[str, Any] = field(default_factory=dict)  # optimal lengths, trivial flags, ...

    def __repr__(self) -> str:
        return f"<Problem {self.id}: {len(self.items)} items, views {', '.join(self.views)}>"

    @property
    def items(self) -> list[str]:
        """Return the original item names, sorted."""
        return sorted(item for stack in self.init_board for item in stack)

    def rename_rule(self, view: str) -> str:
        """Return the renaming rule of ``view`` (the paper's ``added`` when not recorded)."""
        return self.view_specs.get(view, {}).get("rename", "added")

    def view(self, name: str) -> View:
        """Return view ``name`` with its renaming applied to the initial board and the goal."""
        if name not in self.views:
            raise DataError(f"problem {self.id}: no view {name!r} (has: {', '.join(self.views)})")
        relations = [tuple(r) for r in self.views[name]]
        renamed = {
            item: self.vocab_map[item]
            for item in renamed_items(relations, self.rename_rule(name), self.items)
        }
        return View(
            name,
            rename_board(self.init_board, renamed),
            [rename_relation(r, renamed) for r in relations],
            renamed,
        )

    def to_json(self) -> dict[str, Any]:
        """Return the file content: released keys first, then the additions and the content hash."""
        record: dict[str, Any] = {
            "init_board": self.init_board,
            "goal_board": self.goal_board,
            "views": {name: [list(r) for r in rel] for name, rel in self.views.items()},
            "vocab_map": self.vocab_map,
            "view_specs": self.view_specs,
        }
        record["content_hash"] = content_hash(record)
        record.update({"schema_version": SCHEMA_VERSION, "id": self.id, "test": self.test, **self.extra})
        return record


def renamed_items(relations: list[Relation], rule: str, items: list[str]) -> list[str]:
    """Return the items a view renames under ``rule`` (sorted)."""
    if rule == "none":
        return []
    if rule == "all":
        return sorted(items)
    if rule != "added":
        raise DataError(f"unknown renaming rule {rule!r} (known: {', '.join(RENAME_RULES)})")
    first = {name for name in relations[0][1:] if name} if relations else set()
    added = {name for relation in relations[1:] for name in relation[1:] if name}
    return sorted(added - first)


def content_hash(record: dict[str, Any]) -> str:
    """Return the SHA-256 (first 16 hex digits) of the problem content (``HASHED_KEYS``)."""
    content = {key: record.get(key) for key in HASHED_KEYS}
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def problem_from_json(data: Any, where: str, default_id: str) -> Problem:
    """Return the Problem in a parsed problem file; raise DataError naming ``where`` if malformed."""
    if not isinstance(data, dict):
        raise DataError(f"{where}: expected a JSON object, got {type(data).__name__}")
    missing = [key for key in ("init_board", "goal_board", "views", "vocab_map") if key not in data]
    if missing:
        raise DataError(f"{where}: missing key(s) {', '.join(missing)}")
    if "content_hash" in data and data["content_hash"] != content_hash(data):
        raise DataError(
            f"{where}: content_hash {data['content_hash']} does not match the content "
            f"({content_hash(data)}): the file was edited; regenerate it"
        )
    known = {*HASHED_KEYS, "content_hash", "schema_version", "id", "test"}
    pid = str(data.get("id", default_id))
    problem = Problem(
        id=pid,
        init_board=data["init_board"],
        goal_board=data["goal_board"],
        views={name: [tuple(r) for r in rel] for name, rel in data["views"].items()},
        vocab_map=data["vocab_map"],
        view_specs=data.get("view_specs") or {},
        test=bool(data.get("test", pid not in DEFAULT_TRAIN_IDS)),
        extra={key: value for key, value in data.items() if key not in known},
    )
    _check(problem, where)
    return problem


def _check(problem: Problem, where: str) -> None:
    """Raise DataError if the boards hold different items or a view names an unknown item."""
    if sorted(problem.items) != sorted(i for s in problem.goal_board for i in s):
        raise DataError(f"{where}: init_board and goal_board hold different items")
    for name, relations in problem.views.items():
        for relation in relations:
            if len(relation) != 3 or relation[0] not in ("bot", "mid", "top"):
                raise DataError(f"{where}: view {name}: malformed relation {list(relation)}")
            unknown = [x for x in relation[1:] if x is not None and x not in problem.items]
            if unknown:
                raise DataError(f"{where}: view {name}: unknown item(s) {unknown}")


def problem_path(directory: str | Path, pid: str) -> Path:
    """Return the path of problem ``pid`` in ``directory`` (``problem_<id>.json``)."""
    return Path(directory) / f"problem_{pid}.json"


def load_problems(directory: str | Path) -> list[Problem]:
    """Return the problems of ``directory`` (files ``problem_*.json``) sorted by id.

    Raises FileNotFoundError for a missing directory and DataError for an empty one or a
    malformed file.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(2, "No such problem directory", str(directory))
    paths = sorted(directory.glob("problem_*.json"))
    if not paths:
        raise DataError(f"{directory}: no problem_*.json files; generate them first")
    problems = []
    for path in paths:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
        problems.append(problem_from_json(data, str(path), path.stem.removeprefix("problem_")))
    return problems


def dump_problem(problem: Problem) -> str:
    """Return the text of a problem file (indented like the released files, newline at the end)."""
    return json.dumps(problem.to_json(), indent=4, ensure_ascii=False) + "\n"


def write_problems(directory: str | Path, problems: list[Problem], about: dict[str, Any]) -> Path:
    """Write each problem to ``directory/problem_<id>.json`` and then ``manifest.json`` (``about``
    plus the ids and content hashes); remove ``problem_*.json`` files of an earlier, larger set.
    Return the manifest path (written last, so it marks a complete set)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    manifest = directory / "manifest.json"
    manifest.unlink(missing_ok=True)
    wanted = {problem_path(directory, p.id).name for p in problems}
    for stale in sorted(directory.glob("problem_*.json")):
        if stale.name not in wanted:
            stale.unlink()
    entries = []
    for problem in problems:
        text = dump_problem(problem)
        write_text(problem_path(directory, problem.id), text)
        digest = json.loads(text)["content_hash"]
        entries.append({"id": problem.id, "test": problem.test, "content_hash": digest})
    write_json(
        manifest, {"schema_version": SCHEMA_VERSION, **about, "count": len(problems), "problems": entries}
    )
    return manifest
