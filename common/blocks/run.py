"""Asking a model blocks problems: planning (``lm_plan.py``) or translating a problem to PDDL for
the planner (``codex_translate.py``).

An item is one test problem of a prompts file in one view: its prompt(s), and the problem's
view so that scoring and the built-in models see the true problem (``items.load_items``).
``plan_record`` and ``translation_record`` are the protocols the shared runner calls; a record
keeps every raw completion, and its scores come from ``scoring.py``, a pure function of the item
and those completions (so the score stage, ``scoring.py``, scores it again without asking).
The rest serves the two scripts: the set's prompts files and items in each modality the set
has (``common.pictures.modality``: a picture modality's items show their problems as pictures,
the same Keys), results paths (a picture modality's label ends ``-image`` or ``-text+image``), and
``ask``, which runs a model over them (or, with ``--dry-run``, prints what it would cost).
"""

import argparse
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from common import cli, paths
from common.blocks.conversation import follow_up, opening, prompting_label, uses_chat
from common.blocks.grade import (
    problem_facts,
    score_plan,
    score_rounds,
    score_translation,
    translation_outcome,
)
from common.blocks.items import load_items, problems_path, view_order
from common.blocks.items import set_modalities as items_modalities
from common.blocks.nlplan import STOP_MARKER
from common.blocks.problems import load_problems
from common.blocks.prompts import PARTS
from common.errors import DataError, UserError
from common.models.base import Message, Model, Reply, RequestRefused, request_totals
from common.models.images import attach_images
from common.models.runner import refused_record
from common.pictures.modality import TEXT, label, record_fields
from common.results import SEPARATOR, results_filename
from common.suite import SetRef

STOPS = {"nl": [STOP_MARKER], "pddl": [";"]}  # default stop sequences sent to HTTP models


log = logging.getLogger(__name__)


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
        **shown(item),
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
        **shown(item),
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
    return {**refused_record(item, refusal), **shown(item), **problem_facts(item)}


def asked(item: dict[str, Any], messages: list[Message]) -> list[Message]:
    """Return ``messages`` as sent for ``item``: its pictures' markers as image parts
    (``images.attach_images``, from the set's ``images/``); unchanged for a text item."""
    return attach_images(messages, item["image_dir"]) if item.get("images") else messages


def shown(item: dict[str, Any]) -> dict[str, Any]:
    """Return what a record says of the modality it was asked in (``modality.record_fields``:
    nothing for text, so a text record stays as it always was)."""
    return record_fields(item.get("modality", TEXT), item.get("images", []))


TESTSET_HELP = (
    "the blocks set: its name, blocks/<set>, or its directory holding prompts/ "
    "(data/blocks/released: the paper's prompts of the release's problems)"
)


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
    cli.add_modality_option(parser)
    cli.add_dry_run_option(parser)


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
    order = [v for v in [*view_order(directory), "one", "two", "all"] if v in found]
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
    files: Sequence[Path],
    problem_path: str | None,
    prompt_type: str,
    limit: int | None,
    modalities: Sequence[str] = (TEXT,),
) -> dict[tuple[Path, str], list[dict[str, Any]]]:
    """Return the first ``limit`` items of each prompts file of ``files`` in each of
    ``modalities`` (``items.load_items``), by (file, modality), the set's problems loaded once,
    from ``problem_path`` (default: the set's, ``items.problems_path``); UserError when they are
    missing."""
    directory = problems_path(files[0], problem_path)
    if not directory.is_dir():
        raise UserError(
            f"{directory}: no such problem directory (the prompts' set has none there: "
            "give it with --problem-path)"
        )
    problems = {problem.id: problem for problem in load_problems(directory)}
    return {
        (prompts, modality): load_items(prompts, problems, prompt_type, modality)[:limit]
        for prompts in files
        for modality in modalities
    }


def set_modalities(data_dir: Path, asked_for: Sequence[str] = ()) -> list[str]:
    """Return the modalities to ask of a set: ``asked_for`` (``--modality``), else every one its
    prompts are in (``items.set_modalities``). Raises UserError for a modality the set was not
    generated with."""
    available = items_modalities(data_dir)
    missing = [m for m in asked_for if m not in available]
    if missing:
        raise UserError(
            f"{paths.shown(data_dir)} has no {missing[0]!r} prompts (its modalities: "
            f"{', '.join(available)}): add it to the set config's `modality` and generate the set again"
        )
    return list(dict.fromkeys(asked_for)) or available


def run_labels(
    prompts: Path, problem_path: str | None, prompting: str, model: Model, **more: Any
) -> dict[str, Any]:
    """Return the labels a run records in its metadata: prompting, model name, and the prompts
    file and problems directory (so the score stage knows which prompts the file answers)."""
    return {
        "prompting": prompting,
        "modelname": model.name,
        "prompts": str(prompts),
        "problems": str(problems_path(prompts, problem_path)),
        **more,
    }


def results_path(
    ref: SetRef,
    prompts: Path,
    items: Sequence[dict[str, Any]],
    prompt_type: str,
    model: Model,
    feedback: int = 0,
    modality: str = TEXT,
) -> tuple[Path, str]:
    """Return ``(path, prompting)``: the results file of this run,
    ``<the set's results>/<type>___<view>/<prompting>___<modelname>___results.jsonl``, and its
    prompting label (``conversation.prompting_label``: the prompts file's, plus ``-<modality>`` in
    a picture modality, ``-turns`` for a chat endpoint and ``-feedback<N>`` with feedback rounds).
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
    directory = ref.results / f"{prompt_type}___{views[0]}"
    prompting = prompting_label(label(promptings[0], modality), uses_chat(model), feedback)
    try:
        return directory / results_filename(prompting, model.name), prompting
    except ValueError as exc:
        raise UserError(str(exc)) from None


def ask(
    model: Model,
    ref: SetRef,
    asked_items: dict[tuple[Path, str], list[dict[str, Any]]],
    args: argparse.Namespace,
    prompt_type: str,
    answer: Callable[[Model, dict[str, Any]], dict[str, Any]],
    **label_extras: Any,
) -> list[Any]:
    """Ask ``model`` the items of every prompts file and modality of ``asked_items``
    (``load_run_items``) with the protocol ``answer``, each into its results file
    (``results_path``), and return the runner's summaries; with ``--dry-run`` print what each
    would cost instead (``common.models.estimate``) and ask nothing."""
    from common.models import run_items
    from common.models.estimate import estimate_run, estimate_text
    from common.models.vision import modalities_to_ask

    summaries = []
    feedback = label_extras.get("feedback", 0)
    wanted = modalities_to_ask(model, list(dict.fromkeys(m for _, m in asked_items)), args.modality)
    for (prompts, modality), items in asked_items.items():
        if modality not in wanted:
            continue
        out, prompting = results_path(ref, prompts, items, prompt_type, model, feedback, modality)
        if args.dry_run:
            price = (model.settings() or {}).get("price_per_1k_tokens")
            name = f"{out.parent.name}/{out.name}"
            print(estimate_text(name, estimate_run(model, items, answer), price, batch=args.batch))
            continue
        labels = run_labels(prompts, args.problem_path, prompting, model, modality=modality, **label_extras)
        summary = run_items(model, items, out, answer=answer, labels=labels, **cli.runner_options(args))
        summaries.append(summary)
        log.info("%s", summary.describe(out))
    return summaries
