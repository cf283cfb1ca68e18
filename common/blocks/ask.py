"""The blocks suite's run entry points: ``plan`` (a model plans each test problem: what
``scripts/lm_plan.py`` runs), ``translate`` (a model translates each problem to PDDL facts for
the planner: ``scripts/codex_translate.py``) and ``ask_set``, both on one set (``Suite.ask``: how
the model template runs a model on a blocks set, in this process). The protocols, items and
results paths are ``run``'s."""

import argparse
import contextlib
import functools
import logging
from collections.abc import Callable
from typing import Any

from common import cli, suites
from common.blocks import run
from common.blocks.baselines import BASELINES
from common.models import exit_code, models_of
from common.suite import SetRef

log = logging.getLogger(__name__)


def ask_set(ref: SetRef, argv: list[str]) -> int:
    """Return the highest exit code of planning and then translating the set ``ref`` with the model
    and options ``argv`` names (``--model M --seed N ...``, as the scripts take them after the set)."""
    return cli.run_entry_points([plan, translate], ["-t", str(ref.data), *argv])


def plan(argv: list[str] | None = None, doc: str | None = None) -> int:
    """Ask a model to plan every test problem of a set (every view), as the command line ``argv``
    says (``doc``: the help's description); return the exit code (``exit_code``)."""
    _, args = _parsed(argv, doc)
    return _ask_each_model(args, "nl", run.plan_record)


def translate(argv: list[str] | None = None, doc: str | None = None) -> int:
    """Ask a model to translate every test problem of a set to PDDL facts, which the planner plans
    from, as the command line ``argv`` says (``doc``: the help's description); return the exit
    code (``exit_code``)."""
    parser, args = _parsed(argv, doc, _add_translate_options)
    if args.feedback < 0:
        parser.error("--feedback must be 0 or more")
    note = "objects come from the true problem (the paper's protocol, flagged in every row)"
    answer = functools.partial(run.translation_record, objects=args.objects, feedback=args.feedback)
    extras = {"objects": args.objects, "feedback": args.feedback}
    return _ask_each_model(args, "pddl", answer, note if args.objects == "true" else "", **extras)


def _ask_each_model(
    args: argparse.Namespace, task: str, answer: Callable[..., Any], note: str = "", **extras: Any
) -> int:
    """Ask each model ``args`` names (``--model`` or ``--baselines``) the set's problems of ``task``
    ("nl" plans, "pddl" facts) with the protocol ``answer`` (``run.ask``; ``extras`` label the runs),
    logging ``note`` once the set and its prompts are found; return the exit code of their summaries."""
    ref = suites.require_built(
        suites.resolve_set(args.testset, suite="blocks", results_root=args.results_dir)
    )
    files = run.prompt_files(ref.data, task, args.prompting, args.view)
    if note:
        log.info("%s", note)
    modalities = run.set_modalities(ref.data, args.modality)
    asked = run.load_run_items(files, args.problem_path, task, args.limit, modalities)  # once for all
    summaries = []
    for model in models_of(args, BASELINES, task=task, overrides={"stop": run.STOPS[task]}):
        with contextlib.closing(model):
            summaries += run.ask(model, ref, asked, args, task, answer, **extras)
    return exit_code(summaries, "problems")


def _add_translate_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--objects`` and ``--feedback``, the translator's own options."""
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


def _parsed(
    argv: list[str] | None, doc: str | None, more: Callable[[argparse.ArgumentParser], None] | None = None
) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    """Return the parser of a blocks script (the shared model options, ``run.add_options`` and
    ``more``'s) and the options ``argv`` gives; logging is set up, usage errors exit with 2."""
    parser = cli.make_parser(doc)
    cli.add_model_options(parser, testset=run.TESTSET_HELP, prompting="paper")
    run.add_options(parser)
    if more is not None:
        more(parser)
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    cli.check_model_options(parser, args)
    return parser, args
