"""The items of a blocks set: one per test problem and view of a prompts file, what a model is asked.

A set's data directory (``data/blocks/<set>/``) holds ``problems/`` (problem files and
``manifest.json``) and ``prompts/<prompting>___<nl|pddl>___<view>.jsonl``
(``common.blocks.generate.write_prompts``). The set ``released`` (the paper's prompts of the
release's own problems) keeps no problems: its problems are the release's. An item's Key is a
hash of its problem id, view and prompt texts (``prompt_key``), so an answer is never paired
with a prompt that changed since it was asked.
"""

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from common.blocks.planner import optimal_length
from common.blocks.problems import Problem, load_problems
from common.blocks.prompts import PARTS
from common.errors import DataError
from common.jsonl import read_jsonl
from common.pictures.modality import TEXT, modalities_of
from common.pictures.store import marked_names
from common.results import SEPARATOR

EXACT_LENGTH_UP_TO = 10  # items; larger problems get no optimal length unless their file has one
RELEASED = "released"  # the set of the paper's prompts for the release's problems


def prompts_files(data_dir: str | Path) -> list[Path]:
    """Return the prompts files of a set's data directory, sorted by name."""
    found = sorted(Path(data_dir).glob(f"prompts/*{SEPARATOR}*{SEPARATOR}*.jsonl"))
    return [path for path in found if prompts_name(path)[1] in PARTS]


def prompts_name(path: str | Path) -> tuple[str, str, str]:
    """Return ``(prompting, prompt type, view)`` of a prompts file ``<prompting>___<type>___<view>.jsonl``
    (empty strings for a name of another shape)."""
    parts = Path(path).name.removesuffix(".jsonl").split(SEPARATOR)
    return (parts[0], parts[1], parts[2]) if len(parts) == 3 else ("", "", "")


def problems_dir(data_dir: str | Path) -> Path:
    """Return the problems directory of a set: its ``problems/``, or for ``released`` (which
    has none) the release's problems."""
    data_dir = Path(data_dir)
    own = data_dir / "problems"
    if own.is_dir() or data_dir.name != RELEASED:
        return own
    from common.blocks.release import problems_dir as released

    return released()


def problems_path(prompts: str | Path, problem_path: str | Path | None = None) -> Path:
    """Return the problems directory of a prompts file: ``problem_path`` if given, else its set's
    (``problems_dir`` of the directory above the prompts file's ``prompts/``)."""
    return Path(problem_path) if problem_path else problems_dir(Path(prompts).parent.parent)


def set_modalities(data_dir: str | Path) -> list[str]:
    """Return the modalities a set's prompts are in: its problems' manifest's ``modalities``
    (written from its config's ``modality``), text for a set without."""
    manifest = Path(data_dir) / "problems" / "manifest.json"
    listed = (
        json.loads(manifest.read_text(encoding="utf-8")).get("modalities") if manifest.is_file() else None
    )
    return modalities_of(listed or TEXT)


def view_order(data_dir: str | Path) -> list[str]:
    """Return the views of a generated set in its manifest's order ([] without a manifest)."""
    manifest = Path(data_dir) / "problems" / "manifest.json"
    return json.loads(manifest.read_text(encoding="utf-8")).get("views", []) if manifest.is_file() else []


def load_items(
    prompts_path: str | Path,
    problems: str | Path | Mapping[str, Problem],
    prompt_type: str,
    modality: str = TEXT,
) -> list[dict[str, Any]]:
    """Return one item per (test problem, view) of a prompts file, in file order.

    ``problems`` is a problems directory or the problems already loaded, by id. An item has
    ``Key``, ``id``, ``view``, ``prompting``, ``texts`` (part -> prompt), ``problem`` (the
    ``View``) and ``optimal_length`` (from the problem file, else computed up to
    ``EXACT_LENGTH_UP_TO`` items, else None). In a picture ``modality`` the texts are that
    modality's (with the markers of its pictures) and the item also has ``modality``, ``images``
    (the names of the pictures its prompts show) and ``image_dir`` (the set's ``images/``); its
    Key is still the text prompts', so the items of every modality pair. Raises DataError naming
    the file for prompts of another type, a missing part or modality, or an unknown problem.
    """
    prompts_path = Path(prompts_path)
    where_problems = problems if isinstance(problems, str | Path) else "the set's problems"
    by_id = {p.id: p for p in load_problems(problems)} if isinstance(problems, str | Path) else problems
    items: dict[tuple[str, str], dict[str, Any]] = {}
    for number, record in enumerate(read_jsonl(prompts_path), start=1):
        where = f"{prompts_path}:{number}"
        if record.get("prompt_type") != prompt_type:
            raise DataError(
                f"{where}: a {record.get('prompt_type')!r} prompt; this run needs "
                f"{prompt_type!r} prompts (generate_prompts.py --prompt-type {prompt_type})"
            )
        if record["id"] not in by_id:
            raise DataError(f"{where}: problem {record['id']!r} is not in {where_problems}")
        key = (record["id"], record["view"])
        if key not in items:
            items[key] = _item(by_id[record["id"]], record)
        items[key]["texts"][record["part"]] = record["text"]
        if modality != TEXT:
            if modality not in record.get("modalities", {}):
                raise DataError(
                    f"{where}: no {modality!r} prompt (the set's modalities are its config's `modality`; "
                    "generate the set again after adding it)"
                )
            items[key].setdefault("shown", {})[record["part"]] = record["modalities"][modality]
    for (pid, view_name), item in items.items():
        missing = [part for part in PARTS[prompt_type] if part not in item["texts"]]
        if missing:
            raise DataError(f"{prompts_path}: problem {pid} (view {view_name}) has no {missing[0]!r} prompt")
        item["Key"] = prompt_key(pid, view_name, [item["texts"][part] for part in PARTS[prompt_type]])
        if modality != TEXT:
            item["texts"] = item.pop("shown")
            names = [name for part in PARTS[prompt_type] for name in marked_names(item["texts"][part])]
            item.update(
                modality=modality, images=list(dict.fromkeys(names)), image_dir=images_dir(prompts_path)
            )
    return [{"Key": item.pop("Key"), **item} for item in items.values()]


def _item(problem: Problem, record: dict[str, Any]) -> dict[str, Any]:
    """Return a new item of a prompts record (its texts still to add): the problem's view and
    its optimal plan length (stored, else computed for small problems)."""
    view = problem.view(record["view"])
    length = problem.extra.get("optimal_plan_length", {}).get(record["view"])
    if length is None and len(view.items) <= EXACT_LENGTH_UP_TO:
        length = optimal_length(view.init_board, view.goal)
    return {
        "id": record["id"],
        "view": record["view"],
        "prompting": record["prompting"],
        "texts": {},
        "problem": view,
        "optimal_length": length,
    }


def images_dir(prompts: str | Path) -> Path:
    """Return the picture directory of a prompts file's set: ``images/`` beside ``prompts/``."""
    return Path(prompts).parent.parent / "images"


def prompt_key(pid: str, view: str, texts: Sequence[str]) -> int:
    """Return the results Key of a problem's prompts: the first 60 bits of the SHA-256 of the id,
    the view and the texts, as a non-negative integer (fits JSON numbers and int64)."""
    digest = hashlib.sha256("\0".join([pid, view, *texts]).encode("utf-8")).hexdigest()
    return int(digest[:15], 16)
