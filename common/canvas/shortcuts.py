"""Shortcut rules: answering canvas prompts by a rule that needs no skill, and chance rates.

Each shortcut reads the prompt text only (``reading``), as a model would, and applies one rule
a model could learn from the wording instead of the canvas. A shortcut that scores above its
task's chance rate shows a flaw of the set; the generator balances against each one (see the
tasks' docstrings), and ``report`` shows their scores beside chance and beside the audit
(``audit``), which looks for any such rule instead of this list. Two (``guard=True``) find
nothing to read in the sets the generator makes now and stay as guards against a change that
reopens their leak: the relation a description sentence states about a coordinate pair (the
task shows centres only) and elimination by same-canvas examples (shuffle tracking offers
none). On a prompt of another canvas task (or one its rule cannot read) a shortcut answers as the
``random`` built-in does; a prompt that is not a canvas one (no "Question: " line, e.g.
WorldSense) stops the run.

Each rule is a built-in model of ``baselines.py`` (``--model shortcut-shuffle-initial``).
"""

import re
from collections.abc import Callable
from dataclasses import dataclass

from common.canvas import reading
from common.canvas.shapes import COLOURS, IDENTITIES, KINDS, SIZES, title

Rule = Callable[[str], str | None]


def _existence_one_attribute(prompt: str) -> str | None:
    """Existence: a query naming one attribute ("a shape that is red", "a circle") means Yes,
    a longer one No."""
    match = re.fullmatch(r"Is there an? (.*)\?", reading.question(prompt))
    if not match or match.group(1).endswith(" in the canvas"):
        return None
    words = re.findall(r"small|large|red|blue|yellow|green|square|circle|triangle", match.group(1))
    return "Yes" if len(words) == 1 else "No"


def _tracked_shape(prompt: str) -> str | None:
    """Return the shape an existence-tracking question asks about, or None for another question."""
    match = re.fullmatch(rf"Is there a ({reading.SHAPE}) in the canvas\?", reading.question(prompt))
    return match.group(1) if match else None


def _tracking_unmentioned(prompt: str) -> str | None:
    """Existence tracking: a shape the description never mentions is absent (No), any other present."""
    shape = _tracked_shape(prompt)
    if shape is None:
        return None
    return "Yes" if shape in reading.shapes_named(reading.description(prompt)) else "No"


def _tracking_ignore_events(prompt: str) -> str | None:
    """Existence tracking, ignoring the events: Yes when the first description names the shape."""
    shape = _tracked_shape(prompt)
    if shape is None:
        return None
    first = reading.without_events(reading.description(prompt))
    return "Yes" if shape in reading.shapes_named(first) else "No"


def _tracking_first_event(prompt: str) -> str | None:
    """Existence tracking by the first event naming the shape (added: Yes, removed: No), else Yes."""
    shape = _tracked_shape(prompt)
    if shape is None:
        return None
    for name, kind in reading.events(reading.description(prompt)):
        if name == shape:
            return "Yes" if kind == "add" else "No"
    return "Yes"


def _tracking_events_of(prompt: str) -> list[str] | None:
    """Return the kinds ("add", "remove") of the events naming the asked shape, or None for
    another question."""
    shape = _tracked_shape(prompt)
    if shape is None:
        return None
    return [kind for name, kind in reading.events(reading.description(prompt)) if name == shape]


def _tracking_removed_ever(prompt: str) -> str | None:
    """Existence tracking: a shape the events ever remove is gone (No), any other present."""
    kinds = _tracking_events_of(prompt)
    return None if kinds is None else "No" if "remove" in kinds else "Yes"


def _tracking_added_ever(prompt: str) -> str | None:
    """Existence tracking: a shape the events ever add is there (Yes), any other absent."""
    kinds = _tracking_events_of(prompt)
    return None if kinds is None else "Yes" if "add" in kinds else "No"


def _tracking_last_event(prompt: str) -> str | None:
    """Existence tracking: the last event of the description decides, whichever shape it names
    (added: Yes, removed: No)."""
    if _tracked_shape(prompt) is None:
        return None
    events = reading.events(reading.description(prompt))
    return None if not events else "Yes" if events[-1][1] == "add" else "No"


def shuffle_initial(prompt: str) -> str | None:
    """Shuffle tracking, ignoring the swaps: the shape at the asked position in the first line-up."""
    try:
        start = reading.line_up(reading.description(prompt))
        return title(tuple(start[reading.position(reading.question(prompt), len(start))].split()))
    except ValueError:
        return None


def _shuffle_first_swap(prompt: str) -> str | None:
    """Shuffle tracking, stopping after the first swap: the shape at the asked position then."""
    return reading.after_swaps(prompt, lambda swaps: swaps[:1])


def _swap_names(prompt: str) -> list[str] | None:
    """Return the shapes named by the swap sentences in order (two per swap), or None for a prompt
    that is not a shuffle question or has no swaps."""
    try:
        reading.position(reading.question(prompt), 3)
    except ValueError:
        return None
    named = [shape for pair in reading.swaps(reading.description(prompt)) for shape in pair]
    return named or None


def _shuffle_most_swapped(prompt: str) -> str | None:
    """Shuffle tracking: the shape named in the most swap sentences (the first named on a tie)."""
    named = _swap_names(prompt)
    return None if named is None else title(tuple(max(dict.fromkeys(named), key=named.count).split()))


def _shuffle_named(index: int) -> Rule:
    """Return the rule answering the shape named at ``index`` of the swap sentences' names."""

    def rule(prompt: str) -> str | None:
        named = _swap_names(prompt)
        return None if named is None else title(tuple(named[index].split()))

    rule.__doc__ = f"Shuffle tracking: the shape at index {index} of the names in the swap sentences."
    return rule


def _shuffle_elimination(prompt: str) -> str | None:
    """Shuffle tracking with same-canvas examples: the lowest shape of the line-up that no
    example's answer names (the answer is never an example's)."""
    try:
        order = reading.line_up(reading.description(prompt))
        reading.position(reading.question(prompt), len(order))
    except ValueError:
        return None
    named = set(reading.example_answers(prompt))
    if not named:
        return None
    return next((title(tuple(s.split())) for s in order if title(tuple(s.split())) not in named), None)


def _coordinate_stated(prompt: str) -> str | None:
    """Coordinate: the relation a description sentence states about the pair ("A {subject} is to
    the below right of this {reference}.", or the reverse sentence turned round): a lookup."""
    try:
        subject, reference = reading.relative_pair(reading.question(prompt))
    except ValueError:
        return None
    for shape, words, other in reading.relation_sentences(reading.description(prompt)):
        if (shape, other) == (subject, reference):
            return " ".join(words)
        if (shape, other) == (reference, subject):
            return " ".join(reading.OPPOSITE[w] for w in words)
    return None


def count_range(prompt: str) -> range | None:
    """Return the counts a count question's wording allows on the test canvas (see the count
    task), or None for another question."""
    match = re.fullmatch(r"How many (.+?)(?: are there)?\?", reading.question(prompt))
    intro = re.match(r"There are (\d+) shapes in a canvas\.", reading.description(prompt))
    if not match or not intro:
        return None
    matching = len(IDENTITIES)
    for word in re.findall(r"small|large|red|blue|yellow|green|square|circle|triangle", match.group(1)):
        matching //= len(next(values for values in (SIZES, COLOURS, KINDS) if word in values))
    n = int(intro.group(1))
    return range(max(0, n - (len(IDENTITIES) - matching)), min(matching, n) + 1)


def _count_most(prompt: str) -> str | None:
    """Count: the largest count the query's wording allows (all of its kind, or every shape)."""
    counts = count_range(prompt)
    return None if counts is None else str(counts[-1])


def _count_expected(prompt: str) -> str | None:
    """Count: the count expected of a random canvas, N u / 24 rounded (u: identities the query matches)."""
    counts = count_range(prompt)
    if counts is None:
        return None
    n = int(re.match(r"There are (\d+)", reading.description(prompt)).group(1))
    words = re.findall(r"small|large|red|blue|yellow|green|square|circle|triangle", reading.question(prompt))
    matching = len(IDENTITIES)
    for word in words:
        matching //= len(next(values for values in (SIZES, COLOURS, KINDS) if word in values))
    return str(min(max(round(n * matching / len(IDENTITIES)), counts[0]), counts[-1]))


def _transitivity_words(prompt: str) -> tuple[str | None, str | None] | None:
    """Return the directions the sentences introducing the subject and the reference give them
    (their meaning, whatever the form), or None for another question."""
    text = reading.description(prompt)
    if not reading.chain_facts(text):
        return None
    try:
        subject, reference = reading.relative_pair(reading.question(prompt))
    except ValueError:
        return None
    return reading.introducing_direction(text, subject), reading.introducing_direction(text, reference)


def _transitivity_subject_word(prompt: str) -> str | None:
    """Transitivity: the direction the sentence introducing the subject gives it (for the pivot: the
    opposite of the reference's)."""
    words = _transitivity_words(prompt)
    if words is None:
        return None
    subject, reference = words
    return subject or (reading.OPPOSITE[reference] if reference else None)


def _transitivity_reference_word(prompt: str) -> str | None:
    """Transitivity: the opposite of the direction the sentence introducing the reference gives it
    (for the pivot: the subject's)."""
    words = _transitivity_words(prompt)
    if words is None:
        return None
    subject, reference = words
    return reading.OPPOSITE[reference] if reference else subject


def _transitivity_end_link(prompt: str) -> str | None:
    """Transitivity: towards the end of a line the subject is linked to (a shape named in one
    link only): the direction that shape lies from the subject."""
    try:
        subject, _ = reading.relative_pair(reading.question(prompt))
    except ValueError:
        return None
    facts = reading.chain_facts(reading.description(prompt))
    mentions: dict[str, int] = {}
    for a, _, b in facts:
        mentions[a] = mentions.get(a, 0) + 1
        mentions[b] = mentions.get(b, 0) + 1
    for a, word, b in facts:  # a is `word` of b
        if subject in (a, b) and mentions[b if a == subject else a] == 1:
            return reading.OPPOSITE[word] if a == subject else word
    return None


def _transitivity_corners(prompt: str) -> str | None:
    """Transitivity, by the sides each asked shape has no neighbour on (a frame's corner shows
    two): a side open for both puts them on one line, and the subject's open side on the other
    axis is the answer. Reads nothing where every asked shape has neighbours on all sides."""
    try:
        subject, reference = reading.relative_pair(reading.question(prompt))
    except ValueError:
        return None
    facts = reading.chain_facts(reading.description(prompt))

    def open_sides(shape: str) -> set[str]:
        sides = {word for a, word, b in facts if b == shape} | {
            reading.OPPOSITE[w] for a, w, b in facts if a == shape
        }
        return {"Left", "Right", "Above", "Below"} - sides

    mine, theirs = open_sides(subject), open_sides(reference)
    for shared in sorted(mine & theirs):
        axis = ("Left", "Right") if shared in ("Above", "Below") else ("Above", "Below")
        answer = [side for side in sorted(mine) if side in axis]
        if len(answer) == 1:
            return answer[0]
    return None


def _tracking_mirror(prompt: str) -> str | None:
    """Existence tracking: the opposite of where the other shape named in the most events ends (its
    last event: added means No)."""
    shape = _tracked_shape(prompt)
    if shape is None:
        return None
    events = reading.events(reading.description(prompt))
    counts: dict[str, int] = {}
    for name, _ in events:
        if name != shape:
            counts[name] = counts.get(name, 0) + 1
    if not counts:
        return None
    top = max(counts, key=counts.get)  # the first named of the most named
    return "No" if [kind for name, kind in events if name == top][-1] == "add" else "Yes"


def _tracking_last_other(prompt: str) -> str | None:
    """Existence tracking: the opposite of the last event that does not name the asked shape."""
    shape = _tracked_shape(prompt)
    if shape is None:
        return None
    others = [kind for name, kind in reading.events(reading.description(prompt)) if name != shape]
    return None if not others else "No" if others[-1] == "add" else "Yes"


@dataclass(frozen=True)
class Shortcut:
    """One shortcut: its model name, the task it targets, what it does, and its rule."""

    name: str
    task: str
    about: str
    rule: Rule
    guard: bool = False  # True: the sets made now give the rule nothing to read (tested); kept for changes
    blind_to: tuple[
        str, ...
    ] = ()  # the inputs a twin varies that it does not read (tests/canvas/test_twins.py)


# One shortcut in two lines: name and task, then what it does and its rule (kept compact: fmt off).
# fmt: off
SHORTCUTS = [
    Shortcut("shortcut-existence-one-attribute", "existence",
             "a one-attribute query means Yes, a longer one No", _existence_one_attribute,
             blind_to=("query", "canvas")),
    Shortcut("shortcut-count-most", "count",
             "the largest count the query's wording allows", _count_most,
             blind_to=("canvas",)),
    Shortcut("shortcut-count-expected", "count",
             "the count a random canvas would have on average (N u / 24)", _count_expected,
             blind_to=("canvas",)),
    Shortcut("shortcut-coordinate-stated", "coordinate",
             "the relation a description sentence states about the pair (a lookup)", _coordinate_stated,
             guard=True, blind_to=("subject",)),
    Shortcut("shortcut-tracking-unmentioned", "existence_tracking",
             "a shape never mentioned is absent, a mentioned one present", _tracking_unmentioned,
             blind_to=("events",)),
    Shortcut("shortcut-tracking-ignore-events", "existence_tracking",
             "ignore the events: present when the first description names it", _tracking_ignore_events,
             blind_to=("events",)),
    Shortcut("shortcut-tracking-first-event", "existence_tracking",
             "the first event naming the shape decides (added: Yes, removed: No)", _tracking_first_event,
             blind_to=("events",)),
    Shortcut("shortcut-tracking-removed-ever", "existence_tracking",
             "a shape ever removed is gone, any other present", _tracking_removed_ever,
             blind_to=("events",)),
    Shortcut("shortcut-tracking-added-ever", "existence_tracking",
             "a shape ever added is there, any other absent", _tracking_added_ever,
             blind_to=("events",)),
    Shortcut("shortcut-tracking-last-event", "existence_tracking",
             "the last event of all decides, whichever shape it names", _tracking_last_event),
    Shortcut("shortcut-tracking-mirror", "existence_tracking",
             "the opposite of where the other shape named in the most events ends", _tracking_mirror,
             blind_to=("events",)),
    Shortcut("shortcut-tracking-last-other", "existence_tracking",
             "the opposite of the last event not naming the asked shape", _tracking_last_other,
             blind_to=("events",)),
    Shortcut("shortcut-shuffle-initial", "shuffle_tracking",
             "ignore the swaps: the shape at that position in the first line-up", shuffle_initial,
             blind_to=("swaps",)),
    Shortcut("shortcut-shuffle-first-swap", "shuffle_tracking",
             "stop after the first swap: the shape at that position then", _shuffle_first_swap),
    Shortcut("shortcut-shuffle-last-named", "shuffle_tracking",
             "the shape named last in the swaps", _shuffle_named(-1)),
    Shortcut("shortcut-shuffle-last-swap-first", "shuffle_tracking",
             "the shape named first in the last swap", _shuffle_named(-2)),
    Shortcut("shortcut-shuffle-first-named", "shuffle_tracking",
             "the shape named first in the swaps", _shuffle_named(0)),
    Shortcut("shortcut-shuffle-most-swapped", "shuffle_tracking",
             "the shape named in the most swap sentences", _shuffle_most_swapped),
    Shortcut("shortcut-shuffle-elimination", "shuffle_tracking",
             "a shape no same-canvas example answers (the lowest in the line-up)", _shuffle_elimination,
             guard=True, blind_to=("swaps",)),
    Shortcut("shortcut-transitivity-subject-word", "transitivity",
             "the direction the sentence introducing the subject gives it", _transitivity_subject_word),
    Shortcut("shortcut-transitivity-end-link", "transitivity",
             "towards the line's end the subject is linked to (named in one link)", _transitivity_end_link,
             blind_to=("reference",)),
    Shortcut("shortcut-transitivity-corners", "transitivity",
             "the sides each asked shape has no neighbour on (a frame's corners)", _transitivity_corners,
             guard=True),
    Shortcut("shortcut-transitivity-reference-word", "transitivity",
             "the opposite of the direction the reference's sentence gives it", _transitivity_reference_word),
]
# fmt: on


def asked_range(prompt: str) -> range | None:
    """Return the counts the set asks for a count question's wording on the test canvas
    (``tasks.count.asked_counts``: the allowed range cut into pairs), or None for another
    question."""
    from common.canvas.tasks.count import asked_counts

    match = re.fullmatch(r"How many (.+?)(?: are there)?\?", reading.question(prompt))
    intro = re.match(r"There are (\d+) shapes in a canvas\.", reading.description(prompt))
    if not match or not intro:
        return None
    words = re.findall(r"small|large|red|blue|yellow|green|square|circle|triangle", match.group(1))
    mask = tuple(any(w in values for w in words) for values in (SIZES, COLOURS, KINDS))
    return asked_counts(mask, int(intro.group(1)))


def chance(task: str, options: int, prompt: str = "") -> float:
    """Return the chance rate of a trial: 1 / the number of answers its prompt's form leaves open.

    Usually all of them (``options``); transitivity: two, since the pair's line fixes the axis;
    count: the counts the set asks for the query's wording on the canvas (``asked_range``: a full
    identity 0 or 1), when the ``prompt`` is given.
    """
    if task == "transitivity":
        return 0.5
    counts = asked_range(prompt) if task == "count" and prompt else None
    return 1.0 / (len(counts) if counts else options)
