"""Built-in offline models: baselines with the real model interface, so pipelines run with no network.

``BUILTINS`` is the registry: name -> factory taking the run's seed. Another suite adds its own
baseline with one line, e.g. ``register_builtin("noop", NoopPlanner)`` in its module, and
``--model noop`` then works in every runner that imports that module. A suite whose baselines
reuse a taken name (a blocks ``random`` planner) passes its own dict instead:
``resolve_model(name, builtins={**BUILTINS, "random": RandomPlanner})``.
"""

import random
from collections.abc import Callable
from typing import Any

from common.models.base import Message, Model, Reply


class RandomModel:
    """Answers with a random option of the trial's ``expectedresp``, seeded per (seed, Key).

    Gives exactly the answers of ``scripts/test_random_model.py`` with the same seed, and the
    same answer to a trial however often or in whatever order it is asked.
    """

    name = "random"
    concurrency = 1

    def __init__(self, seed: int = 0):
        self.seed = seed

    def complete(self, messages: list[Message], item: dict[str, Any]) -> Reply:
        """Return one of ``item["expectedresp"]`` chosen by ``random.Random(f"{seed}:{Key}")``."""
        rng = random.Random(f"{self.seed}:{item['Key']}")
        return Reply(rng.choice(list(item["expectedresp"])), attempts=0)

    def settings(self) -> dict[str, Any]:
        """Return the seed."""
        return {"name": self.name, "builtin": True, "seed": self.seed}

    def close(self) -> None:
        """Nothing to release."""


class OracleModel:
    """Answers with the trial's gold answer (``goldresp``): the ceiling every score is compared with."""

    name = "oracle"
    concurrency = 1

    def __init__(self, seed: int = 0):
        self.seed = seed

    def complete(self, messages: list[Message], item: dict[str, Any]) -> Reply:
        """Return ``item["goldresp"]``."""
        return Reply(str(item["goldresp"]), attempts=0)

    def settings(self) -> dict[str, Any]:
        """Return the name."""
        return {"name": self.name, "builtin": True}

    def close(self) -> None:
        """Nothing to release."""


BUILTINS: dict[str, Callable[[int], Model]] = {
    "random": RandomModel,
    "oracle": OracleModel,
}


def register_builtin(name: str, factory: Callable[[int], Model]) -> None:
    """Add ``factory`` (called with the seed, returns a Model) to BUILTINS; a taken name raises ValueError."""
    if name in BUILTINS and BUILTINS[name] is not factory:
        raise ValueError(f"a built-in model named {name!r} is already registered")
    BUILTINS[name] = factory
