"""The gate's power: leaks planted in the generator on purpose, which the audit must catch.

A gate that cannot fail proves nothing. Each planted leak (``LEAKS``) is a task that makes its
items as the real one does (one member of each tuple, no twins), except that with probability
``strength`` an item carries a leak a one-line rule (``Leak.rule``) reads. ``power_table`` plants
each leak at a few strengths, measures the rule's accuracy on fresh planted trials and runs the
audit's view that should see the leak (``Leak.view``) with the gate's sizes and level: the leak is
caught when that view's interval leaves chance. The report states the smallest leak caught; the
tests require each leak at full strength (its rule then right on 70% of the trials or more) to
fail the gate.

The leaks are the shortcuts earlier designs let through: the answer told by the subject's own
place on its row (the reference beyond its row's middle: the old
lines' reference in the middle), the subject's link stating the answer told last, a mirror shape whose
end is the asked shape's opposite, the asked shape's deciding event told last when it is there,
swaps that leave the asked position as it started, and a query word missing from the canvas when
the answer is No.
"""

import dataclasses
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from common.canvas import audit, describe, reading, views
from common.canvas.partial import line_place, words_anywhere
from common.canvas.setconfig import SetConfig
from common.canvas.shapes import IDENTITIES, Shape, title
from common.canvas.shortcuts import chance, shuffle_initial
from common.canvas.tasks import attributes as attr
from common.canvas.tasks.base import Questions, Task
from common.canvas.tasks.existence import ExistenceTask
from common.canvas.tasks.existence_tracking import ExistenceTrackingTask, history
from common.canvas.tasks.shuffle_tracking import ShuffleTrackingTask, random_swaps
from common.canvas.tasks.transitivity import TransitivityTask
from common.jsonl import write_json

STRENGTHS = (0.25,)  # the share of items carrying a leak in the power table (the tests: all of them)


def _item(questions: Questions, index: int = 0) -> Questions:
    """Return member ``index`` of a tuple as an item alone (no twins)."""
    alone = questions.member(index)  # its own canvas, description and events in place of the shared
    chosen = dataclasses.replace(
        alone.item, varies=(), shapes=None, description=None, suffix=None, unseen=None
    )
    return dataclasses.replace(alone, members=[chosen])


class _Planted:
    """Mixin: a task whose items carry a leak with probability ``strength`` (``leak``)."""

    strength = 1.0

    def generate_questions(self, shapes, rng, geometry, selected=None, examples=2, twins=True) -> Questions:
        """Return an item of the real task (a random member of its tuple, alone), leaky with
        probability ``strength``."""
        questions = super().generate_questions(shapes, rng, geometry, selected, examples, True)  # type: ignore[misc]
        if rng.random() < self.strength:
            return self.leak(questions, rng, questions.shapes or shapes)
        return _item(questions, rng.randrange(len(questions.members)))

    def leak(self, questions: Questions, rng: random.Random, shapes: list[Shape]) -> Questions:
        """Return the leaky item made of the real tuple ``questions`` on the canvas ``shapes``."""
        raise NotImplementedError


class MiddleReference(_Planted, TransitivityTask):
    """Transitivity asking, on a row, about a reference beyond the middle from the subject: where
    the subject sits on its row tells the answer (the reference is never read)."""

    def leak(self, questions, rng, shapes):
        rows = [line for name, line in questions.facts["lines"].items() if name in ("bottom", "top")]
        told = []
        for i, member in enumerate(questions.members):
            subject, _ = reading.relative_pair(member.question)
            row = next((line for line in rows if subject in line), None)
            if row and member.answer == ("Right" if row.index(subject) >= (len(row) - 1) / 2 else "Left"):
                told.append(i)
        return _item(questions, rng.choice(told) if told else rng.randrange(len(questions.members)))


class SubjectLinkLast(_Planted, TransitivityTask):
    """Transitivity with the subject's link towards the reference told last (it states the answer)."""

    def leak(self, questions, rng, shapes):
        item = _item(questions, rng.randrange(len(questions.members)))
        subject, reference = reading.relative_pair(item.item.question)
        line = next(line for line in item.facts["lines"].values() if subject in line and reference in line)
        step = 1 if line.index(reference) > line.index(subject) else -1
        neighbour = line[line.index(subject) + step]
        sentences = reading.sentences(item.description)
        told = next(
            s
            for s in sentences
            if reading.chain_step(s) and {subject, neighbour} <= set(re.findall(reading.SHAPE, s))
        )
        return dataclasses.replace(item, description=" ".join([s for s in sentences if s != told] + [told]))


def _asked(item: Questions) -> str:
    """Return the shape an existence-tracking item asks about."""
    return re.search(rf"Is there a ({reading.SHAPE}) in", item.item.question).group(1)


class Mirrored(_Planted, ExistenceTrackingTask):
    """Existence tracking with a mirror: a shape with as many events as the asked one, starting
    the other way, so ending the other way (and no decoys, as the design it comes from had none)."""

    decoys = 0

    def leak(self, questions, rng, shapes):
        longer = max(
            range(len(questions.members)), key=lambda i: questions.members[i].facts["events_of_asked"]
        )
        item = _item(questions, longer)
        asked, sentences = _asked(item), reading.sentences(item.suffix)
        mine = [kind for name, kind in reading.events(item.suffix) if name == asked]
        if len(mine) < 2:  # a mirror of one event would be one event among many
            return item
        named = {name for name, _ in reading.events(item.suffix)} | {asked}
        starts_on = mine[0] == "add"  # the asked shape starts off: the mirror starts on the canvas
        pool = [s.name for s in shapes] if starts_on else [" ".join(i) for i in IDENTITIES]
        pool = [
            name for name in pool if name not in named and (starts_on or name not in [s.name for s in shapes])
        ]
        if not pool:
            return item
        mirror = rng.choice(pool)
        kinds = history("on" if starts_on else "off", len(mine))
        total = len(sentences) + len(kinds)
        slots = set(rng.sample(range(total), len(kinds)))
        added = iter(describe.added(mirror) if k == "add" else describe.removed(mirror) for k in kinds)
        rest = iter(sentences)
        return dataclasses.replace(
            item, suffix=" ".join(next(added) if i in slots else next(rest) for i in range(total))
        )


class AskedLast(_Planted, ExistenceTrackingTask):
    """Existence tracking with the asked shape's deciding event told last when it is there."""

    def leak(self, questions, rng, shapes):
        item = _item(questions, rng.randrange(len(questions.members)))
        if item.item.answer != "Yes":
            return item
        asked, sentences = _asked(item), reading.sentences(item.suffix)
        mine = [i for i, s in enumerate(sentences) if asked in s]
        if not mine:
            return item
        last = mine[-1]
        return dataclasses.replace(
            item, suffix=" ".join(sentences[:last] + sentences[last + 1 :] + [sentences[last]])
        )


class SwapFree(_Planted, ShuffleTrackingTask):
    """Shuffle tracking whose swaps leave the asked position as it started."""

    def leak(self, questions, rng, shapes):
        item = _item(questions)
        start = reading.line_up(item.description)
        position = reading.position(item.item.question, len(start))
        while True:
            swaps = random_swaps(rng, len(start), self.count(len(start)), True)
            order = list(start)
            for i, j in swaps:
                order[i], order[j] = order[j], order[i]
            if order[position] == start[position]:
                break
        sentences, order = [describe.line_up(len(start), start)], list(start)
        for i, j in swaps:
            sentences.append(describe.swap(order[i], order[j]))
            order[i], order[j] = order[j], order[i]
        member = dataclasses.replace(item.item, answer=title(tuple(start[position].split())))
        return dataclasses.replace(
            item, members=[member], description=" ".join(sentences), unseen=" ".join(sentences[1:])
        )


class Unbound(_Planted, ExistenceTask):
    """Existence whose "No" queries of several words ask a word no shape has."""

    def leak(self, questions, rng, shapes):
        item = _item(questions, rng.randrange(len(questions.members)))
        query = tuple(item.item.facts["query"])
        canvas = [s.identity for s in (item.shapes or shapes)]
        if item.item.answer != "No" or sum(v is not None for v in query) < 2:
            return item
        present = {v for identity in canvas for v in identity}
        missing = [
            q for q in attr.queries_of_type(attr.mask_of(query)) if any(v and v not in present for v in q)
        ]
        if not missing:
            return item
        chosen = rng.choice(missing)
        member = dataclasses.replace(item.item, question=self._ask(chosen), facts={"query": list(chosen)})
        return dataclasses.replace(item, members=[member])


def _last_link(prompt: str) -> str | None:
    """The direction the description's last sentence gives the subject, when it names it."""
    subject, _ = reading.relative_pair(reading.question(prompt))
    step = reading.chain_step(reading.sentences(reading.description(prompt))[-1])
    if not step or subject not in (step[0], step[2]):
        return None
    return step[1] if step[2] == subject else reading.OPPOSITE[step[1]]


def _mirror_opposite(prompt: str) -> str:
    """The opposite of where the most evented other shape ends."""
    asked = re.search(rf"Is there a ({reading.SHAPE}) in", reading.question(prompt)).group(1)
    events = reading.events(reading.description(prompt))
    counts: dict[str, int] = {}
    for name, _ in events:
        if name != asked:
            counts[name] = counts.get(name, 0) + 1
    if not counts:
        return "No"
    top = max(counts, key=lambda name: (counts[name], max(i for i, (n, _) in enumerate(events) if n == name)))
    last = [kind for name, kind in events if name == top][-1]
    return "No" if last == "add" else "Yes"


def _asked_last(prompt: str) -> str:
    """Yes when the description's last sentence names the asked shape."""
    asked = re.search(rf"Is there a ({reading.SHAPE}) in", reading.question(prompt)).group(1)
    return "Yes" if asked in reading.sentences(reading.description(prompt))[-1] else "No"


@dataclass(frozen=True)
class Leak:
    """A planted leak: its name, the task it is planted in, the planted task, the one-line rule
    that reads it, and the audit view that should see it."""

    name: str
    task: str
    planted: Callable[[], Task]
    rule: Callable[[str], str | None]
    view: str
    settings: tuple[tuple[str, object], ...] = ()  # set settings it is planted with (the design it recalls)


LEAKS = [
    Leak(
        "the reference beyond the middle of the subject's row: the subject's place tells the answer",
        "transitivity",
        MiddleReference,
        line_place,
        "reference blinded",
    ),
    Leak(
        "the subject's link stating the answer told last",
        "transitivity",
        SubjectLinkLast,
        _last_link,
        "reference blinded",
    ),
    Leak(
        "a mirror shape ending the other way",
        "existence_tracking",
        Mirrored,
        _mirror_opposite,
        "asked shape's events left out",
        (("events", 8),),
    ),
    Leak(
        "the asked shape's deciding event told last when it is there",
        "existence_tracking",
        AskedLast,
        _asked_last,
        "names unlinked",
    ),
    Leak(
        "swaps that leave the asked position as it started",
        "shuffle_tracking",
        SwapFree,
        shuffle_initial,
        "swaps blinded",
    ),
    Leak(
        "a query word missing from the canvas when the answer is No",
        "existence",
        Unbound,
        words_anywhere,
        "words unbound",
    ),
]


def plant(leak: Leak, strength: float) -> Task:
    """Return the planted task of ``leak`` carrying it with probability ``strength``."""
    task = leak.planted()
    task.strength = strength  # type: ignore[attr-defined]
    return task


def check(
    leak: Leak, strength: float, cfg: SetConfig, gate: float, fit: int = audit.FIT, test: int = audit.TEST
) -> dict:
    """Return one row of the power table: the rule's accuracy on the planted test trials (where it
    does not read a prompt, the chance a random answer has), and the view's accuracy, interval at
    the gate's level, chance, and whether it caught the leak."""
    task = plant(leak, strength)
    cfg = dataclasses.replace(cfg, **dict(leak.settings))
    train, held = audit.fresh(cfg, task, fit, "fit"), audit.fresh(cfg, task, test, "test")
    view = next(v for v in views.VIEWS[leak.task] if v.name == leak.view)
    row = audit.audit_view(train, held, view, gate)
    chosen = held[[view.applies(q) for q in held["question"]]] if view.applies else held
    rule = 0.0  # right where the rule reads the prompt, chance where it does not (a random fallback)
    for text, gold, options in zip(chosen["text"], chosen["goldresp"], chosen["expectedresp"], strict=True):
        answer = leak.rule(text)
        rule += (answer == gold) if answer is not None else chance(leak.task, len(options), text)
    return {
        "leak": leak.name,
        "task": leak.task,
        "strength": strength,
        "rule": rule / max(len(chosen), 1),
        "view": leak.view,
        "accuracy": row["accuracy"],
        "gate_lo": row["gate_lo"],
        "gate_hi": row["gate_hi"],
        "chance": row["chance"],
        "caught": not row["at_chance"],
    }


def power_table(cfg: SetConfig, strengths: tuple[float, ...] = STRENGTHS) -> pd.DataFrame:
    """Return the power table of the generator ``cfg``: every planted leak at every strength, at
    the level of ``cfg``'s gate (``audit.gate_level``)."""
    gate = audit.gate_level(cfg)
    return pd.DataFrame(
        [check(leak, s, cfg, gate) for leak in LEAKS for s in strengths if leak.task in cfg.tasks]
    )


def write_power(out: Path, cache: Path | None = None, ship: bool = False) -> pd.DataFrame:
    """Write the power table of the default generator (``power_table``) to ``out``,
    computed unless the shipped record or ``cache`` holds it for this code (with ``ship`` also
    recorded in ``SHIPPED``); return it."""
    cfg = SetConfig()
    name = audit.power_name()
    record = audit.stored_at(name, cache)
    if record and record.is_file():
        document = json.loads(record.read_text())
    else:
        leaks = json.loads(power_table(cfg).to_json(orient="records"))
        document = {"fit": audit.FIT, "test": audit.TEST, "level": audit.gate_level(cfg), "leaks": leaks}
        if record:
            write_json(record, document)
    if ship:
        write_json(audit.SHIPPED / name, document)
    write_json(out, document)
    return pd.DataFrame(document["leaks"], columns=audit.POWER_COLUMNS)
