"""The state model: moves, applicability, relations and their English / PDDL renderings."""

import pytest

from common.blocks.state import (
    Move,
    applicable_moves,
    apply_move,
    board_relations,
    canonical,
    goal_holds,
    is_applicable,
    move_english,
    move_pddl,
    relation_english,
    relation_pddl,
)

BOARD = canonical([["mouse pad", "newspaper", "writing pad"], ["keyboard"]])


def test_canonical_ignores_stack_order_and_empty_stacks():
    assert canonical([["b"], [], ["a", "c"]]) == canonical([["a", "c"], ["b"]]) == (("a", "c"), ("b",))


def test_applicability_follows_the_domain():
    assert is_applicable(BOARD, Move("writing pad", "keyboard"))
    assert is_applicable(BOARD, Move("writing pad", None))
    assert is_applicable(BOARD, Move("keyboard", "writing pad"))
    assert not is_applicable(BOARD, Move("keyboard", None))  # already on the table
    assert not is_applicable(BOARD, Move("newspaper", "keyboard"))  # not clear
    assert not is_applicable(BOARD, Move("keyboard", "newspaper"))  # destination not clear
    assert not is_applicable(BOARD, Move("keyboard", "keyboard"))  # onto itself (noteq)
    assert not is_applicable(BOARD, Move("laptop", None))  # unknown item


def test_apply_move_and_errors():
    after = apply_move(BOARD, Move("writing pad", "keyboard"))
    assert after == (("keyboard", "writing pad"), ("mouse pad", "newspaper"))
    with pytest.raises(ValueError, match="not applicable"):
        apply_move(BOARD, Move("newspaper", None))


def test_applicable_moves_are_ordered_and_complete():
    moves = applicable_moves(BOARD)
    assert moves == [
        Move("keyboard", "writing pad"),
        Move("writing pad", None),
        Move("writing pad", "keyboard"),
    ]


def test_relations_of_a_board_and_their_sentences():
    relations = board_relations([["mouse pad", "newspaper"], ["keyboard"]])
    assert relations == [
        ("bot", "mouse pad", None),
        ("mid", "newspaper", "mouse pad"),
        ("top", None, "newspaper"),
        ("bot", "keyboard", None),
        ("top", None, "keyboard"),
    ]
    assert [relation_english(r) for r in relations[:3]] == [
        "The mouse pad rests on the table.",
        "The newspaper is on the mouse pad.",
        "There is nothing on the newspaper.",
    ]
    assert [relation_pddl(r) for r in relations[:3]] == [
        "(ontable mouse-pad)",
        "(on newspaper mouse-pad)",
        "(clear newspaper)",
    ]
    assert goal_holds(BOARD, [("top", None, "keyboard"), ("mid", "newspaper", "mouse pad")])
    assert not goal_holds(BOARD, [("top", None, "newspaper")])


def test_move_renderings():
    assert move_english(Move("writing pad", "keyboard")) == "Move the writing pad onto the keyboard."
    assert move_english(Move("writing pad")) == "Move the writing pad onto the table."
    assert move_pddl(BOARD, Move("writing pad")) == "(unstack writing-pad newspaper)"
    assert move_pddl(BOARD, Move("writing pad", "keyboard")) == "(stack writing-pad newspaper keyboard)"
    assert move_pddl(BOARD, Move("keyboard", "writing pad")) == "(stackfromtable keyboard writing-pad)"
