"""The run entry point of the suites whose sets are trials (``Suite.ask``): ``main`` asks a model
every trial of a set with its suite's protocol (``common/<suite>/run.py``: the trials protocol,
``common.trials.protocol``), in every modality the set has (what ``scripts/ask_model.py`` runs);
``ask_set`` runs it on one set, in this process (how the model template asks a set)."""

import contextlib
import functools
import logging

from common import cli, suites
from common.errors import UserError
from common.models import exit_code, models_of, run_items
from common.models.estimate import estimate_run, estimate_text
from common.models.resolve import promptings_of
from common.models.vision import modalities_to_ask
from common.pictures.modality import MODALITIES, TEXT, label
from common.results import results_filename
from common.suite import SetRef
from common.trials.protocol import prompted

log = logging.getLogger("ask_model")
ENTRY = f"{__name__}:ask_set"  # the declaration (``Suite.ask``) of a suite whose sets this asks


def ask_set(ref: SetRef, argv: list[str]) -> int:
    """Return the exit code of asking the set ``ref`` with the model and options ``argv`` names
    (``--model M --seed N ...``, as ``scripts/ask_model.py`` takes them after the set)."""
    return cli.run_entry_points([main], ["-t", str(ref.data), *argv])


def _testset_help() -> str:
    """Return the help of -t: the suites whose sets this script asks (one question per trial)."""
    names = [suite.name for suite in suites.all_suites() if suite.ask == ENTRY]
    return f"a set of {' or '.join(names)}: its name, <suite>/<set>, or its directory"


def main(argv: list[str] | None = None, doc: str | None = None) -> int:
    """Ask a model every trial of a set, as the command line ``argv`` says (``doc``: the help's
    description); return the exit code (``exit_code``: 0, or what went wrong)."""
    parser = cli.make_parser(doc)
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
    if suite.ask != ENTRY:
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
