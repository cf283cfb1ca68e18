"""A canvas set's config: ``SetConfig`` (the defaults make the standard set), read from a file
that holds only the differences and is checked strictly (file:line errors, ``load_config``), and
the configured tasks (``make_tasks``)."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from common import config
from common.canvas import describe
from common.canvas.shapes import IDENTITIES, SIZES, Geometry
from common.canvas.tasks import TASKS, Task
from common.errors import ConfigError
from common.pictures.modality import modalities_of

FewShot = Literal["none", "same_canvas", "other_canvas"]


def _all_tasks() -> list[str]:
    return list(TASKS)


@dataclass
class SetConfig:
    """Settings of a canvas trial set; the defaults make the standard set."""

    seed: int = 0
    num_shapes: list[int] = field(default_factory=lambda: [3, 6, 12])  # canvases of each size
    items: int = 10  # items per (task, number of shapes), each a contrast tuple in every variant
    tasks: list[str] = field(default_factory=_all_tasks)
    descriptions: list[str] = field(default_factory=lambda: list(describe.SHARED))  # for tasks owning none
    fewshot: list[FewShot] = field(default_factory=lambda: ["none", "same_canvas", "other_canvas"])
    examples: int = 2  # few-shot examples per prompt (the original: 2)
    canvas_attempts: int = 200  # canvases drawn per item before it is skipped
    events: int = 24  # existence tracking: additions and removals in the longer member of a pair
    swaps: int = 6  # shuffle tracking: swaps (3 shapes need an even number)
    cancelling_swaps: bool = False  # shuffle tracking: may two swaps cancel out (the same pair again)
    geometry: Geometry = field(default_factory=Geometry)
    modality: str | list[str] = "text"  # text, image, text+image, or a list: how the prompts show a canvas


def load_config(path: str | Path, overrides: dict[str, Any] | None = None) -> SetConfig:
    """Return the SetConfig of a YAML file with ``overrides`` applied; raise ConfigError naming
    file:line and field (or ``<command line>`` for an override) if anything is invalid."""
    return config.load_checked(SetConfig, path, overrides, _check)


def _check(cfg: SetConfig, source: config.Source) -> None:
    """Raise ConfigError (file:line: field) for values the types allow but the suite does not."""

    def fail(name: str, message: str) -> None:
        raise ConfigError(f"{source.where(name)}: field '{name}': {message}")

    cfg.modality = modalities_of(cfg.modality, f"{source.where('modality')}: field 'modality'")

    for i, n in enumerate(cfg.num_shapes):
        if not 1 <= n <= len(IDENTITIES):
            fail(f"num_shapes.{i}", f"{n} is not between 1 and {len(IDENTITIES)} (identities are unique)")
    for i, name in enumerate(cfg.tasks):
        if name not in TASKS:
            fail(f"tasks.{i}", f"unknown task {name!r} (known: {', '.join(TASKS)})")
    for i, name in enumerate(cfg.descriptions):
        if name not in describe.SHARED:
            fail(f"descriptions.{i}", f"unknown description {name!r} (known: {', '.join(describe.SHARED)})")
    for name in ("items", "examples", "canvas_attempts", "events", "swaps"):
        if getattr(cfg, name) < (1 if name in ("items", "canvas_attempts") else 0):
            fail(name, f"{getattr(cfg, name)} is too small")
    geometry = cfg.geometry
    for name in ("circle_radius", "side"):
        sizes = getattr(geometry, name)
        if sorted(sizes) != sorted(SIZES) or min(sizes.values()) <= 0:
            fail(f"geometry.{name}", f"needs a positive value for each of {', '.join(SIZES)}")
    if geometry.half < 4 or geometry.margin_scale < 0 or geometry.place_attempts < 1:
        fail("geometry", "half must be >= 4, margin_scale >= 0 and place_attempts >= 1")
    for name in ("tasks", "num_shapes", "fewshot"):
        if not getattr(cfg, name):
            fail(name, "needs at least one entry (an empty list makes an empty set)")


def check_every_task_runs(cfg: SetConfig, manifest: dict[str, Any], path: str | Path) -> None:
    """Raise ConfigError (file:line of ``tasks``) when a task of the config gets no trial at any
    number of shapes (``manifest["not_run"]`` gives it for each): the config asks for a task it
    cannot have, e.g. ``events: 1`` for existence tracking. A task missing at some sizes only
    is a warning of the script."""
    for name in cfg.tasks:
        reasons = [entry["reasons"] for entry in manifest["not_run"] if entry["task"] == name]
        if len(reasons) == len(cfg.num_shapes):
            where = config.load_yaml(path)[1].where("tasks")
            raise ConfigError(
                f"{where}: field 'tasks': {name} gets no trial from this config "
                f"({'; '.join(dict.fromkeys(r for found in reasons for r in found))}): change what the "
                f"reason names, or drop {name} from tasks"
            )


def make_tasks(cfg: SetConfig) -> list[Task]:
    """Return the configured task instances, with the set's event and swap settings."""
    tasks = [TASKS[name]() for name in cfg.tasks]
    for task in tasks:
        for setting in ("events", "swaps", "cancelling_swaps"):
            if hasattr(task, setting):
                setattr(task, setting, getattr(cfg, setting))
    return tasks
