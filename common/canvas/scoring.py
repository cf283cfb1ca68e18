"""Scoring canvas responses: per-trial rows (``score_rows``) and the results database's scorer.

Each response is read by the reader (``reader.extract``: its final answer, as a careful human
grader reads it, or None when it gives none, two live ones, or hedges); that answer against the
gold is the suite's score (``strict``). The seed's ``contains`` rule (``reader.contains``: the
gold answer occurs in the response) is kept beside it for comparison only.

The response scored is the model's last completion (``raw[-1]``: after the runner's re-prompt,
if one was needed), or ``resp`` when a results file has no ``raw``. A record the server refused
(``refused`` set by the shared runner) has no response: it scores 0 and is flagged ``refused``.
"""

import json
from pathlib import Path
from typing import Any

import pandas as pd

from common import paths, suites
from common.canvas.reader import contains, extract
from common.errors import DataError
from common.jsonl import sha256_file
from common.pictures.modality import MODALITIES, TEXT, record_modality
from common.results import find_results_files, parse_results_filename, read_results
from common.scored import ScoredRun, reply_columns
from common.suite import SetRef
from common.trials.data import first_trial, load_testset, trials_path


def response_text(record: dict[str, Any]) -> str:
    """Return the response a results record is scored on: the last raw completion, else ``resp``."""
    raw = record.get("raw")
    if isinstance(raw, list) and raw:
        return str(raw[-1])
    return str(record.get("resp") or "")


COLUMNS = [
    "Key",
    "item",
    "task",
    "description",
    "fewshot",
    "num_shapes",
    "contains",
    "strict",
    "invalid",
    "refused",
    "draw",
    "answer",
]


def score_rows(
    trials: pd.DataFrame, results: list[dict[str, Any]], by_key: dict[Any, dict[str, Any]] | None = None
) -> pd.DataFrame:
    """Return one row per answered trial: ``contains`` and ``strict`` (0/1), ``invalid`` (the strict
    reader found no single answer) and ``refused`` (the server refused the request: no answer,
    both scores 0 and ``invalid`` False; tables count these apart and leave them out of accuracy);
    ``draw`` (which repeated answer: 0 for the first) and ``answer`` (the strict reader's, or None).

    ``trials`` needs Key, item, goldresp, expectedresp, task, description, fewshot, num_shapes
    (and ``question``, when it has it, for the reader).
    Results whose Key is not a trial are ignored. Neither input is modified. ``by_key``: the
    trials' fields by Key (``_by_key``), when the caller has them already.
    """
    by_key = by_key if by_key is not None else _by_key(trials)
    rows = []
    for record in results:
        trial = by_key.get(record["Key"])
        if trial is None:
            continue
        refused = bool(record.get("refused"))
        response = "" if refused else response_text(record)
        found = None if refused else extract(response, list(trial["expectedresp"]), trial.get("question"))
        rows.append(
            {
                "Key": record["Key"],
                "item": trial["item"],
                "task": trial["task"],
                "description": trial["description"],
                "fewshot": trial["fewshot"],
                "num_shapes": trial["num_shapes"],
                "contains": 0 if refused else contains(trial["goldresp"], response),
                "strict": int(found == trial["goldresp"]),
                "invalid": not refused and found is None,
                "refused": refused,
                "draw": int(record.get("draw") or 0),
                "answer": found,
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def _by_key(trials: pd.DataFrame) -> dict[Any, dict[str, Any]]:
    """Return the fields ``score_rows`` reads of each trial (not the prompts' texts), by Key."""
    read = [c for c in ("Key", *TRIAL_FIELDS, "question") if c in trials]
    return {trial["Key"]: trial for trial in trials[read].to_dict("records")}


# ---- the scorer of the results database (``common.database``) ----------------------------------------
# A canvas set's trials as items (the canvas item, whose variants share a canvas and a question, is
# the unit), each results file scored once by ``score_rows``: ``correct`` is the strict reader's verdict.
CANVAS_FIELDS = ("task", "item")  # in every canvas trial: the evidence that a trial set is canvas's
RULE = "strict"  # the units' rule (the paired tests'): the share of an item's variants right
TRIAL_FIELDS = ("item", "task", "description", "fewshot", "num_shapes", "goldresp", "expectedresp")


def detect(testset: str | Path) -> bool:
    """Return whether ``testset`` is a canvas set directory, by content: its trials carry the
    canvas fields (``task``, ``item``), with or without the manifest the generator writes beside
    them. Its own evidence only: a suite whose detect recognises the trial format claims the set
    too, and the resolver gives it to canvas (``common.suites.claimant``)."""
    trial = first_trial(testset)
    return trial is not None and all(field in trial for field in CANVAS_FIELDS)


def data_fingerprint(ref: SetRef) -> str:
    """Return the fingerprint of a canvas set's trials: the trials file's SHA-256."""
    return sha256_file(trials_path(ref.data))


def results_files(ref: SetRef) -> list[Path]:
    """Return the results files of a canvas set (results/canvas/<set>/), sorted by name."""
    return find_results_files(ref.results)


def items_frame(ref: SetRef) -> pd.DataFrame:
    """Return a canvas set's trials as the database's items: the canvas item as unit, the task,
    the number of shapes as size, description and few-shot style as variant, the prompt and the
    gold answer, the other fields as JSON; with the trial fields ``score_rows`` reads (not stored).
    In a picture set also ``image`` (the trial's canvas picture) and ``shown`` (its prompt in each
    picture modality: the question of a picture run's answers; not stored with the items)."""
    trials = load_testset(ref.data)
    missing = [f for f in TRIAL_FIELDS if f not in trials.columns]
    if missing:
        raise DataError(f"{trials_path(ref.data)}: not a canvas set: its trials lack {', '.join(missing)}")
    items = pd.DataFrame(
        {
            "Key": trials["Key"],
            "unit": trials["item"].astype(str),
            "task": trials["task"],
            "size": trials["num_shapes"],
            "variant": trials["description"] + " / " + trials["fewshot"],
            "prompt": trials["text"],
            "gold": trials["goldresp"].astype(str),
        }
    )
    others = sorted(c for c in trials.columns if c not in {"Key", "text", "goldresp"})
    others = [c for c in others if c != "modalities"]  # a picture set's prompts: the answers' questions
    items["fields"] = trials[others].to_json(orient="records", lines=True).rstrip("\n").split("\n")
    if "picture" in trials.columns:  # a picture set: each trial's canvas, stored once in the database
        items["image"] = [
            None if p != p else str(ref.data / "images" / f"{p}.png") for p in trials["picture"]
        ]
        items["shown"] = trials["modalities"]
    # the fields score_rows reads beside the stored ones (not stored: they are in ``fields``)
    extra = [f for f in (*TRIAL_FIELDS, "question") if f not in ("task", "goldresp") and f in trials]
    return pd.concat([items, trials[extra]], axis=1)


def score_file(ref: SetRef, file: Path, items: pd.DataFrame) -> ScoredRun:
    """Return a results file of a canvas set scored by ``score_rows`` (every draw): ``correct`` the
    strict verdict, ``contains`` the seed's rule, the reply read and the answer found; the items
    as units (the share of their variants right, draw 0). A file of another suite's records (an
    Already Said That file copied here) is left out with a note."""
    prompting, model = parse_results_filename(file)
    label = model if prompting == "basic" else f"{model} ({prompting})"
    records = read_results(file, all_draws=True)
    writer = suites.writer_of(records)
    if records and (writer is None or writer.record_fields != suites.get("canvas").record_fields):
        kind = writer.name if writer else "unknown"
        note = f"{paths.shown(file)}: {kind} results, not answers to canvas trials; left out"
        return ScoredRun(prompting, model, label, 0, pd.DataFrame(), pd.DataFrame(), notes=[note])
    trials, by_key = _set_trials(items)
    rows = score_rows(trials, records, by_key)
    keys = set(rows["Key"])
    answered = [r for r in records if r["Key"] in keys]
    modality = record_modality(records[0]) if records else TEXT
    answers = pd.DataFrame(
        {
            "Key": rows["Key"],
            "draw": rows["draw"],
            "turn": 0,
            "question": _shown(items, rows["Key"], modality),
            "reply": [("" if r.get("refused") else response_text(r)) for r in answered],
            "answer": rows["answer"],
            "correct": rows["strict"],
            "contains": rows["contains"],
            "invalid": rows["invalid"].astype(int),
            "scored": 1,
        }
    )
    fields = pd.DataFrame(reply_columns(answered), index=answers.index)
    answers = pd.concat([answers, fields], axis=1)
    first = rows[rows["draw"] == 0]
    units = first.groupby("item", sort=True).agg(
        score=("strict", "mean"), task=("task", "first"), size=("num_shapes", "first")
    )
    units = units.reset_index().assign(unit=lambda u: u["item"].astype(str), rule=RULE, censored=0, refused=0)
    return ScoredRun(
        prompting, model, label, len(first), answers, units.drop(columns="item"), modality=modality
    )


def _set_trials(items: pd.DataFrame) -> tuple[pd.DataFrame, dict[Any, dict[str, Any]]]:
    """Return a set's items (``items_frame``, which the database reads once per set and passes to
    every file's ``score_file`` unchanged) as trials, and their fields by Key: worked out once per
    set, not once per file."""
    if _SET[0] is not items:
        trials = items.rename(columns={"gold": "goldresp"})
        _SET[:] = [items, (trials, _by_key(trials))]
    return _SET[1]


_SET: list[Any] = [None, None]  # the items ``_set_trials`` saw last (held, so never another's id)


def _shown(items: pd.DataFrame, keys: pd.Series, modality: str) -> list[str | None]:
    """Return the prompt each of ``keys`` was asked in ``modality`` (a picture modality's, from the
    items' ``shown``); None for text (the item's own prompt)."""
    if modality == TEXT or "shown" not in items.columns:
        return [None] * len(keys)
    by_key = dict(zip(items["Key"], items["shown"], strict=True))
    return [(by_key.get(key) or {}).get(modality) for key in keys]


def pairs(runs: pd.DataFrame, units: pd.DataFrame) -> list[tuple[int, int, str]]:
    """Return the paired tests of a canvas set's runs: every two runs other than the shortcut
    baselines, in the report's order (``run_order``: the built-in models first)."""
    from common.canvas.shortcuts import SHORTCUTS

    shortcuts = {s.name for s in SHORTCUTS}
    found = []
    for _, group in runs.groupby("set_name", sort=False):
        ids = [r.run_id for r in run_order(group).itertuples() if r.label not in shortcuts]
        found += [(a, b, RULE) for i, a in enumerate(ids) for b in ids[i + 1 :]]
    return found


def run_order(runs: pd.DataFrame) -> pd.DataFrame:
    """Return ``runs`` (rows of the database's ``runs``) in the report's order: the built-in models
    first (their run metadata says ``builtin``), each group by results file, a run's modalities
    together (text, image, text+image)."""
    # a run without metadata (settings NULL: NaN beside other runs' text) is no built-in
    builtin = [
        bool(json.loads(s).get("builtin")) if isinstance(s, str) and s else False for s in runs["settings"]
    ]
    modality = runs["modality"] if "modality" in runs else pd.Series(TEXT, index=runs.index)
    file = [str(f).replace(f"-{m}___", "___", 1) for f, m in zip(runs["results_file"], modality, strict=True)]
    rank = [MODALITIES.index(m) if m in MODALITIES else 0 for m in modality]
    return (
        runs.assign(_builtin=builtin, _file=file, _rank=rank)
        .sort_values(["_builtin", "_file", "_rank"], ascending=[False, True, True], kind="stable")
        .drop(columns=["_builtin", "_file", "_rank"])
    )
