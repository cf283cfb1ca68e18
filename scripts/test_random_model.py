"""A model in one function, ``answer``: the template for testing a new model on every suite.

Copy it under a new name (``test_<name>_model.py``: the model is called ``<name>``, so a copy
never writes into another model's results) and replace ``answer`` with a call to your model.
The copy is then a model for every script and make target, through each suite's own protocol
(WorldSense and canvas questions, blocks plans and PDDL facts, Already Said That conversations):

$ python scripts/lm_plan.py -t cogsci_problems --model scripts/test_random_model.py --results-dir /tmp/try

and ``make all MODEL=scripts/test_<name>_model.py LIMIT=N`` runs it on every suite's default sets.

Run as a script, it answers any set of any suite (-t as every script takes it). A set in the
trial format (common/trials: WorldSense, canvas) it answers directly, as the WorldSense release's
template does:
results go to <prompting>___<model>___results.jsonl in the set's results directory, one flushed
line per trial; re-running resumes where an interrupted run stopped. Any other set it answers
through its suite's run entry point (``Suite.ask``, in this process: blocks plans and PDDL facts
as lm_plan.py and codex_translate.py ask them; Already Said That conversations as
already_said_that.py plays them), with the options those scripts take after the set.

$ python scripts/test_random_model.py -t worldsense/test_set
$ python scripts/test_random_model.py -t worldsense/test_set --seed=3 --modelname=random3
$ python scripts/test_random_model.py -t blocks/cogsci_problems --limit 5 --results-dir /tmp/try
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import logging
import random
import sys
from pathlib import Path
from typing import Any

from common import cli, suites
from common.models.images import text_of
from common.results import ResultsWriter, results_filename
from common.trials.data import is_trial_set, load_testset

log = logging.getLogger("test_random_model")
MODELNAME = Path(__file__).stem.removeprefix("test_").removesuffix("_model")  # test_random_model.py: random
VISION = False  # True: also asked the sets shown as pictures (a message's content is then a list of parts)


def answer(messages: list[dict[str, str]], item: dict[str, Any], rng: random.Random) -> str:
    """The "model": return the reply to the conversation ``messages`` (``{"role", "content"}``
    dicts; the last one is the question; a message showing pictures has a list of OpenAI content
    parts as its content, ``text`` and ``image_url`` with a base64 PNG data URL). ``item`` is what
    the suite asks about (WorldSense and canvas: ``expectedresp``, the allowed answers; Already
    Said That: ``options`` of a distractor question), ``rng`` a generator seeded per item. This
    one ignores the question and picks an allowed answer at random, or else a word of the
    question."""
    options = item.get("expectedresp") or item.get("options")
    if options:
        return rng.choice(list(options))
    words = text_of(messages[-1]).split()  # a message showing pictures is a list of parts
    return rng.choice(words) if words else ""


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    cli.add_set_option(parser)
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    parser.add_argument("--prompting", default="basic", help="prompting label for the results file name")
    parser.add_argument(
        "--modelname",
        default=MODELNAME,
        help="model label for the results file name (default: from the script's name)",
    )
    args, rest = parser.parse_known_args(argv)
    cli.setup_logging(args.loglevel)

    ref = suites.resolve_set(args.testset)
    if not is_trial_set(suites.require_built(ref).data):  # blocks plans, conversations: its suite's way
        return suites.get(ref.suite).part("ask")(ref, ["--model", __file__, "--seed", str(args.seed), *rest])
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    out_path = ref.results / results_filename(args.prompting, args.modelname)
    written = 0
    with ResultsWriter(out_path) as results:  # first: a second run on this file is refused at once
        trials = load_testset(ref.data)
        log.info("%s: %s trials; writing %s", args.testset, f"{len(trials):,}", out_path)
        rows = trials[["Key", "text", "expectedresp"]].itertuples(index=False)
        for key, text, options in cli.progress(rows, total=len(trials), desc="random model", unit="trial"):
            if results.has(key):
                continue  # answered by an earlier, interrupted run
            rng = random.Random(f"{args.seed}:{key}")  # per-trial seed: resuming gives the same answers
            reply = answer([{"role": "user", "content": text}], {"Key": key, "expectedresp": options}, rng)
            written += results.append({"Key": int(key), "resp": reply})
    log.info("wrote %s new answers (%s were already there)", f"{written:,}", f"{len(trials) - written:,}")
    if not written and len(trials):  # this script's own file: a rerun; a name given by hand: maybe a mistake
        log.log(
            logging.INFO if args.modelname == MODELNAME else logging.WARNING,
            "every trial is already answered in %s: nothing was asked. A new model needs its own "
            "--modelname (or a copy of this script under another name)",
            out_path,
        )
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
