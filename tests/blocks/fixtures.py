"""A small blocks set with every kind of run, built through the scripts as a user builds one.

``build_tiny_set(data_root, results_root, code)`` writes ``<data_root>/tiny`` (a generated set:
3 training and 8 test problems, views c1 and c3) and ``<results_root>/tiny``: the built-in
baselines of both methods, a random planner asked three times on view c1 (draws), and three
hand-written runs: a planner that answers half of view c1 (a refused problem, an answer with no
move, a row for a prompt that is no longer in the set), a translator with one feedback round on
view c3 (half its goals name an object the problem lacks, fixed when told), and a planner on
view c3 whose file has no run metadata (scored as recorded). The expected section
``SECTION_BEFORE`` is the one the analysis computed from the results files before the results
database (commit cccdced, the banner with its path left out), on the same set built there: its
problems and prompts by scripts/generate_problems.py --specs-file and scripts/generate_prompts.py
per view and method (which wrote the same bytes as ``generate.generate`` does now: so on make
all's sets; tests/blocks/test_generate.py compares the prompts), its runs as here.
"""

import json
import subprocess
import sys
from pathlib import Path

from tests.timing import timeout

SECTION_BEFORE = Path(__file__).with_name("tiny_section.txt")
CONFIG = """seed: 11
views:
  - {name: c1, constraints: 1, rename: none}
  - {name: c3, constraints: 3, rename: all}
problems:
  - {num_obj: 3, count: 3}
  - {num_obj: 4, test: true, count: 4}
  - {num_obj: 5, test: true, count: 4}
"""


def _run(code: Path, *args: str) -> None:
    """Run ``python <code>/<args>`` (a script of the checkout ``code``), failing loudly."""
    command = [sys.executable, *args]
    done = subprocess.run(command, cwd=code, capture_output=True, text=True, timeout=timeout(600))
    if done.returncode:
        raise RuntimeError(f"{' '.join(args)} failed:\n{done.stderr[-3000:]}")


def build_tiny_set(data_root: Path, results_root: Path, code: Path) -> Path:
    """Write the set ``tiny`` (its data under ``data_root``, its results under ``results_root``):
    its problems and prompts by the generate stage, its runs by the scripts of the checkout
    ``code``; return its data directory."""
    from common.blocks.generate import generate
    from common.suite import SetRef

    data = data_root / "tiny"
    data.mkdir(parents=True)
    (data / "tiny.yaml").write_text(CONFIG)
    generate(SetRef("blocks", "tiny", data, results_root / "tiny", data / "tiny.yaml"))
    out = ["-t", str(data), "--results-dir", str(results_root)]
    _run(code, "scripts/lm_plan.py", *out, "--baselines")
    _run(code, "scripts/codex_translate.py", *out, "--baselines")
    _run(code, "scripts/lm_plan.py", *out, "--model", "random", "--set", "samples=3", "--view", "c1")
    _hand_runs(data, results_root / "tiny")
    return data


def _hand_runs(data: Path, results: Path) -> None:
    """Write the three hand-written runs (see the module docstring)."""
    from common.blocks.planner import optimal_plan
    from common.blocks.run import load_items
    from common.blocks.state import move_english
    from common.blocks.translate import rule_translate

    nl = data / "prompts" / "paper___nl___c1.jsonl"
    items = load_items(nl, data / "problems", "nl")
    plans = []
    for n, item in enumerate(items[:4]):
        view = item["problem"]
        record = {"Key": item["Key"], "id": item["id"], "view": "c1", "sent_as": "text"}
        if n == 1:
            record.update(resp="", refused="context_length_exceeded", error="HTTP 400: too long")
            record.update(optimal_length=item["optimal_length"], goal_held_initially=False)
        else:
            moves = optimal_plan(view.init_board, view.goal) or []
            text = {0: "Move the ghost onto the table.\n", 2: "".join(move_english(m) + "\n" for m in moves)}
            record.update(raw=text.get(n, "I cannot do that."), finish_reason="stop")
        plans.append(record)
    plans.append({"Key": 7, "id": items[4]["id"], "view": "c1", "raw": "Move it.", "lenient": True})  # stale
    _write(results / "nl___c1" / "paper___hand___results.jsonl", plans, nl, data, {})

    pddl = data / "prompts" / "paper___pddl___c3.jsonl"
    facts = []
    for n, item in enumerate(load_items(pddl, data / "problems", "pddl")):
        init, goal = (
            rule_translate(item["texts"][p].rsplit("\n\n", 1)[-1]).removeprefix("(") for p in ("init", "goal")
        )
        wrong = "on ghost shelf)\n"  # objects the problem lacks: an error the feedback round names
        first = {"init": init, "goal": wrong if n % 2 else goal}
        record = {"Key": item["Key"], "id": item["id"], "view": "c3", "sent_as": "text", "raw": first}
        record.update(feedback=1, feedback_raw=[{"init": init, "goal": goal}] if n % 2 else [])
        facts.append(record)
    _write(
        results / "pddl___c3" / "paper-feedback1___hand___results.jsonl", facts, pddl, data, {"feedback": 1}
    )

    recorded = []
    for n, item in enumerate(load_items(data / "prompts" / "paper___nl___c3.jsonl", data / "problems", "nl")):
        record = {"Key": 100 + n, "id": item["id"], "view": "c3", "raw": f"plan {n}", "optimal_length": n % 3}
        record.update(
            goal_held_initially=n == 0, lenient=n < 5, strict=n < 3, error="no move" if n == 7 else None
        )
        if n == 6:
            record = {**record, "raw": "", "refused": "context_length_exceeded", "lenient": None}
        recorded.append(record)
    path = results / "nl___c3" / "paper___recorded___results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recorded))


def _write(path: Path, records: list[dict], prompts: Path, data: Path, labels: dict) -> None:
    """Write a results file and run metadata naming the prompts it answered (as the scripts do)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    run = {"prompts": str(prompts), "problems": str(data / "problems"), "objects": "true", **labels}
    meta = path.with_name(path.name.removesuffix(".jsonl") + ".meta.json")
    meta.write_text(json.dumps({"results_file": path.name, "runs": [run]}))


def scored_file(data: Path, results_root: Path, file: Path):
    """Return the results file ``file`` of the set at ``data`` (its results under
    ``results_root/<set>``) scored by the score stage, as the results database scores it."""
    from common.blocks import SUITE, scoring

    ref = SUITE.ref(data.name, data=data, results_root=results_root)
    return scoring.score_file(ref, file, scoring.items_frame(ref))


def set_section(data: Path, results_root: Path, database: Path, **options):
    """Return the blocks section of the set at ``data`` (results under ``results_root/<set>``),
    its results files scored into the results database ``database`` first."""
    from common import analysis, scoring
    from common.blocks import SUITE

    ref = SUITE.ref(data.name, data=data, results_root=results_root)
    scoring.score([ref], database)
    return analysis.analyse([ref], db=database, **options)
