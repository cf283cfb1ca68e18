"""Exact description sentences and each task's gold answer on hand-made canvases."""

import itertools
import random

import pytest

from common.canvas import describe
from common.canvas.shapes import Geometry, Shape
from common.canvas.tasks import TASKS, Impossible
from common.canvas.tasks import attributes as attr
from common.canvas.tasks.shuffle_tracking import position_question

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
        "There is a small green square at (10, 0). There is a small blue triangle at (10, 10)."
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
        made = qa("existence", CANVAS, selected, seed)
        assert made.pairs[0][1] == selected
        assert (attr.count(tuple(made.facts["query"]), identities) > 0) == (selected == "Yes")
    two = qa("count", CANVAS, "2", seed)  # e.g. small shapes, or non-red squares... some 2-match query
    assert two.pairs[0][1] == "2" and two.vocabulary == ["0", "1", "2", "3"]
    assert attr.count(tuple(two.facts["query"]), identities) == 2


def test_count_three_is_the_only_query_matching_everything():
    # no attribute is shared by all three shapes, so a count of 3 is impossible on this canvas
    with pytest.raises(Impossible):
        qa("count", CANVAS, "3")
    smalls = [Shape("small", c, "square", 10 * i, 0) for i, c in enumerate(["red", "blue", "green"])]
    question, answer = qa("count", smalls, "3").pairs[0]
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
    made = qa("transitivity", [pivot, below, above], "Below")
    assert made.description in (
        (
            "There are 3 shapes in a canvas. There is a small blue square in the canvas. "
            "Below the small blue square "
            "is a small blue triangle. Above the small blue square is a large yellow circle."
        ),
        (
            "There are 3 shapes in a canvas. There is a small blue square in the canvas. "
            "Above the small blue square "
            "is a large yellow circle. Below the small blue square is a small blue triangle."
        ),
    )
    assert made.pairs[0] == ("Where is the small blue triangle relative to the large yellow circle?", "Below")
    assert all(q != made.pairs[0][0] for q, _ in made.pairs[1:])
    with pytest.raises(Impossible, match="x axis"):
        qa("transitivity", [pivot, below, above], "Left")


def test_shuffle_tracking_answers():
    column = [
        Shape("small", "blue", "triangle", 0, -10),
        Shape("large", "blue", "square", 0, 0),
        Shape("large", "blue", "triangle", 0, 10),
    ]
    made = qa("shuffle_tracking", column, "1", swaps=0)
    assert made.description == (
        "There are 3 shapes in a canvas. From bottom to top, the shapes are a small blue "
        "triangle, a large blue square, and a large blue triangle."
    )
    assert made.pairs[0] == ("What shape is second from the top?", "Large Blue Square")
    assert position_question(0, 3) == "What shape is first from the bottom?"
    assert position_question(2, 3) == "What shape is first from the top?"
    with pytest.raises(Impossible):
        qa("shuffle_tracking", CANVAS, "0")  # the circle and the square are level


def test_existence_tracking_without_events_asks_about_the_canvas():
    made = qa("existence_tracking", CANVAS, "Yes", events=0)
    assert made.suffix == "" and made.pairs[0][1] == "Yes"
    assert made.pairs[0][0] in [f"Is there a {s.name} in the canvas?" for s in CANVAS]
    removed = qa("existence_tracking", CANVAS, "No", seed=4, events=3)
    asked = removed.pairs[0][0][len("Is there a ") : -len(" in the canvas?")]
    assert asked in removed.suffix  # the asked shape was touched by an event
    assert removed.pairs[0][1] == "No"


def test_unsupported_sizes():
    assert TASKS["shuffle_tracking"]().unsupported(2) == "shuffle_tracking needs at least 3 shapes"
    assert TASKS["transitivity"]().unsupported(2)
    assert TASKS["existence"]().unsupported(24, "No")
    assert TASKS["count"]().unsupported(24, "0") and not TASKS["count"]().unsupported(24, "12")


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
