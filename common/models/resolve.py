"""Turn ``--model NAME_OR_CONFIG`` into a Model: a built-in of the suite, a config path, or a config name.

Looked up in this order: a name in the suite's ``BASELINES`` registry (passed in by the script:
the models layer knows no suite); a ``.py`` file (a model written as one function, the template
``scripts/test_random_model.py``: ``builtin.ScriptModel``); an existing ``.yaml`` file;
``configs/models/<name>.yaml``.
``models_of`` does it for a script's options (``cli.add_model_options``): the one ``--model``,
or with ``--baselines`` every default built-in of the suite.
"""

import argparse
import logging
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from common import paths
from common.config import parse_overrides
from common.errors import ConfigError, UserError
from common.models.base import Counters, Model
from common.models.builtin import Registry, ScriptModel, baseline_names, script_model_name
from common.models.cache import ResponseCache
from common.models.client import HTTPModel
from common.models.config import load_model_config

log = logging.getLogger(__name__)

MODEL_CONFIGS = paths.CONFIGS / "models"
CACHE_FILE = paths.CACHE / "models" / "responses.sqlite"
BUILTIN_SETTINGS = ("concurrency", "samples")  # the only settings a built-in model takes from --set


def resolve_model(
    name_or_path: str,
    *,
    builtins: Registry,
    overrides: dict[str, Any] | None = None,
    seed: int = 0,
    use_cache: bool = True,
    cache_file: str | Path = CACHE_FILE,
    counters: Counters | None = None,
    reask_truncated: bool = False,
    defaults: dict[str, Any] | None = None,
    suite: str | None = None,
    offline: bool = False,
) -> Model:
    """Return the model ``name_or_path`` names, ready to ``complete``.

    Built-ins come from ``builtins`` (the suite's ``BASELINES``) and get ``seed`` and, of the
    ``overrides``, only ``concurrency``. HTTP models get the suite's ``defaults`` (under their
    config's own settings and its section for ``suite``, ``config.load_model_config``),
    ``overrides`` applied on top, the shared response cache (unless
    ``use_cache`` is False; with ``reask_truncated`` a cached reply cut at the token limit is
    asked again) and ``counters``; ``offline`` (a dry run): an HTTP model that builds requests and
    sends none, so its API key need not be set and no cache is opened. Raises UserError listing
    what exists when nothing matches, ConfigError for a bad config, a setting a built-in does not
    take, or a missing key variable.
    """
    overrides = dict(overrides or {})
    if name_or_path.endswith(".py") and name_or_path not in builtins:
        _check_file_name(Path(name_or_path), builtins)
    if name_or_path in builtins or name_or_path.endswith(".py"):
        model = builtins[name_or_path](seed) if name_or_path in builtins else ScriptModel(name_or_path, seed)
        _apply_builtin_settings(model, overrides)
        return model
    config = load_model_config(config_path(name_or_path, builtins), overrides, defaults, suite)
    cache = ResponseCache(cache_file) if use_cache and not offline else None
    return HTTPModel(config, cache=cache, counters=counters, reask_truncated=reask_truncated, offline=offline)


TEMPLATE = paths.ROOT / "scripts" / "test_random_model.py"


def _check_file_name(path: Path, builtins: Registry) -> None:
    """Raise UserError when a model file other than the template is named like the template or a
    built-in: its answers would go into their results files (one per model name) and, resumed,
    count as already given, so the file would never be asked."""
    name = script_model_name(path)
    taken = {n: f"the built-in baseline {n!r}" for n in builtins}
    taken.setdefault(
        script_model_name(TEMPLATE), f"the template's own runs ({script_model_name(TEMPLATE)!r})"
    )
    if name in taken and path.resolve() != TEMPLATE.resolve():
        raise UserError(
            f"{path}: a model file named test_{name}_model.py would write into the results files of "
            f"{taken[name]} (a model is named after its file): rename it test_<your model>_model.py"
        )


def _apply_builtin_settings(model: Model, overrides: dict[str, Any]) -> None:
    """Set the ``--set`` settings a built-in takes (``BUILTIN_SETTINGS``) on ``model``; raise
    ConfigError naming any other, or a value that is not a positive integer."""
    unknown = [key for key in overrides if key not in BUILTIN_SETTINGS]
    if unknown:
        raise ConfigError(
            f"built-in model {model.name!r} takes no setting {', '.join(unknown)} "
            f"(of --set it takes only {', '.join(BUILTIN_SETTINGS)})"
        )
    for name in BUILTIN_SETTINGS:
        if name not in overrides:
            continue
        value = overrides[name]
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"--set {name}={value!r}: needs a whole number of 1 or more")
        try:
            setattr(model, name, value)
        except AttributeError:  # e.g. a person at a terminal answers one turn at a time
            raise ConfigError(f"built-in model {model.name!r} takes no {name} setting") from None


def config_path(name_or_path: str, builtins: Mapping[str, Any]) -> Path:
    """Return the config file ``name_or_path`` refers to; raise UserError listing the choices if none."""
    candidate = Path(name_or_path)
    choices = (
        f"a config name from {paths.shown(MODEL_CONFIGS)} ({', '.join(available_configs()) or 'none'}) "
        f"or a built-in of this suite ({', '.join(builtins) or 'none'})"
    )
    if candidate.suffix in (".yaml", ".yml"):
        if candidate.is_file():
            return candidate
        raise UserError(f"no model config file {name_or_path}: check the path, or use {choices}")
    named = MODEL_CONFIGS / f"{name_or_path}.yaml"
    if name_or_path and "/" not in name_or_path and named.is_file():
        return named
    raise UserError(f"unknown model {name_or_path!r}: use {choices}; a config file path ends in .yaml")


def model_name(name_or_path: str) -> str:
    """Return the name a model's results files carry, without building the model: a model file's
    (``test_<name>_model.py``: ``<name>``), a config's ``name`` (default: its file stem), or the
    name itself (a built-in, or a model whose config is gone)."""
    if name_or_path.endswith(".py"):
        return script_model_name(Path(name_or_path))
    try:
        return load_model_config(config_path(name_or_path, {})).name
    except UserError:
        return name_or_path


def available_configs() -> list[str]:
    """Return the names of the configs in configs/models/, sorted."""
    return sorted(path.stem for path in MODEL_CONFIGS.glob("*.yaml"))


def models_of(
    args: argparse.Namespace,
    builtins: Registry,
    *,
    task: str | None = None,
    overrides: dict[str, Any] | None = None,
    defaults: dict[str, Any] | None = None,
    suite: str | None = None,
) -> Iterator[Model]:
    """Yield the models a script's options ask for (``cli.add_model_options``): ``args.model``,
    or with ``args.baselines`` each default built-in of ``builtins`` answering ``task`` in turn
    (``builtin.baseline_names``). Each is resolved when the one before is done (the caller closes
    it). ``overrides`` are settings for HTTP models that ``--set`` may change (e.g. a suite's stop
    sequence); ``--set`` applies on top. ``defaults`` are the suite's settings for HTTP models
    that their config may change too (e.g. its decoding defaults), ``suite`` names the section of
    a config's ``suites`` that applies. Every model gets its own
    ``counters``. Raises UserError for a built-in of another task (blocks: a planner asked to
    translate)."""
    names = baseline_names(builtins, task) if args.baselines else [counterpart(args.model, builtins, task)]
    settings = parse_overrides(args.set)
    for name in names:
        extra = {} if name in builtins or name.endswith(".py") else dict(overrides or {})  # HTTP models only
        model = resolve_model(
            name,
            builtins=builtins,
            overrides={**extra, **settings},
            seed=args.seed,
            use_cache=not args.no_cache,
            cache_file=args.cache_file,
            counters=Counters(),
            reask_truncated=args.retry_truncated,
            defaults=defaults,
            suite=suite,
            offline=bool(getattr(args, "dry_run", False)),
        )
        own = getattr(model, "task", None)
        if task is not None and own not in (None, task):
            others = [n for n in builtins if getattr(builtins[n](0), "task", None) in (None, task)]
            raise UserError(
                f"built-in {name!r} answers {own} items, not the {task} items this script asks; "
                f"the built-ins for these: {', '.join(others)}"
            )
        yield model


def promptings_of(
    args: argparse.Namespace,
    builtins: Registry,
    suite: str | None = None,
    choices: Iterable[str] | None = None,
) -> list[str]:
    """Return the promptings to ask ``args.model`` in, one results file each: ``--prompting`` when
    given (``cli.check_model_options``), else the ``promptings`` its config lists for ``suite``
    (with ``--set``), else the script's default; a built-in or a model file: the default. Raises
    ConfigError for a prompting of the config the script does not have (``choices``)."""
    name = args.model
    if args.prompting_given or args.baselines or name in builtins or name.endswith(".py"):
        return [args.prompting]
    path = config_path(name, builtins)
    config = load_model_config(path, parse_overrides(args.set), suite=suite)
    promptings = list(dict.fromkeys(config.promptings or [args.prompting]))
    unknown = [p for p in promptings if choices is not None and p not in choices]
    if unknown:
        raise ConfigError(
            f"{paths.shown(path)}: field 'promptings': {suite} has no prompting {unknown[0]!r} "
            f"(its promptings: {', '.join(choices or [])})"
        )
    return promptings


def counterpart(name: str, builtins: Registry, task: str | None) -> str:
    """Return the built-in that answers ``task`` for the built-in ``name`` of another task (the
    one whose ``stands_for`` names it: blocks' ``oracle-facts`` for ``oracle`` asked for PDDL
    facts), so that one built-in name runs through every script (``make all MODEL=oracle``);
    ``name`` itself otherwise (a built-in of another task without one is refused later)."""
    if task is None or name not in builtins or getattr(builtins[name](0), "task", None) in (None, task):
        return name
    for other, factory in builtins.items():
        model = factory(0)
        if getattr(model, "stands_for", None) == name and getattr(model, "task", None) == task:
            log.info("built-in %r answers %s items as %r", name, task, other)
            return other
    return name
