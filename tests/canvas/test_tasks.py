"""Exact description sentences and each task's gold answer on hand-made canvases."""

import itertools
import random
import re

import pytest

from common.canvas import describe, reading
from common.canvas.shapes import Geometry, Shape, title
from common.canvas.tasks import TASKS, Impossible
from common.canvas.tasks import attributes as attr
from common.canvas.tasks.shuffle_tracking import (
    agreement_mix,
    agreements,
    cancels,
    position_question,
    random_swaps,
    rules_right,
)

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
            words = [w for w in made.facts["query"] if w]
            assert len(words) == 1 or all(any(w in i for i in identities) for w in words)  # near miss
    two = qa("count", CANVAS, "2:size", seed)  # "How many shapes are small?"
    assert two.pairs[0][1] == "2" and two.vocabulary == ["0", "1", "2", "3"]
    assert attr.count(tuple(two.facts["query"]), identities) == 2


@pytest.mark.parametrize("mask", attr.MASK_NAMES)
def test_existence_canvases_are_drawn_the_same_way_for_both_answers(mask):
    task = TASKS["existence"]()
    for seed in range(5):
        for n in (3, 8):
            yes = task.identities(random.Random(seed), n, f"Yes:{mask}")
            assert yes == task.identities(random.Random(seed), n, f"No:{mask}")
            assert any(attr.count(q, yes) == 0 for q in attr.queries_of_type(attr.MASK_NAMES[mask]))


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


@pytest.mark.parametrize("stratum", TASKS["coordinate"]().answer_strata(3))
def test_coordinate_places_the_subject_anew_for_the_answer(stratum):
    from common.canvas.relations import answer
    from common.canvas.shapes import fits

    canvas = [Shape("large", "red", "circle", -5, 3), SQUARE, Shape("small", "blue", "triangle", 20, -12)]
    for seed in range(5):
        made = qa("coordinate", canvas, stratum, seed=seed)
        subject, reference = reading.relative_pair(made.pairs[0][0])
        final = {s.name: s for s in made.shapes}
        assert made.pairs[0][1] == stratum == answer(final[reference], final[subject], G)
        assert final[reference] in canvas  # the reference keeps its centre: only the subject moves
        assert sum(s not in canvas for s in made.shapes) <= 1 and len(made.shapes) == 3
        others = [s for s in made.shapes if s.name != subject]
        assert fits(final[subject], others, G)
        assert made.description == describe.coordinates(made.shapes, G)


def test_coordinate_keeps_only_canvases_where_the_subject_could_take_every_answer():
    crowded = [Shape("large", "red", "circle", x, y) for x, y in ((-26, 26),)] + [
        Shape("small", "green", "square", 26, -26),
        Shape("small", "blue", "triangle", 26, 26),
    ]
    # a corner reference leaves no room for some answers: the canvas is refused for every answer
    refused = 0
    for seed in range(20):
        try:
            qa("coordinate", crowded, "Left", seed=seed)
        except Impossible:
            refused += 1
    assert refused > 0


COLUMN7 = [
    Shape(size, colour, kind, 0, y)
    for (size, colour, kind), y in zip(
        [
            ("small", "blue", "square"),
            ("small", "blue", "triangle"),
            ("large", "yellow", "circle"),
            ("small", "red", "square"),
            ("large", "green", "triangle"),
            ("small", "yellow", "circle"),
            ("large", "blue", "square"),
        ],
        range(-27, 28, 9),
        strict=True,
    )
]


@pytest.mark.parametrize("stratum", ["Above", "Below"])
def test_transitivity_asks_about_a_line_told_in_a_random_order(stratum):
    names = [s.name for s in COLUMN7]  # bottom to top
    orders = set()
    for seed in range(8):
        made = qa("transitivity", COLUMN7, stratum, seed)
        subject, reference = reading.relative_pair(made.pairs[0][0])
        s, r = names.index(subject), names.index(reference)
        assert made.pairs[0][1] == stratum and (s > r) == (stratum == "Above")
        assert r == 3 and abs(s - r) >= 2 and 0 < s < 6  # room on both sides; no end, no neighbour
        assert made.facts["chain"] == names
        text = made.description
        assert text.startswith("There are 7 shapes in a canvas.")
        assert reading.chain_line(text) == (names, "Above")
        links = [reading.chain_step(x) for x in reading.sentences(text)[1:]]
        assert all(links) and len(links) == 6
        orders.add(tuple(new for _, _, new in links))
        for shape in (subject, reference):  # two sentences of opposite meaning for each
            assert sum(shape in x for x in reading.sentences(text)) == 2
        for question, _ in made.pairs[1:]:  # examples name the ends and the reference's neighbours
            assert {names.index(n) for n in re.findall(reading.SHAPE, question)} <= {0, 2, 4, 6}
    assert len(orders) > 4  # the sentences' order follows no rule


def test_transitivity_forms_and_the_shapes_off_the_line():
    off = Shape("small", "green", "circle", 20, 1)  # level with the red square: off the line
    texts = {qa("transitivity", [*COLUMN7, off], "Below", seed).description for seed in range(8)}
    assert all(t.startswith("There are 8 shapes in a canvas.") for t in texts)
    assert all(t.endswith("There is also a small green circle in the canvas.") for t in texts)
    sentences = {s for t in texts for s in reading.sentences(t)}
    pair = "large green triangle", "small red square"  # the triangle is above the square
    told = {
        f"Above the {pair[1]} is a {pair[0]}.",
        f"Below the {pair[0]} is a {pair[1]}.",
        f"The {pair[0]} is above a {pair[1]}.",
        f"The {pair[1]} is below a {pair[0]}.",
    }
    assert told & sentences and len(told & sentences) >= 2  # one fact, told either way, either form
    with pytest.raises(Impossible, match="7-shape line going right"):
        qa("transitivity", COLUMN7, "Left")
    assert "at least 7 shapes" in TASKS["transitivity"]().unsupported(6)


def test_shuffle_tracking_answers():
    column = [
        Shape("small", "blue", "triangle", 0, -10),
        Shape("large", "blue", "square", 0, 0),
        Shape("large", "blue", "triangle", 0, 10),
    ]
    task = TASKS["shuffle_tracking"]()
    assert task.strata(3) == [["0", "1", "2"], ["3-1-3", "0-1-0", "0-1-0#1"]]
    made = qa("shuffle_tracking", column, "1|0-1-0")
    assert made.description.startswith(
        "There are 3 shapes in a canvas. From bottom to top, the shapes are a small blue "
        "triangle, a large blue square, and a large blue triangle."
    )
    assert made.pairs[0][0] == "What shape is second from the top?" and len(made.pairs) == 1  # no examples
    assert position_question(0, 3) == "What shape is first from the bottom?"
    assert position_question(2, 3) == "What shape is first from the top?"
    with pytest.raises(Impossible):
        qa("shuffle_tracking", CANVAS, "0|0-1-0")  # the circle and the square are level
    start = [s.name for s in column]
    for label in task.strata(3)[1]:
        for seed in range(5):
            made = qa("shuffle_tracking", column, f"2|{label}", seed)
            swaps = re.findall(r"The ([a-z ]+) and the ([a-z ]+) swap positions\.", made.description)
            assert len(swaps) == 4  # max(swaps, N)
            indices, order = [], list(start)
            for a, b in swaps:
                indices.append((order.index(a), order.index(b)))
                order[indices[-1][0]], order[indices[-1][1]] = b, a
            assert made.pairs[0][1] == title(tuple(order[2].split()))
            assert not cancels(indices)
            assert "-".join(map(str, agreements(3, indices))) == label.split("#")[0]


def test_shuffle_agreements_count_the_positions_each_rule_is_right_at():
    start = [str(i) for i in range(5)]
    rng = random.Random(4)
    for _ in range(50):
        swaps = random_swaps(rng, 5, 5, cancelling=True)
        right = [rules_right(start, swaps, p) for p in range(5)]
        counts = tuple(sum(rule in r for r in right) for rule in ("initial", "first-swap", "reverse"))
        assert agreements(5, swaps) == counts
    for n in (3, 4, 5, 8, 12):  # the mix averages one position per rule
        mix = agreement_mix(n, max(4, n))
        assert all(sum(s[i] for s in mix) == len(mix) for i in range(3))
    with pytest.raises(Impossible):  # 3 shapes, an odd number of swaps: the reverse order is the skill
        agreement_mix(3, 3)
    task = TASKS["shuffle_tracking"]()
    task.swaps = 3
    assert task.count(3) == 3 and task.count(8) == 8
    assert "no mix of 3 swaps of 3 shapes" in task.unsupported(3)


def test_cancelling_swaps():
    assert cancels([(0, 1), (1, 0)]) and cancels([(0, 1), (2, 3), (0, 1)])
    assert not cancels([(0, 1), (1, 2), (0, 1)]) and not cancels([(0, 1), (2, 3)])


@pytest.mark.parametrize("stratum", TASKS["existence_tracking"]().strata(3)[0])
def test_existence_tracking_asks_a_shape_with_a_twin_of_the_mirror_history(stratum):
    from common.canvas.tasks.existence_tracking import history

    answer, length = stratum.split(":")
    starts = set()
    for seed in range(12):
        made = qa("existence_tracking", CANVAS, stratum, seed=seed)
        asked = made.pairs[0][0][len("Is there a ") : -len(" in the canvas?")]
        twin = made.facts["twin"]
        events = reading.events(made.suffix)
        assert len(events) == 8 and made.pairs[0][1] == answer
        mine = [kind for name, kind in events if name == asked]
        theirs = [kind for name, kind in events if name == twin]
        assert mine == history(answer, int(length)) and len(theirs) == len(mine)
        assert theirs == [
            "add" if k == "remove" else "remove" for k in mine
        ]  # the mirror: ends the other way
        assert (asked in [s.name for s in CANVAS]) != (twin in [s.name for s in CANVAS])
        assert all(asked not in q and twin not in q for q, _ in made.pairs[1:])
        starts.add(next(i for i, (name, _) in enumerate(events) if name == asked))
    assert len(starts) > 2  # where its history starts is drawn, not fixed


def test_existence_tracking_strata():
    task = TASKS["existence_tracking"]()
    assert task.strata(3)[0] == ["Yes:2", "Yes:3", "No:2", "No:3"]
    assert "every identity" in task.unsupported(24, "Yes:2")
    task.events = 5
    assert "need 6 events" in task.unsupported(3, "Yes:2")


def test_unsupported_sizes():
    assert TASKS["shuffle_tracking"]().unsupported(2) == "shuffle_tracking needs at least 3 shapes"
    assert TASKS["transitivity"]().unsupported(6) and not TASKS["transitivity"]().unsupported(7)
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
