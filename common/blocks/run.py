"""Asking a model blocks problems: planning (``lm_plan.py``) or translating a problem to PDDL for
the planner (``codex_translate.py``).

An item is one test problem of a prompts file (``scripts/generate_prompts.py``) in one view:
its prompt(s), and the problem's view so that scoring and the built-in models see the true
problem (``load_items``). ``plan_record`` and ``translation_record`` are the protocols the
shared runner calls; a record keeps every raw completion, and its scores come from
``scoring.py``, a pure function of the item and those completions (so re-scoring never asks
again). The rest serves the two scripts: the set's prompts files, results paths, the printed
summary of a results file.
"""

import argparse
import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from common import cli, paths
from common.blocks.conversation import follow_up, opening, prompting_label, uses_chat
from common.blocks.nlplan import STOP_MARKER
from common.blocks.planner import optimal_length
from common.blocks.problems import load_problems
from common.blocks.prompts import PARTS
from common.blocks.scoring import (
    problem_facts,
    rescore,
    score_plan,
    score_rounds,
    score_translation,
    translation_outcome,
)
from common.errors import DataError, UserError
from common.jsonl import dumps, read_jsonl, write_text
from common.models.base import Message, Model, Reply, RequestRefused, request_totals
from common.models.images import attach_images, marked_names
from common.models.runner import refused_record
from common.pictures.modality import MODALITIES, TEXT, label, modalities_of, record_fields
from common.results import SEPARATOR, read_results, results_filename

STOPS = {"nl": [STOP_MARKER], "pddl": [";"]}  # default stop sequences sent to HTTP models


EXACT_LENGTH_UP_TO = 10  # items; larger problems get no optimal length unless their file has one

log = logging.getLogger(__name__)


def load_items(
    prompts_path: str | Path, problems_dir: str | Path, prompt_type: str, modality: str = TEXT
) -> list[dict[str, Any]]:
    """Return one item per (test problem, view) of a prompts file, in file order.

    An item has ``Key``, ``id``, ``view``, ``prompting``, ``texts`` (part -> prompt), ``problem``
    (the ``View``) and ``optimal_length`` (from the problem file, else computed up to
    ``EXACT_LENGTH_UP_TO`` items, else None). The Key is derived from the id, view and prompt
    texts (``prompt_key``), so a results file never pairs an answer with a prompt that changed
    since (regenerated problems or prompts are asked anew). In a picture ``modality`` the texts
    are that modality's (with the markers of its pictures) and the item also has ``modality``,
    ``images`` (the names of the pictures its prompts show) and ``image_dir``; its Key is still
    the text prompts', so the items of every modality pair. Raises DataError naming the file
    for prompts of another type, a missing part or modality, or an unknown problem.
    """
    prompts_path = Path(prompts_path)
    problems = {p.id: p for p in load_problems(problems_dir)}
    items: dict[tuple[str, str], dict[str, Any]] = {}
    for number, record in enumerate(read_jsonl(prompts_path), start=1):
        where = f"{prompts_path}:{number}"
        if record.get("prompt_type") != prompt_type:
            raise DataError(
                f"{where}: a {record.get('prompt_type')!r} prompt; this run needs "
                f"{prompt_type!r} prompts (generate_prompts.py --prompt-type {prompt_type})"
            )
        if record["id"] not in problems:
            raise DataError(f"{where}: problem {record['id']!r} is not in {problems_dir}")
        key = (record["id"], record["view"])
        if key not in items:
            problem = problems[record["id"]]
            view = problem.view(record["view"])
            stored = problem.extra.get("optimal_plan_length", {}).get(record["view"])
            if stored is None and len(view.items) <= EXACT_LENGTH_UP_TO:
                stored = optimal_length(view.init_board, view.goal)
            items[key] = {
                "id": record["id"],
                "view": record["view"],
                "prompting": record["prompting"],
                "texts": {},
                "problem": view,
                "optimal_length": stored,
            }
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
                modality=modality, images=list(dict.fromkeys(names)), image_dir=images_path(prompts_path)
            )
    return [{"Key": item.pop("Key"), **item} for item in items.values()]


def images_path(prompts: str | Path) -> Path:
    """Return the picture directory of a prompts file's set: ``images/`` beside ``prompts/``."""
    return Path(prompts).parent.parent / "images"


def asked(item: dict[str, Any], messages: list[Message]) -> list[Message]:
    """Return ``messages`` as sent for ``item``: its pictures' markers as image parts
    (``images.attach_images``); unchanged for a text item."""
    return attach_images(messages, item["image_dir"]) if item.get("images") else messages


def prompt_key(pid: str, view: str, texts: Sequence[str]) -> int:
    """Return the results Key of a problem's prompts: the first 60 bits of the SHA-256 of the id,
    the view and the texts, as a non-negative integer (fits JSON numbers and int64)."""
    digest = hashlib.sha256("\0".join([pid, view, *texts]).encode("utf-8")).hexdigest()
    return int(digest[:15], 16)


def plan_record(model: Model, item: dict[str, Any]) -> dict[str, Any]:
    """Return the results record of asking ``model`` to plan ``item``: the raw completion, transport
    diagnostics and the scores of ``score_plan``. A chat endpoint gets the prompt as turns
    (``conversation.opening``). A refused request gives ``blocks_refused_record``; transport
    failures propagate (not recorded)."""
    start = time.monotonic()
    try:
        reply = model.complete(asked(item, opening(item["texts"]["plan"], "nl", uses_chat(model))), item)
    except RequestRefused as refusal:
        return blocks_refused_record(item, refusal)
    return {
        "Key": item["Key"],
        "id": item["id"],
        "view": item["view"],
        **record_fields(item.get("modality", TEXT), item.get("images", [])),
        "sent_as": sent_as(uses_chat(model)),
        "raw": reply.text,
        "finish_reason": reply.finish_reason,
        **request_totals([reply], start),
        **score_plan(item, reply.text),
    }


def translation_record(
    model: Model, item: dict[str, Any], objects: str = "true", feedback: int = 0
) -> dict[str, Any]:
    """Return the record of asking ``model`` for the PDDL facts of ``item``'s initial state and goal
    (two requests), then planning from them: raw completions, diagnostics, ``score_translation``.

    With ``feedback`` N, a fact reader's or planner's error (``TranslationOutcome.errors``) is
    returned to the model on the same conversation (``conversation.follow_up``) and the failing
    part asked again, up to N rounds, stopping at the first round that gives a plan. ``raw`` is
    the first round's answers, ``feedback_raw`` the later rounds' (all scored by
    ``score_rounds``). A refused first request gives ``blocks_refused_record``; a refused
    feedback request ends the rounds (``feedback_stopped`` says why) and keeps those done.
    """
    start = time.monotonic()
    chat = uses_chat(model)
    conversations = {part: asked(item, opening(item["texts"][part], "pddl", chat)) for part in PARTS["pddl"]}
    replies: list[Reply] = []
    try:
        for part in PARTS["pddl"]:
            replies.append(model.complete(conversations[part], item))
    except RequestRefused as refusal:
        return blocks_refused_record(item, refusal)
    rounds = [{part: reply.text for part, reply in zip(PARTS["pddl"], replies, strict=True)}]
    finish = [{part: reply.finish_reason for part, reply in zip(PARTS["pddl"], replies, strict=True)}]
    stopped = None
    while len(rounds) <= feedback:
        errors = translation_outcome(item, rounds[-1], objects, chat).errors
        if not errors:
            break
        answers, reasons = dict(rounds[-1]), {}
        try:
            for part, error in errors.items():
                conversations[part] = follow_up(conversations[part], answers[part], error, chat)
                reply = model.complete(conversations[part], item)
                replies.append(reply)
                answers[part], reasons[part] = reply.text, reply.finish_reason
        except RequestRefused as refusal:
            stopped = f"feedback round {len(rounds)} refused ({refusal.kind}): {refusal.message}"
            break
        rounds.append(answers)
        finish.append(reasons)
    record = {
        "Key": item["Key"],
        "id": item["id"],
        "view": item["view"],
        **record_fields(item.get("modality", TEXT), item.get("images", [])),
        "sent_as": sent_as(chat),
        "raw": rounds[0],
        "finish_reason": finish if feedback else finish[0],
        **request_totals(replies, start),
    }
    if not feedback:
        return {**record, **score_translation(item, rounds[0], objects, chat)}
    return {
        **record,
        "feedback": feedback,
        "feedback_raw": rounds[1:],
        "feedback_stopped": stopped,
        **score_rounds(item, rounds, objects, feedback, chat),
    }


def sent_as(chat: bool) -> str:
    """Return how a record's prompt was sent: "turns" (chat messages) or "text" (the prompt as is)."""
    return "turns" if chat else "text"


def blocks_refused_record(item: dict[str, Any], refusal: RequestRefused) -> dict[str, Any]:
    """Return the runner's record of a refused item (``runner.refused_record``: ``refused`` the
    kind, ``error`` the server's message) with the problem's own facts (``problem_facts``), so
    the analysis pairs it and counts it as a failure in every split."""
    fields = record_fields(item.get("modality", TEXT), item.get("images", []))
    return {**refused_record(item, refusal), **fields, **problem_facts(item)}


def rescore_report(
    results_path: str | Path, items: Sequence[dict[str, Any]], prompt_type: str, objects: str = "true"
) -> tuple[str, list[dict[str, Any]]]:
    """Return the printed summary of a results file re-scored for ``items`` (``scoring.rescore``):
    its name, then ``report.run_summary_text``; and the re-scored records (for ``write_scores``)."""
    from common.blocks.report import run_summary_text  # the analysis reads prompts through this module

    if not Path(results_path).is_file():  # nothing answered yet: a batch run waiting for its batch
        return f"{paths.shown(results_path)}: no answer recorded yet\n", []
    records = rescore(read_results(results_path), items, prompt_type, objects)
    header = f"{paths.shown(results_path)}: {len(records)} problems\n"
    return header + (run_summary_text(records, prompt_type) if records else ""), records


RESULTS_ROOT = paths.RESULTS / "blocks"
TESTSET_HELP = (
    "the blocks set: data/blocks/<set> (or its name), holding prompts/ from generate_prompts.py "
    "(data/blocks/released: the paper's prompts; give --problem-path)"
)


def set_dir(name_or_dir: str) -> Path:
    """Return the directory of the blocks set ``-t`` names (one with a ``prompts/`` directory)."""
    return paths.set_dir("blocks", name_or_dir, "prompts", "build one with `make blocks/<set>`")


def add_options(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``lm_plan.py`` and ``codex_translate.py`` beyond the shared ones
    (``cli.add_model_options``): views, problems, a CSV of scores."""
    parser.add_argument(
        "--view",
        action="append",
        default=[],
        metavar="VIEW",
        help="ask only this view (repeatable; default: every view the set has prompts for)",
    )
    parser.add_argument(
        "--problem-path", default=None, help="directory of the problem files (default: <set>/problems)"
    )
    parser.add_argument("--scores", metavar="CSV", help="also write every re-scored row as CSV")
    cli.add_dry_run_option(parser)
    parser.add_argument(
        "--modality",
        action="append",
        default=[],
        choices=MODALITIES,
        help="ask the set in this modality only (repeatable; default: every modality of the set's config)",
    )


def prompt_files(directory: Path, prompt_type: str, prompting: str, views: Sequence[str] = ()) -> list[Path]:
    """Return the prompts files ``<prompting>___<type>___<view>.jsonl`` of a set, views in the
    order of the set's manifest (else the paper's one, two, all, then by name); only ``views``
    when given. Raises UserError naming what exists when a view (or every file) is missing."""
    found = {
        path.name.removesuffix(".jsonl").split(SEPARATOR)[2]: path
        for path in sorted(
            (directory / "prompts").glob(f"{prompting}{SEPARATOR}{prompt_type}{SEPARATOR}*.jsonl")
        )
    }
    manifest = directory / "problems" / "manifest.json"
    listed = json.loads(manifest.read_text(encoding="utf-8")).get("views", []) if manifest.is_file() else []
    order = [v for v in [*listed, "one", "two", "all"] if v in found]
    order = list(dict.fromkeys(order + sorted(found)))
    missing = [view for view in views if view not in found]
    if missing or not found:
        raise UserError(
            f"{paths.shown(directory / 'prompts')}: no {prompting}{SEPARATOR}{prompt_type}{SEPARATOR}"
            f"<view>.jsonl for view {', '.join(missing) or '(any)'}; views there: "
            f"{', '.join(order) or 'none'} "
            "(write prompts with scripts/generate_prompts.py or `make blocks/<set>`)"
        )
    return [found[view] for view in order if not views or view in views]


def load_run_items(
    prompts: Path, problem_path: str | None, prompt_type: str, limit: int | None, modality: str = TEXT
) -> list[dict[str, Any]]:
    """Return the first ``limit`` items of a prompts file in ``modality`` (``load_items``), its
    problems from ``problem_path`` (default: ``problems/`` beside ``prompts/``); UserError when
    they are missing."""
    problems = problems_path(prompts, problem_path)
    if not problems.is_dir():
        raise UserError(
            f"{problems}: no such problem directory (the prompts' set has none there: "
            "give it with --problem-path)"
        )
    return load_items(prompts, problems, prompt_type, modality)[:limit]


def problems_path(prompts: str | Path, problem_path: str | Path | None = None) -> Path:
    """Return the problems directory of a prompts file: ``problem_path`` if given, else
    ``problems/`` beside the prompts file's ``prompts/`` directory."""
    return Path(problem_path) if problem_path else Path(prompts).parent.parent / "problems"


def run_labels(
    prompts: Path, problem_path: str | None, prompting: str, model: Model, **more: Any
) -> dict[str, Any]:
    """Return the labels a run records in its metadata: prompting, model name, and the prompts
    file and problems directory (so the analysis can re-score the file with the current scorer)."""
    return {
        "prompting": prompting,
        "modelname": model.name,
        "prompts": str(prompts),
        "problems": str(problems_path(prompts, problem_path)),
        **more,
    }


def set_modalities(testset: Path, asked_for: Sequence[str] = ()) -> list[str]:
    """Return the modalities to ask of a set: ``asked_for`` (``--modality``), else every one its
    config asks for (``modalities`` in its problems' manifest; a set without: text). Raises
    UserError for a modality the set was not generated with."""
    manifest = testset / "problems" / "manifest.json"
    listed = (
        json.loads(manifest.read_text(encoding="utf-8")).get("modalities") if manifest.is_file() else None
    )
    available = modalities_of(listed or TEXT)
    missing = [m for m in asked_for if m not in available]
    if missing:
        raise UserError(
            f"{paths.shown(testset)} has no {missing[0]!r} prompts (its modalities: "
            f"{', '.join(available)}): add it to the set config's `modality` and generate the set again"
        )
    return list(asked_for) or available


def results_path(
    prompts: Path,
    items: Sequence[dict[str, Any]],
    prompt_type: str,
    model: Model,
    results_root: Path | None = None,
    feedback: int = 0,
    modality: str = TEXT,
) -> tuple[Path, str]:
    """Return ``(path, prompting)``: the results file of this run,
    ``<results_root>/<set>/<type>___<view>/<prompting>___<modelname>___results.jsonl`` (the set
    being the directory above the prompts file's ``prompts/``), and its
    prompting label (``conversation.prompting_label``: the prompts file's, plus ``-<modality>`` in a
    picture modality, ``-turns`` for a chat endpoint and ``-feedback<N>`` with feedback rounds).
    Raises DataError for an empty prompts file or one mixing views or prompt styles."""
    if not items:
        raise DataError(
            f"{prompts}: the file holds no prompts; generate the set again (`make blocks/<set>`, "
            "or scripts/generate_prompts.py for one view)"
        )
    views = sorted({item["view"] for item in items})
    promptings = sorted({item["prompting"] for item in items})
    if len(views) != 1 or len(promptings) != 1:
        raise DataError(
            f"{prompts}: expected the prompts of one view and one prompting, "
            f"found views {views} and promptings {promptings}"
        )
    set_name = Path(prompts).resolve().parent.parent.name
    directory = (results_root or RESULTS_ROOT) / set_name / f"{prompt_type}___{views[0]}"
    prompting = prompting_label(label(promptings[0], modality), uses_chat(model), feedback)
    try:
        return directory / results_filename(prompting, model.name), prompting
    except ValueError as exc:
        raise UserError(str(exc)) from None


def ask_files(
    model: Model,
    files: Sequence[Path],
    args: argparse.Namespace,
    prompt_type: str,
    answer: Callable[[Model, dict[str, Any]], dict[str, Any]],
    **label_extras: Any,
) -> tuple[list[Any], list[dict[str, Any]]]:
    """Ask ``model`` every prompts file of ``files`` in every modality of the set (``--modality``,
    else the set's; ``set_modalities``) with the protocol ``answer``, each into its results file
    (``results_path``), printing the re-scored summary of each; with ``--dry-run`` print what each
    would cost instead (``common.models.estimate``) and ask nothing. Return ``(summaries, rows)``:
    the runner's summaries and the re-scored rows (with the model's name)."""
    from common.models import run_items
    from common.models.estimate import estimate_run, estimate_text

    summaries, scored = [], []
    feedback = label_extras.get("feedback", 0)
    objects = label_extras.get("objects", "true")
    for prompts in files:
        for modality in set_modalities(prompts.parent.parent, args.modality):
            items = load_run_items(prompts, args.problem_path, prompt_type, args.limit, modality)
            out, prompting = results_path(
                prompts, items, prompt_type, model, args.results_dir, feedback, modality
            )
            if args.dry_run:
                price = (model.settings() or {}).get("price_per_1k_tokens")
                label = f"{out.parent.name}/{out.name}"
                print(estimate_text(label, estimate_run(model, items, answer), price, batch=args.batch))
                continue
            labels = run_labels(
                prompts, args.problem_path, prompting, model, modality=modality, **label_extras
            )
            summaries.append(
                run_items(model, items, out, answer=answer, labels=labels, **cli.runner_options(args))
            )
            text, rows = rescore_report(out, items, prompt_type, objects)
            print(text, end="")
            scored += [{"model": model.name, **row} for row in rows]
    return summaries, scored


def write_scores(path: str | Path, records: Sequence[dict[str, Any]]) -> None:
    """Write re-scored rows (of every model and view a script asked) as CSV, lists and dicts
    as JSON text, atomically."""
    frame = pd.DataFrame(records).drop(columns=["raw"], errors="ignore")
    for name in frame.columns:
        if frame[name].map(lambda v: isinstance(v, (list, dict))).any():
            frame[name] = frame[name].map(dumps)
    write_text(path, frame.to_csv(index=False, lineterminator="\n"))
