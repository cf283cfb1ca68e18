"""Play the Already Said That conversations of a set with a model: does it remember the words?

One conversation per sample, up to 100 turns (see common/already_said_that/protocol.py): the
model must say whether each "MAIN TASK - <word>" was shown before, answering unrelated
questions in between, as [answer: ...]. A wrong or malformed main-task answer ends the
conversation. Conversations run concurrently (turns in order), each turn through the response
cache; a killed run resumes (finished conversations are skipped, turns already answered come
from the cache). A request the server refuses (context too long) ends its conversation as a
context error, counted apart; --retry-errors plays those again.

Writes results/already_said_that/<set>/direct___<model>___results.jsonl (one line per
conversation), ...___turns.jsonl (every turn), ...___summary.json (metrics, tokens, cost) and
the runner's ...___results.meta.json. Models: random, oracle, human (you type the answers), or
any config of configs/models/.

$ python scripts/already_said_that.py --variant which_is_heavier --model oracle
$ python scripts/already_said_that.py --set data/already_said_that/mixed --model human --limit 1
$ python scripts/already_said_that.py --variant distractorless --model llamacpp --limit 5 --dry-run
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import logging
import sys
from pathlib import Path

from common import cli
from common.already_said_that.config import VARIANTS
from common.already_said_that.run import (
    RESULTS_DIR,
    ConversationRunner,
    conversation_items,
    estimate_text,
    load_set,
    resolve_set,
    run_paths,
    write_summary,
)
from common.already_said_that.solvers import SOLVERS
from common.config import parse_overrides
from common.models import BUILTINS, Counters, resolve_model, run_items
from common.models.config import load_model_config
from common.models.resolve import CACHE_FILE, config_path

log = logging.getLogger("already_said_that")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--variant",
        choices=VARIANTS,
        help="play the shipped set of this variant (data/already_said_that/<variant>)",
    )
    which.add_argument(
        "--set",
        dest="set_name",
        metavar="SET",
        help="or any set: a set directory, or a set name in data/already_said_that/",
    )
    parser.add_argument(
        "--model",
        required=True,
        help="random, oracle, human, a config name in configs/models/, or a .yaml path",
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N conversations")
    parser.add_argument(
        "--dry-run", action="store_true", help="print the requests and tokens a run may take; ask nothing"
    )
    parser.add_argument(
        "--retry-errors", action="store_true", help="play again the conversations the server refused"
    )
    parser.add_argument("--concurrency", type=int, help="conversations played at once (default: the model's)")
    parser.add_argument(
        "--override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a model config setting (repeatable), e.g. --override max_tokens=16",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the random solver (the word schedule is the set's)"
    )
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR, help="where results/<set>/ go")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the response cache")
    parser.add_argument("--cache-file", type=Path, default=CACHE_FILE, help="SQLite response cache")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    if (args.limit is not None and args.limit < 0) or (args.concurrency is not None and args.concurrency < 1):
        parser.error("--limit must be 0 or more, --concurrency 1 or more")

    data = load_set(resolve_set(args.set_name, args.variant))
    builtins = {**BUILTINS, **SOLVERS}
    overrides = parse_overrides(args.override)
    if args.concurrency and args.model not in builtins:
        overrides["concurrency"] = args.concurrency
    if args.dry_run:
        config = (
            None
            if args.model in builtins
            else load_model_config(config_path(args.model, builtins), overrides)
        )
        price = config.price_per_1k_tokens if config else None
        print(estimate_text(data, args.limit, vars(price) if price else None))
        return 0

    counters = Counters()
    model = resolve_model(
        args.model,
        overrides=overrides,
        seed=args.seed,
        use_cache=not args.no_cache,
        cache_file=args.cache_file,
        counters=counters,
        builtins=builtins,
    )
    if args.concurrency and args.model in builtins and args.model != "human":
        model.concurrency = args.concurrency
    files = run_paths(data.name, model.name, args.results_dir)
    player = ConversationRunner(data, files["turns"], model.name)
    labels = {
        "prompting": "direct",
        "modelname": model.name,
        "set": data.name,
        "variant": data.config.get("variant"),
        "schedule_seed": data.config.get("seed"),
    }
    try:
        summary = run_items(
            model,
            conversation_items(data, args.limit),
            files["results"],
            answer=player.answer,
            counters=counters,
            show_progress=args.model != "human",
            retry_refused=args.retry_errors,
            labels=labels,
        )
    finally:
        settings = model.settings()
        model.close()
    log.info("%s", summary.describe(files["results"], counters))
    price = settings.get("price_per_1k_tokens")
    log.info("%s", write_summary(files, data, model.name, summary, counters, price))
    if summary.failed:
        log.error("%s conversations failed after retries; run the same command again", summary.failed)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
