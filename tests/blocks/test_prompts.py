"""Prompts against the released ones: equal up to the order of stacks (hash-dependent there)."""

import pytest

from common.blocks.planner import optimal_plan
from common.blocks.prompts import (
    PROMPTINGS,
    completion_facts,
    planning_prompt,
    prompt_records,
    translation_prompts,
)
from common.blocks.release import VIEWS, load_records, plans_dir, training_plan
from common.blocks.state import apply_move, canonical, goal_holds


def stacks_sorted(lines):
    """Return ``lines`` with each stack's lines (a stack starts at its bottom) as a sorted group."""
    groups = []
    for line in lines:
        starts = line.endswith("rests on the table.") or line.startswith("(ontable")
        if starts or not groups:
            groups.append([])
        groups[-1].append(line)
    english = sorted(g for g in groups if not g[0].startswith("("))
    facts = sorted(g for g in groups if g[0].startswith("("))
    return [line for group in english + facts for line in group]


def normalise_planning(text):
    """Sort the stacks of every "Initially:" section of a planning prompt."""
    parts = text.split("\n\n")
    return [
        stacks_sorted(p.splitlines()) if p.lstrip("\n").startswith("Initially:") else p.splitlines()
        for p in parts
    ]


def normalise_translation(text, last_is_state):
    """Sort the stacks of every state paragraph of a translation prompt."""
    parts = text.split("\n\n")
    return [
        stacks_sorted(p.splitlines()) if i < len(parts) - 1 or last_is_state else p.splitlines()
        for i, p in enumerate(parts)
    ]


def train_views(problems, view):
    return [problems[pid].view(view) for pid in ("000", "001", "002")]


@pytest.mark.parametrize("view", VIEWS)
def test_planning_prompts_equal_the_released_queries(release, released_problems, view):
    examples = [
        (v, training_plan(plans_dir(release), view, pid, v.items))
        for pid, v in zip(("000", "001", "002"), train_views(released_problems, view), strict=True)
    ]
    for record in load_records("gpt", view, release):
        ours = planning_prompt(examples, released_problems[record["id"]].view(view))
        assert normalise_planning(ours) == normalise_planning(record["query"]), record["id"]


@pytest.mark.parametrize("view", VIEWS)
def test_translation_prompts_equal_the_released_ones(release, released_problems, view):
    examples = train_views(released_problems, view)
    for record in load_records("codex", view, release):
        ours = translation_prompts(examples, released_problems[record["id"]].view(view))
        assert ours["init"].endswith("\n(") and ours["goal"].endswith("\n(")
        assert normalise_translation(ours["init"][:-2], True) == normalise_translation(
            record["init_prompt"], True
        ), record["id"]
        assert normalise_translation(ours["goal"][:-2], False) == normalise_translation(
            record["goal_prompt"], False
        ), record["id"]


@pytest.mark.parametrize("view", VIEWS)
def test_our_example_plans_are_as_short_as_the_papers(release, released_problems, view):
    for pid, v in zip(("000", "001", "002"), train_views(released_problems, view), strict=True):
        ours = optimal_plan(v.init_board, v.goal)
        theirs = training_plan(plans_dir(release), view, pid, v.items)
        state = canonical(v.init_board)
        for move in ours:
            state = apply_move(state, move)
        assert goal_holds(state, v.goal) and len(ours) == len(theirs)


def test_prompt_records_and_styles(released_problems):
    problems = list(released_problems.values())
    records = prompt_records(
        problems, "two", "pddl", "goal-examples", lambda p, v: optimal_plan(v.init_board, v.goal)
    )
    assert len(records) == 200 and [r["Key"] for r in records] == list(range(200))
    assert [r["part"] for r in records[:2]] == ["init", "goal"] and records[0]["id"] == "003"
    assert "(clear newspaper)\n(ontable accordion)\n\n" in records[1]["text"]  # a goal translation example
    chat = prompt_records(problems[:4], "one", "nl", "chat", lambda p, v: optimal_plan(v.init_board, v.goal))
    assert "Answer with the actions only" in chat[0]["text"] and chat[0]["text"].endswith("Actions:\n")
    assert set(PROMPTINGS) == {"paper", "goal-examples", "chat"}
    assert completion_facts("ontable a)\n(clear a)\n\n;The b") == "(ontable a)\n(clear a)\n\n"
