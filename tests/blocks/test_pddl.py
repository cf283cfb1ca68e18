"""The reader of model-written PDDL facts: every error kind, name matching, state consistency."""

import pytest

from common.blocks.consistency import goal_conflicts, state_from_relations
from common.blocks.pddl import FactError, read_facts, read_state

OBJECTS = ["dryer sheets", "chainsaw", "notebook"]


def test_reads_facts_with_hyphens_case_and_comments():
    text = (
        "; the initial state\n(ontable Chainsaw)\n(ON dryer-sheets chainsaw)\n(clear dryer-sheets)\n"
        "(noteq notebook chainsaw) (ontable notebook) (clear notebook)\n(clear notebook)\n"
    )
    assert read_facts(text, OBJECTS) == [
        ("bot", "chainsaw", None),
        ("mid", "dryer sheets", "chainsaw"),
        ("top", None, "dryer sheets"),
        ("bot", "notebook", None),
        ("top", None, "notebook"),
    ]
    assert read_state(text, OBJECTS) == (("chainsaw", "dryer sheets"), ("notebook",))


@pytest.mark.parametrize(
    "text, kind, where",
    [
        ("(ontable chainsaw)\n(under notebook chainsaw)", "unknown predicate", "line 2, column 1"),
        ("(ontable chainsaw)\n(on notebook table)", "undeclared object", "'table'"),
        ("(ontable necktie)", "undeclared object", "'necktie'"),
        ("(on notebook)", "arity", "on takes 2 argument(s), got 1"),
        ("(clear notebook chainsaw)", "arity", "clear takes 1 argument(s), got 2"),
        ("(ontable notebook", "syntax", "'(' is never closed"),
        ("(ontable notebook))", "syntax", "')' without a matching '('"),
        ("(ontable (notebook))", "syntax", "nested '('"),
        ("ontable notebook", "syntax", "outside parentheses"),
        ("(clear notebook)\n  ()", "syntax", "line 2, column 4: empty atom"),
    ],
)
def test_every_reader_error_names_its_kind_and_place(text, kind, where):
    with pytest.raises(FactError) as info:
        read_facts(text, OBJECTS)
    assert info.value.kind == kind
    assert where in str(info.value)


@pytest.mark.parametrize(
    "text, conflict",
    [
        (
            "(ontable chainsaw)(clear chainsaw)(ontable notebook)(clear notebook)",
            "'dryer sheets' has no support",
        ),
        (
            (
                "(ontable chainsaw)(on chainsaw notebook)(ontable notebook)(on dryer-sheets notebook)"
                "(clear dryer-sheets)"
            ),
            "has two supports",
        ),
        (
            (
                "(ontable chainsaw)(on notebook chainsaw)(on dryer-sheets chainsaw)(clear notebook)"
                "(clear dryer-sheets)"
            ),
            "has two items on it",
        ),
        (
            (
                "(ontable chainsaw)(on dryer-sheets chainsaw)(clear chainsaw)(clear dryer-sheets)"
                "(ontable notebook)(clear notebook)"
            ),
            "(clear chainsaw) contradicts (on dryer-sheets chainsaw)",
        ),
        (
            "(ontable chainsaw)(on dryer-sheets chainsaw)(ontable notebook)(clear notebook)",
            "'dryer sheets' has nothing on it but no (clear dryer-sheets) fact",
        ),
        (
            "(on chainsaw notebook)(on notebook chainsaw)(ontable dryer-sheets)(clear dryer-sheets)",
            "cycle of on facts",
        ),
    ],
)
def test_inconsistent_states_are_refused_with_the_reason(text, conflict):
    with pytest.raises(FactError) as info:
        read_state(text, OBJECTS)
    assert info.value.kind == "inconsistent state" and conflict in str(info.value)


def test_goal_conflicts_find_the_impossible_goal_of_problem_026():
    goal = read_facts("(clear notebook)\n(on dryer-sheets chainsaw)\n(clear chainsaw)\n", OBJECTS)
    assert goal_conflicts(goal, OBJECTS) == ["(clear chainsaw) contradicts (on dryer-sheets chainsaw)"]
    assert goal_conflicts(goal[:2], OBJECTS) == []
    on_itself = [("mid", "notebook", "notebook")]
    assert goal_conflicts(on_itself) == ["(on notebook notebook) puts an item on itself"]


def test_state_from_relations_returns_the_board():
    relations = [
        ("bot", "notebook", None),
        ("mid", "chainsaw", "notebook"),
        ("top", None, "chainsaw"),
        ("bot", "dryer sheets", None),
        ("top", None, "dryer sheets"),
    ]
    assert state_from_relations(relations, OBJECTS) == ((("dryer sheets",), ("notebook", "chainsaw")), [])
