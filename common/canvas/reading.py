"""Reading a canvas prompt back: the test canvas's description, its question, and the sentences
the tasks write (``describe``), parsed from the text alone.

The shortcut baselines (``baselines``) read prompts with these functions, as a model would:
they see the prompt, never the stored canvas or the gold answer. A prompt is laid out by
``generate.render``: other-canvas examples first (ending "Now a new canvas. "), then the test
description, a blank line, same-canvas examples ("Question: ...\\nAnswer: ...") and the test
question ("Question: ...") with the task's instruction.
"""

import re

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


def introducing_word(text: str, shape: str) -> str | None:
    """Return the direction word of the chain sentence introducing ``shape`` ("Below the x is a
    {shape}." gives Below, "The x is above a {shape}." gives Above), or None (the pivot)."""
    for match in _INTRO_PLAIN.finditer(text):
        if match.group(3) == shape:
            return match.group(1).split()[0]
    for match in _INTRO_INVERTED.finditer(text):
        if match.group(3) == shape:
            return match.group(2).split()[0].capitalize()
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
    return re.findall(r"^Answer: (.*)$", test_canvas(prompt), flags=re.MULTILINE)


def line_up(text: str) -> list[str]:
    """Return the shuffle description's first line-up, bottom to top; raise ValueError without one."""
    match = _LINE_UP.search(text)
    if not match:
        raise ValueError("no 'From bottom to top' line-up in the text")
    return re.findall(SHAPE, match.group(1))


def swaps(text: str) -> list[tuple[str, str]]:
    """Return the swap sentences of ``text`` in order as pairs of shape names."""
    return re.findall(rf"The ({SHAPE}) and the ({SHAPE}) swap positions\.", text)


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
