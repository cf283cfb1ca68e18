"""Ask a model to plan every test problem of a blocks-world prompts file, and score its plans.

A completion endpoint gets the prompt as is (the paper's); a chat endpoint (`api: chat`) gets the
same few shots as turns (a one-line system instruction, each example as a user and an assistant
turn), and its results are labelled <prompting>-turns. The completion is cut at the stop marker
"Initially:" (also sent as the stop sequence to HTTP models unless --set stop=... says
otherwise), parsed, and checked on the true problem under the lenient (paper) and strict
rules. One row per problem and view is appended to
results/blocks/<set>/nl___<view>/<prompting>___<modelname>___results.jsonl (raw completion,
parsed plan, verdicts, lengths, gap to optimal); a rerun resumes where it stopped.
The printed summary is re-scored from the raw completions, never by asking again.
Built-in models: noop (empty plan), random (random applicable moves), oracle (optimal planner).
A request the server refuses (e.g. longer than the model's context) is recorded as refused,
scored as a failure (the same denominator for every model) and counted in a column of its own,
and not asked again unless --retry-errors.

$ python scripts/lm_plan.py --model random \\
      --prompts data/blocks/cogsci_problems/prompts/paper___nl___two.jsonl
$ python scripts/lm_plan.py --prompts data/blocks/released/prompts/paper___nl___all.jsonl \\
      --problem-path data/cogsci22_blocks/dataset/simple_stack/problems --model configs/models/vllm.yaml
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import logging
import sys

from common import cli
from common.blocks import run
from common.models import Counters, run_items

log = logging.getLogger("lm_plan")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    run.add_run_arguments(parser)
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)

    items = run.load_run_items(args, "nl")
    counters = Counters()
    model = run.resolve_run_model(args, "nl", counters)
    out_path, prompting = run.results_path(args, items, "nl", model)
    try:
        summary = run_items(
            model,
            items,
            out_path,
            answer=run.plan_record,
            counters=counters,
            retry_refused=args.retry_errors,
            labels=run.run_labels(args, prompting, model),
        )
    finally:
        model.close()

    print(run.rescore_report(out_path, items, "nl", scores_csv=args.scores), end="")
    if summary.failed:
        log.error("%d problems failed after retries; run the same command again to ask them", summary.failed)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
