"""The blocks built-in models (``BASELINES``): planners for ``lm_plan.py``, translators for
``codex_translate.py``.

Planners (task ``nl``) answer with a plan as English sentences: ``noop`` (the empty plan),
``random`` (random applicable moves: it never looks at the goal, so it measures how often blind
activity reaches a goal) and ``oracle`` (a shortest plan). Each plan is a plain function
``plan(view, rng) -> list[Move]`` (``PLANNERS``). Translators (task ``pddl``) write PDDL facts:
``rules`` reads the English template lines of the prompt (an upper bound for the LLM + planner
method; shown only a picture, it reads the picture exactly); ``oracle-facts`` writes the true
problem's facts and ``random-facts`` those of a random board of the same items (asked by name
only: how often a translation that ignores the description still succeeds). Every draw is
seeded per problem (and part), so any order of asking gives the same answers.
"""

import io
import random
from collections.abc import Callable
from typing import Any

from PIL import Image

from common.blocks.boards import uniform_board
from common.blocks.nlplan import render_plan
from common.blocks.picture import read_picture
from common.blocks.planner import optimal_plan
from common.blocks.problems import View
from common.blocks.state import (
    Move,
    applicable_moves,
    apply_move,
    board_relations,
    canonical,
    relation_pddl,
)
from common.blocks.translate import rule_translate
from common.models.base import Message, Reply
from common.models.builtin import BuiltinModel
from common.models.images import MARKER, text_of


def noop_plan(view: View, rng: random.Random) -> list[Move]:
    """Return the empty plan (succeeds exactly when the goal already holds)."""
    return []


def random_plan(view: View, rng: random.Random, length: int | None = None) -> list[Move]:
    """Return ``length`` random applicable moves (default: as many as there are items),
    each drawn uniformly from the moves applicable at that point. Uses only ``rng``."""
    board = canonical(view.init_board)
    steps = len(view.items) if length is None else length
    plan = []
    for _ in range(steps):
        moves = applicable_moves(board)
        if not moves:
            break
        move = moves[rng.randrange(len(moves))]
        board = apply_move(board, move)
        plan.append(move)
    return plan


def oracle_plan(view: View, rng: random.Random) -> list[Move]:
    """Return a shortest plan (empty when the goal cannot be reached, which never happens for
    generated problems)."""
    return optimal_plan(view.init_board, view.goal) or []


PLANNERS: dict[str, Callable[[View, random.Random], list[Move]]] = {
    "noop": noop_plan,
    "random": random_plan,
    "oracle": oracle_plan,
}


class Planner(BuiltinModel):
    """A built-in planner behind the model interface: answers with its plan as English sentences."""

    task = "nl"
    seeded = True
    plan: Callable[[View, random.Random], list[Move]] = staticmethod(noop_plan)

    def complete(self, messages: list[Message], item: dict[str, Any]) -> Reply:
        """Return the plan for ``item["problem"]``, drawn with ``random.Random(f"{seed}:{id}:{view}")``."""
        rng = self.rng(item, item["id"], item["view"])
        return Reply(render_plan(self.plan(item["problem"], rng)), attempts=0)


class NoopPlanner(Planner):
    """The empty plan: succeeds exactly where the goal already holds."""

    name = "noop"
    plan = staticmethod(noop_plan)


class RandomPlanner(Planner):
    """As many random applicable moves as there are items."""

    name = "random"
    plan = staticmethod(random_plan)


class OraclePlanner(Planner):
    """A shortest plan: the ceiling."""

    name = "oracle"
    plan = staticmethod(oracle_plan)


def asked_part(messages: list[Message], item: dict[str, Any]) -> str:
    """Return the part a translation request asks for: "goal" when its last message continues
    the item's goal prompt, else "init"."""
    goal = MARKER.sub("<image>", item["texts"]["goal"])
    return "goal" if text_of(messages[-1]).startswith(goal) else "init"


class RuleTranslator(BuiltinModel):
    """The built-in translator: reads the test's English template lines at the end of a
    translation prompt and writes their facts, as a model continuing after the prompt's "(" would.
    Shown only a picture (the ``image`` modality), it reads the picture exactly instead
    (``picture.read_picture``): an upper bound of reading pictures, as of reading the templates."""

    name = "rules"
    task = "pddl"

    def complete(self, messages: list[Message], item: dict[str, Any]) -> Reply:
        """Return the facts of the last prompt's final block, without its opening "("."""
        test_block = text_of(messages[-1]).rsplit("\n\n", 1)[-1]
        facts = rule_translate(test_block)
        pictures = self.pictures(messages[-1:])
        if not facts and pictures:
            init, goal = read_picture(Image.open(io.BytesIO(pictures[-1])))
            relations = board_relations(init) if asked_part(messages, item) == "init" else goal
            facts = "".join(relation_pddl(r) + "\n" for r in relations)
        return Reply(facts.removeprefix("("), attempts=0)


class FactsTranslator(BuiltinModel):
    """A built-in translator that reads the TRUE problem instead of the English (asked by name
    only): ``oracle-facts`` writes its facts (a ceiling that cannot misread), ``random-facts`` the
    facts of a board of the same items drawn uniformly (for the goal: as many of that board's
    relations as the goal has), seeded per problem and part."""

    task = "pddl"
    seeded = True
    default = False

    def complete(self, messages: list[Message], item: dict[str, Any]) -> Reply:
        """Return the facts of the part asked (the goal when the last message continues the goal
        prompt, else the initial state), without the prompt's opening "("."""
        view = item["problem"]
        part = asked_part(messages, item)
        return Reply(
            "".join(relation_pddl(r) + "\n" for r in self.facts(view, item, part)).removeprefix("("),
            attempts=0,
        )

    def facts(self, view: View, item: dict[str, Any], part: str) -> list:
        """Return the relations this translator writes for ``part`` of ``item``."""
        raise NotImplementedError


class OracleFacts(FactsTranslator):
    """The true problem's facts."""

    name = "oracle-facts"
    stands_for = "oracle"  # `--model oracle` (`make all MODEL=oracle`) asked for facts

    def facts(self, view: View, item: dict[str, Any], part: str) -> list:
        """Return the true initial board's relations, or the goal."""
        return board_relations(view.init_board) if part == "init" else list(view.goal)


class RandomFacts(FactsTranslator):
    """The facts of a random board of the same items."""

    name = "random-facts"
    stands_for = "random"

    def facts(self, view: View, item: dict[str, Any], part: str) -> list:
        """Return the relations of a uniform random board (for the goal, a sample of as many as it has)."""
        rng = self.rng(item, item["id"], item["view"], part)
        relations = board_relations(uniform_board(view.items, rng))
        if part == "goal":
            relations = rng.sample(relations, min(len(view.goal), len(relations)))
        return relations


BASELINES = {
    "noop": NoopPlanner,
    "random": RandomPlanner,
    "oracle": OraclePlanner,
    "rules": RuleTranslator,
    "oracle-facts": OracleFacts,
    "random-facts": RandomFacts,
}
