"""Play the Already Said That conversations of a set with a model: does it remember the words?

One conversation per sample, up to 100 turns (see common/already_said_that/prompts.py): the
model must say whether each "MAIN TASK - <word>" was shown before, answering unrelated
questions in between, as [answer: ...]. A wrong or malformed main-task answer ends the
conversation. Conversations run concurrently (turns in order; --set concurrency=N), each turn
through the response cache; a killed run resumes (finished conversations are skipped, turns
already answered come from the cache). A request the server refuses as too long for the context
is the reply, as in the original (a violation: on a main-task turn it ends the conversation,
counted apart; --retry-errors plays those again); a content filter stops the run, as the
original's OpenAI solver did (--filtered-as-violations plays on).

--prompting picks how a model is asked, as the original eval's solvers: direct (the reply is
the answer), cot (it reasons step by step, then replies in the format; its reasoning is not
shown at later turns), hhh (a base model, api: completions, continues a transcript after
example dialogues with a helpful, honest, harmless assistant). The texts are the set's wording:
the original eval's (the original_* sets; make asat-original reads them from its pinned
wheel) or the suite's own. Model configs decode at the original's temperature 1 and
max_tokens 512, with no seed, unless they set their own (or their `suites: already_said_that:`
section does; a warning names a max_tokens too small for the set's longest gold reply).

Writes results/already_said_that/<set>/<prompting>___<model>___results.jsonl (one line per
conversation), ...___turns.jsonl (every turn), ...___summary.json (this run's requests, tokens, cost) and
the runner's ...___results.meta.json. Models: random, oracle (--baselines plays both, afresh),
human (you type the answers), or any config of configs/models/.

$ python scripts/already_said_that.py -t which_is_heavier --model oracle
$ python scripts/already_said_that.py -t mixed --model human --limit 1 --results-dir /tmp/try
$ python scripts/already_said_that.py -t distractorless --model llamacpp --limit 5 --dry-run
$ python scripts/already_said_that.py -t reverse_sort --model llamacpp --prompting cot --limit 5 --dry-run
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import argparse
import contextlib
import logging
import sys
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

log = logging.getLogger("already_said_that")
TESTSET_HELP = "an Already Said That set: data/already_said_that/<set> or its name (e.g. which_is_heavier)"


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
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


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
