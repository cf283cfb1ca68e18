"""The blocks suite's score stage (``common.suite``): a set's items, and each results file read
once and scored into the rows of the results database (``common.database``).

``items_frame``: the prompts of a set's views and methods as items (one per test problem and
view of a prompts file); ``score_file``: every record of a results file scored again from its raw
completions by the one grader (``grade.score_record``) for the items of the prompts its run
asked, or taken as recorded, with a run note, when those prompts are not at hand; ``pairs``: the
paired tests the report prints. What the analysis reads beyond the database's columns is in the
items' ``fields`` (whether the goal held at the start, the view's rank in the set) and, for an
answer scored as recorded, in its ``detail`` (what the record says of its problem).
"""

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import pandas as pd

from common import paths
from common.blocks import items as set_items
from common.blocks.grade import score_record
from common.blocks.picture import name_of
from common.blocks.problems import load_problems
from common.blocks.runs import (
    AS_RECORDED,
    FACT_FIELDS,
    METHODS,
    RULES,
    directory_parts,
    file_name,
    run_label,
    view_order,
)
from common.blocks.state import goal_holds, relation_english
from common.errors import DataError
from common.pictures.modality import TEXT, record_modality, shows_pictures
from common.results import find_results_files, metadata_path, parse_results_filename, read_results, run_stamps
from common.scored import ScoredRun, joined_text, reply_fields
from common.suite import SetRef

log = logging.getLogger(__name__)

ITEM_COLUMNS = [
    "Key", "unit", "task", "size", "variant", "prompt", "gold", "fields", "image", "prompts", "item", "shown",
]  # fmt: skip
DETAIL_FIELDS = (  # a scored answer's diagnostics kept in its ``detail`` JSON (when not empty)
    "plan_length", "parse_rate", "valid_prefix", "optimality_gap", "first_error", "reason", "unread_facts",
    "rounds_used", "round_errors", "feedback_stopped",
    "succeed",  # a released answer's own verdict (``release_runs``), which the paper's table shows
)  # fmt: skip


def detect(path: str | Path) -> bool:
    """Return whether ``path`` is a blocks set's data directory: it holds prompts files
    (``prompts/<prompting>___<nl|pddl>___<view>.jsonl``) or a generated ``problems/manifest.json``."""
    path = Path(path)
    return bool(set_items.prompts_files(path)) or (path / "problems" / "manifest.json").is_file()


def data_fingerprint(ref: SetRef) -> str:
    """Return the fingerprint of a set's items: the SHA-256 of its prompts files and its problems'
    manifest (names and bytes), which change whenever its problems or prompts do."""
    digest = hashlib.sha256()
    manifest = set_items.problems_dir(ref.data) / "manifest.json"
    for path in [*set_items.prompts_files(ref.data), *([manifest] if manifest.is_file() else [])]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def results_files(ref: SetRef) -> list[Path]:
    """Return the results files of a set: those of its ``<nl|pddl>___<view>`` directories, sorted."""
    if not ref.results.is_dir():
        return []
    directories = sorted(d for d in ref.results.iterdir() if d.is_dir() and directory_parts(d.name))
    return [file for directory in directories for file in find_results_files(directory)]


def items_frame(ref: SetRef) -> pd.DataFrame:
    """Return the items of a set: one row per prompts file's problem and view (``items.load_items``),
    Key, unit (the problem), task (the method), size (the optimal plan length), variant (the
    view), prompt (its texts), gold (the goal, in English, and the optimal length), ``fields``
    (JSON: ``goal_held_initially``, the ``prompting`` and ``prompts`` file, the view's rank in the
    set's manifest) and, in a set shown as pictures, ``image`` (the test problem's picture);
    ``prompts``, ``item`` (the loaded item) and ``shown`` (a picture set's prompts in each picture
    modality: the question of a picture run's answers) serve the scorer only. A prompts
    file that cannot be read, or a set without problems, gives no items (its runs are then
    taken as recorded: ``score_file``)."""
    files = set_items.prompts_files(ref.data)
    problems = _problems(ref) if files else {}
    listed = set_items.view_order(ref.data)
    pictured = [m for m in set_items.set_modalities(ref.data) if shows_pictures(m)]
    rows = []
    for prompts in files if problems else []:
        _, prompt_type, view = set_items.prompts_name(prompts)
        try:
            found = set_items.load_items(prompts, problems, prompt_type)
            shown = {m: set_items.load_items(prompts, problems, prompt_type, m) for m in pictured}
        except DataError as exc:
            log.warning("%s: %s; its answers are scored as recorded", paths.shown(prompts), exc)
            continue
        rank = listed.index(view) if view in listed else None
        for index, item in enumerate(found):
            row = _item_row(item, prompt_type, prompts.stem, rank)
            if pictured:  # each prompt as a picture run was asked it; the test problem's picture
                row["shown"] = {m: "\n\n".join(shown[m][index]["texts"].values()) for m in pictured}
                row["image"] = str(set_items.images_dir(prompts) / f"{name_of(item['problem'])}.png")
            rows.append(row)
    frame = pd.DataFrame(rows, columns=ITEM_COLUMNS)
    frame["size"] = pd.Series([row["size"] for row in rows], dtype=object)
    return frame


def _problems(ref: SetRef) -> dict[str, Any]:
    """Return the set's problems by id ({} with a warning when it has none at hand)."""
    directory = set_items.problems_dir(ref.data)
    try:
        return {problem.id: problem for problem in load_problems(directory)}
    except (OSError, DataError) as exc:
        log.warning("%s: no problems (%s); its answers are scored as recorded", ref.key, exc)
        return {}


def _item_row(item: dict[str, Any], prompt_type: str, prompts: str, rank: int | None) -> dict[str, Any]:
    """Return the items row of one loaded item (see ``items_frame``)."""
    view, length = item["problem"], item["optimal_length"]
    goal = "; ".join(relation_english(relation) for relation in view.goal)
    fields = {
        "goal_held_initially": goal_holds(view.init_board, view.goal),
        "prompting": item["prompting"],
        "prompts": prompts,
        "view_rank": rank,
    }
    return {
        "Key": item["Key"],
        "unit": str(item["id"]),
        "task": METHODS[prompt_type],
        "size": length,
        "variant": item["view"],
        "prompt": "\n\n".join(item["texts"].values()),
        "gold": f"{goal} (optimal plan: {length} moves)" if length is not None else goal,
        "fields": json.dumps(fields, sort_keys=True),
        "prompts": prompts,
        "item": item,
    }


def score_file(ref: SetRef, file: Path, items: pd.DataFrame) -> ScoredRun:
    """Return a results file of the set read once and scored: every record (every draw) scored
    again by ``score_record`` for the items of the prompts file its last run asked (its run
    record names it, or an older file's run metadata; the rows of prompts no longer in it are
    left out, with a note), or, when those prompts are not at hand, its verdicts as recorded
    (note ``AS_RECORDED``). The answers are one row per record, or one per feedback round asked
    (``turn``; only the last, which carries the record's verdicts, is ``scored``): ``correct`` is
    the lenient verdict, ``strict`` and the facts' precision and recall are rules of their own, a
    refused problem fails both.
    The units are the problems (draw 0), under both rules."""
    prompt_type, view = directory_parts(file.parent.name)
    method = METHODS[prompt_type]
    prompting, model = parse_results_filename(file)
    records = read_results(file, all_draws=True)
    modality = record_modality(records[0]) if records else TEXT
    prompts, objects = _run_inputs(ref, file, records)
    asked = items[items["prompts"] == prompts] if prompts else items.iloc[:0]
    notes = []
    if asked.empty:
        scored = [(None, record) for record in records]
        notes.append(AS_RECORDED)
    else:
        by_key: dict[Any, list[dict[str, Any]]] = {}
        for record in records:  # a model asked several times has one record per draw of a Key
            by_key.setdefault(record["Key"], []).append(record)
        scored = [
            (item, score_record(item, record, prompt_type, objects))
            for item in asked["item"]
            for record in by_key.get(item["Key"], [])
        ]
        stale = sum(1 for record in records if not record.get("draw")) - sum(
            1 for _, record in scored if not record.get("draw")
        )
        if stale:
            notes.append(
                f"{file_name(file)}: {stale} row(s) answer prompts that are no longer in its prompts file "
                "(regenerated since): left out; a rerun asks them again"
            )
    answers = [row for item, record in scored for row in _answer_rows(item, record)]
    if modality != TEXT and "shown" in asked:  # the prompt as asked, with its pictures' markers
        shown = {
            key: (texts or {}).get(modality) for key, texts in zip(asked["Key"], asked["shown"], strict=True)
        }
        for row in answers:
            row["question"] = shown.get(row["Key"])
    first = [(item, record) for item, record in scored if not record.get("draw")]
    return ScoredRun(
        prompting=prompting,
        model=model,
        label=run_label(method, prompting, model),
        records=len(first),
        answers=pd.DataFrame(answers, columns=_ANSWER_COLUMNS),
        units=_units(first, method),
        method=method,
        view=view,
        modality=modality,
        notes=notes,
        items=_recorded_items(records, method, view) if asked.empty else None,
    )


def _recorded_items(records: list[dict[str, Any]], method: str, view: str) -> pd.DataFrame:
    """Return the items that answers as recorded describe (their prompts not at hand): the
    problem as unit, the method as task, the optimal length as size, the view as variant; no
    ``fields`` (what the analysis reads of such an answer is in its ``detail``)."""
    first = {record["Key"]: record for record in records if not record.get("draw")}
    return pd.DataFrame(
        [
            {
                "Key": key,
                "unit": str(record.get("id")),
                "task": method,
                "size": record.get("optimal_length"),
                "variant": record.get("view", view),
            }
            for key, record in first.items()
        ],
        columns=["Key", "unit", "task", "size", "variant"],
    )


def _run_inputs(ref: SetRef, file: Path, records: list[dict[str, Any]]) -> tuple[str | None, str]:
    """Return ``(prompts, objects)``: the name of the set's prompts file that the results file's
    last run asked (its run record says, ``run_stamps``; a file written before runs recorded
    themselves: its run metadata; None when neither names one of the set's prompts files: released
    results, prompts kept elsewhere) and that run's ``objects`` protocol (the paper's "true" by
    default)."""
    stamps = run_stamps(records)
    try:
        last = (
            stamps[-1] if stamps else json.loads(metadata_path(file).read_text(encoding="utf-8"))["runs"][-1]
        )
        asked = paths.ROOT / last["prompts"]
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None, "true"
    own = ref.data / "prompts" / asked.name
    same = own.is_file() and asked.is_file() and own.resolve() == asked.resolve()
    return (asked.stem if same else None), last.get("objects", "true")


_ANSWER_COLUMNS = [
    "Key", "draw", "turn", "question", "reply", "reasoning", "answer", "correct", *RULES[1:], *FACT_FIELDS,
    "invalid",
    "scored", "refused", "error", "truncated", "prompt_tokens", "completion_tokens", "reasoning_tokens",
    "finish_reason", "detail",
]  # fmt: skip


def _verdicts(record: dict[str, Any]) -> dict[str, bool]:
    """Return a scored record's verdicts: lenient and strict (a refused problem fails both) and
    invalid (an answer with no usable plan or facts; a refused problem is not invalid)."""
    refused = bool(record.get("refused"))
    return {
        "lenient": bool(record.get("lenient")) and not refused,
        "strict": bool(record.get("strict")) and not refused,
        "invalid": bool(record.get("error")) and not refused,
    }


def _answer_rows(item: dict[str, Any] | None, record: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the answers rows of one scored record (``score_file``): one per feedback round
    asked (its verdicts those after that round: ``lenient_by_round``), the last one ``scored``,
    with the record's answer (its plan), fact measures and ``detail``."""
    verdicts = _verdicts(record)
    rounds = (
        [record.get("raw"), *record.get("feedback_raw", [])]
        if record.get("feedback")
        else [record.get("raw")]
    )
    common = {"Key": record["Key"], "draw": int(record.get("draw") or 0), "invalid": int(verdicts["invalid"])}
    common.update(reply_fields(record))
    rows = []
    for turn, raw in enumerate(rounds):
        last = turn == len(rounds) - 1
        lenient, strict = (verdicts["lenient"], verdicts["strict"]) if last else _after_round(record, turn)
        row = {
            **common,
            "turn": turn,
            "reply": "" if record.get("refused") else joined_text(raw) or "",
            "correct": float(lenient),
            "strict": float(strict),
            "scored": int(last),
        }
        if last:
            plan = record.get("plan")
            row["answer"] = "; ".join(plan) if plan else None
            row.update({field: record.get(field) for field in FACT_FIELDS})
            row["detail"] = _detail(item, record)
        rows.append(row)
    return rows


def _after_round(record: dict[str, Any], turn: int) -> tuple[bool, bool]:
    """Return the lenient and strict verdicts after feedback round ``turn`` of a record (False
    where the record says nothing of that round)."""
    verdicts = [record.get(f"{rule}_by_round") or [] for rule in RULES]
    return tuple(bool(values[turn]) if turn < len(values) else False for values in verdicts)


def _detail(item: dict[str, Any] | None, record: dict[str, Any]) -> str | None:
    """Return the ``detail`` JSON of a scored answer: its diagnostics (``DETAIL_FIELDS``), the
    feedback rounds it was allowed, and for a record scored as recorded (no item) what it says of
    its problem (``id``, ``optimal_length``, ``goal_held_initially``); None when empty."""
    detail = {field: record[field] for field in DETAIL_FIELDS if record.get(field) not in (None, [], "")}
    if record.get("feedback"):
        detail["feedback"] = record["feedback"]
    if item is None:
        for field in ("id", "optimal_length", "goal_held_initially"):
            if record.get(field) is not None:
                detail[field] = record[field]
    return json.dumps(detail, sort_keys=True, ensure_ascii=False) if detail else None


def _units(first: list[tuple[dict[str, Any] | None, dict[str, Any]]], method: str) -> pd.DataFrame:
    """Return the units of one results file's first answers: each problem's verdict under each
    rule (its first record, as the paired tests take it); a record naming no problem has none."""
    rows, seen = [], set()
    for item, record in first:
        pid = item["id"] if item is not None else record.get("id")
        if pid is None or pid in seen:
            continue
        seen.add(pid)
        verdicts = _verdicts(record)
        size = item["optimal_length"] if item is not None else record.get("optimal_length")
        for rule in RULES:
            rows.append(
                (str(pid), rule, float(verdicts[rule]), 0, int(bool(record.get("refused"))), method, size)
            )
    return pd.DataFrame(rows, columns=["unit", "rule", "score", "censored", "refused", "task", "size"])


def pairs(runs: pd.DataFrame, units: pd.DataFrame) -> list[tuple[int, int, str]]:
    """Return the paired tests of the suite's runs, each set's apart (``_set_pairs``): a problem's
    id names different problems in two sets (cogsci_problems' 003 is not scaling's), so two runs
    of different sets share no problem however their ids agree."""
    if "set_name" not in runs:
        return _set_pairs(runs, units)
    return [pair for _, of_set in runs.groupby("set_name", sort=False) for pair in _set_pairs(of_set, units)]


def _set_pairs(runs: pd.DataFrame, units: pd.DataFrame) -> list[tuple[int, int, str]]:
    """Return the paired tests of one set's runs as the report prints them: per view (in the set's
    order), every two runs sharing a problem, in the order of the report's tables (method, then
    prompting, then model), under the lenient rule and then the strict one."""
    by_run = {run_id: set(group["unit"]) for run_id, group in units.groupby("run_id", sort=False)}
    names = [Path(f).parts[-3] for f in runs["results_file"]]
    listed = set_items.view_order(paths.DATA / "blocks" / names[0]) if names else []
    order = {method: rank for rank, method in enumerate(METHODS.values())}
    ranked = runs.assign(_method=runs["method"].map(order)).sort_values(
        ["_method", "prompting", "model"], kind="stable"
    )
    chosen = []
    for view in view_order(list(runs["view"]), listed):
        ids = ranked.loc[ranked["view"] == view, "run_id"].tolist()
        for i, a in enumerate(ids):
            for b in ids[i + 1 :]:
                if by_run.get(a, set()) & by_run.get(b, set()):
                    chosen += [(a, b, rule) for rule in RULES]
    return chosen
