"""Problem generation: controls of new sets, trivial goals, plan lengths, byte-identical output, and
the generate stage (a set's problems and prompts, with the Keys of each results directory)."""

import hashlib
import json

import pytest

from common.blocks.generate import ProblemSpec, SetSpec, ViewSpec, generate, make_problems
from common.blocks.items import load_items
from common.blocks.planner import optimal_plan
from common.blocks.state import board_relations, goal_holds
from common.errors import ConfigError
from common.suite import SetRef
from tests.blocks.fixtures import CONFIG
from tests.conftest import run_script

VIEWS = [
    ViewSpec("c1", 1, "none"),
    ViewSpec("c1r", 1, "all"),
    ViewSpec("c2", 2, "added"),
    ViewSpec("all", "all", "none"),
]


def test_views_are_nested_prefixes_of_the_goal_and_renaming_is_a_separate_factor():
    spec = SetSpec(problems=[ProblemSpec(5, test=True, count=20)], views=VIEWS)
    for problem in make_problems(spec, seed=1):
        full = problem.views["all"]
        assert sorted(full) == sorted(board_relations(problem.goal_board))
        assert problem.views["c1"] == problem.views["c1r"] == full[:1] and problem.views["c2"] == full[:2]
        assert problem.view("c1").renamed == {}
        assert problem.view("c1r").renamed == problem.vocab_map and len(problem.vocab_map) == 5
        renamed = problem.view("c1r")
        assert sorted(renamed.items) == sorted(problem.vocab_map.values())
        for name, relations in problem.views.items():
            length = problem.extra["optimal_plan_length"][name]
            assert length == len(optimal_plan(problem.init_board, relations))
            assert problem.extra["trivial_goal"][name] == goal_holds(problem.init_board, relations)


def test_trivial_goals_are_flagged_or_dropped():
    entries = [ProblemSpec(2, test=True, count=60)]
    flagged = make_problems(SetSpec(problems=entries, views=VIEWS[:1]), seed=0)
    assert any(p.extra["trivial_goal"]["c1"] for p in flagged)
    dropped = make_problems(SetSpec(problems=entries, views=VIEWS[:1], trivial="drop"), seed=0)
    assert not any(p.extra["trivial_goal"]["c1"] for p in dropped)
    assert all(p.extra["optimal_plan_length"]["c1"] >= 1 for p in dropped)


def test_large_problems_store_a_near_optimal_length_above_the_exact_limit():
    spec = SetSpec(problems=[ProblemSpec(14, count=1)], exact_up_to=12)
    problem = make_problems(spec)[0]
    assert problem.extra["optimal_plan_length"]["all"] is None
    assert problem.extra["near_optimal_plan_length"]["all"] >= 1


def test_full_goals_of_twenty_items_get_exact_lengths_without_search():
    spec = SetSpec(
        problems=[ProblemSpec(20, test=True, count=3)], views=[ViewSpec("all", "all", "none")], exact_up_to=20
    )
    for problem in make_problems(spec, seed=3):
        length = problem.extra["optimal_plan_length"]["all"]
        assert length == len(optimal_plan(problem.init_board, problem.views["all"]))
        assert "near_optimal_plan_length" not in problem.extra


def test_a_partial_goal_over_the_plan_budget_is_refused_with_the_way_out(tmp_path):
    spec = SetSpec(
        problems=[ProblemSpec(8, test=True, count=20)], views=[ViewSpec("c9", 9, "none")], plan_budget=1
    )
    with pytest.raises(
        ConfigError,
        match=r"problem \d+ \(8 items\), view 'c9': no optimal plan within plan_"
        r"budget = 1 search steps \(A\* expansions.*exact_up_to below 8",
    ):
        make_problems(spec, seed=0)
    spec_file = tmp_path / "tight.yaml"
    spec_file.write_text(
        "plan_budget: 1\nviews: [{name: c9, constraints: 9}]\n"
        "problems: [{num_obj: 8, test: true, count: 20}]\n"
    )
    out = tmp_path / "tight"
    with pytest.raises(ConfigError, match=rf"{spec_file}: problem .*plan_budget"):
        generate(SetRef("blocks", "tight", out, tmp_path / "results", spec_file))
    assert not out.exists()  # nothing half-written
    spec_file.write_text("plan_budget: 0\nproblems: [{num_obj: 3}]\n")
    with pytest.raises(ConfigError, match="plan_budget must be >= 1"):
        generate(SetRef("blocks", "tight", out, tmp_path / "results", spec_file))


def test_vocabulary_errors():
    with pytest.raises(ConfigError, match="shares names with vocab"):
        make_problems(SetSpec(problems=[ProblemSpec(2)], vocab=["a", "b"], weird_vocab=["b", "c"]))
    with pytest.raises(ConfigError, match="3 items asked for"):
        make_problems(SetSpec(problems=[ProblemSpec(3)], vocab=["a", "b"], weird_vocab=["x", "y"]))


def digest(directory):
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir()) if p.is_file()
    }


@pytest.mark.parametrize("name", ["cogsci_problems", "scaling"])
def test_generation_is_byte_identical_under_any_hash_seed(tmp_path, name):
    outputs = []
    for hash_seed in ("0", "4242"):
        out = tmp_path / hash_seed
        result = run_script(
            "scripts/generate_problems.py",
            *("-t", f"blocks/{name}", "--out", str(out), "--seed", "7"),
            env={"PYTHONHASHSEED": hash_seed},
        )
        assert result.returncode == 0, result.stderr
        outputs.append(
            {**digest(out / "problems"), **digest(out / "prompts"), "keys": digest(out)["items.json"]}
        )
    assert outputs[0] == outputs[1] and len(outputs[0]) > 100


def test_generate_writes_the_problems_and_every_view_s_prompts_and_returns_each_directory_s_keys(tmp_path):
    config = tmp_path / "mine.yaml"
    config.write_text(CONFIG)
    ref = SetRef("blocks", "mine", tmp_path / "mine", tmp_path / "results" / "mine", config)
    (ref.data / "prompts").mkdir(parents=True)
    (ref.data / "prompts" / "paper___nl___gone.jsonl").write_text("{}\n")  # a view the config dropped
    (ref.data / "prompts" / "chat___nl___c1.jsonl").write_text("{}\n")  # another style: left alone
    keys = generate(ref)
    assert sorted(keys) == ["nl___c1", "nl___c3", "pddl___c1", "pddl___c3"]
    for name, fingerprints in keys.items():
        kind, view = name.split("___")
        items = load_items(
            ref.data / "prompts" / f"paper___{kind}___{view}.jsonl", ref.data / "problems", kind
        )
        assert fingerprints == {item["Key"]: str(item["Key"]) for item in items} and len(items) == 8
    assert sorted(p.name for p in (ref.data / "prompts").iterdir()) == [
        "chat___nl___c1.jsonl",
        *(f"paper___{kind}___{view}.jsonl" for kind in ("nl", "pddl") for view in ("c1", "c3")),
    ]
    manifest = json.loads((ref.data / "problems" / "manifest.json").read_text())
    assert (manifest["seed"], manifest["views"], manifest["count"]) == (11, ["c1", "c3"], 11)
    for kind in ("nl", "pddl"):  # the prompts generate_prompts.py writes of the same problems
        for view in ("c1", "c3"):
            output = tmp_path / "script" / f"paper___{kind}___{view}.jsonl"
            done = run_script("scripts/generate_prompts.py", "--problem-path", str(ref.data / "problems"),
                              "--view", view, "--prompt-type", kind, "--output", str(output))  # fmt: skip
            assert done.returncode == 0, done.stderr
            assert output.read_bytes() == (ref.data / "prompts" / output.name).read_bytes()
    assert generate(ref, seed=12) != keys  # another seed: other problems, other Keys
    assert sorted(generate(ref, overrides={"views": [{"name": "c2", "constraints": 2}]})) == [
        "nl___c2",
        "pddl___c2",
    ]


def test_a_config_that_cannot_be_generated_names_itself_and_writes_nothing(tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text("problems: [{num_obj: 4, test: true, count: 2}]\n")  # no training problem
    with pytest.raises(ConfigError, match=r"bad\.yaml: no training problems \(test: false\)"):
        generate(SetRef("blocks", "bad", tmp_path / "bad", tmp_path / "results", config))
    assert not (tmp_path / "bad").exists()
    with pytest.raises(ConfigError, match=r"<command line>: plan_budget must be >= 1"):
        generate(
            SetRef("blocks", "bad", tmp_path / "bad", tmp_path / "results", config),
            overrides={"plan_budget": 0},
        )
