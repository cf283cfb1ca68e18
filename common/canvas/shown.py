"""A canvas trial shown as a picture: its prompt in each picture modality, and the pictures it shows.

A set config's ``modality`` (``common.pictures.modality``) may ask for ``image`` (the canvas drawn
instead of described, the question in words) and ``text+image`` (both). The prompt of a trial in a
picture modality is its text prompt with each canvas description replaced: in ``image`` by the
canvas's picture (``common.canvas.picture``: the shapes on the canvas with its axes, nothing
named) followed by what a picture cannot show (a shared description's events, a task-owned
description's ``unseen`` sentences: the relation rule, the swaps); in ``text+image`` by the picture
followed by the description. Few-shot examples of other canvases are shown the same way, each
with its own picture. ``LEGEND`` opens the prompt, saying how to read a picture. A trial keeps
its Key, its question and its answer in every modality; the variants that differ only in their
description (``full``, ``partial``, ``coordinates``) show the same picture, so in ``image`` their
prompts coincide.
"""

from typing import Any

from common.canvas.picture import draw_picture, name_of
from common.canvas.shapes import Geometry, Shape, shape_from_dict
from common.canvas.tasks import Questions
from common.pictures.modality import BOTH, shows_pictures
from common.pictures.store import marker, save_picture

LEGEND = (
    "The canvas is shown as a picture: x grows to the right and y upwards, as the numbered axes say; "
    "each shape is drawn at its centre, in its colour, its kind (square, circle or triangle) and its "
    "size (small or large)."
)


def shown_description(
    modality: str, words: str, shapes: list[Shape], questions: Questions, geometry: Geometry
) -> str:
    """Return a canvas's description as ``modality`` shows it: ``words`` (the text description of
    ``shapes``, as ``questions`` made it) with the canvas's picture (see the module docstring)."""
    picture = marker(name_of(shapes, geometry))
    if modality == BOTH:
        return f"{picture}\n{words}"
    rest = questions.suffix if questions.description is None else questions.unseen
    if questions.description is not None and rest and not words.endswith(rest):
        raise ValueError(f"the unseen sentences are not the end of the description: {rest!r}")
    return f"{picture}\n{rest}" if rest else picture


def picture_fields(
    modalities: list[str], prompts: dict[str, str], shapes: list[Shape], examples: list[list[Shape]], geometry
) -> dict[str, Any]:
    """Return what a trial of a picture set adds: ``picture`` (its canvas's picture name),
    ``modalities`` (modality -> prompt, ``LEGEND`` first) and, with other-canvas examples,
    ``example_shapes`` (their canvases, so that every picture a trial shows can be drawn again
    from the trial); {} when no modality shows pictures."""
    pictured = [m for m in modalities if shows_pictures(m)]
    if not pictured:
        return {}
    fields: dict[str, Any] = {
        "picture": name_of(shapes, geometry),
        "modalities": {m: f"{LEGEND}\n\n{prompts[m]}" for m in pictured},
    }
    if examples:
        fields["example_shapes"] = [[s.as_dict() for s in canvas] for canvas in examples]
    return fields


def trial_canvases(trial: dict[str, Any]) -> list[list[Shape]]:
    """Return every canvas a trial's picture prompts show: its own, then its examples'."""
    examples = trial.get("example_shapes")
    canvases = [trial["shapes"], *(examples if isinstance(examples, list) else [])]
    return [[shape_from_dict(shape) for shape in canvas] for canvas in canvases]


def draw_pictures(trials: list[dict[str, Any]], geometry: Geometry, directory) -> int:
    """Draw every canvas the picture prompts of ``trials`` show into ``directory``, each once
    (``store.save_picture``: content addressed, a picture already there is not drawn again);
    return how many distinct pictures the trials show."""
    names: dict[str, None] = {}
    for trial in trials:
        if not isinstance(trial.get("picture"), str):
            continue
        for shapes in trial_canvases(trial):
            name = name_of(shapes, geometry)
            if name not in names:
                save_picture(directory, name, lambda shapes=shapes: draw_picture(shapes, geometry))
                names[name] = None
    return len(names)
