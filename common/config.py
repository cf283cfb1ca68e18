"""YAML configs with errors that name the file, the line and the field.

``load_yaml`` parses a file and remembers the line of every field. ``build`` turns a mapping
into a dataclass of settings: unknown keys are rejected with the list of known ones, values
are type-checked against the defaults, and every error points at ``file:line: field``.
``parse_overrides`` reads ``--key=value`` overrides (values parsed as YAML scalars);
``load_checked`` is a set config loaded, checked, overridden and checked again.
"""

import dataclasses
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from common.errors import ConfigError


@dataclass
class Source:
    """Where config values came from: the file and the 1-based line of each dotted field."""

    path: str = "<overrides>"
    lines: dict[str, int] = field(default_factory=dict)

    def where(self, name: str) -> str:
        """Return ``file:line`` for field ``name`` (or just the file when the line is unknown)."""
        line = self.lines.get(name)
        return f"{self.path}:{line}" if line else self.path


def load_yaml(path: str | Path) -> tuple[Any, Source]:
    """Return ``(data, source)`` for a YAML file; ``source.lines`` maps dotted fields to lines.

    List items are addressed by index (``models.2.name``). Raises ``FileNotFoundError`` for a
    missing file and ``ConfigError`` (with line and column) for a syntax error.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise ConfigError(f"{where}: YAML syntax error: {exc.problem}") from None
    source = Source(str(path))
    if node is not None:
        _record_lines(node, "", source.lines)
    return data, source


def load_set_yaml(path: str | Path) -> tuple[Any, Source]:
    """Return ``load_yaml(path)`` of a set's config without its ``default`` field, which every
    suite's set may have: ``default: false`` keeps the set out of ``make all`` (scripts/make_suites.py
    reads it); ConfigError naming the line when it is not true or false."""
    data, source = load_yaml(path)
    if isinstance(data, dict) and "default" in data:
        if not isinstance(data["default"], bool):
            raise ConfigError(
                f"{source.where('default')}: field 'default': expected true or false (false: `make all` "
                f"leaves the set out; `make <suite>/<set>` builds it), got {data['default']!r}"
            )
        data = {key: value for key, value in data.items() if key != "default"}
    return data, source


def _record_lines(node: yaml.Node, prefix: str, lines: dict[str, int]) -> None:
    """Fill ``lines`` with the line of every key (mappings) or item (sequences) under ``node``."""
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            name = f"{prefix}{key_node.value}"
            lines[name] = key_node.start_mark.line + 1
            _record_lines(value_node, name + ".", lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            name = f"{prefix}{index}"
            lines[name] = item.start_mark.line + 1
            _record_lines(item, name + ".", lines)


def build(cls: type, data: Any, source: Source, prefix: str = "") -> Any:
    """Return an instance of dataclass ``cls`` from mapping ``data``, strictly checked.

    Missing fields take the dataclass defaults; unknown fields, wrong types and missing
    required fields raise ``ConfigError`` naming the file, line and field.
    """
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{source.where(prefix.rstrip('.'))}: expected a mapping of settings, got {type(data).__name__}"
        )
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    for key in data:
        if key not in fields:
            raise ConfigError(
                f"{source.where(prefix + str(key))}: unknown config key: {key} (known: {', '.join(fields)})"
            )
    values = {}
    for name, spec in fields.items():
        if name in data:
            values[name] = check_type(data[name], hints[name], source, prefix + name)
        elif spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING:
            raise ConfigError(f"{source.where(prefix.rstrip('.'))}: missing required field '{prefix}{name}'")
    return cls(**values)


def check_type(value: Any, hint: Any, source: Source, name: str) -> Any:
    """Return ``value`` if it matches type ``hint`` (ints accepted for floats); else raise ConfigError."""
    if dataclasses.is_dataclass(hint):
        return build(hint, value, source, name + ".")
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:  # an optional dataclass stays None, not its defaults
            return None
        errors = []
        for option in args:
            try:
                return check_type(value, option, source, name)
            except ConfigError as exc:
                errors.append(exc)
        raise errors[-1] if len(args) == 1 else _type_error(value, hint, source, name)
    if hint is type(None):
        if value is None:
            return None
        raise _type_error(value, hint, source, name)
    if hint is Any:
        return value
    if origin is list:
        if not isinstance(value, list):
            raise _type_error(value, hint, source, name)
        return [check_type(v, args[0], source, f"{name}.{i}") for i, v in enumerate(value)] if args else value
    if origin is dict:
        if not isinstance(value, dict):
            raise _type_error(value, hint, source, name)
        return {k: check_type(v, args[1], source, f"{name}.{k}") for k, v in value.items()} if args else value
    if origin is typing.Literal:
        if value in args:
            return value
        raise ConfigError(
            f"{source.where(name)}: field '{name}': {value!r} is not one of {', '.join(map(repr, args))}"
        )
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    is_bool_as_number = isinstance(value, bool) and hint is not bool
    if isinstance(hint, type) and isinstance(value, hint) and not is_bool_as_number:
        return value
    raise _type_error(value, hint, source, name)


def _type_error(value: Any, hint: Any, source: Source, name: str) -> ConfigError:
    """Return the ConfigError for a value of the wrong type."""
    wanted = getattr(hint, "__name__", None) or str(hint).replace("typing.", "")
    return ConfigError(
        f"{source.where(name)}: field '{name}': expected {wanted}, got {type(value).__name__} {value!r}"
    )


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """Return ``{key: value}`` from ``["key=value", ...]``, values parsed as YAML scalars.

    ``temperature=0`` gives the int 0, ``stop=[a, b]`` a list, ``name=gpt4`` a string.
    Raises ConfigError for an item without ``=``.
    """
    overrides: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"override {item!r} must look like key=value")
        try:
            overrides[key.strip()] = yaml.safe_load(text) if text.strip() else ""
        except yaml.YAMLError:
            overrides[key.strip()] = text
    return overrides


def apply_overrides(settings: Any, overrides: dict[str, Any]) -> Any:
    """Return a copy of dataclass ``settings`` with ``overrides`` applied and type-checked."""
    merged = {**dataclasses.asdict(settings), **overrides}
    # nested dataclasses come back as dicts from asdict and are rebuilt by ``build``
    return build(type(settings), merged, Source("<command line>"))


def load_checked(
    cls: type,
    path: str | Path,
    overrides: dict[str, Any] | None,
    check: Callable[[Any, Source], None],
    reshape: Callable[[Any, Source], Any] | None = None,
) -> Any:
    """Return the ``cls`` that the set config ``path`` builds (``load_set_yaml``, then ``build``;
    ``reshape(data, source)`` first adapts the file's data when given), checked by ``check(settings,
    source)``, then with ``overrides`` applied (``apply_overrides``) and checked again: a
    ConfigError names file:line and field, or ``<command line>`` for an override. How every
    generated suite loads its set's config."""
    data, source = load_set_yaml(path)
    if reshape is not None:
        data = reshape(data, source)
    settings = build(cls, data, source)
    check(settings, source)
    if overrides:
        settings = apply_overrides(settings, overrides)
        check(settings, Source("<command line>"))
    return settings
