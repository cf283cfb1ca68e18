"""Few-shot prompts: natural-language planning and NL-to-PDDL translation, as in the paper.

Planning prompt: a preamble, then for each training problem of the same view an
"Initially: / Goal: / Actions:" block solved by a shortest plan, then the test problem's block
ending with "Actions:\\n". Translation prompts (LLM + planner): blocks of ";"-prefixed English
lines followed by their PDDL facts, then the test's ";" lines and an opening "(" that starts
the model's PDDL (``completion_facts`` puts it back in front of the completion).

Prompt styles are named by a ``prompting`` label (``PROMPTINGS``): ``paper`` reproduces the
released prompts (the goal prompt reuses the initial-state examples, as the paper did);
``goal-examples`` shows goal translations in the goal prompt; ``chat`` adds one instruction
line for chat models that otherwise answer in prose.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from common.blocks.nlplan import render_plan
from common.blocks.problems import Problem, View
from common.blocks.state import Move, board_relations, relation_english, relation_pddl
from common.errors import DataError

PREAMBLE = (
    "There are some items stacked on the table. You can perform either of the following actions:\n"
    "1. Move the topmost item of a stack to the top of another stack, or\n"
    "2. Unstack the topmost item of a stack and place it on the table\n\n"
    "Given an initial configuration and a set of goal requirements, output a series of actions "
    "that satisfies the goal requirements\n\n"
)
CHAT_INSTRUCTION = (
    "Answer with the actions only, one per line, in exactly the form of the examples; write nothing else.\n\n"
)


@dataclass(frozen=True)
class Prompting:
    """A prompt style: its options (see the module docstring)."""

    goal_examples: bool = False  # translation: goal prompt shows goal translations
    chat_instruction: bool = False


PROMPTINGS = {
    "paper": Prompting(),
    "goal-examples": Prompting(goal_examples=True),
    "chat": Prompting(chat_instruction=True),
}


def state_lines(board: Sequence[Sequence[str]]) -> list[str]:
    """Return the English lines of a board, stack by stack in the given order, bottom to top."""
    return [relation_english(r) for r in board_relations(board)]


def planning_block(view: View, plan: Sequence[Move] | None) -> str:
    """Return one "Initially: / Goal: / Actions:" block; with ``plan`` None it ends at "Actions:\\n"."""
    text = (
        "Initially:\n"
        + "".join(line + "\n" for line in state_lines(view.init_board))
        + "\nGoal:\n"
        + "".join(relation_english(r) + "\n" for r in view.goal)
        + "\nActions:\n"
    )
    return text if plan is None else text + render_plan(plan)


def planning_prompt(
    examples: Sequence[tuple[View, Sequence[Move]]], test: View, prompting: str = "paper"
) -> str:
    """Return the few-shot planning prompt for ``test`` with solved ``examples`` (view, plan)."""
    style = PROMPTINGS[prompting]
    head = PREAMBLE + (CHAT_INSTRUCTION if style.chat_instruction else "")
    shots = "".join(planning_block(view, plan) + "\n\n" for view, plan in examples)
    return head + shots + planning_block(test, None)


def translation_block(relations: Sequence[Sequence], with_facts: bool = True) -> str:
    """Return ";"-prefixed English lines of ``relations`` followed (if ``with_facts``) by their PDDL."""
    text = "\n".join(";" + relation_english(r) for r in relations)
    if with_facts:
        text += "\n" + "\n".join(relation_pddl(r) for r in relations)
    return text


def translation_prompts(examples: Sequence[View], test: View, prompting: str = "paper") -> dict[str, str]:
    """Return ``{"init": prompt, "goal": prompt}`` asking for the PDDL facts of the test's initial
    state and of its goal; each ends with the test's ";" lines and an opening "(" on a new line."""
    style = PROMPTINGS[prompting]
    init_shots = "".join(translation_block(board_relations(v.init_board)) + "\n\n" for v in examples)
    goal_shots = (
        "".join(translation_block(v.goal) + "\n\n" for v in examples) if style.goal_examples else init_shots
    )
    return {
        "init": init_shots + translation_block(board_relations(test.init_board), with_facts=False) + "\n(",
        "goal": goal_shots + translation_block(test.goal, with_facts=False) + "\n(",
    }


def completion_facts(completion: str, stop: str = ";", opened: bool = True) -> str:
    """Return the PDDL facts of a translation completion cut at the stop marker (the paper
    stopped at the next ";" line). When the prompt ``opened`` the first fact (it ends with "("),
    that "(" is put back in front, unless the answer opens its own; a chat answer (the model
    never saw a "(") is taken as written."""
    index = completion.find(stop)
    facts = completion if index < 0 else completion[:index]
    return facts if not opened or facts.lstrip().startswith("(") else "(" + facts


PROMPT_TYPES = ("nl", "pddl")
PARTS = {"nl": ("plan",), "pddl": ("init", "goal")}  # the prompt parts of an item, by prompt type


def prompt_records(
    problems: Sequence[Problem],
    view: str,
    prompt_type: str,
    prompting: str,
    example_plans: Callable[[Problem, View], Sequence[Move]],
) -> list[dict[str, Any]]:
    """Return one record per test problem (``nl``: part ``plan``) or two (``pddl``: parts
    ``init`` and ``goal``): ``Key, id, view, part, prompt_type, prompting, text``.

    The few-shot examples are the training problems (``test`` false) in id order, solved by
    ``example_plans(problem, view)``. Raises DataError when there are none.
    """
    if prompt_type not in PROMPT_TYPES or prompting not in PROMPTINGS:
        raise DataError(
            f"unknown prompt type {prompt_type!r} or prompting {prompting!r} "
            f"(known: {', '.join(PROMPT_TYPES)}; {', '.join(PROMPTINGS)})"
        )
    train = [p for p in problems if not p.test]
    if not train:
        raise DataError("no training problems (test: false) to draw few-shot examples from")
    train_views = [p.view(view) for p in train]
    solved = [(v, example_plans(p, v)) for p, v in zip(train, train_views, strict=True)]
    records: list[dict[str, Any]] = []
    for problem in (p for p in problems if p.test):
        test_view = problem.view(view)
        if prompt_type == "nl":
            texts = {"plan": planning_prompt(solved, test_view, prompting)}
        else:
            texts = translation_prompts(train_views, test_view, prompting)
        for part, text in texts.items():
            records.append(
                {
                    "Key": len(records),
                    "id": problem.id,
                    "view": view,
                    "part": part,
                    "prompt_type": prompt_type,
                    "prompting": prompting,
                    "text": text,
                }
            )
    return records
