"""Already Said That's run entry point: ``main`` plays a set's conversations with a model (what
``scripts/already_said_that.py`` runs), ``ask_set`` runs it on one set (``Suite.ask``: how the
model template runs a model on the suite's sets, in this process). The conversations themselves
are ``run``'s."""

import argparse
import contextlib
import logging
from pathlib import Path

from common import cli, suites
from common.already_said_that import cost, run
from common.already_said_that.baselines import BASELINES
from common.already_said_that.generate import SetData, load_set
from common.already_said_that.prompting import DECODING, PROMPTINGS
from common.already_said_that.wording import wording_of
from common.config import parse_overrides
from common.models import Model, RunSummary, exit_code, load_model_config, models_of, run_items
from common.models.resolve import config_path, promptings_of
from common.suite import SetRef

log = logging.getLogger("already_said_that")
TESTSET_HELP = "an Already Said That set: data/already_said_that/<set> or its name (e.g. which_is_heavier)"


def ask_set(ref: SetRef, argv: list[str]) -> int:
    """Return the exit code of playing the set ``ref``'s conversations with the model and options
    ``argv`` names (``--model M --seed N ...``, as ``scripts/already_said_that.py`` takes them)."""
    return cli.run_entry_points([main], ["-t", str(ref.data), *argv])


def main(argv: list[str] | None = None, doc: str | None = None) -> int:
    """Play the conversations of a set with a model, as the command line ``argv`` says (``doc``: the
    help's description); return the exit code (``exit_code``: 0, or what went wrong)."""
    parser = cli.make_parser(doc)
    cli.add_model_options(parser, testset=TESTSET_HELP, prompting=run.PROMPTING, promptings=PROMPTINGS)
    parser.add_argument(
        "--dry-run", action="store_true", help="print the requests and tokens a run may take; ask nothing"
    )
    parser.add_argument(
        "--filtered-as-violations",
        action="store_true",
        help="a content filter's refusal or withheld reply is the reply (a violation) and the game goes "
        "on, as the original's Gemini and Together solvers had it; by default it stops the run, as its "
        "OpenAI solver did",
    )
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    cli.check_model_options(parser, args)

    ref = suites.resolve_set(args.testset, suite="already_said_that", results_root=args.results_dir)
    data = load_set(suites.require_built(ref).data)
    seeds = int(data.config.get("seeds") or 1)
    if seeds > 1 and "samples" not in parse_overrides(args.set):  # the set's protocol: one draw per seed
        args.set = [f"samples={seeds}", *args.set]
    if args.dry_run:
        config = None
        if not args.baselines and args.model not in BASELINES:
            path = config_path(args.model, BASELINES)
            config = load_model_config(path, parse_overrides(args.set), DECODING, run.SUITE)
        price = vars(config.price_per_1k_tokens) if config and config.price_per_1k_tokens else None
        max_tokens = config.max_tokens if config else DECODING["max_tokens"]
        print(cost.estimate_text(data, args.limit, price, args.prompting, max_tokens, batch=args.batch))
        return 0

    summaries = []
    for prompting in promptings_of(args, BASELINES, run.SUITE, choices=PROMPTINGS):
        asked = argparse.Namespace(**{**vars(args), "prompting": prompting})
        overrides = None
        if prompting == "hhh":  # the transcript's role markers end a base model's turn
            overrides = {"stop": wording_of(data.config, data.example, data.has_distractors).stops}
        for model in models_of(asked, BASELINES, overrides=overrides, defaults=DECODING, suite=run.SUITE):
            with contextlib.closing(model):
                summaries.append(play(model, data, ref.results, asked))
    return exit_code(summaries, "conversations")


def play(model: Model, data: SetData, results: Path, args: argparse.Namespace) -> RunSummary:
    """Play the conversations of ``data`` with ``model`` as ``args`` say (the run's files in the
    set's results directory ``results``), write the run's summary, and return the runner's
    summary (UserError for a prompting the model cannot take)."""
    run.check_prompting(model, args.prompting)
    warning = cost.max_tokens_warning(data, model.settings().get("max_tokens"))  # None: a built-in
    if warning:
        log.warning("%s", warning)
    files = run.run_paths(results.name, model.name, results.parent, args.prompting)
    filtered = "violation" if args.filtered_as_violations else "stop"
    with run.ConversationRunner(data, files["turns"], model.name, args.prompting, filtered) as player:
        if not args.baselines:  # built-ins play afresh
            run.check_wording(files["results"], player.wording_name)
        labels = {
            "prompting": args.prompting,
            "modelname": model.name,
            "set": data.name,
            "variant": data.config.get("variant"),
            "schedule_seed": data.first_seed,
            "wording": player.wording_name,
        }
        summary = run_items(
            model,
            run.items(data, args.limit),
            files["results"],
            answer=player.answer,
            labels=labels,
            show_progress=model.name != "human",
            include=data.plays,
            **cli.runner_options(args),
        )
    log.info("%s", summary.describe(files["results"]))
    price = model.settings().get("price_per_1k_tokens")
    log.info("%s", cost.write_summary(files, data, model.name, summary, price))
    return summary
