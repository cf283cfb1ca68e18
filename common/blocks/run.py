"""Ask a model to plan (``lm_plan``) or to translate a problem to PDDL for the planner
(``codex_translate``), and score what it wrote on the TRUE problem.

An item is one test problem of a prompts file (``scripts/generate_prompts.py``) in one view:
its prompt(s), and the problem's view so that scoring and the built-in models see the true
problem. A record keeps every raw completion; scoring is a pure function of the item and
those completions (``score_plan``, ``score_translation``), so ``rescore`` recomputes a results
file's scores with the current code and never asks the model again.

Built-in models: ``PLANNER_MODELS`` (``noop``, ``random``, ``oracle``) write the plans of
``baselines.PLANNERS`` as English sentences; ``TRANSLATOR_MODELS`` (``rules``) writes the PDDL
facts of the English template sentences, an upper bound for the LLM + planner method.
"""

import argparse
import functools
import hashlib
import logging
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from common import paths
from common.blocks.baselines import PLANNERS
from common.blocks.boards import uniform_board
from common.blocks.check import check_plan
from common.blocks.conversation import follow_up, opening, prompting_label, uses_chat
from common.blocks.nlplan import STOP_MARKER, cut_completion, parse_plan, render_plan
from common.blocks.planner import optimal_length
from common.blocks.problems import load_problems
from common.blocks.prompts import completion_facts
from common.blocks.state import board_relations, goal_holds, move_english, relation_pddl
from common.blocks.translate import (
    TranslationOutcome,
    described_objects,
    facts_accuracy,
    rule_translate,
    solve_from_facts,
)
from common.config import parse_overrides
from common.errors import DataError, UserError
from common.jsonl import dumps, read_jsonl, write_text
from common.models import Counters, resolve_model
from common.models.base import Message, Model, Reply, RequestRefused
from common.models.resolve import CACHE_FILE
from common.models.runner import refused_record
from common.results import read_results, results_filename
from common.stats import wilson_interval

PARTS = {"nl": ("plan",), "pddl": ("init", "goal")}  # the prompt parts of an item, by prompt type
STOPS = {"nl": [STOP_MARKER], "pddl": [";"]}  # default stop sequences sent to HTTP models
EXACT_LENGTH_UP_TO = 10  # items; larger problems get no optimal length unless their file has one

log = logging.getLogger(__name__)


def load_items(prompts_path: str | Path, problems_dir: str | Path, prompt_type: str) -> list[dict[str, Any]]:
    """Return one item per (test problem, view) of a prompts file, in file order.

    An item has ``Key``, ``id``, ``view``, ``prompting``, ``texts`` (part -> prompt), ``problem``
    (the ``View``) and ``optimal_length`` (from the problem file, else computed up to
    ``EXACT_LENGTH_UP_TO`` items, else None). The Key is derived from the id, view and prompt
    texts (``prompt_key``), so a results file never pairs an answer with a prompt that changed
    since (regenerated problems or prompts are asked anew). Raises DataError naming the file
    for prompts of another type, a missing part or an unknown problem.
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
    for (pid, view_name), item in items.items():
        missing = [part for part in PARTS[prompt_type] if part not in item["texts"]]
        if missing:
            raise DataError(f"{prompts_path}: problem {pid} (view {view_name}) has no {missing[0]!r} prompt")
        item["Key"] = prompt_key(pid, view_name, [item["texts"][part] for part in PARTS[prompt_type]])
    return [{"Key": item.pop("Key"), **item} for item in items.values()]


def prompt_key(pid: str, view: str, texts: Sequence[str]) -> int:
    """Return the results Key of a problem's prompts: the first 60 bits of the SHA-256 of the id,
    the view and the texts, as a non-negative integer (fits JSON numbers and int64)."""
    digest = hashlib.sha256("\0".join([pid, view, *texts]).encode("utf-8")).hexdigest()
    return int(digest[:15], 16)


# ---- built-in models ------------------------------------------------------------------------
class PlannerModel:
    """A built-in planner behind the model interface: answers with its plan as English sentences."""

    concurrency = 1

    def __init__(self, name: str, planner: Callable, seed: int = 0):
        self.name, self.planner, self.seed = name, planner, seed

    def complete(self, messages: list[Message], item: dict[str, Any]) -> Reply:
        """Return the plan for ``item["problem"]``, drawn with ``random.Random(f"{seed}:{id}:{view}")``."""
        rng = random.Random(f"{self.seed}:{item['id']}:{item['view']}")
        return Reply(render_plan(self.planner(item["problem"], rng)), attempts=0)

    def settings(self) -> dict[str, Any]:
        """Return the name and seed."""
        return {"name": self.name, "builtin": True, "seed": self.seed}

    def close(self) -> None:
        """Nothing to release."""


class RuleTranslator:
    """The built-in translator: reads the test's English template lines at the end of a
    translation prompt and writes their facts, as a model continuing after the prompt's "(" would."""

    name = "rules"
    concurrency = 1

    def __init__(self, seed: int = 0):
        self.seed = seed

    def complete(self, messages: list[Message], item: dict[str, Any]) -> Reply:
        """Return the facts of the last prompt's final block, without its opening "("."""
        test_block = messages[-1]["content"].rsplit("\n\n", 1)[-1]
        return Reply(rule_translate(test_block).removeprefix("("), attempts=0)

    def settings(self) -> dict[str, Any]:
        """Return the name."""
        return {"name": self.name, "builtin": True}

    def close(self) -> None:
        """Nothing to release."""


class FactsModel:
    """A built-in translator that reads the TRUE problem instead of the English: ``oracle`` writes
    its facts (a ceiling that cannot misread), ``random`` the facts of a board of the same items
    drawn uniformly (for the goal: as many of that board's relations as the goal has), seeded per
    problem and part: how often a translation that ignores the description still succeeds."""

    concurrency = 1

    def __init__(self, name: str, seed: int = 0):
        self.name, self.seed = name, seed

    def complete(self, messages: list[Message], item: dict[str, Any]) -> Reply:
        """Return the facts of the part asked (the goal when the last message continues the goal
        prompt, else the initial state), without the prompt's opening "("."""
        view = item["problem"]
        part = "goal" if messages[-1]["content"].startswith(item["texts"]["goal"]) else "init"
        if self.name == "oracle":
            relations = board_relations(view.init_board) if part == "init" else list(view.goal)
        else:
            rng = random.Random(f"{self.seed}:{item['id']}:{item['view']}:{part}")
            relations = board_relations(uniform_board(view.items, rng))
            if part == "goal":
                relations = rng.sample(relations, min(len(view.goal), len(relations)))
        return Reply("".join(relation_pddl(r) + "\n" for r in relations).removeprefix("("), attempts=0)

    def settings(self) -> dict[str, Any]:
        """Return the name and seed."""
        return {"name": self.name, "builtin": True, "seed": self.seed}

    def close(self) -> None:
        """Nothing to release."""


PLANNER_MODELS: dict[str, Callable[[int], Model]] = {
    name: functools.partial(PlannerModel, name, planner) for name, planner in PLANNERS.items()
}
TRANSLATOR_MODELS: dict[str, Callable[[int], Model]] = {
    "rules": RuleTranslator,
    "oracle": functools.partial(FactsModel, "oracle"),
    "random": functools.partial(FactsModel, "random"),
}


# ---- asking ---------------------------------------------------------------------------------
def plan_record(model: Model, item: dict[str, Any]) -> dict[str, Any]:
    """Return the results record of asking ``model`` to plan ``item``: the raw completion, transport
    diagnostics and the scores of ``score_plan``. A chat endpoint gets the prompt as turns
    (``conversation.opening``). A refused request gives ``blocks_refused_record``; transport
    failures propagate (not recorded)."""
    start = time.monotonic()
    try:
        reply = model.complete(opening(item["texts"]["plan"], "nl", uses_chat(model)), item)
    except RequestRefused as refusal:
        return blocks_refused_record(item, refusal)
    return {
        "Key": item["Key"],
        "id": item["id"],
        "view": item["view"],
        "sent_as": sent_as(uses_chat(model)),
        "raw": reply.text,
        "finish_reason": reply.finish_reason,
        **_transport([reply], start),
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
    conversations = {part: opening(item["texts"][part], "pddl", chat) for part in PARTS["pddl"]}
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
        "sent_as": sent_as(chat),
        "raw": rounds[0],
        "finish_reason": finish if feedback else finish[0],
        **_transport(replies, start),
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
    return {**refused_record(item, refusal), **problem_facts(item)}


def problem_facts(item: dict[str, Any]) -> dict[str, Any]:
    """Return what a record says about its problem whatever the answer: ``id``, ``view``,
    ``optimal_length`` and ``goal_held_initially`` (the empty plan already succeeds)."""
    view = item["problem"]
    return {
        "id": item["id"],
        "view": item["view"],
        "optimal_length": item["optimal_length"],
        "goal_held_initially": goal_holds(view.init_board, view.goal),
    }


def _transport(replies: Sequence[Reply], start: float) -> dict[str, Any]:
    """Return the summed request diagnostics of ``replies``."""
    return {
        "attempts": sum(r.attempts for r in replies),
        "cached": all(r.cached for r in replies),
        "latency_s": round(time.monotonic() - start, 4),
        "prompt_tokens": sum(r.prompt_tokens for r in replies),
        "completion_tokens": sum(r.completion_tokens for r in replies),
    }


# ---- scoring --------------------------------------------------------------------------------
def score_plan(item: dict[str, Any], raw: str) -> dict[str, Any]:
    """Return the scores of a planning completion on the true problem.

    ``resp`` is the completion cut at the stop marker "Initially:"; ``plan`` its move sentences
    that parse; then every field of ``check.PlanCheck`` (lenient and strict verdicts, lengths,
    parse rate, valid prefix, gap to optimal); ``error`` says when no line of a non-empty
    answer is a move of the problem's items (the run counts those as invalid).
    """
    view = item["problem"]
    text = cut_completion(raw).strip()
    steps = parse_plan(text, view.items)
    check = check_plan(steps, view.init_board, view.goal, item["optimal_length"])
    error = "no line is a move of this problem's items" if steps and not check.parsed else None
    return {
        "resp": text,
        "plan": [move_english(s.move) for s in steps if s.move],
        **check.as_dict(),
        "error": error,
    }


def translation_outcome(
    item: dict[str, Any], raw: dict[str, str], objects: str = "true", chat: bool = False
) -> TranslationOutcome:
    """Return what the fact reader and the planner make of translation completions ``raw``
    (part -> text) for ``item`` (see ``score_translation`` for ``objects`` and ``chat``)."""
    view = item["problem"]
    names = None
    if objects == "described":
        names = described_objects(
            item["texts"]["init"].rsplit("\n\n", 1)[-1] + "\n" + item["texts"]["goal"].rsplit("\n\n", 1)[-1]
        )
    elif objects != "true":
        raise ValueError(f"objects must be 'true' or 'described', not {objects!r}")
    init, goal = (completion_facts(raw[part], opened=not chat) for part in PARTS["pddl"])
    return solve_from_facts(view, init, goal, names)


def score_translation(
    item: dict[str, Any], raw: dict[str, str], objects: str = "true", chat: bool = False
) -> dict[str, Any]:
    """Return the scores of translation completions (``raw``: part -> text) on the true problem.

    The facts are the completions cut at the next ";", with the prompt's "(" put back unless
    the answer opens its own (``prompts.completion_facts``); a ``chat`` answer (sent as turns,
    no "(" in the prompt) is read as written. The planner's plan is checked on
    the true problem (``lenient``, ``strict``); ``reason`` (also ``error``) says why there is
    no plan. Translation accuracy is kept apart from success: precision and recall of the
    initial-state and goal facts against the true ones, reading each fact on its own so that
    one unreadable fact does not hide the others (``translate.facts_accuracy``; an unreadable
    fact counts as a wrong one, ``unread_facts`` lists them). ``objects`` "true" passes the
    true problem's objects to the fact reader (the paper's protocol, which helps the model:
    flagged in the record), "described" only those named in the prompt's English lines.
    """
    view = item["problem"]
    init_text, goal_text = (completion_facts(raw[part], opened=not chat) for part in PARTS["pddl"])
    outcome = translation_outcome(item, raw, objects, chat)
    init = facts_accuracy(init_text, view.items, board_relations(view.init_board))
    goal = facts_accuracy(goal_text, view.items, list(view.goal))
    check = outcome.check
    return {
        "resp": {"init": init_text, "goal": goal_text},
        "objects_from_true_problem": objects == "true",
        "lenient": outcome.lenient,
        "strict": outcome.strict,
        "plan": [move_english(m) for m in outcome.plan] if outcome.plan is not None else None,
        "plan_length": len(outcome.plan) if outcome.plan is not None else None,
        "optimal_length": item["optimal_length"],
        "goal_held_initially": check_plan([], view.init_board, view.goal).lenient,
        "init_precision": init["precision"],
        "init_recall": init["recall"],
        "goal_precision": goal["precision"],
        "goal_recall": goal["recall"],
        "unread_facts": init["unread"] + goal["unread"],
        "reason": outcome.reason or (check.first_error if check else None),
        "error": outcome.reason,
    }


def score_rounds(
    item: dict[str, Any], rounds: Sequence[dict[str, str]], objects: str, feedback: int, chat: bool = False
) -> dict[str, Any]:
    """Return the scores of a translation with feedback rounds (``rounds``: the answers of round
    0, 1, ...): every field of ``score_translation`` for the round the method ends with (the
    first that gave a plan, else the last), ``rounds_used``, ``round_errors`` (each round's
    error, None when it gave a plan), and ``lenient_by_round`` / ``strict_by_round``: success
    after round k for k = 0..``feedback`` (rounds not needed or not asked keep the last verdict)."""
    scores = [score_translation(item, answers, objects, chat) for answers in rounds]
    errors = [score["error"] for score in scores]
    final = next((k for k, error in enumerate(errors) if error is None), len(scores) - 1)
    after = [scores[min(k, final)] for k in range(feedback + 1)]
    return {
        **scores[final],
        "rounds_used": final,
        "round_errors": errors,
        "lenient_by_round": [s["lenient"] for s in after],
        "strict_by_round": [s["strict"] for s in after],
    }


def rescore(
    records: Sequence[dict[str, Any]],
    items: Sequence[dict[str, Any]],
    prompt_type: str,
    objects: str = "true",
) -> list[dict[str, Any]]:
    """Return the records of ``items`` with their scores recomputed from ``raw``, in items order.

    Records of prompts that are not among ``items`` (changed since, or left out by --limit)
    are left out, with a log line saying how many.
    """
    by_key = {record["Key"]: record for record in records}
    scored = []
    for item in items:
        record = by_key.get(item["Key"])
        if record is None:
            continue
        if record.get("refused"):  # nothing was answered: a failure under both rules, kept as refused
            scored.append({**record, **problem_facts(item), "lenient": False, "strict": False})
        elif prompt_type == "nl":
            scored.append({**record, **score_plan(item, record["raw"])})
        elif record.get("feedback"):
            rounds = [record["raw"], *record.get("feedback_raw", [])]
            chat = record.get("sent_as") == "turns"
            scored.append({**record, **score_rounds(item, rounds, objects, record["feedback"], chat)})
        else:
            scored.append(
                {
                    **record,
                    **score_translation(item, record["raw"], objects, record.get("sent_as") == "turns"),
                }
            )
    if len(scored) < len(records):
        log.info(
            "%d results rows are for prompts not in this run (changed since, or beyond --limit); not scored",
            len(records) - len(scored),
        )
    return scored


def summarise(records: Sequence[dict[str, Any]], prompt_type: str) -> pd.DataFrame:
    """Return one row per view: ``problems`` (every problem of the run: the denominator), lenient
    and strict success (%, with 95% Wilson intervals), ``invalid`` (answers with an error: no
    move, or facts that give no plan) and ``refused`` (requests the server refused, e.g. longer
    than the context: failures under both rules, as WorldSense scores them, so every model of a
    set has the same denominator); the goals that already held; and, over the answered problems,
    the mean parse rate and gap to optimal (planning) or fact precision and recall
    (translation). With feedback rounds, ``by_round`` gives the lenient success after round
    0, 1, ... (a refused problem fails every round)."""
    df = pd.DataFrame(records)
    if "refused" not in df:
        df["refused"] = None
    rows = []
    for view, group in df.groupby("view", sort=False):
        refused = group["refused"].fillna(False).astype(bool)
        answered = group[~refused]
        row: dict[str, Any] = {"view": view, "problems": len(group)}
        for rule in ("lenient", "strict"):
            wins = int(group[rule].fillna(False).astype(bool).sum())
            low, high = wilson_interval(wins, len(group))
            row.update({rule: 100 * wins / len(group), f"{rule}_lo": 100 * low, f"{rule}_hi": 100 * high})
        row["invalid"] = int(answered["error"].notna().sum())
        row["refused"] = int(refused.sum())
        row["goal_held_initially"] = int(group["goal_held_initially"].fillna(False).astype(bool).sum())
        if prompt_type == "nl":
            row["parse_rate"] = answered["parse_rate"].mean() if len(answered) else None
            solved = answered["optimality_gap"].dropna() if len(answered) else []
            row["mean_gap"] = solved.mean() if len(solved) else None
        else:
            for field in ("init_precision", "init_recall", "goal_precision", "goal_recall"):
                row[field] = answered[field].mean() if len(answered) else None
            if "lenient_by_round" in group and group["lenient_by_round"].notna().any():
                rounds = len(group["lenient_by_round"].dropna().iloc[0])
                by_round = [r if isinstance(r, list) else [False] * rounds for r in group["lenient_by_round"]]
                rates = pd.DataFrame(by_round).mean()
                row["by_round"] = " / ".join(f"{100 * rate:.1f}" for rate in rates)
        rows.append(row)
    return pd.DataFrame(rows)


def rescore_report(
    results_path: str | Path,
    items: Sequence[dict[str, Any]],
    prompt_type: str,
    objects: str = "true",
    scores_csv: str | Path | None = None,
) -> str:
    """Return the printed summary of a results file, re-scored for ``items`` (``rescore``): its
    name, then ``format_summary``. With ``scores_csv`` the re-scored rows are written there too."""
    records = rescore(read_results(results_path), items, prompt_type, objects)
    if scores_csv:
        write_scores(scores_csv, records)
    header = f"{paths.shown(results_path)}: {len(records)} problems\n"
    return header + (format_summary(summarise(records, prompt_type)) if records else "")


def format_summary(table: pd.DataFrame) -> str:
    """Return the summary as text: success as "rate [lo, hi]" ("-" for a view without problems),
    other fields with 2 decimals."""
    shown = pd.DataFrame({"view": table["view"], "problems": table["problems"]})
    for rule in ("lenient", "strict"):
        bounds = zip(table[rule], table[f"{rule}_lo"], table[f"{rule}_hi"], strict=True)
        shown[rule] = ["-" if pd.isna(v) else f"{v:5.1f} [{lo:5.1f}, {hi:5.1f}]" for v, lo, hi in bounds]
    for name in table.columns:
        if name not in shown.columns and not name.endswith(("_lo", "_hi")):
            shown[name] = table[name].map(_cell)
    return shown.to_string(index=False) + "\n"


def _cell(value: Any) -> str:
    """Return a summary value as text: "-" for missing, 2 decimals for floats."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "-"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


# ---- what the two scripts share ---------------------------------------------------------------
RESULTS_ROOT = paths.RESULTS / "blocks"


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``lm_plan.py`` and ``codex_translate.py``: prompts, problems, model, output."""
    parser.add_argument(
        "--prompts",
        required=True,
        help="prompts file from generate_prompts.py (data/blocks/<set>/prompts/...jsonl)",
    )
    parser.add_argument(
        "--problem-path",
        default=None,
        help="directory of the problem files (default: problems/ beside prompts/)",
    )
    parser.add_argument(
        "--model", required=True, help="a built-in, a config name in configs/models/, or a .yaml path"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a model config setting (repeatable), e.g. --set max_tokens=300",
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N problems")
    parser.add_argument("--seed", type=int, default=0, help="seed of the built-in random planner")
    parser.add_argument(
        "--results-dir",
        default=None,
        help="where the results file goes (default: results/blocks/<set>/<type>___<view>)",
    )
    parser.add_argument("--scores", metavar="CSV", help="also write every re-scored row as CSV")
    parser.add_argument(
        "--retry-errors",
        action="store_true",
        help="ask again the problems the server refused in an earlier run (e.g. too long)",
    )
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the response cache")
    parser.add_argument("--cache-file", type=Path, default=CACHE_FILE, help="SQLite response cache")


def load_run_items(args: argparse.Namespace, prompt_type: str) -> list[dict[str, Any]]:
    """Return the items of ``args.prompts`` (``load_items``), the first ``args.limit`` of them."""
    if args.limit is not None and args.limit < 0:
        raise UserError("--limit must be 0 or more")
    if not Path(args.prompts).is_file():
        raise UserError(
            f"--prompts {args.prompts}: no such prompts file (write it with "
            "scripts/generate_prompts.py, or `make blocks/<set>` for a set of configs/blocks/)"
        )
    problems = problems_path(args.prompts, args.problem_path)
    if not problems.is_dir():
        raise UserError(
            f"{problems}: no such problem directory (the prompts' set has none there: "
            "give it with --problem-path)"
        )
    return load_items(args.prompts, problems, prompt_type)[: args.limit]


def problems_path(prompts: str | Path, problem_path: str | Path | None = None) -> Path:
    """Return the problems directory of a prompts file: ``problem_path`` if given, else
    ``problems/`` beside the prompts file's ``prompts/`` directory."""
    return Path(problem_path) if problem_path else Path(prompts).parent.parent / "problems"


def run_labels(args: argparse.Namespace, prompting: str, model: Model, **more: Any) -> dict[str, Any]:
    """Return the labels a run records in its metadata: prompting, model name, and the prompts
    file and problems directory (so the analysis can re-score the file with the current scorer)."""
    return {
        "prompting": prompting,
        "modelname": model.name,
        "prompts": str(args.prompts),
        "problems": str(problems_path(args.prompts, args.problem_path)),
        **more,
    }


def resolve_run_model(args: argparse.Namespace, prompt_type: str, counters: Counters) -> Model:
    """Return the model of ``args.model``: a built-in of this prompt type (only those: the
    WorldSense ``random`` and ``oracle`` answer options, not blocks), or an HTTP model that
    gets the prompt type's stop sequence unless ``--set stop=...`` gives one."""
    builtins = PLANNER_MODELS if prompt_type == "nl" else TRANSLATOR_MODELS
    overrides = parse_overrides(args.set)
    if args.model not in builtins:
        overrides.setdefault("stop", STOPS[prompt_type])
    return resolve_model(
        args.model,
        overrides=overrides,
        seed=args.seed,
        use_cache=not args.no_cache,
        cache_file=args.cache_file,
        counters=counters,
        builtins=builtins,
    )


def results_path(
    args: argparse.Namespace,
    items: Sequence[dict[str, Any]],
    prompt_type: str,
    model: Model,
    feedback: int = 0,
) -> tuple[Path, str]:
    """Return ``(path, prompting)``: ``<results dir>/<prompting>___<modelname>___results.jsonl``
    for this run, and its prompting label (``conversation.prompting_label``: the prompts file's,
    plus ``-turns`` for a chat endpoint and ``-feedback<N>`` with feedback rounds).

    The default directory is ``results/blocks/<set>/<type>___<view>``, the set being the
    directory above the prompts file's ``prompts/``. Raises DataError for an empty prompts
    file or one mixing views or prompt styles.
    """
    views = sorted({item["view"] for item in items})
    promptings = sorted({item["prompting"] for item in items})
    if len(views) != 1 or len(promptings) != 1:
        raise DataError(
            f"{args.prompts}: expected the prompts of one view and one prompting, "
            f"found views {views} and promptings {promptings}"
        )
    set_name = Path(args.prompts).resolve().parent.parent.name
    directory = (
        Path(args.results_dir)
        if args.results_dir
        else RESULTS_ROOT / set_name / f"{prompt_type}___{views[0]}"
    )
    prompting = prompting_label(promptings[0], uses_chat(model), feedback)
    try:
        return directory / results_filename(prompting, model.name), prompting
    except ValueError as exc:
        raise UserError(str(exc)) from None


def write_scores(path: str | Path, records: Sequence[dict[str, Any]]) -> None:
    """Write re-scored rows as CSV (lists and dicts as JSON text), atomically."""
    frame = pd.DataFrame(records).drop(columns=["raw"], errors="ignore")
    for name in frame.columns:
        if frame[name].map(lambda v: isinstance(v, (list, dict))).any():
            frame[name] = frame[name].map(dumps)
    write_text(path, frame.to_csv(index=False, lineterminator="\n"))
