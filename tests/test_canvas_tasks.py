"""Exact description sentences and each task's gold answer on hand-made canvases."""

import itertools
import random
import re

import pytest

from common.canvas import describe
from common.canvas.shapes import Geometry, Shape, title
from common.canvas.tasks import TASKS, Impossible
from common.canvas.tasks import attributes as attr
from common.canvas.tasks.shuffle_tracking import RULES, position_question, rule_groups, rules_right

G = Geometry()
CIRCLE = Shape("large", "red", "circle", 0, 0)
SQUARE = Shape("small", "green", "square", 10, 0)
TRIANGLE = Shape("small", "blue", "triangle", 10, 10)
CANVAS = [CIRCLE, SQUARE, TRIANGLE]


def test_full_description():
    assert describe.full(CANVAS, G) == (
        "There are 3 shapes in a canvas. There is a large red circle in the canvas. "
        "A small green square is right of this large red circle. "
        "A small blue triangle is to the above right of this large red circle. "
        "There is a small green square in the canvas. A large red circle is left of this small green square. "
        "A small blue triangle is above this small green square. "
        "There is a small blue triangle in the canvas. "
        "A large red circle is to the below left of this small blue triangle. "
        "A small green square is below this small blue triangle."
    )


def test_partial_description_names_each_pair_once():
    assert describe.partial(CANVAS, G) == (
        "There are 3 shapes in a canvas. There is a large red circle in the canvas. "
        "A small green square is right of this large red circle. "
        "A small blue triangle is to the above right of this large red circle. "
        "There is a small green square in the canvas. "
        "A small blue triangle is above this small green square. "
        "There is a small blue triangle in the canvas."
    )


def test_coordinates_description():
    assert describe.coordinates(CANVAS, G) == (
        "There are 3 shapes in a canvas. There is a large red circle at (0, 0). "
        "There is a small green square at (10, 0). There is a small blue triangle at (10, 10). "
        "A small circle has radius 1 and a large one radius 4; a small square or triangle has side 2 "
        "and a large one side 4 (triangles are equilateral, point up and are centred on their centroid, "
        "so their height is 0.866 times their side). A shape is right of another when its centre's x is "
        "larger by more than half the larger of their two widths, and left of it when smaller by as "
        "much; above and below likewise with y and heights. A pair closer than that on an axis has no "
        "relation on it."
    )


def test_task_owned_sentences():
    names = ["small blue triangle", "large blue square", "large blue triangle"]
    assert describe.line_up(3, names) == (
        "There are 3 shapes in a canvas. From bottom to top, the shapes are a "
        "small blue triangle, a large blue square, and a large blue triangle."
    )
    assert describe.line_up(2, names[:2]).endswith("are a small blue triangle and a large blue square.")
    assert (
        describe.swap(names[1], names[2])
        == "The large blue square and the large blue triangle swap positions."
    )
    assert describe.added("large blue triangle") == "A large blue triangle is added to the canvas."
    assert describe.removed("large green circle") == "The large green circle is removed from the canvas."


def test_query_wording():
    assert attr.plural_question(("large", "green", "triangle")) == "How many large green triangles are there?"
    assert attr.plural_question((None, "red", None)) == "How many shapes are red?"
    assert attr.plural_question(("small", "red", None)) == "How many shapes are small and red?"
    assert attr.singular((None, "red", None)) == "shape that is red"
    assert attr.singular(("large", "green", "circle")) == "large green circle"


def qa(task, shapes, selected, seed=0, examples=2, **settings):
    instance = TASKS[task]()
    for key, value in settings.items():
        setattr(instance, key, value)
    return instance.generate_questions(shapes, random.Random(seed), G, selected, examples)


@pytest.mark.parametrize("seed", range(10))
def test_existence_and_count_answers(seed):
    identities = [s.identity for s in CANVAS]
    for selected in ("Yes", "No"):
        for mask in attr.MASKS:
            if selected == "No" and attr.mask_name(mask) in ("size", "kind"):  # every size and kind is there
                with pytest.raises(Impossible):
                    qa("existence", CANVAS, f"No:{attr.mask_name(mask)}", seed)
                continue
            made = qa("existence", CANVAS, f"{selected}:{attr.mask_name(mask)}", seed)
            assert made.pairs[0][1] == selected
            assert attr.mask_of(tuple(made.facts["query"])) == mask
            assert (attr.count(tuple(made.facts["query"]), identities) > 0) == (selected == "Yes")
    two = qa("count", CANVAS, "2:size", seed)  # "How many shapes are small?"
    assert two.pairs[0][1] == "2" and two.vocabulary == ["0", "1", "2", "3"]
    assert attr.count(tuple(two.facts["query"]), identities) == 2


def test_count_three_is_the_only_query_matching_everything():
    # no attribute is shared by all three shapes, so a count of 3 is impossible on this canvas
    with pytest.raises(Impossible):
        qa("count", CANVAS, "3:size")
    smalls = [Shape("small", c, "square", 10 * i, 0) for i, c in enumerate(["red", "blue", "green"])]
    question, answer = qa("count", smalls, "3:size").pairs[0]
    assert answer == "3" and question in (
        "How many shapes are small?",
        "How many squares are there?",
        "How many small squares are there?",
    )


def test_coordinate_answers():
    assert qa("coordinate", CANVAS, "Above Right").pairs[0] == (
        "Where is the small blue triangle relative to the large red circle?",
        "Above Right",
    )
    assert qa("coordinate", CANVAS, "Below").pairs[0] == (
        "Where is the small green square relative to the small blue triangle?",
        "Below",
    )
    with pytest.raises(Impossible):
        qa("coordinate", CANVAS, "Above Left")


def test_transitivity_chain_the_seed_example():
    pivot = Shape("small", "blue", "square", 0, 0)
    below = Shape("small", "blue", "triangle", 0, -10)
    above = Shape("large", "yellow", "circle", 0, 10)
    start = "There are 3 shapes in a canvas. There is a small blue square in the canvas."
    triangle = {
        "plain": "Below the small blue square is a small blue triangle.",
        "inverted": "The small blue square is above a small blue triangle.",
    }
    circle = {
        "Above the small blue square is a large yellow circle.",
        "The small blue square is below a large yellow circle.",
    }
    for intro, form in (("intro-same", "plain"), ("intro-other", "inverted")):
        for seed in range(6):
            made = qa("transitivity", [pivot, below, above], f"Below:{intro}:ref-same", seed)
            assert made.pairs[0] == (
                "Where is the small blue triangle relative to the large yellow circle?",
                "Below",
            )
            text = made.description
            assert text.startswith(start) and triangle[form] in text
            assert any(sentence in text for sentence in circle)
            assert all(q != made.pairs[0][0] for q, _ in made.pairs[1:])
    # the subject is never the pivot; "Above" asks about the circle
    made = qa("transitivity", [pivot, below, above], "Above:intro-other:ref-other")
    assert made.pairs[0][0] == "Where is the large yellow circle relative to the small blue triangle?"
    assert "The small blue square is below a large yellow circle." in made.description
    with pytest.raises(Impossible, match="x axis"):
        qa("transitivity", [pivot, below, above], "Left:intro-same:ref-same")


def test_shuffle_tracking_answers():
    column = [
        Shape("small", "blue", "triangle", 0, -10),
        Shape("large", "blue", "square", 0, 0),
        Shape("large", "blue", "triangle", 0, 10),
    ]
    made = qa("shuffle_tracking", column, "1|initial", swaps=0)
    assert made.description == (
        "There are 3 shapes in a canvas. From bottom to top, the shapes are a small blue "
        "triangle, a large blue square, and a large blue triangle."
    )
    assert made.pairs == [("What shape is second from the top?", "Large Blue Square")]  # no examples
    assert position_question(0, 3) == "What shape is first from the bottom?"
    assert position_question(2, 3) == "What shape is first from the top?"
    with pytest.raises(Impossible):
        qa("shuffle_tracking", CANVAS, "0|none-2")  # the circle and the square are level
    # with swaps, exactly the rules of the label give the answer
    task = TASKS["shuffle_tracking"]()
    assert task.strata(3) == [
        ["0", "1", "2"],
        ["initial+first-swap+last-named", "last-swap-first+first-named+most-swapped", "none-2"],
    ]
    for label in task.strata(3)[1]:
        for seed in range(5):
            made = qa("shuffle_tracking", column, f"2|{label}", seed)
            assert made.description.count("swap positions.") == 3
            start = [s.name for s in column]
            swaps = re.findall(r"The ([a-z ]+) and the ([a-z ]+) swap positions\.", made.description)
            indices = []
            order = list(start)
            for a, b in swaps:
                indices.append((order.index(a), order.index(b)))
                order[indices[-1][0]], order[indices[-1][1]] = b, a
            assert made.pairs[0][1] == title(tuple(order[2].split()))
            expected = [] if label.startswith("none") else label.split("+")
            assert rules_right(start, indices, 2) == expected


def test_shuffle_rule_groups_name_every_rule_once():
    for n in range(3, 13):
        groups = rule_groups(n, 3)
        assert len(groups) == n
        assert sorted(rule for group in groups for rule in group) == sorted(RULES)
        assert all(group == [r for r in RULES if r in group] for group in groups)  # in RULES order
    assert rule_groups(5, 2) == [["initial"], [], [], [], []]  # fewer swaps: only the line-up balanced


@pytest.mark.parametrize(
    "history", ["removed-added", "added-removed", "removed-added-removed", "added-removed-added"]
)
def test_existence_tracking_asks_a_touched_shape_with_each_history(history):
    from common.canvas.tasks.existence_tracking import HISTORIES

    for seed in range(8):
        made = qa("existence_tracking", CANVAS, history, seed=seed, events=3)
        asked = made.pairs[0][0][len("Is there a ") : -len(" in the canvas?")]
        events = [
            ((m.group(1) or m.group(2)), "add" if m.group(1) else "remove")
            for m in re.finditer(
                r"A ([a-z]+ [a-z]+ [a-z]+) is added|The ([a-z]+ [a-z]+ [a-z]+) is removed", made.suffix
            )
        ]
        assert len(events) == 3
        assert [kind for name, kind in events if name == asked] == HISTORIES[history][0]
        assert made.pairs[0][1] == HISTORIES[history][1]
        assert (asked in [s.name for s in CANVAS]) == history.startswith("removed")
        # the last event of all agrees with the answer after three events on the asked shape only
        last_agrees = (events[-1][1] == "add") == (made.pairs[0][1] == "Yes")
        assert last_agrees == (len(HISTORIES[history][0]) == 3)
    assert TASKS["existence_tracking"]().unsupported(3, "removed-added") is None
    task = TASKS["existence_tracking"]()
    task.events = 2
    assert "need 3 events" in task.unsupported(3, "added-removed")
    assert "none can be added" in TASKS["existence_tracking"]().unsupported(24, "added-removed")
    assert TASKS["existence_tracking"]().strata(24) == [["removed-added", "removed-added-removed"]]


def test_unsupported_sizes():
    assert TASKS["shuffle_tracking"]().unsupported(2) == "shuffle_tracking needs at least 3 shapes"
    assert TASKS["transitivity"]().unsupported(2)
    assert TASKS["existence"]().unsupported(24, "Yes:colour")  # every answer would be Yes
    assert TASKS["existence"]().unsupported(16, "No:size")
    assert not TASKS["existence"]().unsupported(16, "No:kind")
    assert TASKS["count"]().unsupported(24, "12")  # counts fixed by the wording
    assert TASKS["count"]().unsupported(8, "8:kind") is None and TASKS["count"]().unsupported(8, "7:colour")


def test_shuffle_tracking_places_its_canvases_in_a_column():
    from common.canvas.relations import vertical
    from common.canvas.shapes import IDENTITIES, bounding_box, fits

    task = TASKS["shuffle_tracking"]()
    rng = random.Random(1)
    for n in (3, 8, 12):
        identities = rng.sample(IDENTITIES, n)
        column = task.place(rng, identities, G)
        assert [s.identity for s in column] == identities
        assert all(vertical(a, b, G) == "Above" for a, b in itertools.pairwise(column))
        assert all(fits(s, column[:i], G) for i, s in enumerate(column))
        assert all(bounding_box(s, G)[1] > -32 and bounding_box(s, G)[3] < 32 for s in column)
    with pytest.raises(Impossible, match="do not fit in one column"):
        task.place(rng, list(IDENTITIES), G)
