"""The base of every built-in model: a baseline that answers offline, at once, from the item.

Each suite exports its built-ins as one registry, ``common/<suite>/baselines.py: BASELINES``
(name -> a callable taking the run's seed and returning the model, usually the class). The
scripts resolve ``--model NAME`` in their suite's registry (``resolve.resolve_model``) and
``--baselines`` asks every entry marked ``default`` (``baseline_names``), which is what the
Makefile runs on every set: nothing else lists them.
"""

import random
from collections.abc import Callable, Mapping
from typing import Any

from common.models.base import Counters, Message, Model, Reply


class BuiltinModel:
    """A built-in baseline with the model interface; subclasses set ``name`` and write ``complete``.

    ``concurrency`` is 1 (it answers at once: threads would only add overhead), ``close``
    releases nothing, and ``settings`` records the name and, for a model whose answers depend
    on the seed (``seeded``), the seed.
    """

    name = ""
    concurrency = 1
    samples = 1  # answers per item the runner asks for (``--set samples=k``); seeded ones differ per draw
    seeded = False  # whether its answers depend on the seed (drawn per item, so any order gives the same)
    default = True  # asked by --baselines (what `make` runs on every set); False: asked by name only
    task: str | None = None  # the suite's task it answers (blocks: "nl" plans, "pddl" facts); None: any

    def __init__(self, seed: int = 0):
        self.seed = seed
        self.counters = Counters()  # the runner's totals (requests stay 0: nothing goes over the network)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

    def complete(self, messages: list[Message], item: dict[str, Any]) -> Reply:
        """Return the answer to the conversation ``messages`` about ``item``."""
        raise NotImplementedError

    def rng(self, item: dict[str, Any], *parts: Any) -> random.Random:
        """Return the generator of one draw: seeded by the run's seed and ``parts`` (what the answer
        is drawn for, e.g. the Key), and the item's ``draw`` when it is a repeated answer, so that
        any order of asking gives the same answers and each draw its own."""
        draw = item.get("draw") or 0
        return random.Random(":".join(map(str, [self.seed, *parts, *([f"draw{draw}"] if draw else [])])))

    def settings(self) -> dict[str, Any]:
        """Return what the run metadata records: the name, that it is built in, and the seed if used."""
        settings = {"name": self.name, "builtin": True, **({"seed": self.seed} if self.seeded else {})}
        return {**settings, **({"samples": self.samples} if self.samples > 1 else {})}

    def close(self) -> None:
        """Nothing to release."""


Registry = Mapping[str, Callable[[int], Model]]


def baseline_names(registry: Registry, task: str | None = None) -> list[str]:
    """Return the names ``--baselines`` asks, in registry order: the ``default`` entries that
    answer ``task`` (every default entry when ``task`` is None or the model takes any task)."""
    names = []
    for name, factory in registry.items():
        model = factory(0)
        if getattr(model, "default", True) and (task is None or getattr(model, "task", None) in (None, task)):
            names.append(name)
    return names
