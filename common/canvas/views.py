"""The audit's views (``audit``): a prompt with one piece of what the skill needs blinded.

A view never deletes text: it replaces words by placeholders, so every sentence keeps its place,
its order, its kind and its count, and only the blinded information is gone. A prompt is cut
into ``Parts`` (the other-canvas examples before the test canvas, its description's sentences,
the same-canvas examples, the question, the instruction); a view maps parts to parts. Shapes are
blinded by placeholders: ``[asked]`` for the question's subject (its mentions elsewhere keep
their names, so nothing links them to the question), ``[shape k]`` with k counting across the
prompt for per-sentence placeholders (no two sentences share one, so no mention can be linked
to another).

Each task lists a view per piece of information its skill needs that the prompt states once
(``VIEWS``); what a task's prompt states twice is said beside it (blinding one copy would leave
the other, so such a view could not be at chance and is no test of the set):

- existence: the query's attributes; the canvas's shapes;
- count: the canvas's shapes (the query's values are not a view: the canvas fixes how many
  shapes each value of the query's type has, so with the value blinded the answer is still one
  of those few counts, the partial skill "description-level counts");
- coordinate: the subject's centre (the reference's centre is not a view: on a bounded canvas
  the subject's centre alone leans towards the answer, a partial skill; the subject's name is
  not either: the subject is one of the few other shapes, whose centres are all given);
- transitivity: the subject; the direction words; which mentions are the same shape;
- existence tracking: the subject; which mentions are the same shape; the asked shape's history
  (the kinds of the events and the first description's names: either alone gives the history,
  since an event flips the shape it names);
- shuffle tracking: the position asked; the swaps (which shapes each one names).
"""

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from common.canvas import reading

SHAPE = reading.SHAPE
ATTRIBUTE = r"\b(?:small|large|red|blue|yellow|green|square|circle|triangle)(?=s?\b)"
DIRECTION = re.compile(
    r"\b(?:to the (?:above|below) (?:left|right) of|Left of|Right of|left of|right of|Above|Below|"
    r"above|below|Left|Right)\b"
)
EVENT = re.compile(rf"(?:A ({SHAPE}) is added to|The ({SHAPE}) is removed from) the canvas\.")
ASKED = "[asked]"
REFERENCE = "[reference]"


@dataclass(frozen=True)
class Parts:
    """A prompt cut into what the views blind: ``before`` (the other-canvas examples, with "Now a
    new canvas. "), the test ``sentences``, the same-canvas ``shots`` as (question, answer), the
    ``question`` and the ``instruction``."""

    before: str
    sentences: tuple[str, ...]
    shots: tuple[tuple[str, str], ...]
    question: str
    instruction: str

    def text(self) -> str:
        """Return the prompt these parts make (the layout of ``generate.render``)."""
        shots = "".join(f"Question: {q}\nAnswer: {a}\n\n" for q, a in self.shots)
        return (
            f"{self.before}{' '.join(self.sentences)}\n\n{shots}Question: {self.question}\n{self.instruction}"
        )


def parts(prompt: str) -> Parts:
    """Return the parts of a canvas prompt (``generate.render``'s layout)."""
    before = prompt[: len(prompt) - len(reading.test_canvas(prompt))]
    test = reading.test_canvas(prompt)
    description, _, rest = test.partition("\n\n")
    ending = rest.rsplit("Question: ", 1)[-1]
    question, _, instruction = ending.partition("\n")
    return Parts(
        before, tuple(reading.sentences(description)), tuple(reading.examples(prompt)), question, instruction
    )


class Placeholders:
    """Per-sentence placeholders numbered across a prompt: ``[shape 1]``, ``[shape 2]``, ..."""

    def __init__(self) -> None:
        self.count = 0

    def unlink(self, sentence: str) -> str:
        """Return ``sentence`` with each shape name replaced by a placeholder of its own."""

        def fresh(_: re.Match) -> str:
            self.count += 1
            return f"[shape {self.count}]"

        return re.sub(SHAPE, fresh, sentence)


def mask_subject(p: Parts) -> Parts:
    """The question's subject (its first shape) becomes ``[asked]``; its other mentions stay."""
    return replace(p, question=re.sub(SHAPE, ASKED, p.question, count=1))


def mask_reference(p: Parts) -> Parts:
    """The question's reference (its second shape) becomes ``[reference]``; its other mentions stay."""
    names = re.findall(SHAPE, p.question)
    if len(names) < 2:
        return p
    head, _, tail = p.question.rpartition(names[1])
    return replace(p, question=f"{head}{REFERENCE}{tail}")


def mask_asked_events(p: Parts) -> Parts:
    """The events naming the question's shape are left out: what happened to the asked shape (the
    one view that deletes text, since the shape's twin has one event more or less)."""
    names = re.findall(SHAPE, p.question)
    if not names:
        return p
    kept = tuple(s for s in p.sentences if not ((m := EVENT.fullmatch(s)) and names[0] in m.groups()))
    return replace(p, sentences=kept)


def mask_query(p: Parts) -> Parts:
    """The question's attribute words become ``[attribute]`` (as many as there were)."""
    return replace(p, question=re.sub(ATTRIBUTE + r"s?\b", "[attribute]", p.question))


def mask_canvas(p: Parts) -> Parts:
    """The description's attribute words become ``[attribute]``: which shapes the canvas holds."""
    return replace(p, sentences=tuple(re.sub(ATTRIBUTE, "[attribute]", s) for s in p.sentences))


def unbind_words(p: Parts) -> Parts:
    """The description's shapes are given their attribute words anew, the same words in a fixed
    order: each attribute's values over the distinct shapes, sorted, dealt to the shapes in the
    order they are first named. How often each word occurs is kept; which shape has which word is
    gone (for a query of several words, the binding the skill reads)."""
    named = list(dict.fromkeys(re.findall(SHAPE, " ".join(p.sentences))))
    if not named:
        return p
    columns = [sorted(shape.split()[a] for shape in named) for a in range(3)]
    renamed = {shape: " ".join(column[i] for column in columns) for i, shape in enumerate(named)}
    return replace(p, sentences=tuple(re.sub(SHAPE, lambda m: renamed[m.group(0)], s) for s in p.sentences))


def several_words(question: str) -> bool:
    """Return whether a question's query has two or more attribute words."""
    return len(re.findall(ATTRIBUTE, question)) >= 2


def unlink_names(p: Parts) -> Parts:
    """Every shape name of the test canvas (description, examples, question) becomes a placeholder
    of its sentence's own: no mention can be linked to another."""
    names = Placeholders()
    return replace(
        p,
        sentences=tuple(names.unlink(s) for s in p.sentences),
        shots=tuple((names.unlink(q), a) for q, a in p.shots),
        question=names.unlink(p.question),
    )


def mask_directions(p: Parts) -> Parts:
    """Every direction word of the description and of the same-canvas answers becomes ``[direction]``."""
    return replace(
        p,
        sentences=tuple(DIRECTION.sub("[direction]", s) for s in p.sentences),
        shots=tuple((q, DIRECTION.sub("[direction]", a)) for q, a in p.shots),
    )


def mask_history(p: Parts) -> Parts:
    """The kinds of the events ("[event] {shape} [event].") and the first description's shape names
    (per-sentence placeholders): whether the asked shape was there at first and what each event
    did to it."""
    names = Placeholders()
    masked = []
    for sentence in p.sentences:
        if match := EVENT.fullmatch(sentence):
            masked.append(f"[event] {match.group(1) or match.group(2)} [event].")
        else:
            masked.append(names.unlink(sentence))
    return replace(p, sentences=tuple(masked))


def mask_subject_centre(p: Parts) -> Parts:
    """The subject's centre becomes ``([number], [number])``; its name stays."""
    subject = re.findall(SHAPE, p.question)[0]
    pattern = rf"(There is a {subject} at )\(-?\d+, -?\d+\)"
    return replace(p, sentences=tuple(re.sub(pattern, r"\1([number], [number])", s) for s in p.sentences))


def mask_position(p: Parts) -> Parts:
    """The position asked becomes "[position] from the [end]"."""
    return replace(
        p, question=re.sub(r"\S+ from the (?:top|bottom)", "[position] from the [end]", p.question)
    )


def mask_swaps(p: Parts) -> Parts:
    """The shapes each swap names become placeholders of its own (the line-up stays)."""
    names = Placeholders()
    swapped = re.compile(rf"The ({SHAPE}) and the ({SHAPE}) swap positions\.")
    return replace(p, sentences=tuple(names.unlink(s) if swapped.fullmatch(s) else s for s in p.sentences))


@dataclass(frozen=True)
class View:
    """One blinding: its name, what it blinds, the mask, and the chance rate it leaves (None: the
    task's, ``shortcuts.chance``; else a fixed rate)."""

    name: str
    blinds: str
    mask: Callable[[Parts], Parts]
    chance: float | None = None
    gated: bool = True  # False: reported beside the gate, not part of it (the control; ``why``)
    why: str = ""  # why a view is not gated
    applies: Callable[[str], bool] | None = None  # the questions it is fitted and tested on (None: all)


NOTHING = View(
    "nothing blinded",
    "nothing (the control: the learner's reach)",
    lambda p: p,
    gated=False,
    why="the control",
)
QUERY = View("query blinded", "the question's attribute words", mask_query)
CANVAS = View("canvas blinded", "the attribute words of every shape in the description", mask_canvas)
SUBJECT = View(
    "subject blinded", "the question's subject (its other mentions keep their names)", mask_subject
)
REFERENCE = View(
    "reference blinded", "the question's reference (its other mentions keep their names)", mask_reference
)
UNLINKED = View(
    "names unlinked", "which mentions are the same shape (per-sentence placeholders)", unlink_names
)
EVENTS = View("asked shape's events left out", "every event naming the asked shape", mask_asked_events)

# The gated views of each task: one per input its items' twins vary (``Task.inputs``, the view
# that hides that input: an item and its twin look the same through it), and a few more.
UNBOUND = View(
    "words unbound",
    "which shape has which attribute word (each word's frequency kept; queries of several words)",
    unbind_words,
    applies=several_words,
)

VIEWS: dict[str, list[View]] = {
    "existence": [QUERY, CANVAS, UNBOUND],
    "count": [CANVAS],
    "coordinate": [View("subject's centre blinded", "the subject's centre", mask_subject_centre)],
    "transitivity": [
        SUBJECT,
        REFERENCE,
        View("directions blinded", "every direction word (the axis too: chance 1/4)", mask_directions, 0.25),
        replace(
            UNLINKED, blinds=f"{UNLINKED.blinds} (which line the pair shares too: chance 1/4)", chance=0.25
        ),
    ],
    "existence_tracking": [
        EVENTS,
        UNLINKED,
        replace(
            SUBJECT,
            gated=False,
            why=(
                "the asked shape's twin ends the other way while every other shape ends as it did, so a "
                "rule that tracks every shape without knowing which is asked keeps what the asked shape "
                "adds to the count of shapes ending present (the partial skill multi-event-majority); "
                "a twin asking about another shape over the same events would have to end "
                "the other way, which ties that shape's end to the asked one's and leaks through the "
                "events view instead. The edge falls only as one over the root of the number of shapes "
                "told like the asked one: reported beside the gate, not in it"
            ),
        ),
    ],
    "shuffle_tracking": [
        View("position blinded", "the position asked", mask_position),
        View("swaps blinded", "which shapes each swap names", mask_swaps),
    ],
}

# The view hiding each input a task's twins vary: through it an item and its twin in that input
# read alike (tests/canvas/test_twins.py).
INPUT_VIEWS: dict[str, dict[str, View]] = {
    "existence": {"query": QUERY, "canvas": CANVAS},
    "count": {"canvas": CANVAS},
    "coordinate": {"subject": VIEWS["coordinate"][0]},
    "transitivity": {"subject": SUBJECT, "reference": REFERENCE},
    "existence_tracking": {"events": EVENTS},
    "shuffle_tracking": {"swaps": VIEWS["shuffle_tracking"][1]},
}
