"""Ask a model (built-in or any OpenAI-compatible server) every trial of a WorldSense or canvas set.

Follows the WorldSense protocol: ask `text`, extract the answer, re-prompt with "Only respond
with one of these options: ..." when it is not in `expectedresp`, record "" when it still is
not. Answers are appended to <prompting>___<modelname>___results.jsonl as they come
(re-running resumes), in the test set's results/ for WorldSense (the release's layout) and in
results/canvas/<set>/ for a canvas set; each run is summarised in <...>___results.meta.json.
The question text is sent as is, or with --prompting cot followed by a request to reason step by
step first (common/trials/protocol.py: COT_PROMPT); any other --prompting only labels the results
file. Without --prompting, a model config's `promptings` for the suite are asked in turn (the
shipped engine configs: basic and cot), else basic. A trial the server
refuses for itself (too long for the model's context, a content filter) is recorded as refused
and the run goes on; re-running skips it unless --retry-errors. Built-in models: random and
oracle, and on canvas sets every shortcut baseline (--baselines asks them all, each afresh).
A canvas set whose config has picture modalities (`modality: [text, image, text+image]`) is
asked in each (--modality picks), the same trials (Keys) into <prompting>-image___... and so
on; a model must say `vision: true` in its config to be shown pictures (the shortcut baselines,
rules on the prompt's words, answer the text modality only). --dry-run prints what each run
would cost (requests, text and picture tokens, dollars) and asks nothing.

$ python scripts/ask_model.py -t worldsense/test_set --model oracle --limit 100 --results-dir /tmp/try
$ OPENAI_API_KEY=... python scripts/ask_model.py -t worldsense/test_set --model openai-gpt-4o-mini
$ python scripts/ask_model.py -t worldsense/test_set --model configs/models/vllm.yaml \\
      --set concurrency=32 --set max_tokens=8 --no-cache
$ python scripts/ask_model.py -t canvas/standard --baselines
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
from common.errors import UserError
from common.models import exit_code, models_of, run_items
from common.models.estimate import estimate_run, estimate_text
from common.models.resolve import promptings_of
from common.models.vision import modalities_to_ask
from common.pictures.modality import MODALITIES, TEXT, label
from common.results import results_filename
from common.trials.protocol import prompted

log = logging.getLogger("ask_model")
SCRIPT = "scripts/ask_model.py"


def _testset_help() -> str:
    """Return the help of -t: the suites whose sets this script asks (one question per trial)."""
    names = [suite.name for suite in suites.all_suites() if SCRIPT in suite.run_scripts]
    return f"a set of {' or '.join(names)}: its name, <suite>/<set>, or its directory"


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    cli.add_model_options(parser, testset=_testset_help(), prompting="basic")
    parser.add_argument(
        "--reprompts", type=int, default=1, help="re-prompts when the answer is not an option"
    )
    cli.add_modality_option(parser)
    cli.add_dry_run_option(parser)
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    cli.check_model_options(parser, args)
    if args.reprompts < 0:
        parser.error("--reprompts must be 0 or more")

    ref = suites.require_built(suites.resolve_set(args.testset, results_root=args.results_dir))
    suite = suites.get(ref.suite)
    if SCRIPT not in suite.run_scripts:
        raise UserError(f"{ref.key} is a {suite.title} set: ask a model with {', '.join(suite.run_scripts)}")
    run = suite.part("protocol")
    modalities = set_modalities(run, ref, args.modality)
    answer = functools.partial(run.answer, reprompts=args.reprompts)
    summaries = []
    promptings = promptings_of(args, suite.part("baselines"), ref.suite)
    for model in models_of(args, suite.part("baselines")):
        with contextlib.closing(model):
            asks = modalities_to_ask(model, modalities, args.modality)
            for asked_as, modality in [
                (p, m) for p in promptings for m in asks if m in getattr(model, "modalities", MODALITIES)
            ]:
                prompting = label(asked_as, modality)
                try:
                    out_path = ref.results / results_filename(prompting, model.name)
                except ValueError as exc:
                    parser.error(str(exc))
                labels = {"prompting": prompting, "modelname": model.name, "reprompts": args.reprompts}
                asked = map(
                    functools.partial(prompted, prompting=asked_as),
                    run.items(ref.data, args.limit, **({"modality": modality} if modality != TEXT else {})),
                )
                if args.dry_run:  # what it would cost; nothing asked, written or cached
                    price = (model.settings() or {}).get("price_per_1k_tokens")
                    estimate = estimate_run(model, list(asked), answer)
                    print(estimate_text(out_path.name, estimate, price, args.batch))
                    continue
                summary = run_items(
                    model,
                    asked,
                    out_path,
                    answer=answer,
                    labels={**labels, **({"modality": modality} if modality != TEXT else {})},
                    **cli.runner_options(args),
                )
                summaries.append(summary)
                log.info("%s", summary.describe(out_path))
    return exit_code(summaries, "trials")


def set_modalities(run, ref, asked_for: list[str]) -> list[str]:
    """Return the modalities to ask of the set: ``asked_for`` (--modality), else every one it was
    generated in (its protocol's ``modalities``; text for a suite without). Raises UserError for a
    modality the set does not have."""
    available = run.modalities(ref.data) if hasattr(run, "modalities") else [TEXT]
    missing = [m for m in asked_for if m not in available]
    if missing:
        raise UserError(
            f"{ref.key} has no {missing[0]!r} prompts (its modalities: {', '.join(available)}): add it to "
            "the set config's `modality` and generate the set again"
        )
    return list(dict.fromkeys(asked_for)) or available


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
