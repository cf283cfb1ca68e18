"""Ask a model (built-in or any OpenAI-compatible server) every trial of a test set.

Follows the WorldSense protocol: ask `text`, extract the answer, re-prompt with "Only respond
with one of these options: ..." when it is not in `expectedresp`, record "" when it still is
not. Answers are appended to <testset>/results/<prompting>___<modelname>___results.jsonl as
they come (re-running resumes), and each run is summarised in <...>___results.meta.json.
The question text is sent as is; --prompting only labels the results file. A trial the server
refuses for itself (too long for the model's context, a content filter) is recorded as refused
and the run goes on; re-running skips it unless --retry-errors.

$ python scripts/ask_model.py -t data/worldsense/test_set --model oracle --limit 100
$ OPENAI_API_KEY=... python scripts/ask_model.py -t data/worldsense/test_set --model openai-gpt-4o-mini
$ python scripts/ask_model.py -t data/worldsense/test_set --model configs/models/vllm.yaml \\
      --set concurrency=32 --set max_tokens=8 --no-cache
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import logging
import sys
from pathlib import Path

from common import cli
from common.config import parse_overrides
from common.models import resolve_model, run_items
from common.models.base import Counters
from common.models.resolve import CACHE_FILE
from common.results import results_filename
from common.worldsense import load_testset
from common.worldsense.data import RESULTS_DIR, trials_path

log = logging.getLogger("ask_model")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument(
        "-t", "--testset", required=True, help="test set directory (holds trials.jsonl[.bz2])"
    )
    parser.add_argument(
        "--model",
        required=True,
        help="a built-in (random, oracle, ...), a config name in configs/models/, or a .yaml path",
    )
    parser.add_argument("--prompting", default="basic", help="prompting label for the results file name")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a model config setting (repeatable), e.g. --set concurrency=16",
    )
    parser.add_argument(
        "--reprompts", type=int, default=1, help="re-prompts when the answer is not an option"
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N trials of the file")
    parser.add_argument("--seed", type=int, default=0, help="seed of the built-in random model")
    parser.add_argument(
        "--retry-errors",
        action="store_true",
        help="ask again the trials the server refused (e.g. after raising the context size)",
    )
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the response cache")
    parser.add_argument("--cache-file", type=Path, default=CACHE_FILE, help="SQLite response cache")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    if args.reprompts < 0 or (args.limit is not None and args.limit < 0):
        parser.error("--reprompts and --limit must be 0 or more")

    counters = Counters()
    model = resolve_model(
        args.model,
        overrides=parse_overrides(args.set),
        seed=args.seed,
        use_cache=not args.no_cache,
        cache_file=args.cache_file,
        counters=counters,
    )
    try:
        out_path = Path(args.testset) / RESULTS_DIR / results_filename(args.prompting, model.name)
    except ValueError as exc:
        parser.error(str(exc))
    trials_path(args.testset)  # a missing set is named before anything is written

    def items():  # loaded once run_items holds the file's lock: a second run is refused at once
        trials = load_testset(args.testset)
        yield from trials[["Key", "text", "expectedresp", "goldresp"]].head(args.limit).to_dict("records")

    try:
        summary = run_items(
            model,
            items(),
            out_path,
            reprompts=args.reprompts,
            counters=counters,
            labels={"prompting": args.prompting, "modelname": model.name},
            retry_refused=args.retry_errors,
        )
    finally:
        model.close()
    log.info("%s", summary.describe(out_path, counters))
    if summary.failed:
        log.error("%s items failed after retries; run the same command again to ask them", summary.failed)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
