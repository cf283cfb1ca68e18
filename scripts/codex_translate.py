"""The LLM + planner method: a model translates each problem to PDDL facts, our planner plans.

For every test problem of a blocks-world set (its prompts
<set>/prompts/<prompting>___pddl___<view>.jsonl, every view or --view) the model is asked twice:
the facts of the initial state, then of the goal (completions cut at the next ";", also the stop
sequence sent to HTTP models). The facts are read, the optimal planner plans from them, and the
plan is checked on the TRUE problem. No plan, or facts that cannot be read, is a failure whose
reason is recorded. Translation accuracy (precision and recall of the facts) is recorded apart
from plan success. As in the paper, the fact reader is given the true problem's objects (flagged
in every row); --objects described gives it only the objects the English names. With
--feedback N, an error of the fact reader or the planner (an undeclared object, facts that
contradict each other, no plan) goes back to the model on the same conversation and the part at
fault is asked again, up to N rounds; every round's answer and error is recorded, and the
analysis gives the success after each round. A chat endpoint (`api: chat`) gets the few shots as
turns (label <prompting>-turns); a completion endpoint the paper's prompt as is.
Rows go to results/blocks/<set>/pddl___<view>/<prompting>___<modelname>___results.jsonl.
Built-in models: rules (reads the English templates perfectly: an upper bound; --baselines asks
it), and by name oracle-facts (writes the true problem's facts) and random-facts (facts of a
random board of the same items: chance).
A refused request (e.g. longer than the context) is recorded, scored as a failure and counted in
a column of its own (--retry-errors asks it again). The analysis (scripts/analyse_results.py -t
<set>) scores the set's results files from their raw answers and prints the tables.

$ python scripts/codex_translate.py -t cogsci_problems --model rules --view all
$ python scripts/codex_translate.py -t cogsci_problems --model configs/models/llamacpp.yaml --feedback 2 \\
      --view one --limit 5
$ OPENAI_API_KEY=... python scripts/codex_translate.py -t scaling --model openai-gpt-4o-mini \\
      --objects described --view all --limit 20
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import contextlib
import functools
import logging
import sys

from common import cli, suites
from common.blocks import run
from common.blocks.baselines import BASELINES
from common.models import exit_code, models_of

log = logging.getLogger("codex_translate")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    cli.add_model_options(parser, testset=run.TESTSET_HELP, prompting="paper")
    run.add_options(parser)
    parser.add_argument(
        "--objects",
        choices=["true", "described"],
        default="true",
        help="objects given to the fact reader: the true problem's (the paper's protocol) "
        "or those the English description names",
    )
    parser.add_argument(
        "--feedback",
        type=int,
        default=0,
        metavar="N",
        help="return the fact reader's or planner's error to the model and ask again, "
        "up to N rounds (results labelled <prompting>-feedback<N>)",
    )
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    cli.check_model_options(parser, args)
    if args.feedback < 0:
        parser.error("--feedback must be 0 or more")

    ref = suites.require_built(
        suites.resolve_set(args.testset, suite="blocks", results_root=args.results_dir)
    )
    files = run.prompt_files(ref.data, "pddl", args.prompting, args.view)
    if args.objects == "true":
        log.info("objects come from the true problem (the paper's protocol, flagged in every row)")
    answer = functools.partial(run.translation_record, objects=args.objects, feedback=args.feedback)
    modalities = run.set_modalities(ref.data, args.modality)
    asked = run.load_run_items(files, args.problem_path, "pddl", args.limit, modalities)  # once for all
    summaries = []
    for model in models_of(args, BASELINES, task="pddl", overrides={"stop": run.STOPS["pddl"]}):
        with contextlib.closing(model):
            summaries += run.ask(
                model, ref, asked, args, "pddl", answer, objects=args.objects, feedback=args.feedback
            )
    return exit_code(summaries, "problems")


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
