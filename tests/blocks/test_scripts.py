"""The blocks scripts end to end, and their one-line errors (exit 2) on bad input."""

import json
from pathlib import Path

import pytest

from common.blocks.generate import generate, load_spec, make_problems
from common.blocks.problems import write_problems
from common.errors import ConfigError
from common.jsonl import read_jsonl
from common.suite import SetRef
from tests.conftest import run_script


def assert_one_line_error(result, *fragments):
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def test_generate_problems_missing_spec_file():
    result = run_script("scripts/generate_problems.py", "-t", "configs/blocks/nope.yaml")
    assert_one_line_error(result, "configs/blocks/nope.yaml")


def generate_from(spec: Path, data: Path) -> dict:
    """Generate the blocks set of the config ``spec`` into ``data`` (the generator's stage)."""
    return generate(SetRef("blocks", spec.stem, data, data.parent / "results", spec))


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("problems:\n  - num_obj: 4\n    colour: red\n", "set.yaml:3: unknown config key: colour"),
        ("trivial: maybe\nproblems: []\n", "set.yaml:1: field 'trivial': 'maybe' is not one of"),
        ("problems:\n  - num_obj: [4\n", "set.yaml:3:1: YAML syntax error"),
        (
            "vocab: configs/blocks/vocab/none.yaml\nproblems:\n  - num_obj: 2\n",
            "set.yaml:1: field 'vocab': no such file",
        ),
        (
            "problems:\n  - {num_obj: 3, count: 2}\n  - {num_obj: 4, test: true, count: 0}\n",
            "set.yaml:1: no test problems: add an entry with `test: true`",
        ),
    ],
)
def test_generate_problems_bad_spec(tmp_path, text, fragment):
    spec = tmp_path / "set.yaml"
    spec.write_text(text)
    with pytest.raises(ConfigError) as error:
        generate_from(spec, tmp_path / "o")
    assert fragment in str(error.value) and not (tmp_path / "o").exists()


def test_generate_then_prompt_a_small_new_set(tmp_path):
    spec = tmp_path / "small.yaml"
    spec.write_text(
        "views:\n  - {name: c2, constraints: 2, rename: all}\nproblems:\n"
        "  - {num_obj: 3, count: 2}\n  - {num_obj: 6, test: true, count: 5}\n"
    )
    generate_from(spec, tmp_path / "small")
    problems = tmp_path / "small" / "problems"
    manifest = json.loads((problems / "manifest.json").read_text())
    assert manifest["count"] == 7 and manifest["views"] == ["c2"]
    assert len(list(problems.glob("problem_*.json"))) == 7
    out = tmp_path / "prompts.jsonl"
    result = run_script(
        "scripts/generate_prompts.py", "--view", "c2", "--problem-path", str(problems), "--output", str(out)
    )
    assert result.returncode == 0, result.stderr
    records = read_jsonl(out)
    assert len(records) == 5 and all(r["text"].endswith("Actions:\n") for r in records)
    assert_one_line_error(
        run_script(
            "scripts/generate_prompts.py",
            "--view",
            "two",
            "--problem-path",
            str(problems),
            "--output",
            str(out),
        ),
        "no view 'two'",
    )


def test_generate_prompts_reproduces_the_release(release, tmp_path):
    problems = release / "dataset/simple_stack/problems"
    out = tmp_path / "nl_one.jsonl"
    result = run_script(
        "scripts/generate_prompts.py",
        "--view",
        "one",
        "--problem-path",
        str(problems),
        "--plans-dir",
        str(problems / "plans"),
        "--output",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    released = json.loads((release / "nl_plans/one/collated.json").read_text())
    ours = read_jsonl(out)
    assert [r["id"] for r in ours] == [r["id"] for r in released]
    assert sorted(ours[0]["text"].splitlines()) == sorted(released[0]["query"].splitlines())


def test_prompt_and_reproduce_scripts_missing_inputs(tmp_path):
    assert_one_line_error(
        run_script(
            "scripts/generate_prompts.py",
            "--view",
            "one",
            "--problem-path",
            str(tmp_path / "none"),
            "--output",
            str(tmp_path / "o.jsonl"),
        ),
        "none",
    )
    (tmp_path / "empty").mkdir()
    assert_one_line_error(
        run_script(
            "scripts/generate_prompts.py",
            "--view",
            "one",
            "--problem-path",
            str(tmp_path / "empty"),
            "--output",
            str(tmp_path / "o.jsonl"),
        ),
        "no problem_*.json files",
    )
    assert_one_line_error(
        run_script("scripts/reproduce_blocks.py", "--release", str(tmp_path / "none")), "run `make data`"
    )


def test_generate_problems_vocabulary_too_small(tmp_path):
    spec = tmp_path / "set.yaml"
    spec.write_text("vocab: [a, b]\nweird_vocab: [x, y, z]\nproblems:\n  - num_obj: 3\n")
    with pytest.raises(ConfigError, match=r"set\.yaml:1: field 'vocab': 3 items asked for"):
        generate_from(spec, tmp_path / "o")


@pytest.mark.parametrize("script", ["scripts/lm_plan.py", "scripts/codex_translate.py"])
def test_a_missing_set_or_prompts_are_named(tmp_path, script):
    model = "noop" if "lm_plan" in script else "rules"
    result = run_script(script, "--model", model, "-t", str(tmp_path / "nowhere"))
    assert_one_line_error(result, f"no set '{tmp_path / 'nowhere'}'", "blocks/cogsci_problems")
    assert "make <suite>/<set>" in result.stderr
    (tmp_path / "set" / "problems").mkdir(parents=True)  # a generated set without prompts of this type
    (tmp_path / "set" / "problems" / "manifest.json").write_text('{"views": ["c1"]}')
    result = run_script(script, "--model", model, "-t", str(tmp_path / "set"))
    assert_one_line_error(result, "views there: none")


def test_generate_prompts_refuses_a_set_without_test_problems(tmp_path):
    spec = tmp_path / "set.yaml"
    spec.write_text("problems:\n  - {num_obj: 3, count: 2}\n  - {num_obj: 4, test: true, count: 1}\n")
    problems = tmp_path / "problems"
    write_problems(problems, make_problems(load_spec(spec)), {"spec_file": str(spec)})
    for path in problems.glob("problem_*.json"):  # an older set whose test problems were removed
        record = json.loads(path.read_text())
        if record.get("test"):
            path.unlink()
    out = tmp_path / "prompts.jsonl"
    result = run_script(
        "scripts/generate_prompts.py", "--view", "one", "--problem-path", str(problems), "--output", str(out)
    )
    assert_one_line_error(result, "no test problems")
    assert not out.exists()
