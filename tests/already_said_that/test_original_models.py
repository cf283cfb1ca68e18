"""The original's published runs, model by model: a shipped config for each model of its
run_experiments.sh, through today's OpenAI-compatible endpoint, decoding as its solver did;
each tried with --dry-run (the cost, no request); and docs/already_said_that.md maps each of its
solvers to a command."""

import re

import pytest

from common.already_said_that.prompting import DECODING
from common.models.config import load_model_config
from common.paths import CONFIGS, ROOT
from tests.already_said_that.fixtures import write_set
from tests.already_said_that.test_run import load_main

# config -> (the model id the original asked for, its API, the solvers of run_experiments.sh)
MODELS = {
    "openai-gpt-4-0125-preview": (
        "gpt-4-0125-preview",
        "chat",
        ["generation/direct/gpt-4-turbo-preview", "already_said_that/cot/gpt-4-turbo-preview"],
    ),
    "openai-gpt-3.5-turbo-0125": (
        "gpt-3.5-turbo-0125",
        "chat",
        ["generation/direct/gpt-3.5-turbo", "already_said_that/cot/gpt-3.5-turbo"],
    ),
    "openai-gpt-4-base": ("gpt-4-base", "completions", ["generation/hhh/gpt-4-base"]),
    "google-gemini-pro": ("gemini-pro", "chat", ["generation/direct/gemini-pro"]),
    "together-mixtral-8x7b-instruct": (
        "mistralai/Mixtral-8x7B-Instruct-v0.1",
        "chat",
        ["generation/direct/mixtral-8x7b-instruct"],
    ),
    "together-llama-2-70b-chat": (
        "meta-llama/Llama-2-70b-chat-hf",
        "chat",
        ["generation/direct/llama-2-70b-chat"],
    ),
}
SOLVERS = [solver for *_, solvers in MODELS.values() for solver in solvers] + [
    "already_said_that/random_baseline"
]


@pytest.mark.parametrize("name", list(MODELS))
def test_each_model_of_the_original_has_a_config_decoding_as_its_solver(name):
    model, api, _ = MODELS[name]
    config = load_model_config(
        CONFIGS / "models" / f"{name}.yaml", defaults=DECODING, suite="already_said_that"
    )
    assert (config.model, config.api) == (model, api)
    assert config.base_url.startswith("https://") and config.api_key_env
    assert config.max_tokens == 512 and config.seed is None
    # its solvers sent temperature 1, except Gemini's, which sent none (the model's default)
    assert config.temperature == (None if name == "google-gemini-pro" else 1)


@pytest.mark.parametrize("name", list(MODELS))
def test_each_config_is_tried_with_a_dry_run(tmp_path, capsys, name):
    set_dir = write_set(
        tmp_path / "sets" / "heavier", "which_is_heavier", samples=9, seeds=3, first_seed=1, play=4
    )
    prompting = "hhh" if MODELS[name][1] == "completions" else "direct"
    argv = ["-t", str(set_dir), "--model", name, "--prompting", prompting, "--dry-run"]
    assert load_main()([*argv, "--results-dir", str(tmp_path / "results")]) == 0
    said = capsys.readouterr().out
    assert said.startswith(f"heavier ({prompting}): 12 conversations; at most 1,200 requests"), said
    priced = "price_per_1k_tokens" in (CONFIGS / "models" / f"{name}.yaml").read_text()
    assert ("at most $" in said) == priced and ("no price in the model config" in said) == (not priced)
    assert not (tmp_path / "results").exists()  # a dry run asks nothing and writes nothing


def test_the_docs_map_every_solver_of_the_originals_runs_to_a_command():
    page = (ROOT / "docs" / "already_said_that.md").read_text(encoding="utf-8")
    for solver in SOLVERS:
        rows = [line for line in page.splitlines() if line.startswith(f"| `{solver}` |")]
        assert len(rows) == 1, solver
        name = next((n for n, (*_, solvers) in MODELS.items() if solver in solvers), "random")
        assert re.search(rf"--model {re.escape(name)}\b", rows[0]), rows[0]
        if "/cot/" in solver:
            assert "--prompting cot" in rows[0] and "PROMPTING=cot" in rows[0], rows[0]
        if "/hhh/" in solver:
            assert "--prompting hhh" in rows[0] and "PROMPTING=hhh" in rows[0], rows[0]
