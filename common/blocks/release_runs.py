"""The CogSci 2022 release's raw outputs as runs of the set ``released``, scored like any run.

The release (``common.blocks.release``) holds, per view, GPT-Neo's English plans and Codex's PDDL
translations of its 100 test problems. Those problems are the release's own (the set
``cogsci_problems`` draws others from the same spec), so the release's answers are runs of the set
``released`` (``items.RELEASED``): the paper's prompts for the release's problems, written from the
release's problems and BFS plans (``write_prompts``: they equal the published prompts up to the
order of stacks), in ``data/blocks/released/prompts/``. ``write_runs`` writes the answers as its
results files, ``<nl|pddl>___<view>/paper___<model>___results.jsonl``: each record the release's
answer to the item of that problem and view (its Key), its ``raw`` answer as a run records it and
the release's own verdict (``succeed``); the first record names the run
(``common.results.RUN_FIELD``: the prompts file and the release file; no model settings, as for
any released results). The score stage scores them with the suite's one scorer into the results
database, where the paper's table (``common.blocks.paper``) reads them.
"""

from pathlib import Path
from typing import Any

from common import paths
from common.blocks import items as set_items
from common.blocks.problems import load_problems
from common.blocks.prompts import prompt_records
from common.blocks.release import (
    METHOD_DIRS,
    RELEASE,
    VIEWS,
    load_records,
    plans_dir,
    problems_dir,
    training_plan,
)
from common.blocks.runs import RELEASE_MODELS as MODELS
from common.errors import DataError
from common.forget import FETCHED
from common.jsonl import dumps, write_jsonl
from common.results import RUN_FIELD, results_filename

PROMPTING = "paper"  # the paper's prompts: paper___<nl|pddl>___<view>.jsonl
PROMPT_TYPES = {"gpt": "nl", "codex": "pddl"}  # how each method answered: a plan, or facts


def write_prompts(data: Path, root: str | Path = RELEASE) -> list[Path]:
    """Write the paper's prompts of every view and method for the release's problems into
    ``data/prompts/`` (the worked examples solved by the release's BFS plans) and the marker
    ``data/.fetched`` (the set comes from fetched data: ``common.forget`` keeps it); return the
    prompts files. A file already as it would be is left untouched."""
    problems = load_problems(problems_dir(root))
    written = []
    for prompt_type in PROMPT_TYPES.values():
        for view in VIEWS:

            def example_plan(problem, shown, view=view):
                return training_plan(plans_dir(root), view, problem.id, shown.items)

            records = prompt_records(problems, view, prompt_type, PROMPTING, example_plan)
            written.append(_write(data / "prompts" / f"{PROMPTING}___{prompt_type}___{view}.jsonl", records))
    (data / FETCHED).touch()
    return written


def write_runs(data: Path, results: Path, root: str | Path = RELEASE) -> list[Path]:
    """Write the release's answers as results files of the set whose data is ``data`` (prompts by
    ``write_prompts``) under ``results`` (see the module docstring) and return them; a file already
    as it would be is left untouched (its time too: the score stage has nothing to do). Raises
    DataError naming the prompts file when it has no item for a released answer."""
    written = []
    for method, model in MODELS.items():
        prompt_type = PROMPT_TYPES[method]
        for view in VIEWS:
            prompts = data / "prompts" / f"{PROMPTING}___{prompt_type}___{view}.jsonl"
            keys = {
                str(item["id"]): item["Key"]
                for item in set_items.load_items(prompts, problems_dir(root), prompt_type)
            }
            records = [
                _record(method, view, answer, keys, prompts) for answer in load_records(method, view, root)
            ]
            records[0][RUN_FIELD] = {
                "prompting": PROMPTING,
                "modelname": model,
                "prompts": paths.shown(prompts),
                "source": paths.shown(Path(root) / METHOD_DIRS[method] / view / "collated.json"),
            }
            path = results / f"{prompt_type}___{view}" / results_filename(PROMPTING, model)
            written.append(_write(path, records))
    return written


def _record(
    method: str, view: str, answer: dict[str, Any], keys: dict[str, int], prompts: Path
) -> dict[str, Any]:
    """Return the results record of one released answer: Key, problem id, view, ``raw`` (the
    completion, or the two parts' facts) and the release's verdict ``succeed``."""
    if str(answer["id"]) not in keys:
        raise DataError(
            f"{paths.shown(prompts)}: no item for the released answer to problem {answer['id']!r}"
        )
    raw = answer["lm_plan"] if method == "gpt" else {"init": answer["init_res"], "goal": answer["goal_res"]}
    return {
        "Key": keys[str(answer["id"])],
        "id": answer["id"],
        "view": view,
        "raw": raw,
        "succeed": bool(answer["succeed"]),
    }


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    """Write ``records`` to ``path`` as JSON lines unless it already holds them; return ``path``."""
    text = "".join(dumps(record) + "\n" for record in records)
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        write_jsonl(path, records)
    return path
