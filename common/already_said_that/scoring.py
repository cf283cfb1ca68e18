"""Already Said That's answers in the results database: each run read once, as it was judged.

A conversation is judged as it is played (``prompts.Conversation``: a wrong or malformed
main-task answer ends it), so its turns cannot be judged again afterwards: the game a model
played depends on every verdict before. Scoring a run is reading it: its results file (one
record per conversation: how it ended, its turns, distractors, violations...) and its turn log
(one line per turn asked), into answers rows of the one schema:

- turn 0 of each conversation, the conversation itself: ``answer`` how it ended, ``correct``
  whether it survived, ``detail`` the record's conversation fields as JSON (not ``scored``);
- one row per turn asked (turn 1, 2, ...): the question and its gold answer, the reply, the
  answer read, ``correct``, ``invalid`` (a format violation), ``detail`` the question's type
  ("main: new word", "distractor: first_letters", ...) as JSON with a distractor's question id
  and whether its gold is the original's wrong one; main-task turns are ``scored`` (a distractor
  answered wrong does not end a conversation);
- the conversations as units: ``turns`` (passed before the failing one) and ``main_turns`` (the
  same in main-task turns), censored when the conversation did not fail (it survived, or the
  server refused a request).

The paired tests (``pairs``): every two models on a set in turns, and each model on a set against
its own ``distractorless`` run of the same pairing (word samples and random streams) in
main-task turns.
"""

from __future__ import annotations

import functools
import itertools
import json
from pathlib import Path
from typing import Any

import pandas as pd

from common.jsonl import parse_lines, sha256_file
from common.results import (
    SUFFIX,
    draw_of,
    find_results_files,
    note_read,
    parse_results_filename,
    read_results,
)
from common.scored import ScoredRun, reply_columns
from common.suite import SetRef

ANSWER_ARRAYS = ("correct", "refused", "detail")  # the answers' columns its section reads (report.runs_of)
COUNT_TURNS = True  # its section reads the turns' rows counted by those columns (report.runs_of)
RULE = "turns"  # the units' rule: turns passed before the failing one
MAIN_RULE = "main_turns"  # the same in main-task turns: how the variants are compared
BASELINE = "distractorless"  # the variant each model's other variants are compared with
PROMPTING = "direct"  # the original's "generation/direct"
FAILURES = ("false_positive", "false_negative", "violation")
CONVERSATION_FIELDS = (
    "turns", "distractors", "distractors_correct", "distractor_accuracy", "violations", "violation_occurred",
    "asked", "ended", "refused", "refused_turns", "wording", "finish_reason", "variant", "pairing", "sample",
)  # fmt: skip


def detect(path: Path) -> bool:
    """Return whether ``path`` is an Already Said That set directory (a manifest pinning
    ``samples.jsonl``) or a directory of its runs (a results file with its turn log beside it)."""
    try:
        manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
        if isinstance(manifest, dict) and "samples.jsonl" in (manifest.get("sha256") or {}):
            return True
    except (OSError, ValueError):
        pass
    return path.is_dir() and bool(_with_turns(find_results_files(path)))


def turns_path(results: Path) -> Path:
    """Return the turn log beside a results file (``<prompting>___<model>___turns.jsonl``)."""
    return results.with_name(results.name.removesuffix(SUFFIX) + "___turns.jsonl")


def _with_turns(files: list[Path]) -> list[Path]:
    """Return the results files that have their turn log beside them (the suite's runs)."""
    return [f for f in files if turns_path(f).is_file()]


def data_fingerprint(ref: SetRef) -> str:
    """Return the fingerprint of a set: its manifest's SHA-256 (it pins every file of the set);
    "" for a set whose data is not at hand (its runs are still read)."""
    manifest = ref.data / "manifest.json"
    return sha256_file(manifest) if manifest.is_file() else ""


def results_files(ref: SetRef) -> list[Path]:
    """Return the set's runs: its results files that have their turn log beside them, sorted."""
    return _with_turns(find_results_files(ref.results))


def items_frame(ref: SetRef) -> pd.DataFrame:
    """Return the set's items: one per word sample (a conversation), its prompt the task's system
    message in the set's wording when the set's data is at hand, its task the set's variant."""
    from common.already_said_that.generate import load_set
    from common.already_said_that.wording import wording_of
    from common.errors import DataError, UserError

    try:
        found = load_set(ref.data)
    except (DataError, OSError):
        return pd.DataFrame(columns=["Key", "unit", "task", "variant", "prompt"])
    keys = [int(sample["sample"]) for sample in found.samples]
    try:  # the system message in the set's wording (the original's: its texts, when fetched)
        prompt = wording_of(found.config, found.example, found.has_distractors).system
    except UserError:
        prompt = None
    return pd.DataFrame(
        {
            "Key": keys,
            "unit": [str(key) for key in keys],
            "task": found.config.get("variant") or ref.name,
            "variant": ref.name,
            "prompt": prompt,
        }
    )


def score_file(ref: SetRef, file: Path, items: pd.DataFrame) -> ScoredRun:
    """Return a run of the set read as it was judged (module docstring): its conversations and
    their turns as answers, its conversations as units."""
    prompting, model = parse_results_filename(file)
    records = read_results(file, all_draws=True)
    name = model if prompting == PROMPTING else f"{model} ({prompting})"
    turns = _turn_lines(turns_path(file), {r["Key"] for r in records})
    answers = pd.concat([_conversation_rows(records), _turn_rows(turns)], ignore_index=True)
    first = [record for record in records if not draw_of(record)]
    return ScoredRun(
        prompting=prompting,
        model=model,
        label=f"{name} ({ref.name})",  # the report's tables name a run by its set and model
        records=len(first),
        answers=answers,
        units=pd.DataFrame(_units(first)),
        attributes=run_attributes(ref.name, first[0] if first else None),
    )


def _conversation_rows(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Return the turn-0 rows of the conversation records."""
    refused = [bool(r.get("refused")) for r in records]
    ended = [r.get("ended") for r in records]
    return pd.DataFrame(
        {
            "Key": [r["Key"] for r in records],
            "draw": [draw_of(r) for r in records],
            "turn": 0,
            "answer": ["refused" if x else e for x, e in zip(refused, ended, strict=True)],
            "correct": [None if x else int(e == "survived") for x, e in zip(refused, ended, strict=True)],
            "invalid": [int(bool(r.get("violation_occurred"))) for r in records],
            "scored": 0,
            "detail": [
                json.dumps({f: r[f] for f in CONVERSATION_FIELDS if f in r}, sort_keys=True) for r in records
            ],
            **reply_columns(records),
        }
    )


def _turn_rows(lines: list[dict[str, Any]]) -> pd.DataFrame:
    """Return the rows of the turn lines: what was asked and its gold answer, the reply, the answer
    read, whether it was right, the question's type; only main-task turns are scored."""
    refused = ["refused" in line for line in lines]
    pairs_ = list(zip(refused, lines, strict=True))
    return pd.DataFrame(
        {
            "Key": [line["Key"] for line in lines],
            "draw": [line.get("draw") or 0 for line in lines],
            "turn": [line["turn"] for line in lines],
            "question": [line["message"] for line in lines],
            "expected": [line["gold"] for line in lines],
            "reply": ["" if x else line.get("reply") for x, line in pairs_],
            "answer": [line.get("answer") for line in lines],
            "correct": [None if x else int(bool(line.get("correct"))) for x, line in pairs_],
            "invalid": [int(bool(line.get("violation"))) for line in lines],
            "scored": [int(line["kind"] == "main" and not x) for x, line in pairs_],
            "detail": [_turn_detail(line) for line in lines],
            **reply_columns(lines),
        }
    )


def _turn_detail(line: dict[str, Any]) -> str:
    """Return the ``detail`` of a turn row, as JSON: the question's type (``question_type``), and
    for a distractor its question's id and whether its gold answer is the original's wrong one."""
    return _detail_json(question_type(line), line.get("question_id") or None, bool(line.get("wrong_gold")))


@functools.lru_cache(maxsize=16384)
def _detail_json(kind: str, question_id: Any, wrong_gold: bool) -> str:
    """The JSON of a turn's detail, made once per distinct detail (a run repeats a few hundred)."""
    detail: dict[str, Any] = {"type": kind}
    if question_id:
        detail["question_id"] = question_id
    if wrong_gold:
        detail["wrong_gold"] = True
    return json.dumps(detail, sort_keys=True)


def question_type(line: dict[str, Any]) -> str:
    """Return what a turn asked: "distractor: <source>", or for a main-task turn "main: new
    word", "main: repeated word" or "main: adversarial word"."""
    if line["kind"] == "distractor":
        return f"distractor: {line['source']}"
    if line.get("adversarial"):
        return "main: adversarial word"
    return "main: repeated word" if line["gold"] == "yes" else "main: new word"


def _turn_lines(path: Path, keys: set[Any]) -> list[dict[str, Any]]:
    """Return the turn log's lines of the conversations ``keys``, every draw, as ``run.read_turns``
    keeps them (each conversation's last played block); the whole file parsed at once when every
    line is whole (else line by line, which ignores a torn last line)."""
    from common.already_said_that.run import read_turns

    lines = parse_lines(path.read_bytes()) if path.is_file() else []
    if lines is None:
        return read_turns(path, keys, all_draws=True)
    note_read(path, len(lines))
    blocks: dict[tuple[Any, int], list[dict[str, Any]]] = {}
    for line in lines:
        play = (line["Key"], line.get("draw") or 0)
        if line["turn"] == 1 or play not in blocks:
            blocks[play] = []
        blocks[play].append(line)
    return [line for (key, _), block in blocks.items() if key in keys for line in block]


def _units(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the units of a run's first conversations: turns and main-task turns passed, censored
    when the conversation did not fail (it survived, or the server refused it)."""
    units = []
    for record in records:
        refused = bool(record.get("refused"))
        failed = record.get("ended") in FAILURES and not refused
        turns = int(record["turns"])
        for rule, score in ((RULE, turns), (MAIN_RULE, turns - int(record["distractors"]))):
            units.append(
                {
                    "unit": str(record["Key"]),
                    "rule": rule,
                    "score": float(score),
                    "censored": int(not failed),
                    "refused": int(refused),
                }
            )
    return units


def pairs(runs: pd.DataFrame, units: pd.DataFrame) -> list[tuple[int, int, str]]:
    """Return the paired tests of the suite's runs (every set's): every two runs of a set in turns,
    and each run of a variant against the distractorless run of the same model and pairing in
    main-task turns; in the report's order (``run_order``)."""
    runs = run_order(runs)
    found = []
    for _, group in runs.groupby("set_name", sort=False):
        found += [(a, b, RULE) for a, b in itertools.combinations(group["run_id"].tolist(), 2)]
    attributes = dict(zip(runs["run_id"], runs["attributes"], strict=True))
    baseline = {
        (run.model, attributes[run.run_id]["pairing"]): run.run_id
        for run in runs.itertuples()
        if attributes[run.run_id]["variant"] == BASELINE
    }
    for run in runs.itertuples():
        other = baseline.get((run.model, attributes[run.run_id]["pairing"]))
        if attributes[run.run_id]["variant"] != BASELINE and other is not None:
            found.append((run.run_id, other, MAIN_RULE))
    return found


VARIANT_ORDER = (
    "which_is_heavier",
    "first_letters",
    "reverse_sort",
    "ambiguous_sentences",
    "mixed",
    "distractorless",
)
MODEL_ORDER = ("oracle", "random", "human")


def run_order(runs: pd.DataFrame) -> pd.DataFrame:
    """Return ``runs`` (rows of the database's ``runs``) in the report's order: by set (the
    variants in ``VARIANT_ORDER`` first), then by model (``MODEL_ORDER`` first), then results file."""

    def rank(name: str, order: tuple[str, ...]) -> tuple[int, str]:
        return (order.index(name) if name in order else len(order), name)

    names = [r.model if r.prompting == PROMPTING else f"{r.model} ({r.prompting})" for r in runs.itertuples()]
    keys = [
        (rank(s, VARIANT_ORDER), rank(n, MODEL_ORDER), f)
        for s, n, f in zip(runs["set_name"], names, runs["results_file"], strict=True)
    ]
    order = sorted(range(len(runs)), key=keys.__getitem__)
    return runs.iloc[order].reset_index(drop=True)


def run_attributes(set_name: str, first: dict[str, Any] | None) -> dict[str, str]:
    """Return the ``variant`` and ``pairing`` of a run from its first conversation record (runs of
    the same pairing played the same word samples and random streams); records written before
    they held a pairing get one from the set's name (the shipped sets: original_* or not)."""
    first = first or {}
    fallback = "original" if set_name.startswith("original_") else "wordnet"
    return {
        "variant": str(first.get("variant") or set_name),
        "pairing": str(first.get("pairing") or fallback),
    }
