"""Write the few-shot prompts of one goal view of a problem set, one JSON line per prompt.

Prompt types: `nl` (plan directly in English; part `plan`) and `pddl` (translate the initial
state and the goal to PDDL facts for a planner; parts `init` and `goal`). The training problems
(`test: false`) are the worked examples, solved by the optimal planner, or by the plans in
--plans-dir (the release's BFS plans reproduce the paper's prompts). --prompting names the
prompt style: paper (as released), goal-examples (pddl: goal prompts show goal translations),
chat (one instruction line for chat models). A set whose config asks for picture modalities
(`modality`, listed in its problems' manifest, or --modality) gets those prompts too, and its
pictures are drawn once each into images/ beside prompts/ (content-addressed PNGs).

$ python scripts/generate_prompts.py --view two --problem-path data/blocks/cogsci_problems/problems \\
      --output data/blocks/cogsci_problems/prompts/paper___nl___two.jsonl
$ python scripts/generate_prompts.py --view all --prompt-type pddl --prompting goal-examples \\
      --problem-path data/blocks/cogsci_problems/problems --output /tmp/pddl_all.jsonl
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import json
import logging
import sys
from pathlib import Path

from common import cli
from common.blocks.generate import draw_pictures
from common.blocks.items import images_dir
from common.blocks.planner import optimal_plan
from common.blocks.problems import load_problems
from common.blocks.prompts import PROMPT_TYPES, PROMPTINGS, prompt_records
from common.blocks.release import training_plan
from common.errors import DataError
from common.jsonl import write_jsonl
from common.pictures.modality import MODALITIES, modalities_of, shows_pictures

log = logging.getLogger("generate_prompts")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("--view", required=True, help="goal view: one, two, all (or a view of a new set)")
    parser.add_argument("--problem-path", required=True, help="directory of problem_<id>.json files")
    parser.add_argument("--output", required=True, help="output JSON lines file")
    parser.add_argument(
        "--prompt-type", default="nl", choices=PROMPT_TYPES, help="nl planning or pddl translation"
    )
    parser.add_argument("--prompting", default="paper", choices=sorted(PROMPTINGS), help="prompt style label")
    parser.add_argument(
        "--plans-dir",
        default=None,
        help="plans of the training problems (<dir>/<view>/problem_<id>.json); "
        "default: solve them with the optimal planner",
    )
    parser.add_argument(
        "--modality",
        action="append",
        default=[],
        choices=MODALITIES,
        help="write the prompts of this modality too (repeatable; default: the manifest's `modalities`)",
    )
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)

    problems = load_problems(args.problem_path)
    manifest = Path(args.problem_path) / "manifest.json"
    listed = (
        json.loads(manifest.read_text(encoding="utf-8")).get("modalities") if manifest.is_file() else None
    )
    modalities = modalities_of(args.modality or listed or "text", "--modality")

    def example_plan(problem, view):
        if args.plans_dir:
            return training_plan(args.plans_dir, args.view, problem.id, view.items)
        return optimal_plan(view.init_board, view.goal)

    records = prompt_records(problems, args.view, args.prompt_type, args.prompting, example_plan, modalities)
    if not records:
        raise DataError(
            f"{args.problem_path}: no test problems (`test: true`), so no prompts: "
            "add test entries to the set's spec and generate it again"
        )
    if any(shows_pictures(m) for m in modalities):  # each drawn once: the store skips what is there
        draw_pictures(problems, args.view, images_dir(args.output))
    count = write_jsonl(args.output, records)
    log.info(
        "wrote %s %s prompts (view %s, prompting %s) to %s",
        f"{count:,}",
        args.prompt_type,
        args.view,
        args.prompting,
        args.output,
    )
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
