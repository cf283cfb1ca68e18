"""Turn ``--model NAME_OR_CONFIG`` into a Model: a built-in name, a config path, or a config name.

Looked up in this order: a name in ``BUILTINS``; an existing ``.yaml`` file; ``configs/models/<name>.yaml``.
Suites whose baselines are built-in models register them on import; the modules in
``BUILTIN_MODULES`` are imported before every lookup, so their names work in every runner.
"""

import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from common import paths
from common.errors import ConfigError, UserError
from common.models.base import Counters, Model
from common.models.builtin import BUILTINS
from common.models.cache import ResponseCache
from common.models.client import HTTPModel
from common.models.config import load_model_config

MODEL_CONFIGS = paths.CONFIGS / "models"
BUILTIN_MODULES = ("common.canvas.baselines",)  # suites' modules calling register_builtin on import
CACHE_FILE = paths.CACHE / "models" / "responses.sqlite"


def resolve_model(
    name_or_path: str,
    *,
    overrides: dict[str, Any] | None = None,
    seed: int = 0,
    use_cache: bool = True,
    cache_file: str | Path = CACHE_FILE,
    counters: Counters | None = None,
    builtins: Mapping[str, Callable[[int], Model]] = BUILTINS,
) -> Model:
    """Return the model ``name_or_path`` names, ready to ``complete``.

    Built-ins come from ``builtins`` (a suite whose baselines differ, e.g. planners named
    ``random`` and ``oracle``, passes its own dict, such as ``{**BUILTINS, **PLANNER_MODELS}``)
    and get ``seed``. HTTP models get ``overrides`` applied to their config, the shared response
    cache (unless ``use_cache`` is False) and ``counters``. Raises UserError listing what exists
    when nothing matches, ConfigError for a bad config or a missing key variable.
    """
    load_builtin_modules()
    if name_or_path in builtins:
        if overrides:
            raise ConfigError(
                f"built-in model {name_or_path!r} takes no settings (got {', '.join(overrides)})"
            )
        return builtins[name_or_path](seed)
    path = config_path(name_or_path, builtins)
    config = load_model_config(path, overrides)
    cache = ResponseCache(cache_file) if use_cache else None
    return HTTPModel(config, cache=cache, counters=counters)


def config_path(name_or_path: str, builtins: Mapping[str, Any] = BUILTINS) -> Path:
    """Return the config file ``name_or_path`` refers to; raise UserError listing the choices if none."""
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml"):
        if candidate.is_file():
            return candidate
        raise UserError(
            f"no model config file {name_or_path}: check the path, or use a config name "
            f"from {paths.shown(MODEL_CONFIGS)} ({', '.join(available_configs()) or 'none'}) "
            f"or a built-in ({', '.join(sorted(builtins))})"
        )
    named = MODEL_CONFIGS / f"{name_or_path}.yaml"
    if "/" not in name_or_path and named.is_file():
        return named
    raise UserError(
        f"unknown model {name_or_path!r}: not a built-in ({', '.join(sorted(builtins))}), "
        f"and not a config in {paths.shown(MODEL_CONFIGS)} "
        f"({', '.join(available_configs()) or 'none'}); a config file path ends in .yaml"
    )


def available_configs() -> list[str]:
    """Return the names of the configs in configs/models/, sorted."""
    return sorted(path.stem for path in MODEL_CONFIGS.glob("*.yaml"))


def load_builtin_modules() -> None:
    """Import the suites' modules that register built-in models (``BUILTIN_MODULES``), once."""
    for module in BUILTIN_MODULES:
        importlib.import_module(module)
