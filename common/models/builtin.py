"""The base of every built-in model: a baseline that answers offline, at once, from the item.

Each suite exports its built-ins as one registry, ``common/<suite>/baselines.py: BASELINES``
(name -> a callable taking the run's seed and returning the model, usually the class). The
scripts resolve ``--model NAME`` in their suite's registry (``resolve.resolve_model``) and
``--baselines`` asks every entry marked ``default`` (``baseline_names``), which is what the
Makefile runs on every set: nothing else lists them.
"""

import importlib.util
import random
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from common import paths
from common.errors import UserError
from common.models.base import Counters, Message, Model, Reply
from common.models.images import image_parts, png_of
from common.results import check_label


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
    stands_for: str | None = None  # the built-in of another task it answers for (`--model oracle` on facts)
    vision = (
        True  # it is asked every modality: it reads the scene from the item (or the pictures, ``pictures``)
    )

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

    @staticmethod
    def pictures(messages: list[Message]) -> list[bytes]:
        """Return the PNG bytes of every picture the conversation shows, in order (none for a
        text request): what a built-in that reads pictures reads, instead of the item's scene."""
        return [png_of(part["image_url"]["url"]) for part in image_parts(messages)]

    def settings(self) -> dict[str, Any]:
        """Return what the run metadata records: the name, that it is built in, and the seed if used."""
        settings = {"name": self.name, "builtin": True, **({"seed": self.seed} if self.seeded else {})}
        return {**settings, **({"samples": self.samples} if self.samples > 1 else {})}

    def close(self) -> None:
        """Nothing to release."""


class ScriptModel(BuiltinModel):
    """A model written as one Python function, ``answer(messages, item, rng) -> str``, in a file
    of its own: the template ``scripts/test_random_model.py`` and every copy of it
    (``--model path/to/test_<name>_model.py``, ``make all MODEL=...``), on every suite.

    Named after the file (``test_<name>_model.py``: ``<name>``). Text-only unless the file says
    ``VISION = True`` (then a message may show pictures: a list of content parts). ``rng`` is
    seeded per run seed, item and turn (and draw), so the answers do not depend on the order of
    asking; one item at a time unless ``--set concurrency=N`` (the function must then be
    thread-safe).
    """

    seeded = True

    def __init__(self, path: str | Path, seed: int = 0):
        super().__init__(seed)
        self.path = Path(path)
        self.name = check_label(
            script_model_name(self.path), f"model name (from the file name {self.path.name})"
        )
        self._answer, self.vision = _load_answer(self.path)

    def complete(self, messages: list[Message], item: dict[str, Any]) -> Reply:
        """Return the file's ``answer`` to ``messages`` about ``item``."""
        rng = self.rng(item, item.get("Key"), *([item["turn"]] if "turn" in item else []))
        return Reply(str(self._answer(messages, item, rng)), attempts=0)

    def settings(self) -> dict[str, Any]:
        """Return the name, the file it was read from and the seed (and samples, if more than 1)."""
        return {**super().settings(), "builtin": False, "script": paths.shown(self.path)}


def script_model_name(path: Path) -> str:
    """Return the model name of a model file: ``test_<name>_model.py`` gives ``<name>``."""
    return path.stem.removeprefix("test_").removesuffix("_model")


def _load_answer(path: Path) -> tuple[Callable[..., Any], bool]:
    """Return the ``answer`` function of the Python file ``path`` and whether it takes pictures (the
    file says ``VISION = True``; else it is asked the text of a set that also shows pictures);
    raise UserError naming the file when it cannot be read or defines no ``answer``."""
    if not path.is_file():
        raise UserError(f"no model file {path}: give the path of a copy of scripts/test_random_model.py")
    spec = importlib.util.spec_from_file_location(f"model_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the user's code: say where it failed, then stop
        raise UserError(f"{path}: the model file fails on import: {type(exc).__name__}: {exc}") from exc
    answer = getattr(module, "answer", None)
    if not callable(answer):
        raise UserError(
            f"{path}: a model file defines answer(messages, item, rng) -> str (as the template does)"
        )
    return answer, bool(getattr(module, "VISION", False))


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
