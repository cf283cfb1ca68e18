"""Few-shot prompts: natural-language planning and NL-to-PDDL translation, as in the paper.

Planning prompt: a preamble, then for each training problem of the same view an
"Initially: / Goal: / Actions:" block solved by a shortest plan, then the test problem's block
ending with "Actions:\\n". Translation prompts (LLM + planner): blocks of ";"-prefixed English
lines followed by their PDDL facts, then the test's ";" lines and an opening "(" that starts
the model's PDDL (``completion_facts`` puts it back in front of the completion).

A set may also show its problems as pictures (``modality``, ``common.pictures.modality``): in
``image`` a problem's "Initially:" block holds the marker of its picture
(``common/blocks/picture.py``: initial stacks and goal) instead of the English lines, in
``text+image`` the marker and the lines; the preamble (planning) or the first example
(translation) says how to read the pictures (``picture.LEGEND``). The text prompt stays the
record's ``text`` (its Key); the others are in ``modalities``.

Prompt styles are named by a ``prompting`` label (``PROMPTINGS``): ``paper`` reproduces the
released prompts (the goal prompt reuses the initial-state examples, as the paper did);
``goal-examples`` shows goal translations in the goal prompt; ``chat`` adds one instruction
line for chat models that otherwise answer in prose.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from common.blocks.nlplan import render_plan
from common.blocks.picture import LEGEND, name_of
from common.blocks.problems import Problem, View
from common.blocks.state import Move, board_relations, relation_english, relation_pddl
from common.errors import DataError
from common.pictures.modality import TEXT, shows_pictures, shows_words
from common.pictures.store import marker

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


def planning_block(view: View, plan: Sequence[Move] | None, modality: str = TEXT) -> str:
    """Return one "Initially: / Goal: / Actions:" block; with ``plan`` None it ends at "Actions:\\n".
    A picture ``modality`` puts the problem's picture after "Initially:" (``image``: instead of the
    English lines)."""
    picture = marker(name_of(view)) + "\n" if shows_pictures(modality) else ""
    words = (
        "".join(line + "\n" for line in state_lines(view.init_board))
        + "\nGoal:\n"
        + "".join(relation_english(r) + "\n" for r in view.goal)
    )
    text = "Initially:\n" + picture + (words if shows_words(modality) else "") + "\nActions:\n"
    return text if plan is None else text + render_plan(plan)


def planning_prompt(
    examples: Sequence[tuple[View, Sequence[Move]]],
    test: View,
    prompting: str = "paper",
    modality: str = TEXT,
) -> str:
    """Return the few-shot planning prompt for ``test`` with solved ``examples`` (view, plan), in
    ``modality`` (a picture modality says how to read the pictures after the preamble)."""
    style = PROMPTINGS[prompting]
    head = PREAMBLE + (LEGEND + "\n\n" if shows_pictures(modality) else "")
    head += CHAT_INSTRUCTION if style.chat_instruction else ""
    shots = "".join(planning_block(view, plan, modality) + "\n\n" for view, plan in examples)
    return head + shots + planning_block(test, None, modality)


PICTURE_LINES = {"init": ";The initial stacks: {picture}", "goal": ";The goal: {picture}"}


def translation_block(
    relations: Sequence[Sequence],
    with_facts: bool = True,
    modality: str = TEXT,
    view: View | None = None,
    part: str = "init",
) -> str:
    """Return ";"-prefixed English lines of ``relations`` followed (if ``with_facts``) by their PDDL.
    A picture ``modality`` opens the block with a ";" line naming the ``part`` shown in ``view``'s
    picture (``image``: instead of the English lines)."""
    lines = [";" + relation_english(r) for r in relations] if shows_words(modality) else []
    if shows_pictures(modality):
        lines.insert(0, PICTURE_LINES[part].format(picture=marker(name_of(view))))
    text = "\n".join(lines)
    if with_facts:
        text += "\n" + "\n".join(relation_pddl(r) for r in relations)
    return text


def translation_prompts(
    examples: Sequence[View], test: View, prompting: str = "paper", modality: str = TEXT
) -> dict[str, str]:
    """Return ``{"init": prompt, "goal": prompt}`` asking for the PDDL facts of the test's initial
    state and of its goal; each ends with the test's ";" lines and an opening "(" on a new line.
    In a picture ``modality`` each starts with a ";" line saying how to read the pictures."""
    style = PROMPTINGS[prompting]

    def block(view: View, part: str, with_facts: bool = True) -> str:
        relations = board_relations(view.init_board) if part == "init" else view.goal
        return translation_block(relations, with_facts, modality, view, part)

    head = ";" + LEGEND + "\n" if shows_pictures(modality) else ""
    init_shots = "".join(block(v, "init") + "\n\n" for v in examples)
    goal_shots = "".join(block(v, "goal") + "\n\n" for v in examples) if style.goal_examples else init_shots
    return {
        "init": head + init_shots + block(test, "init", with_facts=False) + "\n(",
        "goal": head + goal_shots + block(test, "goal", with_facts=False) + "\n(",
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
    modalities: Sequence[str] = (TEXT,),
) -> list[dict[str, Any]]:
    """Return one record per test problem (``nl``: part ``plan``) or two (``pddl``: parts
    ``init`` and ``goal``): ``Key, id, view, part, prompt_type, prompting, text`` and, when
    ``modalities`` has more than text, ``modalities`` (modality -> the prompt in it; the pictures
    its markers name are ``pictured_views``').

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
        by_modality = {}
        for modality in [TEXT, *(m for m in modalities if m != TEXT)]:
            if prompt_type == "nl":
                by_modality[modality] = {"plan": planning_prompt(solved, test_view, prompting, modality)}
            else:
                by_modality[modality] = translation_prompts(train_views, test_view, prompting, modality)
        for part, text in by_modality[TEXT].items():
            record = {
                "Key": len(records),
                "id": problem.id,
                "view": view,
                "part": part,
                "prompt_type": prompt_type,
                "prompting": prompting,
                "text": text,
            }
            others = {modality: texts[part] for modality, texts in by_modality.items() if modality != TEXT}
            records.append({**record, "modalities": others} if others else record)
    return records


def pictured_views(problems: Sequence[Problem], view: str) -> list[View]:
    """Return the views a picture modality's prompts of ``view`` show: every problem's (the
    training problems are the examples of every test problem)."""
    return [problem.view(view) for problem in problems]
