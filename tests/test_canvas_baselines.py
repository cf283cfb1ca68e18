"""Shortcut baselines: each rule does what it says on a hand-written prompt, each is a built-in
model, and the generator keeps each at its task's chance rate on every prefix of a set."""

import pytest

from common.canvas.baselines import SHORTCUTS, chance
from common.canvas.generate import SetConfig, generate_set
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
    text = ("There are 2 shapes in a canvas. There is a large red circle in the canvas. There is a small "
            "blue square in the canvas. The large red circle is removed from the canvas. A large green "
            "triangle is added to the canvas. A large red circle is added to the canvas.")
    for question, unmentioned, ignore, first in [
        ("Is there a large red circle in the canvas?", "Yes", "Yes", "No"),
        ("Is there a large green triangle in the canvas?", "Yes", "No", "Yes"),
        ("Is there a small red square in the canvas?", "No", "No", "Yes"),
        ("Is there a small blue square in the canvas?", "Yes", "Yes", "Yes"),
    ]:
        prompt = ask(text, question)
        assert RULES["shortcut-tracking-unmentioned"](prompt) == unmentioned
        assert RULES["shortcut-tracking-ignore-events"](prompt) == ignore
        assert RULES["shortcut-tracking-first-event"](prompt) == first


def test_shuffle_initial_ignores_the_swaps():
    text = ("There are 3 shapes in a canvas. From bottom to top, the shapes are a small red square, a large "
            "blue circle, and a small green triangle. The small red square and the small green triangle "
            "swap positions.")
    rule = RULES["shortcut-shuffle-initial"]
    assert rule(ask(text, "What shape is first from the bottom?")) == "Small Red Square"
    assert rule(ask(text, "What shape is first from the top?")) == "Small Green Triangle"
    assert rule(ask(text, "Is there a small red square?")) is None


def test_transitivity_words():
    text = ("There are 4 shapes in a canvas. There is a small blue square in the canvas. "
            "Below the small blue square is a small red circle. The small red circle is above a large red "
            "circle. The small blue square is below a large green triangle.")
    subject = RULES["shortcut-transitivity-subject-word"]
    reference = RULES["shortcut-transitivity-reference-word"]
    prompt = ask(text, "Where is the large red circle relative to the large green triangle?")
    assert subject(prompt) == "Above"  # "The small red circle is above a large red circle."
    assert reference(prompt) == "Above"  # opposite of "below a large green triangle"
    prompt = ask(text, "Where is the small blue square relative to the large red circle?")  # the pivot
    assert subject(prompt) == "Below" and reference(prompt) == "Below"


def test_shortcuts_are_built_in_models_falling_back_to_random():
    model = resolve_model("shortcut-existence-one-attribute")
    item = {"Key": 7, "text": ask("There are 1 shapes in a canvas.", "Is there a shape that is red?"),
            "expectedresp": ["Yes", "No"], "goldresp": "No"}
    assert model.complete([], item).text == "Yes"
    other = item | {"text": ask("There are 1 shapes in a canvas.", "How many circles are there?"),
                    "expectedresp": ["0", "1"]}
    assert model.complete([], other).text == resolve_model("random").complete([], other).text
    assert model.settings()["task"] == "existence"


@pytest.mark.parametrize("shortcut", [s for s in SHORTCUTS if s.balanced], ids=lambda s: s.name)
def test_every_shortcut_stays_at_chance_on_every_prefix(shortcut):
    built = generate_set(SetConfig(seed=3, items=32, num_shapes=[3, 5], tasks=[shortcut.task],
                                   fewshot=["none"], descriptions=["full"]))
    for n in (3, 5):
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


def test_the_known_miss_is_still_above_chance():
    """Stopping after the first of three swaps beats chance (README, limits); more swaps fix it."""
    shortcut = next(s for s in SHORTCUTS if s.name == "shortcut-shuffle-first-swap")

    def score(swaps):
        built = generate_set(SetConfig(seed=5, items=40, num_shapes=[5, 8], tasks=["shuffle_tracking"],
                                       fewshot=["none"], swaps=swaps))
        right = sum(shortcut.rule(t["text"]) == t["goldresp"] for t in built.trials)
        rate = sum(chance(t["task"], len(t["expectedresp"])) for t in built.trials) / len(built.trials)
        return right / len(built.trials), rate

    (three, rate), (ten, _) = score(3), score(10)
    assert three > rate + 0.05 and ten < three
