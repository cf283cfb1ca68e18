"""An independent solver re-derives every gold answer and every relation sentence of a generated set.

It reads only a trial's canvas (``shapes``) and its prompt text, and applies the documented rule
itself (its own geometry constants, its own parsing): it calls no answer code of common.canvas.
"""

import itertools
import math
import re

import pytest

from common.canvas.build import generate_set
from common.canvas.setconfig import SetConfig

RADIUS = {"small": 1.0, "large": 4.0}
SIDE = {"small": 2.0, "large": 4.0}
SIZES, COLOURS, KINDS = (
    ("small", "large"),
    ("red", "blue", "yellow", "green"),
    ("square", "circle", "triangle"),
)
ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"]


def extent(s):
    if s["kind"] == "circle":
        return 2 * RADIUS[s["size"]], 2 * RADIUS[s["size"]]
    side = SIDE[s["size"]]
    return side, side * math.sqrt(3) / 2 if s["kind"] == "triangle" else side


def where(b, a):
    """Where b is relative to a, by the README's rule: list of words, vertical first."""
    words = []
    my = 0.5 * max(extent(a)[1], extent(b)[1])
    mx = 0.5 * max(extent(a)[0], extent(b)[0])
    if abs(b["y"] - a["y"]) > my:
        words.append("Above" if b["y"] > a["y"] else "Below")
    if abs(b["x"] - a["x"]) > mx:
        words.append("Right" if b["x"] > a["x"] else "Left")
    return words


def name(s):
    return f"{s['size']} {s['colour']} {s['kind']}"


def prompt_parts(trial):
    """The test canvas's description and question: after other-canvas examples, before same-canvas ones."""
    text = trial["text"].split("Now a new canvas. ")[-1]
    return text.split("\n\n")[0], trial["question"]


def matches(words, s):
    return all(w in (s["size"], s["colour"], s["kind"]) for w in words)


def query_words(phrase):
    if phrase.startswith("shape that is ") or phrase.startswith("shapes are "):
        return phrase.split(" is " if " is " in phrase else " are ", 1)[1].split(" and ")
    words = phrase.split()
    return [*words[:-1], words[-1].rstrip("s") if words[-1].endswith("s") else words[-1]]


def solve(trial):
    shapes, description, question = trial["shapes"], *prompt_parts(trial)
    by_name = {name(s): s for s in shapes}
    task = trial["task"]
    if task == "existence":
        words = query_words(re.fullmatch(r"Is there an? (.+)\?", question)[1])
        return "Yes" if any(matches(words, s) for s in shapes) else "No"
    if task == "count":
        m = re.fullmatch(r"How many (.+?)(?: are there)?\?", question)
        return str(sum(matches(query_words(m[1]), s) for s in shapes))
    if task in ("coordinate", "transitivity"):
        subject, reference = re.fullmatch(r"Where is the (.+) relative to the (.+)\?", question).groups()
        words = where(by_name[subject], by_name[reference])
        if task == "transitivity":
            horizontal = re.search(r"\b[Ll]eft of|\b[Rr]ight of", description) is not None
            words = [w for w in words if (w in ("Left", "Right")) == horizontal]
            assert len(words) == 1
        return " ".join(words)
    if task == "existence_tracking":
        present = [name(s) for s in shapes]
        for added, removed in re.findall(
            r"A ([a-z ]+) is added to the canvas\.|The ([a-z ]+) is removed from", description
        ):
            if added:
                assert added not in present
                present.append(added)
            else:
                present.remove(removed)
        asked = re.fullmatch(r"Is there a (.+) in the canvas\?", question)[1]
        return "Yes" if asked in present else "No"
    if task == "shuffle_tracking":
        column = sorted(shapes, key=lambda s: s["y"])
        assert all(where(b, a)[:1] == ["Above"] for a, b in itertools.pairwise(column))
        order = [name(s) for s in column]
        for a, b in re.findall(r"The ([a-z ]+) and the ([a-z ]+) swap positions\.", description):
            i, j = order.index(a), order.index(b)
            order[i], order[j] = order[j], order[i]
        ordinal, end = re.fullmatch(r"What shape is (\S+) from the (top|bottom)\?", question).groups()
        k = ORDINALS.index(ordinal)
        return " ".join(w.capitalize() for w in order[k if end == "bottom" else len(order) - 1 - k].split())
    raise AssertionError(task)


PHRASES = {"left of": ["Left"], "right of": ["Right"], "above": ["Above"], "below": ["Below"]}


def check_description(trial):
    """Every relation sentence of the test description is true by the rule; the intro counts the shapes."""
    description, _ = prompt_parts(trial)
    shapes = {name(s): s for s in trial["shapes"]}
    assert description.startswith(f"There are {len(shapes)} shapes in a canvas.")
    for t, phrase, s in re.findall(
        r"A ([a-z ]+?) is (to the \w+ \w+ of|left of|right of|above|below) "
        r"this ([a-z ]+)\.",
        description,
    ):
        expected = PHRASES.get(phrase) or [w.capitalize() for w in phrase.split()[2:4]]
        assert where(shapes[t], shapes[s]) == expected, (t, phrase, s)
    for word, previous, shape in re.findall(
        r"(Left of|Right of|Above|Below) the ([a-z ]+?) is a ([a-z ]+)\.", description
    ):
        assert word.split()[0] in where(shapes[shape], shapes[previous])
    for previous, word, shape in re.findall(
        r"The ([a-z ]+?) is (left of|right of|above|below) a ([a-z ]+)\.", description
    ):
        assert word.split()[0].capitalize() in where(shapes[previous], shapes[shape])
    for shape, x, y in re.findall(r"There is a ([a-z ]+) at \((-?\d+), (-?\d+)\)\.", description):
        assert (shapes[shape]["x"], shapes[shape]["y"]) == (int(x), int(y))


@pytest.fixture(scope="module")
def trials():
    return generate_set(SetConfig(seed=11, items=8, num_shapes=[3, 5, 8])).trials


def test_every_gold_answer_rederived_from_the_canvas(trials):
    assert len(trials) > 700
    for trial in trials:
        assert solve(trial) == trial["goldresp"], trial["Key"]
        assert trial["goldresp"] in trial["expectedresp"]


def test_every_relation_sentence_follows_the_rule(trials):
    for trial in trials:
        check_description(trial)


def test_same_canvas_examples_are_answered_correctly(trials):
    for trial in (t for t in trials if t["fewshot"] == "same_canvas"):
        shots = re.findall(r"Question: (.+)\nAnswer: (.+)", trial["text"])
        assert shots
        for question, answer in shots:
            assert solve(trial | {"question": question}) == answer, trial["Key"]
