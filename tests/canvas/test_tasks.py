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


def _query_of(question):
    """Return the query an existence question asks."""
    words = re.findall(r"small|large|red|blue|yellow|green|square|circle|triangle", question)
    return tuple(next((w for w in words if w in values), None) for values in attr.VALUES)


def canvas_words(shapes):
    """Return how often each attribute word occurs among a canvas's shapes."""
    return sorted(word for s in shapes for word in s.identity)


@pytest.mark.parametrize("seed", range(6))
def test_existence_is_a_two_by_two_tuple_over_the_query_and_the_canvas(seed):
    from common.canvas.tasks.existence import TYPES

    task = TASKS["existence"]()
    for answer in ("Yes", "No"):
        for mask in TYPES:
            stratum = f"{answer}:{attr.mask_name(mask)}"
            rng = random.Random(f"{seed}:{stratum}")
            for _ in range(50):
                try:
                    shapes = task.place(rng, task.identities(rng, 5, stratum), G)
                    made = task.generate_questions(shapes, rng, G, stratum)
                    break
                except Impossible:
                    continue
            members = made.members
            assert [m.answer for m in members] == [
                answer,
                *(["No", "No", "Yes"] if answer == "Yes" else ["Yes", "Yes", "No"]),
            ]
            assert [m.varies for m in members] == [(), ("query",), ("canvas",), ("query", "canvas")]
            other = members[2].shapes
            assert [(s.x, s.y) for s in other] == [(s.x, s.y) for s in shapes]  # only attributes change
            queries = [tuple(m.facts["query"]) for m in members]
            assert queries[0] == queries[2] and queries[1] == queries[3] and queries[0] != queries[1]
            for m in members:
                canvas = [s.identity for s in (m.shapes or shapes)]
                assert (attr.count(tuple(m.facts["query"]), canvas) > 0) == (m.answer == "Yes")
            if sum(mask) > 1:  # a swap: every word keeps its frequency; every query word is on both
                assert canvas_words(other) == canvas_words(shapes)
                words = {w for s in shapes for w in s.identity}
                assert all(w in words for q in queries for w in q if w)
            for question, shown in made.examples:  # the same answer on both canvases
                on_c = attr.count(_query_of(question), [s.identity for s in shapes]) > 0
                on_twin = attr.count(_query_of(question), [s.identity for s in other]) > 0
                assert on_c == on_twin and shown == ("Yes" if on_c else "No")


def test_count_is_a_pair_over_the_canvas_one_apart():
    from common.canvas.tasks.count import asked_counts

    task = TASKS["count"]()
    for n in (3, 5, 8):
        for stratum in task.answer_strata(n):
            low, mask = int(stratum.split(":")[0]), attr.MASK_NAMES[stratum.split(":")[1]]
            assert len(asked_counts(mask, n)) % 2 == 0 and low in asked_counts(mask, n)[::2]
            rng = random.Random(stratum)
            for _ in range(50):
                try:
                    shapes = task.place(rng, task.identities(rng, n, stratum), G)
                    made = task.generate_questions(shapes, rng, G, stratum)
                    break
                except Impossible:
                    continue
            else:
                pytest.fail(f"no {stratum} pair on {n} shapes")
            first, twin = made.members
            assert first.question == twin.question and twin.varies == ("canvas",)
            assert sorted(int(m.answer) for m in made.members) == [low, low + 1]
            other = twin.shapes or first.shapes
            changed = [a for a, b in zip(shapes, other or shapes, strict=True) if a != b]
            assert 1 <= len(changed) <= 2
            if sum(mask) > 1 and other:
                assert canvas_words(other) == canvas_words(shapes)


@pytest.mark.parametrize("stratum", TASKS["coordinate"]().answer_strata(3))
def test_coordinate_is_a_pair_over_the_subjects_centre(stratum):
    from common.canvas.relations import answer
    from common.canvas.shapes import fits

    canvas = [Shape("large", "red", "circle", -5, 3), SQUARE, Shape("small", "blue", "triangle", 20, -12)]
    for seed in range(5):
        made = qa("coordinate", canvas, stratum, seed=seed)
        item, twin = made.members
        assert item.answer == stratum and twin.answer != stratum and twin.varies == ("subject",)
        subject, reference = reading.relative_pair(item.question)
        assert item.question == twin.question
        for member, shapes in ((item, made.shapes), (twin, twin.shapes)):
            final = {s.name: s for s in shapes}
            assert member.answer == answer(final[reference], final[subject], G)
            assert final[reference] in canvas  # the reference keeps its centre: only the subject moves
            assert fits(final[subject], [s for s in shapes if s.name != subject], G)
            assert [s.name for s in shapes] == [s.name for s in made.shapes]  # the same place in the text


def frame(seed, n=12, stratum="Left"):
    task = TASKS["transitivity"]()
    rng = random.Random(seed)
    from common.canvas.shapes import sample_identities

    for _ in range(100):
        try:
            shapes = task.place(rng, sample_identities(rng, n), G)
            return shapes, task.generate_questions(shapes, rng, G, stratum)
        except Impossible:
            continue
    pytest.fail("no frame")


@pytest.mark.parametrize("stratum", ["Left", "Right", "Above", "Below"])
def test_transitivity_is_a_two_by_two_tuple_on_a_frame(stratum):
    for seed in range(6):
        shapes, made = frame(seed, 12 + seed, stratum)
        members = made.members
        assert members[0].answer == stratum and sorted(m.answer for m in members) == sorted(
            ["Left", "Right", "Above", "Below"]
        )
        pairs = [reading.relative_pair(m.question) for m in members]
        for m, (subject, reference) in zip(members, pairs, strict=True):
            assert set(m.varies) == {
                n
                for n, same in (("subject", subject == pairs[0][0]), ("reference", reference == pairs[0][1]))
                if not same
            }
        corners = {name for pair in pairs for name in pair}
        assert len(corners) == 4
        text = made.description
        assert text.startswith(f"There are {len(shapes)} shapes in a canvas.")
        for sentence in reading.sentences(text):  # no sentence relates two corners
            assert len(corners & set(re.findall(reading.SHAPE, sentence))) <= 1
        lines = reading.chain_lines(text)
        assert len(lines["Right"]) == 2 and len(lines["Above"]) == 2
        for m, (subject, reference) in zip(members, pairs, strict=True):  # the gold follows the lines
            up, line = next(
                (up, x) for up, xs in lines.items() for x in xs if subject in x and reference in x
            )
            assert m.answer == (up if line.index(subject) > line.index(reference) else describe.OPPOSITE[up])
            assert abs(line.index(subject) - line.index(reference)) >= 2  # never neighbours
        for question, _ in made.examples:  # never two corners, never a corner and a shape between
            named = set(re.findall(reading.SHAPE, question))
            assert len(named & corners) <= 1


def test_transitivity_needs_twelve_shapes():
    assert "at least 12 shapes" in TASKS["transitivity"]().unsupported(11)
    assert not TASKS["transitivity"]().unsupported(12)


def test_shuffle_tracking_is_a_pair_over_one_swap():
    column = [
        Shape("small", "blue", "triangle", 0, -10),
        Shape("large", "blue", "square", 0, 0),
        Shape("large", "blue", "triangle", 0, 10),
    ]
    task = TASKS["shuffle_tracking"]()
    assert task.strata(3) == [["0", "1", "2"], ["0-1-0", "0-1-0#1", "3-1-3"]]
    made = qa("shuffle_tracking", column, "1|0-1-0")
    assert made.members[0].description.startswith(
        "There are 3 shapes in a canvas. From bottom to top, the shapes are a small blue "
        "triangle, a large blue square, and a large blue triangle."
    )
    assert made.members[0].question == "What shape is second from the top?" and not made.examples
    assert position_question(0, 3) == "What shape is first from the bottom?"
    assert position_question(2, 3) == "What shape is first from the top?"
    with pytest.raises(Impossible):
        qa("shuffle_tracking", CANVAS, "0|0-1-0")  # the circle and the square are level
    start = [s.name for s in column]
    for label in task.strata(3)[1]:
        for seed in range(5):
            made = qa("shuffle_tracking", column, f"2|{label}", seed)
            sequences = []
            for member in made.members:
                swaps = re.findall(r"The ([a-z ]+) and the ([a-z ]+) swap positions\.", member.description)
                assert len(swaps) == 6  # max(swaps, N)
                indices, order = [], list(start)
                for a, b in swaps:
                    indices.append((order.index(a), order.index(b)))
                    order[indices[-1][0]], order[indices[-1][1]] = b, a
                assert member.answer == title(tuple(order[2].split()))
                assert not cancels(indices)
                sequences.append(indices)
            assert "-".join(map(str, agreements(3, sequences[0]))) == label.split("#")[0]
            assert sum(a != b for a, b in zip(*sequences, strict=True)) == 1  # one swap changed
            assert made.members[0].answer != made.members[1].answer and made.members[1].varies == ("swaps",)


def test_shuffle_agreements_count_the_positions_each_rule_is_right_at():
    start = [str(i) for i in range(5)]
    rng = random.Random(4)
    for _ in range(50):
        swaps = random_swaps(rng, 5, 5, cancelling=True)
        right = [rules_right(start, swaps, p) for p in range(5)]
        counts = tuple(sum(rule in r for r in right) for rule in ("initial", "first-swap", "reverse"))
        assert agreements(5, swaps) == counts
    for n in (3, 4, 5, 8, 12):  # the mix averages one position per rule
        mix = agreement_mix(n, max(6, n))
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
def test_existence_tracking_is_a_pair_over_the_asked_shapes_events(stratum):
    from common.canvas.tasks.existence_tracking import history

    start = stratum.split(":")[0]
    slots = set()
    for seed in range(12):
        made = qa("existence_tracking", CANVAS, stratum, seed=seed)
        asked = made.members[0].question[len("Is there a ") : -len(" in the canvas?")]
        histories = []
        for member in made.members:
            events = reading.events(member.suffix)
            mine = [kind for name, kind in events if name == asked]
            assert mine == history(start, len(mine)) and len(mine) in (2, 3)
            assert member.answer == ("Yes" if mine[-1] == "add" else "No")
            histories.append([(n, k) for n, k in events if n != asked])
        assert histories[0] == histories[1]  # every other shape's events the same, in the same order
        assert made.members[0].answer != made.members[1].answer and made.members[1].varies == ("events",)
        assert (asked in [s.name for s in CANVAS]) == (start == "on")
        assert all(asked not in q for q, _ in made.examples)
        longer = max(made.members, key=lambda m: m.facts["events_of_asked"])
        slots.add(max(i for i, (n, _) in enumerate(reading.events(longer.suffix)) if n == asked))
    assert len(slots) > 4  # where its deciding event falls is drawn, not fixed


def test_existence_tracking_strata():
    task = TASKS["existence_tracking"]()
    assert task.strata(3)[0] == ["on:2", "off:2"]
    assert "every identity" in task.unsupported(24, "on:2")
    task.events = 3
    assert "need 4 events" in task.unsupported(3, "on:2")


def test_unsupported_sizes():
    assert TASKS["shuffle_tracking"]().unsupported(2) == "shuffle_tracking needs at least 3 shapes"
    assert TASKS["transitivity"]().unsupported(11) and not TASKS["transitivity"]().unsupported(12)
    assert TASKS["existence"]().unsupported(24, "Yes:colour")  # every answer would be Yes
    assert TASKS["existence"]().unsupported(14, "No:colour")  # 13 shapes cannot avoid two colours
    assert not TASKS["existence"]().unsupported(13, "No:colour")
    assert TASKS["count"]().unsupported(24, "12:size")  # counts fixed by the wording


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
