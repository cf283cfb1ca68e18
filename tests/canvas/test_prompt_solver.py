"""Every gold answer is derivable from the prompt alone: a solver that reads only the prompt text
(never the stored canvas, never common.canvas) re-derives the answer of every trial of the
standard and scaling sets, and of every example (same-canvas and other-canvas).

For the ``coordinates`` description it reads the centres and the sizes and relation rule the
prompt states; for ``full`` and ``partial`` the relation sentences; for chains the chain
sentences (both forms); for the shuffle the line-up and swaps; for tracking the events.
"""

import math
import re

import pytest

from common.canvas.build import generate_set
from common.canvas.setconfig import load_config
from common.paths import CONFIGS

SHAPE = r"(?:small|large) (?:red|blue|yellow|green) (?:square|circle|triangle)"
ORDINALS = [
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
]
SIGN = {"Right": (0, 1), "Left": (0, -1), "Above": (1, 1), "Below": (1, -1)}


def parts(prompt):
    """The test canvas's description and question, from the text."""
    test = prompt.split("Now a new canvas. ")[-1]
    return test.split("\n\n")[0], re.findall(r"^Question: (.*)$", prompt, flags=re.MULTILINE)[-1]


def shapes_on(description):
    """The shapes the description places, after its events."""
    n = int(re.match(r"There are (\d+) shapes in a canvas\.", description)[1])
    lineup = re.search(r"From bottom to top, the shapes are (.*?)\.(?: |$)", description)
    if lineup:
        present = re.findall(SHAPE, lineup[1])
    else:
        present = list(dict.fromkeys(re.findall(rf"There is a ({SHAPE})", description)))
    assert len(present) == n
    for added, removed in re.findall(
        rf"A ({SHAPE}) is added to the canvas\.|The ({SHAPE}) is removed from", description
    ):
        if added:
            assert added not in present
            present.append(added)
        else:
            present.remove(removed)
    return present


def query_match(phrase, shape):
    """Whether a shape's name has every attribute a query phrase names."""
    if " is " in phrase or " are " in phrase:
        words = re.split(r" is | are ", phrase, maxsplit=1)[1].split(" and ")
    else:
        words = [w.removesuffix("s") for w in phrase.split()]
    return all(w in shape.split() for w in words)


def extent(shape, sizes):
    size, _, kind = shape.split()
    if kind == "circle":
        return 2 * sizes["radius"][size], 2 * sizes["radius"][size]
    side = sizes["side"][size]
    return side, side * (sizes["height"] if kind == "triangle" else 1)


def stated_rule(description):
    """The sizes and the margin the coordinates description states."""
    m = re.search(
        r"A small circle has radius ([\d.]+) and a large one radius ([\d.]+); a small square or "
        r"triangle has side ([\d.]+) and a large one side ([\d.]+) .*?height is ([\d.]+) times "
        r"their side\)\. A shape is right of another when its centre's x is larger by more than "
        r"(half|[\d.]+ times) the larger of their two widths",
        description,
    )
    assert m, "the coordinates description states the sizes and the rule"
    scale = 0.5 if m[6] == "half" else float(m[6].split()[0])
    return {
        "radius": {"small": float(m[1]), "large": float(m[2])},
        "side": {"small": float(m[3]), "large": float(m[4])},
        "height": float(m[5]),
        "scale": scale,
    }


def where_from_coordinates(description, subject, reference):
    rule = stated_rule(description)
    centres = {
        s: (int(x), int(y))
        for s, x, y in re.findall(rf"There is a ({SHAPE}) at \((-?\d+), (-?\d+)\)", description)
    }
    words = []
    for axis, (plus, minus) in ((1, ("Above", "Below")), (0, ("Right", "Left"))):
        d = centres[subject][axis] - centres[reference][axis]
        margin = rule["scale"] * max(extent(subject, rule)[axis], extent(reference, rule)[axis])
        if abs(d) > margin:
            words.append(plus if d > 0 else minus)
    return " ".join(words)


def where_from_sentences(description, subject, reference):
    for t, phrase, s in re.findall(
        rf"A ({SHAPE}) is (to the \w+ \w+ of|left of|right of|above|below) "
        rf"this ({SHAPE})\.",
        description,
    ):
        said = phrase.split()[2:4] if phrase.startswith("to the") else phrase.split()[:1]
        words = [w.capitalize() for w in said]
        opposite = {"Left": "Right", "Right": "Left", "Above": "Below", "Below": "Above"}
        if (t, s) == (subject, reference):
            return " ".join(words)
        if (t, s) == (reference, subject):
            return " ".join(opposite[w] for w in words)
    raise AssertionError(f"no sentence relates {subject} and {reference}")


def where_from_chain(description, subject, reference):
    """The relation of two shapes the chain sentences give, by following them on each axis (a
    frame has two rows and two columns): exactly one axis must relate the pair."""
    plain = re.findall(rf"(Left of|Right of|Above|Below) the ({SHAPE}) is a ({SHAPE})\.", description)
    facts = [(b, w.split()[0], a) for w, a, b in plain]  # (x, word, y): x is `word` of y
    facts += [
        (a, w.split()[0].capitalize(), b)
        for a, w, b in re.findall(
            rf"The ({SHAPE}) is (left of|right of|above|below) a ({SHAPE})\.", description
        )
    ]
    found = []
    for axis, (up, down) in ((0, ("Right", "Left")), (1, ("Above", "Below"))):
        higher = {}  # shape -> the shapes directly beyond it going up the axis
        for x, word, y in facts:
            if SIGN[word][0] == axis:
                low, high = (y, x) if SIGN[word][1] > 0 else (x, y)
                higher.setdefault(low, []).append(high)
        for start, end, word in ((reference, subject, up), (subject, reference, down)):
            seen, todo = set(), [start]
            while todo:
                shape = todo.pop()
                for nxt in higher.get(shape, []):
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
            if end in seen:
                found.append(word)
    assert len(found) == 1, (subject, reference, found)
    return found[0]


def solve(prompt, asked=None):
    description, question = parts(prompt)
    question = asked or question
    if m := re.fullmatch(rf"Is there a ({SHAPE}) in the canvas\?", question):
        return "Yes" if m[1] in shapes_on(description) else "No"
    if m := re.fullmatch(r"Is there an? (.+)\?", question):
        return "Yes" if any(query_match(m[1], s) for s in shapes_on(description)) else "No"
    if m := re.fullmatch(r"How many (.+?)(?: are there)?\?", question):
        return str(sum(query_match(m[1], s) for s in shapes_on(description)))
    if m := re.fullmatch(rf"Where is the ({SHAPE}) relative to the ({SHAPE})\?", question):
        if "There is a" in description and " at (" in description:
            return where_from_coordinates(description, m[1], m[2])
        if " this " in description:
            return where_from_sentences(description, m[1], m[2])
        return where_from_chain(description, m[1], m[2])
    if m := re.fullmatch(r"What shape is (\S+) from the (top|bottom)\?", question):
        order = shapes_on(description)
        for a, b in re.findall(rf"The ({SHAPE}) and the ({SHAPE}) swap positions\.", description):
            i, j = order.index(a), order.index(b)
            order[i], order[j] = order[j], order[i]
        k = ORDINALS.index(m[1])
        return order[k if m[2] == "bottom" else len(order) - 1 - k].title()
    raise AssertionError(f"unknown question {question!r}")


@pytest.fixture(scope="module", params=["standard", "scaling"])
def trials(request):
    return generate_set(load_config(CONFIGS / "canvas" / f"{request.param}.yaml")).trials


def test_every_gold_answer_follows_from_the_prompt_alone(trials):
    assert len(trials) > 400
    assert {t["task"] for t in trials} == {
        "existence",
        "count",
        "coordinate",
        "transitivity",
        "existence_tracking",
        "shuffle_tracking",
    }
    for trial in trials:
        assert solve(trial["text"]) == trial["goldresp"], trial["Key"]


def test_every_same_canvas_example_follows_from_the_prompt_alone(trials):
    for trial in (t for t in trials if t["fewshot"] == "same_canvas"):
        shots = re.findall(r"Question: (.+)\nAnswer: (.+)", trial["text"])
        assert shots
        for question, answer in shots:
            assert solve(trial["text"], question) == answer, trial["Key"]


def test_every_other_canvas_example_follows_from_its_own_description(trials):
    checked = 0
    for trial in (t for t in trials if t["fewshot"] == "other_canvas"):
        examples = re.findall(r"Example \d+: (.*)\nQuestion: (.+)\nAnswer: (.+)\n\n", trial["text"])
        assert examples, trial["Key"]
        for description, question, answer in examples:
            assert solve(f"{description}\n\nQuestion: {question}") == answer, trial["Key"]
            checked += 1
    assert checked or not any(t["fewshot"] == "other_canvas" for t in trials)


def test_the_stated_rule_is_needed_and_used():
    """A coordinates prompt without its rule sentence cannot be solved by this solver: the rule is
    read from the prompt, not assumed."""
    small = generate_set(load_config(CONFIGS / "canvas" / "standard.yaml", {"items": 4})).trials
    prompt = next(t for t in small if t["task"] == "coordinate" and t["description"] == "coordinates")["text"]
    with pytest.raises(AssertionError, match="states the sizes"):
        solve(re.sub(r"A small circle has radius.*relation on it\.", "", prompt))
    assert math.isclose(stated_rule(parts(prompt)[0])["height"], math.sqrt(3) / 2, abs_tol=1e-3)


def test_the_first_sentence_counts_the_shapes_named(trials):
    """'There are N shapes in a canvas.' says how many shapes the description names (before any
    event adds one), in every description of every prompt, examples included."""
    for trial in trials:
        descriptions = [parts(trial["text"])[0]]
        descriptions += re.findall(r"Example \d+: (.*)\nQuestion:", trial["text"])
        for description in descriptions:
            n = int(re.match(r"There are (\d+) shapes in a canvas\.", description)[1])
            first = re.sub(
                rf"A {SHAPE} is added to the canvas\.|The {SHAPE} is removed from the canvas\.",
                "",
                description,
            )
            assert len(set(re.findall(SHAPE, first))) == n, trial["Key"]
