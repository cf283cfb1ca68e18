"""Shortcut baselines: each rule does what it says on a hand-written prompt, each is a built-in
model, and the generator keeps each at its task's chance rate on every prefix of a set."""

import pytest

from common.canvas.baselines import BASELINES
from common.canvas.generate import SetConfig, generate_set
from common.canvas.shortcuts import SHORTCUTS, chance
from common.canvas.tasks import TASKS
from common.models import resolve_model

RULES = {s.name: s.rule for s in SHORTCUTS}
INSTRUCTION = "\nAnswer Yes or No."


def ask(description, question):
    return f"{description}\n\nQuestion: {question}{INSTRUCTION}"


def test_existence_one_attribute():
    rule = RULES["shortcut-existence-one-attribute"]
    text = "There are 1 shapes in a canvas. There is a large red circle in the canvas."
    assert rule(ask(text, "Is there a shape that is red?")) == "Yes"
    assert rule(ask(text, "Is there a circle?")) == "Yes"
    assert rule(ask(text, "Is there a shape that is large and red?")) == "No"
    assert rule(ask(text, "Is there a large red circle?")) == "No"
    assert rule(ask(text, "Is there a large red circle in the canvas?")) is None  # a tracking question


def test_tracking_rules():
    text = (
        "There are 2 shapes in a canvas. There is a large red circle in the canvas. There is a small "
        "blue square in the canvas. The large red circle is removed from the canvas. A large green "
        "triangle is added to the canvas. A large red circle is added to the canvas."
    )
    columns = ["unmentioned", "ignore-events", "first-event", "removed-ever", "added-ever", "last-event"]
    for question, *answers in [
        ("Is there a large red circle in the canvas?", "Yes", "Yes", "No", "No", "Yes", "Yes"),
        ("Is there a large green triangle in the canvas?", "Yes", "No", "Yes", "Yes", "Yes", "Yes"),
        ("Is there a small red square in the canvas?", "No", "No", "Yes", "Yes", "No", "Yes"),
        ("Is there a small blue square in the canvas?", "Yes", "Yes", "Yes", "Yes", "No", "Yes"),
    ]:
        prompt = ask(text, question)
        assert [RULES[f"shortcut-tracking-{c}"](prompt) for c in columns] == answers, question
    assert RULES["shortcut-tracking-last-event"](ask(text, "Is there a shape that is red?")) is None


def test_shuffle_initial_ignores_the_swaps():
    text = (
        "There are 3 shapes in a canvas. From bottom to top, the shapes are a small red square, a large "
        "blue circle, and a small green triangle. The small red square and the small green triangle "
        "swap positions."
    )
    rule = RULES["shortcut-shuffle-initial"]
    assert rule(ask(text, "What shape is first from the bottom?")) == "Small Red Square"
    assert rule(ask(text, "What shape is first from the top?")) == "Small Green Triangle"
    assert rule(ask(text, "Is there a small red square?")) is None


def test_shuffle_rules_on_three_swaps():
    text = (
        "There are 3 shapes in a canvas. From bottom to top, the shapes are a small red square, a large "
        "blue circle, and a small green triangle. The small red square and the large blue circle swap "
        "positions. The small red square and the small green triangle swap positions. The large blue "
        "circle and the small green triangle swap positions."
    )
    # after the swaps, bottom to top: small green triangle, large blue circle, small red square
    prompt = ask(text, "What shape is first from the bottom?")
    assert RULES["shortcut-shuffle-initial"](prompt) == "Small Red Square"
    assert RULES["shortcut-shuffle-first-swap"](prompt) == "Large Blue Circle"
    assert RULES["shortcut-shuffle-last-named"](prompt) == "Small Green Triangle"
    assert RULES["shortcut-shuffle-last-swap-first"](prompt) == "Large Blue Circle"
    assert RULES["shortcut-shuffle-first-named"](prompt) == "Small Red Square"
    assert RULES["shortcut-shuffle-most-swapped"](prompt) == "Small Red Square"  # first named of a tie
    assert RULES["shortcut-shuffle-elimination"](prompt) is None  # no examples
    shots = text + "\n\nQuestion: What shape is first from the top?\nAnswer: Small Red Square\n"
    assert (
        RULES["shortcut-shuffle-elimination"](ask(shots, "What shape is first from the bottom?"))
        == "Large Blue Circle"
    )


def test_coordinate_stated_reads_the_relation_sentence_either_way():
    text = (
        "There are 2 shapes in a canvas. There is a large red circle in the canvas. A small blue "
        "square is to the below right of this large red circle. There is a small blue square in the "
        "canvas."
    )
    rule = RULES["shortcut-coordinate-stated"]
    stated = ask(text, "Where is the small blue square relative to the large red circle?")
    assert rule(stated) == "Below Right"
    reverse = ask(text, "Where is the large red circle relative to the small blue square?")
    assert rule(reverse) == "Above Left"
    assert (
        rule(
            ask(
                "There are 2 shapes in a canvas. There is a large red circle at (0, 0).",
                "Where is the small blue square relative to the large red circle?",
            )
        )
        is None
    )


def test_transitivity_words():
    text = (
        "There are 4 shapes in a canvas. There is a small blue square in the canvas. "
        "Below the small blue square is a small red circle. The small red circle is above a large red "
        "circle. The small blue square is below a large green triangle."
    )
    subject = RULES["shortcut-transitivity-subject-word"]
    reference = RULES["shortcut-transitivity-reference-word"]
    prompt = ask(text, "Where is the large red circle relative to the large green triangle?")
    assert subject(prompt) == "Below"  # "The small red circle is above a large red circle.": it is below
    assert reference(prompt) == "Below"  # the triangle is above the square: the opposite
    prompt = ask(text, "Where is the small blue square relative to the large red circle?")  # the pivot
    assert subject(prompt) == "Above" and reference(prompt) == "Above"


def test_shortcuts_are_built_in_models_falling_back_to_random():
    model = resolve_model("shortcut-existence-one-attribute", builtins=BASELINES)
    item = {
        "Key": 7,
        "text": ask("There are 1 shapes in a canvas.", "Is there a shape that is red?"),
        "expectedresp": ["Yes", "No"],
        "goldresp": "No",
    }
    assert model.complete([], item).text == "Yes"
    other = item | {
        "text": ask("There are 1 shapes in a canvas.", "How many circles are there?"),
        "expectedresp": ["0", "1"],
    }
    assert (
        model.complete([], other).text == resolve_model("random", builtins=BASELINES).complete([], other).text
    )
    assert model.settings()["task"] == "existence"


# rules the schedule holds at chance exactly at every full block; the others read choices drawn at
# random (which swaps, which event comes last, how each link is told) and hold chance in expectation
IN_EXPECTATION = {
    "shortcut-tracking-last-event",
    "shortcut-transitivity-subject-word",
    "shortcut-transitivity-reference-word",
}
EXACT = [
    s for s in SHORTCUTS if not s.guard and s.task != "shuffle_tracking" and s.name not in IN_EXPECTATION
]
DRAWN = [s for s in SHORTCUTS if not s.guard and (s.task == "shuffle_tracking" or s.name in IN_EXPECTATION)]


@pytest.mark.parametrize("shortcut", EXACT, ids=lambda s: s.name)
def test_every_shortcut_stays_at_chance_on_every_prefix(shortcut):
    sizes = [n for n in (3, 4, 5, 8) if not TASKS[shortcut.task]().unsupported(n)]
    built = generate_set(
        SetConfig(
            seed=3, items=32, num_shapes=sizes, tasks=[shortcut.task], fewshot=["none"], descriptions=["full"]
        )
    )
    for n in sizes:
        trials = [t for t in built.trials if t["num_shapes"] == n]
        assert len(trials) == 32
        block = len(TASKS[shortcut.task]().strata(n)[-1])  # the schedule's block on the last axis
        right = expected = 0.0
        for done, trial in enumerate(trials, 1):
            right += shortcut.rule(trial["text"]) == trial["goldresp"]
            expected += chance(trial["task"], len(trial["expectedresp"]), trial["text"])
            assert abs(right - expected) <= 3, (n, trial["item"], right, expected)
            if done % block == 0:  # a full block of every stratum: exactly chance
                assert right == pytest.approx(expected), (n, done, right, expected)


@pytest.fixture(scope="module")
def drawn_sets():
    """A set per task of the rules holding chance in expectation (the sizes each task supports)."""
    sets = {}
    for task in dict.fromkeys(s.task for s in DRAWN):
        sizes = [n for n in (3, 4, 5, 8) if not TASKS[task]().unsupported(n)]
        sets[task] = generate_set(
            SetConfig(seed=3, items=240 // len(sizes), num_shapes=sizes, tasks=[task], fewshot=["none"])
        )
    return sets


@pytest.mark.parametrize("shortcut", DRAWN, ids=lambda s: s.name)
def test_drawn_shortcuts_hold_chance_in_expectation(shortcut, drawn_sets):
    """The shuffle answer is the shape that ends at a position drawn apart from the swaps, the last
    event and the telling of each link are drawn apart from the answer: a rule reading them is
    right at chance in expectation, not exactly per block (within 2.6 binomial standard errors)."""
    trials = [t for t in drawn_sets[shortcut.task].trials if t["description"] in ("full", "shuffle", "chain")]
    rates = [chance(t["task"], len(t["expectedresp"]), t["text"]) for t in trials]
    right = sum(shortcut.rule(t["text"]) == t["goldresp"] for t in trials)
    sd = sum(r * (1 - r) for r in rates) ** 0.5
    assert abs(right - sum(rates)) <= 2.6 * sd, (right, sum(rates), sd)


@pytest.mark.parametrize("shortcut", [s for s in SHORTCUTS if s.guard], ids=lambda s: s.name)
def test_guards_find_nothing_to_read_in_the_sets_made_now(shortcut):
    """The leaks these rules read were closed (the coordinate task shows centres only; shuffle
    tracking has no same-canvas examples): on every trial of their task they answer at random."""
    built = generate_set(SetConfig(seed=4, items=8, num_shapes=[3, 8], tasks=[shortcut.task]))
    assert built.trials
    assert all(shortcut.rule(t["text"]) is None for t in built.trials)
