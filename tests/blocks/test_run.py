"""Running models on blocks-world prompts: scoring by hand, built-in models, lm_plan.py and
codex_translate.py as processes against a real local OpenAI-compatible server."""

import json
import sys
from pathlib import Path

import pytest
import yaml

from common import paths
from common.blocks import grade, run
from common.blocks.baselines import BASELINES
from common.blocks.generate import load_spec, make_problems
from common.blocks.items import load_items, prompt_key
from common.blocks.planner import optimal_plan
from common.blocks.problems import View, write_problems
from common.blocks.prompts import prompt_records, translation_prompts
from common.jsonl import write_jsonl
from common.models.stub_server import StubServer
from common.results import read_results
from tests.blocks.fixtures import scored_file
from tests.conftest import run_script

sys.path.insert(0, str(Path(__file__).parents[1] / "models"))
from model_helpers import FAST  # the model tests' fast retry settings


@pytest.fixture(scope="module")
def small_set(tmp_path_factory) -> Path:
    """A generated set (3 training, 6 test problems of 4-5 items, view c2) with nl and pddl prompts."""
    root = tmp_path_factory.mktemp("small") / "small"
    spec_path = root / "small.yaml"
    spec_path.parent.mkdir(parents=True)
    spec_path.write_text(
        "seed: 5\nviews:\n  - {name: c2, constraints: 2, rename: none}\nproblems:\n"
        "  - {num_obj: 3, count: 3}\n  - {num_obj: 4, test: true, count: 3}\n"
        "  - {num_obj: 5, test: true, count: 3}\n"
    )
    problems = make_problems(load_spec(spec_path))
    write_problems(root / "problems", problems, {"spec": "small.yaml"})
    for prompt_type in ("nl", "pddl"):
        records = prompt_records(
            problems, "c2", prompt_type, "paper", lambda p, v: optimal_plan(v.init_board, v.goal)
        )
        write_jsonl(root / "prompts" / f"paper___{prompt_type}___c2.jsonl", records)
    return root


def tiny_item(**texts: str) -> dict:
    """One hand-made problem: b on a, c alone on the table. Goal: b on c (one move)."""
    view = View("v", [["a", "b"], ["c"]], [("mid", "b", "c")], {})
    return {
        "Key": 1,
        "id": "x",
        "view": "v",
        "prompting": "paper",
        "texts": texts,
        "problem": view,
        "optimal_length": 1,
    }


def test_a_plan_is_cut_at_the_stop_marker_and_judged_by_both_rules():
    item = tiny_item(plan="...")
    good = grade.score_plan(item, "Move the b onto the c.\n\nInitially:\nThe a is on the table.\n")
    assert good["resp"] == "Move the b onto the c." and good["lenient"] and good["strict"]
    assert good["optimality_gap"] == 0 and good["error"] is None
    chatty = grade.score_plan(item, "Sure! Here is the plan:\nmove the B onto the C\nMove the a onto the b.")
    assert chatty["lenient"] and not chatty["strict"]  # the paper skips the chatter; strict does not
    assert chatty["parse_rate"] == pytest.approx(2 / 3) and chatty["valid_prefix"] == 0
    assert chatty["first_error"].startswith("step 1: unparseable")
    assert chatty["plan"] == ["Move the b onto the c.", "Move the a onto the b."]
    assert chatty["applied"] == 2 and chatty["optimality_gap"] == 1  # a onto b was not needed
    prose = grade.score_plan(item, "I cannot help with that.")
    assert not prose["lenient"] and prose["error"] == "no line is a move of this problem's items"
    assert grade.score_plan(item, "")["error"] is None  # an empty plan is an answer, just a wrong one


def test_translation_scores_keep_accuracy_apart_from_success():
    view = View("v", [["a", "b"], ["c"]], [("mid", "b", "c")], {})
    texts = translation_prompts([], view)
    item = {**tiny_item(**texts), "problem": view}
    init = "ontable a)\n(on b a)\n(clear b)\n(ontable c)\n(clear c)\n;next"
    perfect = grade.score_translation(item, {"init": init, "goal": "on b c)\n"})
    assert perfect["lenient"] and perfect["strict"] and perfect["plan"] == ["Move the b onto the c."]
    assert (perfect["init_precision"], perfect["init_recall"]) == (1.0, 1.0)
    assert perfect["objects_from_true_problem"] and perfect["error"] is None
    # a goal fact swapped: a plan for the wrong goal, which fails on the true problem
    wrong = grade.score_translation(item, {"init": init, "goal": "on c b)\n"})
    assert not wrong["lenient"] and wrong["plan"] == ["Move the c onto the b."]
    assert (wrong["goal_precision"], wrong["goal_recall"]) == (0.0, 0.0)
    assert wrong["reason"] == "goal does not hold at the end"
    # half the initial facts missing: the state cannot be read, so no plan (reason recorded)
    broken = grade.score_translation(item, {"init": "ontable a)\n(on b a)\n", "goal": "on b c)\n"})
    assert broken["plan"] is None and broken["error"].startswith("initial facts:")
    assert (broken["init_precision"], broken["init_recall"]) == (1.0, 0.4)  # right, but 2 of 5
    assert broken["goal_recall"] == 1.0  # the goal was read and scored all the same
    described = grade.score_translation(item, {"init": init, "goal": "on b c)\n"}, objects="described")
    assert described["lenient"] and not described["objects_from_true_problem"]


def test_builtin_models_plan_and_translate_every_test_problem(small_set):
    prompts = small_set / "prompts"
    items = load_items(prompts / "paper___nl___c2.jsonl", small_set / "problems", "nl")
    assert len(items) == 6 and len({i["Key"] for i in items}) == 6
    oracle, noop = BASELINES["oracle"](0), BASELINES["noop"](0)
    for item in items:
        best = run.plan_record(oracle, item)
        assert best["lenient"] and best["strict"] and best["optimality_gap"] == 0
        assert best["plan_length"] == item["optimal_length"]
        empty = run.plan_record(noop, item)
        assert empty["lenient"] == empty["goal_held_initially"] and empty["plan"] == []
    random_a, random_b = BASELINES["random"](3), BASELINES["random"](3)
    assert [random_a.complete([], i).text for i in items] == [random_b.complete([], i).text for i in items]
    pddl_items = load_items(prompts / "paper___pddl___c2.jsonl", small_set / "problems", "pddl")
    rules = BASELINES["rules"](0)
    for item in pddl_items:
        record = run.translation_record(rules, item)
        assert record["lenient"] and record["strict"]
        assert record["init_recall"] == record["goal_recall"] == 1.0


def test_a_changed_prompt_gets_a_new_key(small_set):
    items = load_items(small_set / "prompts" / "paper___nl___c2.jsonl", small_set / "problems", "nl")
    item = items[0]
    same = prompt_key(item["id"], item["view"], [item["texts"]["plan"]])
    assert same == item["Key"] and 0 <= same < 2**60
    assert prompt_key(item["id"], item["view"], [item["texts"]["plan"] + " "]) != same


def write_stub_config(directory: Path, server: StubServer) -> Path:
    path = directory / "stubplanner.yaml"
    path.write_text(
        yaml.safe_dump({"base_url": server.url, "model": "stub-model", "api": "completions", **FAST})
    )
    return path


def test_lm_plan_asks_a_real_server_resumes_and_is_scored_without_asking(small_set, tmp_path):
    """Every answer is one move of an item no problem has; the stop marker is sent; a rerun asks nothing."""
    with StubServer(answer=lambda prompt: "Move the zz onto the table.\nInitially:\nignored") as server:
        config = write_stub_config(tmp_path, server)
        args = ["scripts/lm_plan.py", "-t", str(small_set), "--model", str(config)]
        args += ["--results-dir", str(tmp_path / "out"), "--no-cache"]
        first = run_script(*args)
        assert first.returncode == 0, first.stderr
        assert len(server.requests) == 6
        assert all(request["body"]["stop"] == ["Initially:"] for request in server.requests)
        out = tmp_path / "out" / "small" / "nl___c2" / "paper___stubplanner___results.jsonl"
        rows = read_results(out)
        assert len(rows) == 6 and all(r["raw"].endswith("Initially:\nignored") for r in rows)
        assert all(r["resp"] == "Move the zz onto the table." and r["plan"] == [] for r in rows)
        assert all(r["error"] == "no line is a move of this problem's items" for r in rows)
        assert f"{paths.shown(out)}: 6 written (0 answers, 6 invalid" in first.stderr  # the run's account
        written = out.read_bytes()
        again = run_script(*args)  # resume: every Key is there, nothing is asked
        assert again.returncode == 0 and len(server.requests) == 6 and out.read_bytes() == written
        scored = scored_file(small_set, tmp_path / "out", out)  # from the raw answers, without asking
        assert scored.records == 6 and scored.answers["invalid"].tolist() == [1] * 6
        details = [json.loads(detail) for detail in scored.answers["detail"]]
        assert {d["first_error"] for d in details} == {"step 1: unknown object: 'zz'"}
        custom = run_script(
            *args[:3],
            "--model",
            str(config),
            "--set",
            "stop=[END]",
            "--results-dir",
            str(tmp_path / "out2"),
            "--no-cache",
            "--limit",
            "1",
        )
        assert custom.returncode == 0, custom.stderr
        assert server.requests[-1]["body"]["stop"] == ["END"] and len(server.requests) == 7


def test_codex_translate_with_the_rule_translator_solves_everything(small_set, tmp_path):
    result = run_script(
        "scripts/codex_translate.py",
        "--model",
        "rules",
        "--objects",
        "described",
        "-t",
        str(small_set),
        "--results-dir",
        str(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    file = tmp_path / "small" / "pddl___c2" / "paper___rules___results.jsonl"
    rows = read_results(file)
    assert len(rows) == 6 and all(r["lenient"] and not r["objects_from_true_problem"] for r in rows)
    scored = scored_file(small_set, tmp_path, file)  # scored again as the run asked: objects described
    assert (
        scored.answers["correct"].tolist() == [1.0] * 6
        and scored.answers["goal_recall"].tolist() == [1.0] * 6
    )


def test_wrong_prompt_type_and_unknown_builtin_are_one_line_errors(small_set, tmp_path):
    misnamed = tmp_path / "misnamed"
    (misnamed / "prompts").mkdir(parents=True)
    (misnamed / "problems").symlink_to(small_set / "problems", target_is_directory=True)
    text = (small_set / "prompts" / "paper___nl___c2.jsonl").read_text()
    (misnamed / "prompts" / "paper___pddl___c2.jsonl").write_text(text)  # planning prompts, named for facts
    out = ["--results-dir", str(tmp_path / "out")]
    wrong = run_script("scripts/codex_translate.py", "--model", "rules", "-t", str(misnamed), *out)
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr
    assert "paper___pddl___c2.jsonl:1: a 'nl' prompt; this run needs 'pddl' prompts" in wrong.stderr
    unknown = run_script("scripts/lm_plan.py", "--model", "rules", "-t", str(small_set), *out)
    assert (
        unknown.returncode == 2 and "built-in 'rules' answers pddl items, not the nl items" in unknown.stderr
    )
    view = run_script("scripts/lm_plan.py", "--model", "noop", "-t", str(small_set), "--view", "one", *out)
    assert (
        view.returncode == 2 and "no paper___nl___<view>.jsonl for view one; views there: c2" in view.stderr
    )
