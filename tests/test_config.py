"""Tests of common.config: errors name the file, the line and the field."""

from dataclasses import dataclass, field
from typing import Literal

import pytest

from common.config import apply_overrides, build, load_checked, load_yaml, parse_overrides
from common.errors import ConfigError


@dataclass
class Decoding:
    temperature: float = 0.0  # sampling temperature
    stop: list[str] = field(default_factory=list)  # stop sequences


@dataclass
class Settings:
    name: str  # required
    api: Literal["chat", "completions"] = "chat"
    concurrency: int = 4
    decoding: Decoding = field(default_factory=Decoding)
    price: float | None = None


def load(tmp_path, text):
    path = tmp_path / "model.yaml"
    path.write_text(text)
    data, source = load_yaml(path)
    return build(Settings, data, source)


def test_valid_config_with_nested_section_and_defaults(tmp_path):
    settings = load(tmp_path, "name: gpt\nconcurrency: 8\ndecoding:\n  temperature: 1\n  stop: [END]\n")
    assert settings == Settings(name="gpt", concurrency=8, decoding=Decoding(temperature=1.0, stop=["END"]))
    assert isinstance(settings.decoding.temperature, float)


def test_unknown_key_names_line_and_known_keys(tmp_path):
    expected = r"model\.yaml:3: unknown config key: temprature \(known: temperature, stop\)"
    with pytest.raises(ConfigError, match=expected):
        load(tmp_path, "name: gpt\ndecoding:\n  temprature: 0\n")


def test_wrong_type_names_line_and_field(tmp_path):
    expected = r"model\.yaml:2: field 'concurrency': expected int, got str 'many'"
    with pytest.raises(ConfigError, match=expected):
        load(tmp_path, "name: gpt\nconcurrency: many\n")


def test_bool_is_not_an_int(tmp_path):
    with pytest.raises(ConfigError, match="field 'concurrency'"):
        load(tmp_path, "name: gpt\nconcurrency: yes\n")


def test_literal_choices(tmp_path):
    expected = r":2: field 'api': 'completion' is not one of 'chat', 'completions'"
    with pytest.raises(ConfigError, match=expected):
        load(tmp_path, "name: gpt\napi: completion\n")


def test_list_item_type_names_the_item(tmp_path):
    with pytest.raises(ConfigError, match=r":5: field 'decoding.stop.1': expected str, got int 3"):
        load(tmp_path, "name: gpt\ndecoding:\n  stop:\n    - a\n    - 3\n")


def test_missing_required_field(tmp_path):
    with pytest.raises(ConfigError, match="missing required field 'name'"):
        load(tmp_path, "concurrency: 2\n")


def test_optional_field_accepts_null_and_number(tmp_path):
    assert load(tmp_path, "name: a\nprice: null\n").price is None
    assert load(tmp_path, "name: a\nprice: 2\n").price == 2.0


def test_yaml_syntax_error_names_line_and_column(tmp_path):
    expected = r"model\.yaml:2:15: YAML syntax error: mapping values are not allowed"
    with pytest.raises(ConfigError, match=expected):
        load(tmp_path, "name: a\nconcurrency: 2: 3\n")


def test_top_level_must_be_a_mapping(tmp_path):
    with pytest.raises(ConfigError, match="expected a mapping of settings, got list"):
        load(tmp_path, "- a\n- b\n")


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_yaml(tmp_path / "nope.yaml")


def test_overrides_are_parsed_as_yaml_scalars_and_checked():
    settings = Settings(name="gpt")
    overrides = parse_overrides(["concurrency=16", "name=other", "price=0.5"])
    assert overrides == {"concurrency": 16, "name": "other", "price": 0.5}
    assert apply_overrides(settings, overrides) == Settings(name="other", concurrency=16, price=0.5)
    with pytest.raises(ConfigError, match="unknown config key: temprature"):
        apply_overrides(settings, parse_overrides(["temprature=0"]))
    with pytest.raises(ConfigError, match="must look like key=value"):
        parse_overrides(["concurrency"])


def test_an_optional_section_left_out_stays_none_through_overrides(tmp_path):
    """A model config without a price must keep none when --set changes another field (it came
    back as a price of 0: a dry run said "$0.00" where it should say the config has no price)."""

    @dataclass
    class Priced:
        name: str
        limit: Decoding | None = None

    settings = build(Priced, {"name": "m"}, None)
    assert settings.limit is None
    assert apply_overrides(settings, {"name": "other"}).limit is None
    assert apply_overrides(settings, {"limit": {"temperature": 1}}).limit == Decoding(temperature=1)


@dataclass
class Sized:
    n: int = 1  # at least 1


def _check_sized(settings: Sized, source) -> None:
    if settings.n < 1:
        raise ConfigError(f"{source.where('n')}: field 'n': {settings.n} is too small")


def test_a_set_config_is_checked_when_loaded_and_again_after_its_overrides(tmp_path):
    path = tmp_path / "set.yaml"
    path.write_text("default: true\nn: 2\n")
    assert load_checked(Sized, path, None, _check_sized) == Sized(2)
    assert load_checked(Sized, path, {"n": 3}, _check_sized) == Sized(3)
    with pytest.raises(ConfigError, match=r"^<command line>: field 'n': 0 is too small"):
        load_checked(Sized, path, {"n": 0}, _check_sized)
    path.write_text("n: 0\n")
    with pytest.raises(ConfigError, match=r"set\.yaml:1: field 'n': 0 is too small"):
        load_checked(Sized, path, {"n": 3}, _check_sized)  # the file is checked before its overrides
    path.write_text("- 4\n")
    assert load_checked(
        Sized, path, None, _check_sized, reshape=lambda data, source: {"n": data[0]}
    ) == Sized(4)
