"""Grading blocks answers on the TRUE problem: plans (``score_plan``) and translations to PDDL
facts (``score_translation``, with feedback rounds ``score_rounds``); ``score_record`` scores one
results record, whatever it answered.

Scoring is a pure function of an item (``items.load_items``) and the raw completions a results
record keeps, so a results file is scored again with the current code without asking the model
again. A plan is checked under the paper's lenient rule and a strict, VAL-like one
(``check.check_plan``); a translation is read, planned by our optimal planner and that plan
checked the same way, with the facts' precision and recall kept apart.

The suite's score stage, which scores each results file with ``score_record``, is
``common.blocks.scoring``.
"""

from collections.abc import Sequence
from typing import Any

from common.blocks.check import check_plan
from common.blocks.nlplan import cut_completion, parse_plan
from common.blocks.prompts import PARTS, completion_facts
from common.blocks.state import board_relations, goal_holds, move_english
from common.blocks.translate import (
    TranslationOutcome,
    described_objects,
    facts_accuracy,
    solve_from_facts,
)


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


def score_record(
    item: dict[str, Any], record: dict[str, Any], prompt_type: str, objects: str = "true"
) -> dict[str, Any]:
    """Return the results ``record`` answering ``item`` with its scores recomputed from its raw
    completions (``raw``, and ``feedback_raw`` for feedback rounds): ``score_plan`` for a plan,
    ``score_translation`` or ``score_rounds`` for facts (``objects`` as the run had it; an
    answer sent as chat turns read as written). A refused record (nothing answered) fails both
    rules and gets its problem's facts (``problem_facts``)."""
    if record.get("refused"):
        return {**record, **problem_facts(item), "lenient": False, "strict": False}
    if prompt_type == "nl":
        return {**record, **score_plan(item, record["raw"])}
    chat = record.get("sent_as") == "turns"
    if record.get("feedback"):
        rounds = [record["raw"], *record.get("feedback_raw", [])]
        return {**record, **score_rounds(item, rounds, objects, record["feedback"], chat)}
    return {**record, **score_translation(item, record["raw"], objects, chat)}
