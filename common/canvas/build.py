"""Building a canvas set's trials from its config (``setconfig``): canvases, questions, prompts,
balanced answers, skipped counts; and fresh trials drawn as a set draws them (the audit's).

The set is built in rounds: round r holds item r of every (number of shapes,
task) stratum, so any prefix of the file covers the strata evenly. Within a stratum, the answer
(or position) of item r comes from a schedule of shuffled blocks, each block holding every
answer once: any prefix of a stratum is balanced to within one per answer. A task may balance
over several independent axes (``Task.strata``: e.g. the position asked and where its answer
started); each axis has its own schedule and item r gets the labels joined with ``|``.

A trial's Key is a content hash of its prompt and gold answer (``content_key``): a regenerated set
whose trials changed gets new Keys, so answers to the old prompts are never paired with the new
ones on resume. The variants of one item (descriptions, few-shot styles) share ``item``, the
cluster of the statistics.

Every item has its own ``random.Random`` seeded by (seed, task, number of shapes, round), so the
output never depends on PYTHONHASHSEED and an item can be regenerated alone. Canvas draws per item
are bounded by ``canvas_attempts``; an item whose answer no canvas gave is skipped and counted.
"""

import hashlib
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from common.canvas import describe, shown
from common.canvas.setconfig import SetConfig, make_tasks
from common.canvas.shapes import Geometry, Shape
from common.canvas.tasks import Impossible, Questions, Task
from common.pictures.modality import TEXT, modalities_of


def schedule(strata: list[str], length: int, rng: random.Random) -> list[str]:
    """Return ``length`` strata as concatenated shuffled blocks, each block holding every stratum once.

    Composite strata (``"Yes:colour"``) are grouped by their first label (the answer): a block
    deals one stratum of each group per round, in a random order, so any prefix is balanced over
    the answers too (within one per answer when the groups are of equal size).
    """
    if not strata:  # a task that cannot run at this size (its items are skipped with the reason)
        return [""] * length
    groups: dict[str, list[str]] = {}
    for stratum in strata:
        groups.setdefault(stratum.split(":")[0], []).append(stratum)
    out: list[str] = []
    while len(out) < length:
        shuffled = [rng.sample(group, len(group)) for group in groups.values()]
        for r in range(max(len(group) for group in shuffled)):
            deal = [group[r] for group in shuffled if r < len(group)]
            rng.shuffle(deal)
            out += deal
    return out[:length]


def plan(task: Task, n: int, items: int, seed: int) -> list[str]:
    """Return the strata of items 0..items-1 of (task, n): one schedule per axis of ``task.strata``,
    labels joined with ``|``."""
    axes = [
        schedule(axis, items, random.Random(f"{seed}:schedule:{task.name}:{n}" + (f":{i}" if i else "")))
        for i, axis in enumerate(task.strata(n))
    ]
    return ["|".join(labels) for labels in zip(*axes, strict=True)]


def content_key(text: str, gold: str) -> int:
    """Return the Key of a trial: the first 52 bits of SHA-256 over its prompt and gold answer (an
    integer exact in JSON and in float64, the same on every run and PYTHONHASHSEED)."""
    digest = hashlib.sha256(f"{text}\x00{gold}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 12


@dataclass
class Built:
    """A generated set: its trials and the counts for the manifest."""

    trials: list[dict[str, Any]] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)  # (task, num_shapes, stratum or variant, reason) -> n
    items: int = 0
    keys: set[int] = field(default_factory=set)  # Keys taken (membership only, never iterated)
    tuples: int = 0  # tuple_IDs given: one per (item, description type, few-shot style)


def generate_set(cfg: SetConfig, seed: int | None = None) -> Built:
    """Return every trial of the set (Keys: ``content_key``) and the skipped counts; nothing is written."""
    seed = cfg.seed if seed is None else seed
    tasks = make_tasks(cfg)
    plans = {(t.name, n): plan(t, n, cfg.items, seed) for t in tasks for n in cfg.num_shapes}
    built = Built()
    for r in range(cfg.items):
        for n in cfg.num_shapes:
            for task in tasks:
                _add_item(
                    built,
                    cfg,
                    task,
                    n,
                    plans[(task.name, n)][r],
                    random.Random(f"{seed}:{task.name}:{n}:{r}"),
                )
    return built


def _add_item(built: Built, cfg: SetConfig, task: Task, n: int, stratum: str, rng: random.Random) -> None:
    """Append the trials of one item's contrast tuple (every member in every description type and
    few-shot style), or count it skipped. The members of one variant share a ``tuple_ID``; every
    trial of the item shares ``item``, the cluster of the statistics."""
    reason = task.unsupported(n, stratum)
    found = reason or _draw(task, n, stratum, cfg, rng)
    if isinstance(found, str):
        built.skipped[(task.name, n, stratum, found)] += 1
        return
    shapes, questions = found
    questions.stratum = stratum
    other = (
        _other_canvas_examples(task, n, cfg, rng, [m.question for m in questions.members])
        if "other_canvas" in cfg.fewshot
        else []
    )
    kinds = [task.owned_description] if task.owned_description else cfg.descriptions
    modalities = modalities_of(cfg.modality)  # a config built in code may name one as a string
    members = [questions.member(i) for i in range(len(questions.members))]
    for kind in kinds:
        for style in cfg.fewshot:
            if style == "same_canvas" and task.no_same_canvas:
                built.skipped[(task.name, n, f"{kind}/{style}", task.no_same_canvas)] += 1
                continue
            no_shots = style == "same_canvas" and not questions.examples
            if no_shots or (style == "other_canvas" and not other):
                built.skipped[(task.name, n, f"{kind}/{style}", "no few-shot example available")] += 1
                continue
            examples = other if style == "other_canvas" else []
            trials = [
                _member_trial(
                    built.items, task, kind, style, member.shapes or shapes, member, examples, cfg, modalities
                )
                for member in members
            ]
            if any(trial["Key"] in built.keys for trial in trials):  # a prompt and answer seen before
                built.skipped[(task.name, n, f"{kind}/{style}", "same prompt as an earlier trial")] += 1
                continue
            for index, trial in enumerate(trials):
                trial |= {"tuple_ID": built.tuples, "member": index}
                built.keys.add(trial["Key"])
                built.trials.append(trial)
            built.tuples += 1
    built.items += 1


def _member_trial(
    item: int,
    task: Task,
    kind: str,
    style: str,
    shapes: list[Shape],
    member: Questions,
    examples: list[tuple[list[Shape], Questions]],
    cfg: SetConfig,
    modalities: list[str],
) -> dict[str, Any]:
    """Return the trial of one member of a tuple in one variant (its prompt in every modality)."""
    prompts = {
        modality: render(
            task,
            _shown(modality, kind, shapes, member, cfg.geometry),
            member,
            style,
            [
                (_shown(modality, kind, s, q, cfg.geometry), (q.item.question, q.item.answer))
                for s, q in examples
            ],
        )
        for modality in [TEXT, *modalities]
    }
    trial = _trial(item, task, kind, style, shapes, member, prompts[TEXT])
    trial.update(shown.picture_fields(modalities, prompts, shapes, [s for s, _ in examples], cfg.geometry))
    return trial


def fresh_trials(cfg: SetConfig, task_name: str | Task, count: int, seed: str) -> list[dict[str, Any]]:
    """Return ``count`` fresh trials of one task of the set's config (text only): for each, a new
    item's contrast tuple drawn as the set draws them (the sizes in turn, each size's strata from
    its schedule, seeds from ``seed``), and one of its members in one variant (description type and
    few-shot style) picked at random. One trial per tuple: the trials are independent, and each
    is what a model sees of the set. Items that cannot be made are skipped and more drawn, up to
    twice ``count`` (the caller sees how many came). ``task_name`` may be a task itself (a planted leak,
    ``power``), given the set's settings."""
    if isinstance(task_name, Task):
        task = task_name
        for setting in ("events", "swaps", "cancelling_swaps"):
            if hasattr(task, setting):
                setattr(task, setting, getattr(cfg, setting))
    else:
        task = next(t for t in make_tasks(cfg) if t.name == task_name)
    sizes = [n for n in cfg.num_shapes if task.unsupported(n) is None]
    plans = {n: plan(task, n, 2 * count, f"{seed}:{n}") for n in sizes}
    kinds = [task.owned_description] if task.owned_description else cfg.descriptions
    pools = {}  # other-canvas examples, drawn once per size: they are drawn apart from the item anyway
    if "other_canvas" in cfg.fewshot:
        pools = {n: _example_pool(task, n, cfg, random.Random(f"{seed}:{task.name}:{n}:pool")) for n in sizes}
    out: list[dict[str, Any]] = []
    for r in range(2 * count):  # items that cannot be made are skipped: draw on until ``count`` came
        if len(out) == count:
            break
        n = sizes[r % len(sizes)] if sizes else None
        stratum = plans[n][r] if n is not None else ""
        rng = random.Random(f"{seed}:{task.name}:{n}:{r}")
        if (
            n is None
            or task.unsupported(n, stratum)
            or isinstance(found := _draw(task, n, stratum, cfg, rng), str)
        ):
            continue
        shapes, questions = found
        questions.stratum = stratum
        index = rng.randrange(len(questions.members))
        member = questions.member(index)
        styles = [
            style
            for style in cfg.fewshot
            if not (style == "same_canvas" and (task.no_same_canvas or not questions.examples))
        ]
        if not styles:
            continue
        kind, style = rng.choice(kinds), rng.choice(styles)
        other = []
        if style == "other_canvas":
            asked = [m.question for m in questions.members]
            choices = [e for e in pools[n] if e[1].item.question not in asked]
            other = rng.sample(choices, min(cfg.examples, len(choices)))
        if style == "other_canvas" and not other:
            continue
        trial = _member_trial(r, task, kind, style, member.shapes or shapes, member, other, cfg, [])
        out.append(trial | {"tuple_ID": r, "member": index})
    return out


def _example_pool(
    task: Task, n: int, cfg: SetConfig, rng: random.Random
) -> list[tuple[list[Shape], Questions]]:
    """Return ``POOL`` other-canvas examples of ``task`` on ``n`` shapes (items without twins)."""
    pool = []
    for _ in range(POOL):
        found = _draw(task, n, task.pick_stratum(rng, n, None), cfg, rng, twins=False)
        if not isinstance(found, str):
            shapes, questions = found
            item = questions.member(0)  # its own canvas (a count item may be the twin canvas)
            pool.append((item.shapes or shapes, item))
    return pool


POOL = 64  # other-canvas examples drawn per size for the fresh trials


def _draw(
    task: Task, n: int, stratum: str, cfg: SetConfig, rng: random.Random, twins: bool = True
) -> tuple[list[Shape], Questions] | str:
    """Return a canvas and the contrast tuple of an item in ``stratum`` (``twins``: with the item's
    twins), or after the allowed draws the reason none fitted (with the last draw's problem)."""
    problem = ""
    for _ in range(cfg.canvas_attempts):
        try:
            shapes = task.place(rng, task.identities(rng, n, stratum), cfg.geometry)
            questions = task.generate_questions(shapes, rng, cfg.geometry, stratum, cfg.examples, twins)
            return questions.shapes or shapes, questions
        except Impossible as exc:
            problem = str(exc)
    return f"no canvas in {cfg.canvas_attempts} draws (last: {problem})"


def _other_canvas_examples(
    task: Task, n: int, cfg: SetConfig, rng: random.Random, asked: list[str]
) -> list[tuple[list[Shape], Questions]]:
    """Return up to ``cfg.examples`` other canvases with a question each (random answers, no
    twins), for few-shot prompts, shown with every member of the tuple alike; an example never
    asks a question of the tuple (even of another canvas)."""
    out = []
    for _ in range(cfg.examples):
        for _ in range(cfg.canvas_attempts):
            try:
                shapes = task.place(rng, task.identities(rng, n, None), cfg.geometry)
                questions = task.generate_questions(shapes, rng, cfg.geometry, None, 0, twins=False)
            except Impossible:
                continue
            if questions.item.question not in asked:
                item = questions.member(0)  # its own canvas (a count item may be the twin canvas)
                out.append((item.shapes or questions.shapes or shapes, item))
                break
    return out


def _description(kind: str, shapes: list[Shape], questions: Questions, geometry: Geometry) -> str:
    """Return the description of a canvas: the task's own, or a shared one plus the task's suffix."""
    if questions.description is not None:
        return questions.description
    text = describe.describe(kind, shapes, geometry)
    return f"{text} {questions.suffix}" if questions.suffix else text


def _shown(modality: str, kind: str, shapes: list[Shape], questions: Questions, geometry: Geometry) -> str:
    """Return a canvas's description in ``modality``: the words (``_description``), or in a
    picture modality the picture with them or with what a picture cannot show (``shown``)."""
    words = _description(kind, shapes, questions, geometry)
    return (
        words if modality == TEXT else shown.shown_description(modality, words, shapes, questions, geometry)
    )


def render(
    task: Task, description: str, questions: Questions, style: str, other: list[tuple[str, tuple[str, str]]]
) -> str:
    """Return the prompt of the tuple's item (``questions.item``): examples (same canvas after the
    description, or other canvases before it), then the question."""
    ending = f"Question: {questions.item.question}\n{task.instruction}"
    if style == "same_canvas":
        shots = "".join(f"Question: {q}\nAnswer: {a}\n\n" for q, a in questions.examples)
        return f"{description}\n\n{shots}{ending}"
    if style == "other_canvas":
        shots = "".join(
            f"Example {i}: {d}\nQuestion: {q}\nAnswer: {a}\n\n" for i, (d, (q, a)) in enumerate(other, 1)
        )
        return f"{shots}Now a new canvas. {description}\n\n{ending}"
    return f"{description}\n\n{ending}"


def _trial(
    item: int,
    task: Task,
    kind: str,
    style: str,
    shapes: list[Shape],
    questions: Questions,
    text: str,
) -> dict[str, Any]:
    """Return one trial record in the WorldSense format plus the canvas suite's fields (its
    ``tuple_ID`` and ``member`` are set by the caller)."""
    member = questions.item
    return {
        "Key": content_key(text, member.answer),
        "item": item,
        "problemname": task.name,
        "problemsize": len(shapes),
        "task": task.name,
        "description": kind,
        "num_shapes": len(shapes),
        "fewshot": style,
        "text": text,
        "expectedresp": questions.vocabulary,
        "goldresp": member.answer,
        "question": member.question,
        "varies": list(member.varies),
        "shapes": [s.as_dict() for s in shapes],
        "facts": questions.facts,
        "stratum": questions.stratum,
    }
