"""Blocks runs against a real local HTTP server (common.models.stub_server) that returns scripted
answers per problem: every kind of answer a model gives, the recorded outcome of each row, chat
turns, feedback rounds and refused requests."""

import importlib.util
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from common import cli
from common.blocks import grade
from common.blocks.conversation import FACTS_SYSTEM, PLAN_SYSTEM, follow_up, planning_turns, translation_turns
from common.blocks.items import load_items
from common.blocks.planner import optimal_plan
from common.blocks.problems import Problem, write_problems
from common.blocks.prompts import prompt_records
from common.jsonl import write_jsonl
from common.models.stub_server import StubServer
from common.paths import ROOT
from common.results import read_results
from tests.blocks.fixtures import scored_file, set_section
from tests.conftest import comparable, live_then_batch

sys.path.insert(0, str(Path(__file__).parents[1] / "models"))
from model_helpers import FAST  # the model tests' fast retry settings

WORDS = [
    "anvil",
    "bell",
    "cup",
    "dice",
    "egg",
    "fork",
    "glove",
    "hat",
    "ink",
    "jar",
    "kite",
    "lamp",
    "mug",
    "nail",
    "oar",
    "pen",
    "quill",
    "rope",
    "sock",
    "tape",
    "urn",
    "vase",
    "whisk",
    "yarn",
    "zip",
    "axe",
    "bowl",
    "comb",
    "drum",
    "flute",
]
SCENARIOS = [
    "valid",
    "invalid move",
    "unparseable line",
    "truncated",
    "facts right",
    "undeclared object",
    "swapped on",
    "ontable table",
    "feedback fixes",
    "feedback fails",
]


def names(k: int) -> tuple[str, str, str]:
    """Items X, Y, Z of test problem k: Y is on X, Z alone; the goal is X on Z (two moves)."""
    return WORDS[3 * k], WORDS[3 * k + 1], WORDS[3 * k + 2]


def answers(x: str, y: str, z: str, scenario: str) -> dict[str, str]:
    """The scripted answers of a problem: plan, initial facts, goal facts (continuations of the
    prompt's "("), and the goal facts after a feedback message."""
    plan = f"Move the {y} onto the table.\nMove the {x} onto the {z}.\n"
    init = f"ontable {x})\n(on {y} {x})\n(clear {y})\n(ontable {z})\n(clear {z})\n"
    goal = f"on {x} {z})\n"
    out = {"plan": plan, "init": init, "goal": goal, "goal again": goal}
    if scenario == "invalid move":
        out["plan"] = f"Move the {x} onto the {z}.\n" + plan  # x is not clear yet
    elif scenario == "unparseable line":
        out["plan"] = "Here is the plan:\n" + plan
    elif scenario == "truncated":
        out["plan"] = f"Move the {y} onto the table.\nMove the {x} onto the"
    elif scenario == "undeclared object":
        out["goal"] = f"on {x} shelf)\n"
    elif scenario == "swapped on":
        out["goal"] = f"on {z} {x})\n"
    elif scenario == "ontable table":
        out["init"] = init + "(ontable table)\n"
    elif scenario == "feedback fixes":
        out["goal"] = f"on {x} shelf)\n"
    elif scenario == "feedback fails":
        out["goal"] = out["goal again"] = f"on {x} shelf)\n"
    return out


SCRIPT = {names(k)[0]: answers(*names(k), scenario) for k, scenario in enumerate(SCENARIOS)}


def scripted(prompt: str) -> str:
    """The server's answer: find the test problem by its first item in the last block of the
    prompt (or the last chat message), then the part asked and whether it is a feedback request."""
    planning = prompt.rstrip().endswith("Actions:")
    last = prompt.rsplit("Initially:", 1)[-1] if planning else prompt.rsplit("\n\n", 1)[-1]
    feedback = "cannot be used" in last
    x = next((name for name in SCRIPT if re.search(rf"\b{name}\b", last)), None)
    if x is None:  # a chat feedback message that names no item of the problem: an empty answer
        return ""
    if planning:
        return SCRIPT[x]["plan"] + "\nInitially:\nignored"
    if feedback:
        return SCRIPT[x]["goal again"]
    return SCRIPT[x]["init"] if "rests on the table" in last else SCRIPT[x]["goal"]


def chat_scripted(prompt: str) -> str:
    """The same answers as a chat model writes them: facts open with their own "("."""
    text = scripted(prompt)
    return text if "Move the" in text else "(" + text


@pytest.fixture(scope="module")
def hand_set(tmp_path_factory) -> Path:
    """A hand-made set: 3 training problems and one test problem per scenario (view v)."""
    root = tmp_path_factory.mktemp("handmade") / "handmade"
    train = [
        Problem(
            f"00{i}",
            [["tin", "pot"], ["box"]],
            [["tin"], ["pot", "box"]],
            {"v": [("mid", "box", "pot")]},
            {},
            test=False,
        )
        for i in range(3)
    ]
    tests = []
    for k in range(len(SCENARIOS)):
        x, y, z = names(k)
        tests.append(Problem(f"{10 + k:03d}", [[x, y], [z]], [[z, x], [y]], {"v": [("mid", x, z)]}, {}))
    problems = train + tests
    write_problems(root / "problems", problems, {"spec": "handmade", "views": ["v"]})
    for prompt_type in ("nl", "pddl"):
        records = prompt_records(
            problems, "v", prompt_type, "paper", lambda p, v: optimal_plan(v.init_board, v.goal)
        )
        write_jsonl(root / "prompts" / f"paper___{prompt_type}___v.jsonl", records)
    return root


def config(directory: Path, server: StubServer, api: str = "completions", name: str = "stub") -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(
        yaml.safe_dump({"base_url": server.url, "model": "stub-model", "api": api, "concurrency": 1, **FAST})
    )
    return path


@dataclass
class Ran:
    """What a script run in this process returned and printed."""

    returncode: int
    stdout: str
    stderr: str


def run_here(capsys, script: str, *args: str) -> Ran:
    """Run ``scripts/<name>.py``'s main in this process (as ``cli.run_main`` does for the script,
    without a new interpreter's start-up) and return its exit code and output."""
    spec = importlib.util.spec_from_file_location(Path(script).stem, ROOT / script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    capsys.readouterr()
    code = cli.run_main(module.main, list(args))
    out = capsys.readouterr()
    return Ran(code, out.out, out.err)


def on_set(prompts: str | Path) -> list[str]:
    """Return the options naming the set and view of ``<set>/prompts/paper___<type>___<view>.jsonl``."""
    prompts = Path(prompts)
    return ["-t", str(prompts.parent.parent), "--view", prompts.stem.split("___")[2]]


def results_in(root: Path, prompt_type: str, name: str) -> Path:
    """Return the results file ``name`` of the hand-made set's view v under the results root ``root``."""
    return root / "handmade" / f"{prompt_type}___v" / name


def by_scenario(rows: list[dict]) -> dict[str, dict]:
    return {SCENARIOS[int(row["id"]) - 10]: row for row in rows}


def test_every_kind_of_plan_is_recorded_with_its_outcome(capsys, hand_set, tmp_path):
    with StubServer(answer=scripted) as server:
        result = run_here(
            capsys,
            "scripts/lm_plan.py",
            "--model",
            str(config(tmp_path, server)),
            "--no-cache",
            *on_set(str(hand_set / "prompts" / "paper___nl___v.jsonl")),
            "--results-dir",
            str(tmp_path / "out"),
        )
        assert result.returncode == 0, result.stderr
        assert len(server.requests) == len(SCENARIOS)
        assert all(
            "prompt" in r["body"] and r["body"]["prompt"].endswith("Actions:\n") for r in server.requests
        )
    rows = by_scenario(read_results(results_in(tmp_path / "out", "nl", "paper___stub___results.jsonl")))
    valid = rows["valid"]
    assert valid["lenient"] and valid["strict"] and valid["optimality_gap"] == 0 and valid["error"] is None
    assert valid["finish_reason"] == "stop" and valid["resp"].endswith("onto the cup.")  # cut at "Initially:"
    invalid = rows["invalid move"]
    assert invalid["lenient"] and not invalid["strict"]  # the paper skips the impossible move
    assert invalid["first_error"] == "step 1: not applicable: 'Move the dice onto the fork.'"
    assert invalid["valid_prefix"] == 0 and invalid["applied"] == 2
    chatter = rows["unparseable line"]
    assert chatter["lenient"] and not chatter["strict"] and chatter["parse_rate"] == pytest.approx(2 / 3)
    assert chatter["first_error"].startswith("step 1: unparseable")
    cut = rows["truncated"]
    assert not cut["lenient"] and not cut["strict"] and cut["valid_prefix"] == 1
    assert cut["first_error"] == "step 2: unparseable: not 'Move the <item> onto the <item or table>.'"
    assert cut["error"] is None  # one line was a move: a wrong plan, not an invalid answer


def test_a_reply_cut_at_max_tokens_is_recorded_as_such(capsys, hand_set, tmp_path):
    with StubServer(answer=scripted) as server:
        result = run_here(
            capsys,
            "scripts/lm_plan.py",
            "--model",
            str(config(tmp_path, server)),
            "--no-cache",
            "--set",
            "max_tokens=3",
            "--limit",
            "1",
            *on_set(str(hand_set / "prompts" / "paper___nl___v.jsonl")),
            "--results-dir",
            str(tmp_path / "out"),
        )
        assert result.returncode == 0, result.stderr
    [row] = read_results(results_in(tmp_path / "out", "nl", "paper___stub___results.jsonl"))
    assert row["raw"] == "Move the bell" and row["finish_reason"] == "length"
    assert row["error"] == "no line is a move of this problem's items" and not row["lenient"]
    run = scored_file(
        hand_set, tmp_path / "out", results_in(tmp_path / "out", "nl", "paper___stub___results.jsonl")
    )
    assert run.answers[["invalid", "truncated", "correct"]].values.tolist() == [[1, 1, 0.0]]
    assert run.answers["refused"].isna().all() and run.answers["finish_reason"].tolist() == ["length"]


def test_every_kind_of_translation_is_recorded_with_its_outcome(capsys, hand_set, tmp_path):
    prompts = hand_set / "prompts" / "paper___pddl___v.jsonl"
    with StubServer(answer=scripted) as server:
        result = run_here(
            capsys,
            "scripts/codex_translate.py",
            "--model",
            str(config(tmp_path, server)),
            "--no-cache",
            *on_set(str(prompts)),
            "--results-dir",
            str(tmp_path / "out"),
        )
        assert result.returncode == 0, result.stderr
        assert len(server.requests) == 2 * len(SCENARIOS)
        assert all(r["body"]["stop"] == [";"] for r in server.requests)
    rows = by_scenario(read_results(results_in(tmp_path / "out", "pddl", "paper___stub___results.jsonl")))
    right = rows["facts right"]
    assert (
        right["lenient"]
        and right["strict"]
        and right["plan"] == ["Move the nail onto the table.", "Move the mug onto the oar."]
    )
    assert (right["init_precision"], right["init_recall"], right["goal_recall"]) == (1.0, 1.0, 1.0)
    undeclared = rows["undeclared object"]
    assert not undeclared["lenient"] and undeclared["plan"] is None
    assert undeclared["error"] == (
        "goal facts: undeclared object: line 1, column 1: 'shelf' in (on pen shelf) "
        "is not an object of the problem"
    )
    assert undeclared["init_recall"] == 1.0 and undeclared["goal_precision"] == 0.0
    swapped = rows["swapped on"]  # a plan for the wrong goal: found, and wrong on the true problem
    assert not swapped["lenient"] and swapped["plan"] == [
        "Move the tape onto the table.",
        "Move the urn onto the sock.",
    ]
    assert swapped["reason"] == "goal does not hold at the end" and swapped["error"] is None
    assert (swapped["goal_precision"], swapped["goal_recall"]) == (0.0, 0.0)
    table = rows["ontable table"]
    assert not table["lenient"] and table["error"].startswith("initial facts: undeclared object")
    assert "'table' in (ontable table)" in table["error"]
    # the five right facts still count (issue: one unreadable fact made both 0)
    assert table["init_recall"] == 1.0 and table["init_precision"] == pytest.approx(5 / 6)
    unread = "(ontable table): undeclared object: line 1, column 1: 'table' in (ontable table) is not an"
    assert table["unread_facts"] == [unread + " object of the problem"]
    run = scored_file(
        hand_set, tmp_path / "out", results_in(tmp_path / "out", "pddl", "paper___stub___results.jsonl")
    )
    # 4 invalid (no plan: 2 scenarios + the 2 feedback ones), none refused
    assert run.answers["invalid"].sum() == 4 and run.answers["refused"].isna().all()


def test_feedback_rounds_fix_an_error_or_not_and_every_round_is_recorded(capsys, hand_set, tmp_path):
    prompts = hand_set / "prompts" / "paper___pddl___v.jsonl"
    with StubServer(answer=scripted) as server:
        result = run_here(
            capsys,
            "scripts/codex_translate.py",
            "--model",
            str(config(tmp_path, server)),
            "--no-cache",
            "--feedback",
            "2",
            *on_set(str(prompts)),
            "--results-dir",
            str(tmp_path / "out"),
        )
        assert result.returncode == 0, result.stderr
        feedback_prompts = [
            r["body"]["prompt"] for r in server.requests if "cannot be used" in r["body"]["prompt"]
        ]
    rows = by_scenario(
        read_results(results_in(tmp_path / "out", "pddl", "paper-feedback2___stub___results.jsonl"))
    )
    fixed = rows["feedback fixes"]
    assert fixed["lenient_by_round"] == [False, True, True] and fixed["rounds_used"] == 1
    assert (
        fixed["round_errors"][0].startswith("goal facts: undeclared object")
        and fixed["round_errors"][1] is None
    )
    assert fixed["feedback_raw"] == [{"init": fixed["raw"]["init"], "goal": "on zip bowl)\n"}]
    assert fixed["lenient"] and fixed["error"] is None
    failed = rows["feedback fails"]
    assert failed["lenient_by_round"] == [False, False, False] and len(failed["round_errors"]) == 3
    assert all(error.startswith("goal facts: undeclared object") for error in failed["round_errors"])
    assert not failed["lenient"] and failed["feedback_stopped"] is None
    swapped = rows["swapped on"]  # no error to give back: the reader cannot know the plan is wrong
    assert swapped["feedback_raw"] == [] and swapped["lenient_by_round"] == [False, False, False]
    # completion endpoint: the prompt goes on with the model's facts, the error as a ";" line, a new "("
    first = next(p for p in feedback_prompts if "zip" in p.rsplit("\n\n", 1)[-1])
    assert first.endswith(
        "(on zip shelf)\n;These facts cannot be used: goal facts: undeclared object: line 1, "
        "column 1: 'shelf' in (on zip shelf) is not an object of the problem. Write all the "
        "facts again, corrected:\n("
    )
    # 3 problems failing at round 0 (2 fixable only by feedback) + 1 more round for "feedback fails"
    assert len(feedback_prompts) == 2 + 2 + 2
    section = set_section(hand_set, tmp_path / "out", tmp_path / "db.sqlite")
    rounds = section.data["feedback"]  # the success after each round, as the records have it
    assert list(rounds["round"]) == [0, 1, 2] and list(rounds["lenient"]) == [5, 7, 7]
    assert list(rounds["lenient"]) == [
        sum(row["lenient_by_round"][k] for row in rows.values()) for k in range(3)
    ]


def test_chat_endpoints_get_the_few_shots_as_turns(capsys, hand_set, tmp_path):
    nl = hand_set / "prompts" / "paper___nl___v.jsonl"
    pddl = hand_set / "prompts" / "paper___pddl___v.jsonl"
    with StubServer(answer=chat_scripted) as server:
        chat = config(tmp_path, server, api="chat", name="stubchat")
        planned = run_here(
            capsys,
            "scripts/lm_plan.py",
            "--model",
            str(chat),
            "--no-cache",
            *on_set(str(nl)),
            "--results-dir",
            str(tmp_path / "nl"),
            "--limit",
            "1",
        )
        assert planned.returncode == 0, planned.stderr
        messages = server.requests[0]["body"]["messages"]
        assert [m["role"] for m in messages] == ["system"] + ["user", "assistant"] * 3 + ["user"]
        assert messages[0]["content"] == PLAN_SYSTEM
        assert (
            messages[1]["content"].startswith("There are some items stacked")
            and "Initially:" in messages[1]["content"]
        )
        assert messages[2]["content"] == "Move the box onto the pot."
        assert messages[-1]["content"].endswith("Goal:\nThe anvil is on the cup.\n\nActions:")
        translated = run_here(
            capsys,
            "scripts/codex_translate.py",
            "--model",
            str(chat),
            "--no-cache",
            *on_set(str(pddl)),
            "--results-dir",
            str(tmp_path / "pddl"),
            "--feedback",
            "1",
        )
        assert translated.returncode == 0, translated.stderr
    [plan] = read_results(results_in(tmp_path / "nl", "nl", "paper-turns___stubchat___results.jsonl"))
    assert plan["lenient"] and plan["strict"] and plan["sent_as"] == "turns"
    rows = by_scenario(
        read_results(
            results_in(tmp_path / "pddl", "pddl", "paper-turns-feedback1___stubchat___results.jsonl")
        )
    )
    right = rows["facts right"]  # the answer's own "(" is kept, not doubled
    assert (
        right["raw"]["init"].startswith("(ontable mug)")
        and right["lenient"]
        and right["init_precision"] == 1.0
    )
    assert rows["feedback fixes"]["lenient_by_round"] == [False, True]
    init_request = next(
        r["body"]["messages"]
        for r in server.requests
        if r["body"]["messages"][-1]["content"].startswith(";The mug rests")
    )
    assert init_request[0]["content"] == FACTS_SYSTEM and init_request[-1]["content"].count("\n") == 4
    assert not init_request[-1]["content"].endswith("(")
    feedback = next(
        r["body"]["messages"]
        for r in server.requests
        if "cannot be used" in r["body"]["messages"][-1]["content"]
        and "zip" in r["body"]["messages"][-1]["content"]
    )
    assert feedback[-2] == {"role": "assistant", "content": "(on zip shelf)\n"}


def test_refused_requests_are_failures_counted_in_their_own_column(capsys, caplog, hand_set, tmp_path):
    nl = hand_set / "prompts" / "paper___nl___v.jsonl"
    with StubServer(answer=scripted, max_context=50) as server:  # every prompt is longer
        stub = config(tmp_path, server)
        result = run_here(
            capsys,
            "scripts/lm_plan.py",
            "--model",
            str(stub),
            "--no-cache",
            *on_set(str(nl)),
            "--results-dir",
            str(tmp_path),
            "--limit",
            "3",
        )
        assert result.returncode == 0, result.stderr
        asked = len(server.requests)
        again = run_here(
            capsys,
            "scripts/lm_plan.py",
            "--model",
            str(stub),
            "--no-cache",
            *on_set(str(nl)),
            "--results-dir",
            str(tmp_path),
            "--limit",
            "3",
        )
        assert again.returncode == 0 and len(server.requests) == asked  # a rerun asks nothing
    rows = read_results(results_in(tmp_path, "nl", "paper___stub___results.jsonl"))
    assert [r["refused"] for r in rows] == ["context_length_exceeded"] * 3
    assert [r["id"] for r in rows] == ["010", "011", "012"] and all(r["view"] == "v" for r in rows)
    assert f"Key {rows[0]['Key']} (problem 010, view v) refused by the server" in caplog.text
    # the problem's own facts are recorded, so the analysis splits a refused problem like the others
    assert [(r["optimal_length"], r["goal_held_initially"]) for r in rows] == [(2, False)] * 3
    # view v: 3 problems, lenient and strict 0% of 3 (refused count as failures), 0 invalid, 3 refused
    view = set_section(hand_set, tmp_path, tmp_path / "db.sqlite").data["success"].iloc[0]
    assert (view.view, view.problems, view.lenient, view.strict, view.invalid, view.refused) == (
        "v",
        3,
        0,
        0,
        0,
        3,
    )
    assert view.lenient_hi == pytest.approx(56.1, abs=0.05)
    # a file from before refused rows carried the problem's facts gets them when re-scored
    bare = [{k: v for k, v in r.items() if k not in ("optimal_length", "goal_held_initially")} for r in rows]
    items = load_items(nl, hand_set / "problems", "nl")[:3]
    rescored = [grade.score_record(item, record, "nl") for item, record in zip(items, bare, strict=True)]
    assert [(r["optimal_length"], r["goal_held_initially"], r["lenient"]) for r in rescored] == [
        (2, False, False)
    ] * 3


def test_a_refused_feedback_round_keeps_the_rounds_done(capsys, hand_set, tmp_path):
    pddl = hand_set / "prompts" / "paper___pddl___v.jsonl"
    items = load_items(pddl, hand_set / "problems", "pddl")
    longest_first = max(len(item["texts"][part].split()) for item in items for part in ("init", "goal"))
    fixable = next(item for item in items if item["id"] == "018")
    error = "goal facts: undeclared object: line 1, column 1: 'shelf' in (on zip shelf) is not an object"
    again = follow_up(
        [{"role": "user", "content": fixable["texts"]["goal"]}], "on zip shelf)\n", error, False
    )
    feedback_words = len(again[0]["content"].split())
    assert feedback_words > longest_first + 2
    # the first requests fit (prompt + max_tokens 256 words), the longer feedback prompt does not
    with StubServer(answer=scripted, max_context=longest_first + 1 + 256) as server:
        result = run_here(
            capsys,
            "scripts/codex_translate.py",
            "--model",
            str(config(tmp_path, server)),
            "--no-cache",
            "--feedback",
            "2",
            *on_set(str(pddl)),
            "--results-dir",
            str(tmp_path / "out"),
        )
        assert result.returncode == 0, result.stderr
    rows = by_scenario(
        read_results(results_in(tmp_path / "out", "pddl", "paper-feedback2___stub___results.jsonl"))
    )
    fixable = rows["feedback fixes"]
    assert "refused" not in fixable and fixable["feedback_raw"] == []
    assert fixable["feedback_stopped"].startswith("feedback round 1 refused (context_length_exceeded)")
    assert fixable["lenient_by_round"] == [False, False, False] and fixable["error"].startswith("goal facts")


def test_builtin_oracle_and_random_facts_translate_and_a_planner_is_rejected_cleanly(
    capsys, hand_set, tmp_path
):
    pddl = str(hand_set / "prompts" / "paper___pddl___v.jsonl")
    for model in ("oracle-facts", "random-facts"):
        result = run_here(
            capsys,
            "scripts/codex_translate.py",
            "--model",
            model,
            *on_set(pddl),
            "--results-dir",
            str(tmp_path),
        )
        assert result.returncode == 0, result.stderr
    oracle = read_results(results_in(tmp_path, "pddl", "paper___oracle-facts___results.jsonl"))
    assert all(r["lenient"] and r["init_precision"] == r["goal_recall"] == 1.0 for r in oracle)
    chance = read_results(results_in(tmp_path, "pddl", "paper___random-facts___results.jsonl"))
    assert len(chance) == len(SCENARIOS) and all(
        r["error"] is None for r in chance
    )  # random boards read fine
    again = run_here(
        capsys,
        "scripts/codex_translate.py",
        "--model",
        "random-facts",
        *on_set(pddl),
        "--results-dir",
        str(tmp_path / "again"),
    )
    assert again.returncode == 0, again.stderr
    repeated = read_results(results_in(tmp_path / "again", "pddl", "paper___random-facts___results.jsonl"))
    assert [r["raw"] for r in repeated] == [r["raw"] for r in chance]  # seeded per problem
    wrong = run_here(
        capsys, "scripts/codex_translate.py", "--model", "noop", *on_set(pddl), "--results-dir", str(tmp_path)
    )
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr
    assert "built-in 'noop' answers nl items, not the pddl items this script asks" in wrong.stderr
    assert "the built-ins for these: rules, oracle-facts, random-facts" in wrong.stderr
    # a planner's name with a translator of its kind (make all MODEL=random) runs that translator
    for planner, translator in (("random", "random-facts"), ("oracle", "oracle-facts")):
        named = run_here(
            capsys,
            "scripts/codex_translate.py",
            "--model",
            planner,
            *on_set(pddl),
            "--results-dir",
            str(tmp_path / planner),
        )
        assert named.returncode == 0, named.stderr
        written = read_results(
            results_in(tmp_path / planner, "pddl", f"paper___{translator}___results.jsonl")
        )
        assert len(written) == len(chance)
        if planner == "random":
            assert [r["raw"] for r in written] == [r["raw"] for r in chance]


def test_turns_keep_every_example_and_the_test_problem():
    text = (
        "Preamble line\n\nInitially:\nThe a rests on the table.\n\nGoal:\nThe a rests on the table.\n\n"
        "Actions:\n\n\nInitially:\nThe b rests on the table.\n\nGoal:\nThe b is on the c.\n\nActions:\n"
    )
    turns = planning_turns(text)
    assert [m["role"] for m in turns] == ["system", "user", "assistant", "user"]
    assert turns[1]["content"].startswith("Preamble line\n\nInitially:") and turns[2]["content"] == ""
    assert (
        turns[3]["content"]
        == "Initially:\nThe b rests on the table.\n\nGoal:\nThe b is on the c.\n\nActions:"
    )
    facts = translation_turns(";The a rests on the table.\n(ontable a)\n\n;The b rests on the table.\n(")
    assert facts[1:] == [
        {"role": "user", "content": ";The a rests on the table."},
        {"role": "assistant", "content": "(ontable a)"},
        {"role": "user", "content": ";The b rests on the table."},
    ]


def test_the_analysis_rescores_results_files_with_the_current_scorer(capsys, hand_set, tmp_path):
    from common.jsonl import read_jsonl
    from common.results import metadata_path

    with StubServer(answer=scripted) as server:
        result = run_here(
            capsys,
            "scripts/lm_plan.py",
            "--model",
            str(config(tmp_path, server)),
            "--no-cache",
            *on_set(str(hand_set / "prompts" / "paper___nl___v.jsonl")),
            "--results-dir",
            str(tmp_path),
        )
        assert result.returncode == 0, result.stderr
    file = results_in(tmp_path, "nl", "paper___stub___results.jsonl")
    stale = [
        {**record, "lenient": False, "strict": False} for record in read_jsonl(file)
    ]  # an old scorer's verdicts
    write_jsonl(file, stale)
    database = tmp_path / "results.sqlite"
    section = set_section(hand_set, tmp_path, database)
    row = section.data["success"].iloc[0]
    assert (row.problems, row.lenient, row.strict) == (10, 9, 7) and not section.notes  # re-scored from raw
    # a file with 4 of the 10 problems, one of them for a prompt that changed since: both said
    write_jsonl(file, [*stale[:3], {**stale[3], "Key": 1}])
    section = set_section(hand_set, tmp_path, database)  # the file changed: scored again
    assert section.data["success"].iloc[0].problems == 3
    partial, changed = section.notes
    assert partial.startswith("stub (paper): PARTIAL results, 3 of 10 problems in nl___v (--limit, or a run")
    assert changed.startswith("nl___v/paper___stub___results.jsonl: 1 row(s) answer prompts that are no")
    metadata_path(file).unlink()  # and no run record either (a file from before runs recorded themselves)
    write_jsonl(file, [{k: v for k, v in record.items() if k != "run"} for record in read_jsonl(file)])
    section = set_section(hand_set, tmp_path, tmp_path / "fresh.sqlite")
    assert section.data["success"].iloc[0].lenient == 0  # nothing to re-score with: as recorded, and said so
    note = "scores as recorded (prompts or problems not at hand to re-score): "
    note += "nl___v/paper___stub___results.jsonl"
    assert section.notes == [note]


def test_a_chat_answer_is_read_as_written_a_completion_after_the_prompts_paren():
    from common.blocks.problems import View
    from common.blocks.prompts import translation_prompts

    view = View("v", [["a", "b"], ["c"]], [("mid", "b", "c")], {})
    item = {
        "Key": 1,
        "id": "x",
        "view": "v",
        "prompting": "paper",
        "problem": view,
        "optimal_length": 1,
        "texts": translation_prompts([], view),
    }
    init = "(ontable a)\n(on b a)\n(clear b)\n(ontable c)\n(clear c)\n"
    chatty = grade.score_translation(item, {"init": "Sure: " + init, "goal": "(on b c)"}, chat=True)
    assert chatty["error"] == "initial facts: syntax: line 1, column 1: 'Sure:' outside parentheses"
    assert chatty["init_recall"] == 1.0  # the facts are there all the same
    as_completion = grade.score_translation(item, {"init": "Sure: " + init, "goal": "on b c)"})
    assert as_completion["error"] == "initial facts: syntax: line 1, column 8: nested '(' inside an atom"
    both = [
        grade.score_translation(item, {"init": init, "goal": "(on b c)"}, chat=chat) for chat in (True, False)
    ]
    assert all(score["lenient"] for score in both)  # an own "(" is never doubled


@pytest.mark.slow  # minutes: a repository copy builds the default blocks sets, 36 script runs
def test_make_blocks_runs_both_methods_on_every_view_and_a_rerun_asks_nothing(tmp_path):
    from tests.sandbox import make_sandbox, run

    repo = make_sandbox(tmp_path)
    views = {
        "cogsci_problems": ("one", "two", "all"),
        "scaling": ("c1", "c1-renamed", "c3", "c3-renamed", "all", "all-renamed"),
        "pictures": ("two", "all"),  # a text-only model: the set's text, its pictures left out
    }
    with StubServer(answer=scripted) as server:
        model = config(tmp_path, server)
        first = run(repo, f"make blocks-model MODEL={model} LIMIT=2")
        assert first.returncode == 0, first.stderr[-3000:]
        asked = len(server.requests)
        assert asked == 11 * (2 + 2 * 2)  # every view of the 3 sets: 2 plans and 2 x 2 translations each
        assert "not asked in image, text+image" in first.stderr
        assert not [r for r in server.requests if "image_url" in str(r["body"])]
        for name, names in views.items():
            for view in names:
                for kind in ("nl", "pddl"):
                    assert (
                        len(
                            read_results(
                                repo
                                / "results/blocks"
                                / name
                                / f"{kind}___{view}"
                                / "paper___stub___results.jsonl"
                            )
                        )
                        == 2
                    )
        assert len(list((repo / "results/runs/blocks").glob("stub.limit2-*.done"))) == 1
        assert (
            "stub (plan, paper)" in first.stdout and "stub (LLM+planner, paper)" in first.stdout
        )  # analysed
        again = run(repo, f"make blocks-model MODEL={model} LIMIT=2")  # the run is up to date
        assert again.returncode == 0 and len(server.requests) == asked


@pytest.mark.parametrize(
    "script, kind", [("scripts/lm_plan.py", "nl"), ("scripts/codex_translate.py", "pddl")]
)
def test_a_thinking_model_is_scored_on_its_answer_alone(capsys, hand_set, tmp_path, script, kind):
    """The same answers after inline thinking (that names other moves and facts) score exactly as
    without it; the thinking is kept in its own field; a budget spent thinking gives no answer."""
    thought = f"Move the {WORDS[0]} onto the {WORDS[2]}. (on {WORDS[1]} {WORDS[0]})"
    rows = {}
    for label, think, budget in (("plain", "", 256), ("thinking", thought, 256), ("cut", thought, 5)):
        answer = (
            (lambda prompt, think=think: f"<think>{think}</think>{scripted(prompt)}") if think else scripted
        )
        with StubServer(answer=answer) as server:
            result = run_here(
                capsys,
                script,
                *("--model", str(config(tmp_path, server, name=label)), "--no-cache"),
                *("--set", f"max_tokens={budget}"),
                *on_set(str(hand_set / "prompts" / f"paper___{kind}___v.jsonl")),
                *("--results-dir", str(tmp_path / "out")),
            )
            assert result.returncode == 0, result.stderr
        rows[label] = read_results(results_in(tmp_path / "out", kind, f"paper___{label}___results.jsonl"))
    own = (
        "reasoning",
        "reasoning_tokens",
        "completion_tokens",
        "latency_s",
        "finish_reason",
        "raw",
        "resp",
        "run",
    )
    for plain, thinking in zip(rows["plain"], rows["thinking"], strict=True):
        assert {k: v for k, v in thinking.items() if k not in own} == {
            k: v for k, v in plain.items() if k not in own
        }
        assert "<think>" not in json.dumps(thinking["raw"]) and thought in json.dumps(thinking["reasoning"])
    assert all(not row["lenient"] and "length" in json.dumps(row["finish_reason"]) for row in rows["cut"])
    assert all(row["raw"] in ("", {"init": "", "goal": ""}) for row in rows["cut"])


def test_a_random_planner_asked_three_times_gets_pass_at_k_in_the_section(capsys, hand_set, tmp_path):
    prompts = hand_set / "prompts" / "paper___nl___v.jsonl"
    for samples in (1, 3):  # the second run adds draws 1 and 2 only
        ran = run_here(capsys, "scripts/lm_plan.py", "--model", "random", "--set", f"samples={samples}",
                       *on_set(str(prompts)), "--results-dir", str(tmp_path / "out"))  # fmt: skip
        assert ran.returncode == 0, ran.stderr
    records = read_results(
        results_in(tmp_path / "out", "nl", "paper___random___results.jsonl"), all_draws=True
    )
    assert sorted(r.get("draw", 0) for r in records) == [0] * len(SCENARIOS) + [1] * len(SCENARIOS) + [
        2
    ] * len(SCENARIOS)
    section = set_section(hand_set, tmp_path / "out", tmp_path / "db.sqlite")
    [table] = [table for title, table in section.tables if title.startswith("REPEATED SAMPLES")]
    row = table.iloc[0]
    assert (row["k"], row["questions"]) == (3, len(SCENARIOS)) and row["pass@k"] != "-"
    assert "random (paper), nl___v k=3" in " ".join(section.summary)


@pytest.mark.parametrize("script", ["scripts/lm_plan.py", "scripts/codex_translate.py"])
def test_a_batch_run_writes_the_records_of_a_live_run(capsys, hand_set, tmp_path, script):
    prompt_type = "nl" if "lm_plan" in script else "pddl"
    extra = [] if prompt_type == "nl" else ["--feedback", "1"]  # two requests, then a feedback round
    with StubServer(answer=scripted) as server:
        model = config(tmp_path, server)
        model.write_text(model.read_text() + "batch_poll_s: 0.01\n")
        for _, options, code in live_then_batch(tmp_path):
            prompts = hand_set / "prompts" / f"paper___{prompt_type}___v.jsonl"
            ran = run_here(capsys, script, "--model", str(model), *on_set(prompts), *options, *extra)
            assert ran.returncode == code, ran.stderr
        rounds = len(server.batches.batches)
    label = "paper-feedback1___stub___results.jsonl" if extra else "paper___stub___results.jsonl"
    rows = {name: comparable(results_in(tmp_path / name, prompt_type, label)) for name in ("live", "batch")}
    assert rows["batch"] == rows["live"] and len(rows["batch"]) == len(SCENARIOS)
    assert rounds == (1 if prompt_type == "nl" else 3)  # translation: initial state, goal, feedback
