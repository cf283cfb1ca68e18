"""Model configs: strict loading with file:line errors, overrides, resolution of --model, shipped examples."""

import argparse
from pathlib import Path

import pytest

from common import cli
from common.config import load_yaml
from common.errors import ConfigError, UserError
from common.models import resolve_model
from common.models.client import HTTPModel
from common.models.config import ModelConfig, load_model_config
from common.models.resolve import MODEL_CONFIGS, promptings_of
from common.trials.baselines import BASELINES, OracleAnswer, RandomAnswer
from tests.sandbox import shipped


def write(tmp_path: Path, text: str, name: str = "mine.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_config_holds_only_differences(tmp_path):
    text = "model: llama-3\nbase_url: http://127.0.0.1:9/v1\nprice_per_1k_tokens: {input: 1}\n"
    path = write(tmp_path, text)
    config = load_model_config(path, {"concurrency": 8})
    assert (config.name, config.model, config.concurrency, config.api) == ("mine", "llama-3", 8, "chat")
    assert config.timeout_s == ModelConfig.__dataclass_fields__["timeout_s"].default_factory()
    assert (config.price_per_1k_tokens.input, config.price_per_1k_tokens.output) == (1.0, 0.0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("model: m\ntemprature: 0\n", r"mine.yaml:2: unknown config key: temprature \(known: name, base_url"),
        ("model: m\nconcurrency: many\n", r"mine.yaml:2: field 'concurrency': expected int"),
        ("model: m\napi: responses\n", r"mine.yaml:2: field 'api': 'responses' is not one of 'chat'"),
        ("model: m\n\ntimeout_s: [1]\n", r"mine.yaml:3: field 'timeout_s' must be \[connect, read\]"),
        ("model: m\nconcurrency: 0\n", r"mine.yaml:2: field 'concurrency' must be at least 1"),
        ("base_url: http://x/v1\n", r"mine.yaml: field 'model' the server's model id is required"),
        ("model: m\nbase_url: localhost:8000\n", r"mine.yaml:2: field 'base_url' must start with http"),
    ],
)
def test_bad_configs_name_file_line_and_field(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_model_config(write(tmp_path, text))


def test_an_override_can_fix_a_file_and_a_bad_one_names_the_command_line(tmp_path):
    fixed = load_model_config(write(tmp_path, "model: m\nconcurrency: 0\n"), {"concurrency": 2})
    assert fixed.concurrency == 2
    with pytest.raises(ConfigError, match=r"<command line>: unknown config key: temprature"):
        load_model_config(write(tmp_path, "model: m\n"), {"temprature": 0})
    with pytest.raises(ConfigError, match=r"<command line>: field 'concurrency' must be at least 1"):
        load_model_config(write(tmp_path, "model: m\nconcurrency: 4\n"), {"concurrency": 0})


def test_a_suites_defaults_sit_under_the_file_and_the_command_line(tmp_path):
    defaults = {"temperature": 1.0, "max_tokens": 512}
    plain = load_model_config(write(tmp_path, "model: m\n"), defaults=defaults)
    assert (plain.temperature, plain.max_tokens) == (1.0, 512)
    own = load_model_config(write(tmp_path, "model: m\nmax_tokens: 16\n"), defaults=defaults)
    assert (own.temperature, own.max_tokens) == (1.0, 16)  # the file wins
    told = load_model_config(write(tmp_path, "model: m\nmax_tokens: 16\n"), {"max_tokens": 64}, defaults)
    assert told.max_tokens == 64  # then --set
    assert load_model_config(write(tmp_path, "model: m\n")).temperature == 0.0  # no suite: the dataclass's


def test_a_config_may_decode_otherwise_for_one_suite(tmp_path):
    text = (
        "model: m\nmax_tokens: 16\nsuites:\n  quiz: {max_tokens: 512, temperature: 0.5}\n  other: {seed: 7}\n"
    )
    path = write(tmp_path, text)
    defaults = {"temperature": 1.0, "max_tokens": 256}
    assert load_model_config(path, defaults=defaults).max_tokens == 16  # no suite named: the file's own
    quiz = load_model_config(path, defaults=defaults, suite="quiz")
    assert (quiz.max_tokens, quiz.temperature, quiz.seed) == (512, 0.5, 0)  # its section wins over the file
    assert load_model_config(path, {"max_tokens": 64}, defaults, suite="quiz").max_tokens == 64  # then --set
    assert load_model_config(path, suite="nothing here").max_tokens == 16  # a suite without a section
    assert "suites" not in quiz.settings()  # the run metadata records what was sent, not the sections


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("model: m\nsuites: [a]\n", r"mine.yaml:2: field 'suites': a mapping of suite names to settings"),
        (
            "model: m\nsuites:\n  quiz:\n    name: x\n",
            r"mine.yaml:4: field 'suites.quiz.name': a suite's section",
        ),
        (
            "model: m\nsuites:\n  quiz: {base_url: 'http://x/v1'}\n",
            r"mine.yaml:3: field 'suites.quiz.base_url'",
        ),
        (
            "model: m\nsuites:\n  quiz:\n    max_tokens: many\n",
            r"mine.yaml:4: field 'suites.quiz.max_tokens': expected",
        ),
    ],
)
def test_a_bad_suite_section_names_file_line_and_field(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_model_config(write(tmp_path, text), suite="other")  # checked whichever suite loads it
    bad_value = write(tmp_path, "model: m\nsuites:\n  quiz:\n    max_tokens: 0\n", "zero.yaml")
    with pytest.raises(ConfigError, match=r"zero.yaml:4: field 'max_tokens' must be at least 1"):
        load_model_config(bad_value, suite="quiz")


@pytest.mark.parametrize("path", shipped(MODEL_CONFIGS), ids=lambda p: p.stem)
def test_every_shipped_config_gives_already_said_that_the_originals_budget(path):
    """The original's solvers decode with max_tokens 512: every shipped config gives the suite that,
    or more for a model that thinks first (its own larger budget)."""
    from common import suites
    from common.already_said_that.prompting import DECODING

    own = load_model_config(path)
    config = load_model_config(path, defaults=DECODING, suite="already_said_that")
    assert config.max_tokens == 512 or (config.max_tokens == own.max_tokens and own.max_tokens > 512)
    sections = (load_yaml(path)[0] or {}).get("suites") or {}
    assert set(sections) <= set(suites.names())  # a section names a suite that exists


@pytest.mark.parametrize("path", shipped(MODEL_CONFIGS), ids=lambda p: p.stem)
def test_shipped_configs_load(path, monkeypatch):
    config = load_model_config(path)
    assert config.name == path.stem and config.model
    if config.api_key_env:
        monkeypatch.setenv(config.api_key_env, "test-key")
    model = resolve_model(path.stem, builtins={}, use_cache=False)
    assert isinstance(model, HTTPModel)
    if config.engine:  # started by the run: named by what it serves, no server asked yet
        assert model.engine is not None and not model.engine.started
        assert model.url.startswith(f"http://{config.engine}.engine/{config.model}/")
        return
    first = config.base_url if isinstance(config.base_url, str) else config.base_url[0]
    assert model.url.startswith(first.rstrip("/"))


def test_shipped_configs_cover_the_usual_servers():
    names = {path.stem for path in shipped(MODEL_CONFIGS)}
    assert {"openai-gpt-4o-mini", "vllm", "llamacpp", "ollama"} <= names


def test_builtins_need_no_file_and_take_only_concurrency():
    assert isinstance(resolve_model("random", builtins=BASELINES, seed=3), RandomAnswer)
    oracle = resolve_model("oracle", builtins=BASELINES, overrides={"concurrency": 2})
    assert isinstance(oracle, OracleAnswer) and oracle.concurrency == 2
    with pytest.raises(ConfigError, match="takes no setting max_tokens"):
        resolve_model("oracle", builtins=BASELINES, overrides={"max_tokens": 2})
    with pytest.raises(ConfigError, match="concurrency=0"):
        resolve_model("oracle", builtins=BASELINES, overrides={"concurrency": 0})


def test_resolving_a_config_path_and_an_unknown_name(tmp_path):
    path = write(tmp_path, "model: m\n", name="server.yaml")
    assert resolve_model(str(path), builtins=BASELINES, use_cache=False).name == "server"
    with pytest.raises(
        UserError,
        match=r"unknown model 'nope': use a config name .* built-in of this suite \(random, oracle\)",
    ):
        resolve_model("nope", builtins=BASELINES)
    for bad in ("", "x/y", "a___b.yml"):
        with pytest.raises(UserError):
            resolve_model(bad, builtins=BASELINES)


def test_a_name_resolves_in_the_registry_it_is_given_only():
    from common.blocks.baselines import BASELINES as BLOCKS
    from common.blocks.baselines import RandomPlanner

    assert isinstance(resolve_model("random", builtins=BLOCKS), RandomPlanner)
    assert isinstance(resolve_model("random", builtins=BASELINES), RandomAnswer)
    with pytest.raises(UserError, match="unknown model 'noop'"):
        resolve_model("noop", builtins=BASELINES)


def _args(model: str, *given: str) -> argparse.Namespace:
    """The options of a script that asks a model, parsed as the scripts parse them."""
    parser = cli.make_parser("x")
    cli.add_model_options(parser, testset="a set", prompting="basic")
    args = parser.parse_args(["-t", "s", "--model", model, *given])
    cli.check_model_options(parser, args)
    return args


def test_a_config_lists_the_promptings_a_suite_asks_it_in_unless_the_command_line_names_one(tmp_path):
    path = write(tmp_path, "model: m\nsuites:\n  worldsense: {promptings: [basic, cot]}\n")
    assert promptings_of(_args(str(path)), BASELINES, "worldsense") == ["basic", "cot"]
    assert promptings_of(_args(str(path)), BASELINES, "canvas") == ["basic"]  # the script's default
    assert promptings_of(_args(str(path), "--prompting", "basic"), BASELINES, "worldsense") == ["basic"]
    assert promptings_of(_args("oracle"), BASELINES, "worldsense") == ["basic"]
    with pytest.raises(ConfigError, match=r"'promptings'.*'cot'"):
        promptings_of(_args(str(path)), BASELINES, "worldsense", choices=["basic", "hhh"])
