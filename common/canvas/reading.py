"""Reading a canvas prompt back: the test canvas's description, its question, and the sentences
the tasks write (``describe``), parsed from the text alone.

The shortcut baselines (``baselines``) read prompts with these functions, as a model would:
they see the prompt, never the stored canvas or the gold answer. A prompt is laid out by
``generate.render``: other-canvas examples first (ending "Now a new canvas. "), then the test
description, a blank line, same-canvas examples ("Question: ...\\nAnswer: ...") and the test
question ("Question: ...") with the task's instruction.
"""

import re
from collections.abc import Callable

SHAPE = r"(?:small|large) (?:red|blue|yellow|green) (?:square|circle|triangle)"
OTHER_CANVAS = "Now a new canvas. "
_INTRO_PLAIN = re.compile(rf"(Left of|Right of|Above|Below) the ({SHAPE}) is a ({SHAPE})\.")
_INTRO_INVERTED = re.compile(rf"The ({SHAPE}) is (left of|right of|above|below) a ({SHAPE})\.")
_EVENT = re.compile(rf"A ({SHAPE}) is added to the canvas\.|The ({SHAPE}) is removed from the canvas\.")
_RELATION = re.compile(
    rf"A ({SHAPE}) is (to the (?:above|below) (?:left|right) of|left of|right of|above|"
    rf"below) this ({SHAPE})\."
)
_LINE_UP = re.compile(r"From bottom to top, the shapes are (.*?)\.(?: |$)")
_POSITION = re.compile(r"What shape is (\S+) from the (top|bottom)\?")
OPPOSITE = {"Left": "Right", "Right": "Left", "Above": "Below", "Below": "Above"}


def test_canvas(prompt: str) -> str:
    """Return the part of ``prompt`` about the test canvas (after any other-canvas examples)."""
    return prompt.split(OTHER_CANVAS)[-1]


def description(prompt: str) -> str:
    """Return the test canvas's description (everything before its first blank line)."""
    return test_canvas(prompt).split("\n\n")[0]


def question(prompt: str) -> str:
    """Return the test question (the last "Question: " line); raise ValueError if there is none."""
    found = re.findall(r"^Question: (.*)$", prompt, flags=re.MULTILINE)
    if not found:
        raise ValueError("no 'Question: ' line in the prompt")
    return found[-1]


def shapes_named(text: str) -> list[str]:
    """Return the shape names in ``text`` (``small red circle``), first mention first, each once."""
    return list(dict.fromkeys(re.findall(SHAPE, text)))


def events(text: str) -> list[tuple[str, str]]:
    """Return the existence-tracking events of ``text`` in order: ``(shape, "add" or "remove")``."""
    return [(m.group(1) or m.group(2), "add" if m.group(1) else "remove") for m in _EVENT.finditer(text)]


def without_events(text: str) -> str:
    """Return ``text`` with its existence-tracking event sentences removed (the first description)."""
    return _EVENT.sub("", text)


def introducing_direction(text: str, shape: str) -> str | None:
    """Return the direction the chain sentence introducing ``shape`` gives it relative to the
    previous shape, whichever its form ("Below the x is a {shape}." and "The x is above a
    {shape}." both give Below), or None (the pivot, or a shape off the chain)."""
    for sentence in sentences(text):
        step = chain_step(sentence)
        if step and step[2] == shape:
            return step[1]
    return None


def chain_facts(text: str) -> list[tuple[str, str, str]]:
    """Return the chain sentences as facts ``(a, word, b)``: a is ``word`` of b (Left/Right/Above/Below)."""
    facts = [(m.group(3), m.group(1).split()[0], m.group(2)) for m in _INTRO_PLAIN.finditer(text)]
    facts += [
        (m.group(1), m.group(2).split()[0].capitalize(), m.group(3)) for m in _INTRO_INVERTED.finditer(text)
    ]
    return facts


def relation_sentences(text: str) -> list[tuple[str, tuple[str, ...], str]]:
    """Return the ``full`` / ``partial`` relation sentences of ``text`` as ``(shape, words, other)``:
    "A {shape} is to the below right of this {other}." gives ``("Below", "Right")``."""
    out = []
    for shape, phrase, other in _RELATION.findall(text):
        words = phrase.split()[2:4] if phrase.startswith("to the ") else phrase.split()[:1]
        out.append((shape, tuple(w.capitalize() for w in words), other))
    return out


def example_answers(prompt: str) -> list[str]:
    """Return the answers of the same-canvas examples (``Answer: ...`` lines about the test canvas)."""
    return [answer for _, answer in examples(prompt)]


def examples(prompt: str) -> list[tuple[str, str]]:
    """Return the same-canvas examples as ``(question, answer)`` pairs."""
    return re.findall(r"^Question: (.*)\nAnswer: (.*)$", test_canvas(prompt), flags=re.MULTILINE)


def other_canvas_answers(prompt: str) -> list[str]:
    """Return the answers of the other-canvas examples (before "Now a new canvas.")."""
    if OTHER_CANVAS not in prompt:
        return []
    return re.findall(r"^Answer: (.*)$", prompt.split(OTHER_CANVAS)[0], flags=re.MULTILINE)


def sentences(text: str) -> list[str]:
    """Return the sentences of a description (split after each full stop followed by a space)."""
    return [s for s in re.split(r"(?<=\.) ", text) if s]


def stated_count(text: str) -> int:
    """Return N of the description's first sentence "There are N shapes in a canvas."; raise
    ValueError without it."""
    match = re.match(r"There are (\d+) shapes in a canvas\.", text)
    if not match:
        raise ValueError("no 'There are N shapes in a canvas.' sentence")
    return int(match.group(1))


def chain_step(sentence: str) -> tuple[str, str, str] | None:
    """Return a chain sentence as ``(previous, direction, new)``: the shape it introduces is
    ``direction`` of the previous one, whichever form it takes ("Below the x is a y." and "The x
    is above a y." both give ``(x, "Below", y)``); None for another sentence."""
    if match := _INTRO_PLAIN.fullmatch(sentence):
        return match.group(2), match.group(1).split()[0], match.group(3)
    if match := _INTRO_INVERTED.fullmatch(sentence):
        return match.group(1), OPPOSITE[match.group(2).split()[0].capitalize()], match.group(3)
    return None


def chain_line(text: str) -> tuple[list[str], str] | None:
    """Return the line a transitivity description's links make, ordered going up its axis (Right
    or Above), and that word; None without links."""
    steps = [step for step in map(chain_step, sentences(text)) if step]
    if not steps:
        return None
    up = "Right" if steps[0][1] in ("Left", "Right") else "Above"
    place = {steps[0][0]: 0}
    while len(place) < len(steps) + 1:  # each link places a shape one step from a placed one
        before = len(place)
        for previous, direction, new in steps:
            step = 1 if direction == up else -1
            if previous in place and new not in place:
                place[new] = place[previous] + step
            elif new in place and previous not in place:
                place[previous] = place[new] - step
        if len(place) == before:
            return None  # links that do not make one line
    return sorted(place, key=place.get), up


def chain_lines(text: str) -> dict[str, list[list[str]]]:
    """Return the lines a transitivity description's links make, per axis word going up ("Right":
    the rows, "Above": the columns), each line ordered going up: a row's shapes left to right.
    Every shape of a line is linked to the next by a sentence; a frame has two of each."""
    steps = [step for step in map(chain_step, sentences(text)) if step]
    out: dict[str, list[list[str]]] = {}
    for up, words in (("Right", ("Left", "Right")), ("Above", ("Above", "Below"))):
        after: dict[str, str] = {}  # shape -> the next shape going up
        for previous, direction, new in steps:
            if direction in words:
                low, high = (previous, new) if direction == up else (new, previous)
                after[low] = high
        starts = [shape for shape in after if shape not in after.values()]
        lines = []
        for start in starts:
            line = [start]
            while line[-1] in after:
                line.append(after[line[-1]])
            lines.append(line)
        out[up] = lines
    return out


def line_up(text: str) -> list[str]:
    """Return the shuffle description's first line-up, bottom to top; raise ValueError without one."""
    match = _LINE_UP.search(text)
    if not match:
        raise ValueError("no 'From bottom to top' line-up in the text")
    return re.findall(SHAPE, match.group(1))


def swaps(text: str) -> list[tuple[str, str]]:
    """Return the swap sentences of ``text`` in order as pairs of shape names."""
    return re.findall(rf"The ({SHAPE}) and the ({SHAPE}) swap positions\.", text)


def after_swaps(prompt: str, pick: Callable[[list[tuple[str, str]]], list[tuple[str, str]]]) -> str | None:
    """Return the shape (``Large Blue Square``) at the asked position of a shuffle prompt after the
    swaps ``pick`` selects from its swap sentences (all of them: the answer), or None for another
    question."""
    try:
        text = description(prompt)
        order, done = line_up(text), pick(swaps(text))
        asked = position(question(prompt), len(order))
    except ValueError:
        return None
    for a, b in done:
        i, j = order.index(a), order.index(b)
        order[i], order[j] = b, a
    return order[asked].title()


def position(asked: str, n: int) -> int:
    """Return the 0-based position from the bottom that a shuffle question asks about among ``n`` shapes."""
    from common.canvas.tasks.shuffle_tracking import ORDINALS

    match = _POSITION.fullmatch(asked)
    if not match:
        raise ValueError(f"not a position question: {asked!r}")
    k = ORDINALS.index(match.group(1))
    return k if match.group(2) == "bottom" else n - 1 - k


def relative_pair(asked: str) -> tuple[str, str]:
    """Return ``(subject, reference)`` of "Where is the {subject} relative to the {reference}?"."""
    match = re.fullmatch(rf"Where is the ({SHAPE}) relative to the ({SHAPE})\?", asked)
    if not match:
        raise ValueError(f"not a 'Where is' question: {asked!r}")
    return match.group(1), match.group(2)
