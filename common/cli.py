"""Small helpers every script uses: the parser and logging set-up, the user-error-to-exit-code-2
wrapper, progress bars (``common.progress``), and the one set of options of every script that asks
a model."""

import argparse
import logging
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from common import paths
from common.errors import UserError
from common.progress import progress  # noqa: F401 (the scripts' progress bars: cli.progress)

LOGLEVELS = ["DEBUG", "INFO", "WARNING", "ERROR"]

log = logging.getLogger(__name__)


def make_parser(doc: str | None) -> argparse.ArgumentParser:
    """Return an ArgumentParser showing the script's docstring and defaults, with --loglevel."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=_HelpFormatter)
    parser.add_argument(
        "--loglevel",
        default=_default_loglevel(),
        choices=LOGLEVELS,
        help="how much to log on stderr (default: $LOGLEVEL, else INFO; make sets WARNING unless V=1)",
    )
    return parser


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keep the docstring's line breaks (its example commands) and show each useful default once.

    No default is shown for a required option, a flag, an option whose default is None or
    empty, or one whose help already says its default.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            action.required
            or "default" in text
            or "%(default)" in text
            or default is None
            or default is argparse.SUPPRESS
            or isinstance(default, bool)
            or (isinstance(default, list | str) and not default)
        ):
            return text
        is_path = isinstance(default, Path) or (isinstance(default, str) and os.path.isabs(default))
        shown = paths.shown(default) if is_path else "%(default)s"
        return f"{text} (default: {shown})"


def _default_loglevel() -> str:
    """Return $LOGLEVEL when it names a level (make sets it to WARNING for quiet runs), else INFO."""
    level = os.environ.get("LOGLEVEL", "").upper()
    return level if level in LOGLEVELS else "INFO"


def setup_logging(level: str) -> None:
    """Configure root logging to stderr at ``level`` with a short format (urllib3's retry
    warnings only at DEBUG: offline they were pages of noise before the one clear error)."""
    logging.basicConfig(level=getattr(logging, level), format="%(levelname)s %(message)s")
    if level != "DEBUG":  # urllib3's own "Retrying (Retry(...))" lines: our messages say what failed
        logging.getLogger("urllib3").setLevel(logging.ERROR)


def run_main(main: Callable[[list[str] | None], int], argv: list[str] | None = None) -> int:
    """Run a script's ``main`` and return its exit code.

    A ``UserError`` or a missing file is reported as ``error: <message>`` on stderr with exit
    code 2 (argparse already uses 2 for bad arguments); Ctrl-C exits 130 without a traceback,
    and so does output piped into a reader that stops early (``| head``: exit 141, as a shell
    reports SIGPIPE). Anything else is a bug and keeps its traceback.
    """
    try:
        return main(argv)
    except (UserError, FileNotFoundError, IsADirectoryError) as exc:
        print(f"error: {_describe(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # nothing more can be written: silence the flush at exit too
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _describe(exc: Exception) -> str:
    """Return one line for ``exc``; OSErrors name their file."""
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.strerror}: {exc.filename}"
    return str(exc)


def run_entry_points(entries: list[Callable[[list[str] | None], int]], argv: list[str]) -> int:
    """Return the highest exit code of running each of ``entries`` (a script's work: command-line
    arguments in, exit code out) on ``argv``, one after the other in this process, each as its
    script would run (``run_main``: a user error is exit code 2; a usage error's exit is its code,
    and the next one still runs). How a suite's run entry point (``Suite.ask``) asks a set in every
    way the suite asks (blocks: plans, then PDDL facts)."""
    code = 0
    for entry in entries:
        try:
            code = max(code, run_main(entry, list(argv)))
        except SystemExit as exc:  # argparse's usage error (exit 2) or --help (0)
            code = max(code, exc.code if isinstance(exc.code, int) else 1)
    return code


def add_set_option(parser: argparse.ArgumentParser, default: str | None = None, help: str = "") -> None:
    """Add ``-t/--testset SET``, the one way every script names a set: a set name, ``<suite>/<set>``,
    or a path (``common.suites.resolve_set``); required when there is no ``default``."""
    parser.add_argument(
        "-t",
        "--testset",
        required=default is None,
        default=default,
        metavar="SET",
        help=help or "the set: a set name, <suite>/<set>, or its directory or config",
    )


def add_model_options(
    parser: argparse.ArgumentParser,
    *,
    testset: str,
    prompting: str | None,
    promptings: Iterable[str] | None = None,
) -> None:
    """Add the options every script that asks a model takes, with the same names and meanings:
    ``-t/--testset SET`` (``testset`` says what a set is for this suite), ``--model`` or
    ``--baselines``, ``--prompting`` (when the script lets the label be chosen, default
    ``prompting``; limited to ``promptings`` when the label also picks how the model is asked),
    ``--set KEY=VALUE``, ``--limit``, ``--seed``, ``--retry-errors``, ``--retry-truncated``,
    ``--results-dir``, ``--batch``, ``--wait``, ``--batch-output``, ``--no-cache``,
    ``--cache-file``. ``check_model_options`` validates them
    after parsing."""
    from common.models.resolve import CACHE_FILE  # the models layer is loaded only by scripts that ask

    add_set_option(parser, help=testset)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--model",
        help="a built-in of the suite, a config name in configs/models/, a .yaml path, or a model file .py",
    )
    which.add_argument(
        "--baselines",
        action="store_true",
        help="ask every built-in baseline of the suite in turn, each from scratch (what make runs)",
    )
    if prompting is not None:
        kind = {"help": "prompting label of the results file name"}
        if promptings is not None:
            kind = {"choices": list(promptings), "help": "the results file's label and how to ask"}
        kind["help"] += f" (default: {prompting}, or the model config's promptings for the suite)"
        parser.add_argument("--prompting", default=None, **kind)  # None: not given (check_model_options)
        parser.set_defaults(default_prompting=prompting)
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a setting of the model config (repeatable), e.g. --set max_tokens=16",
    )
    parser.add_argument(
        "--limit", type=int, default=None, metavar="N", help="ask only the first N items of the set"
    )
    parser.add_argument(
        "--seed", type=int, default=0, metavar="N", help="seed of the built-in models that draw at random"
    )
    _add_retry_options(parser)
    parser.add_argument(
        "--results-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="results go to DIR/<set>/ (default: results/<suite>/<set>/, or <set>/results/ for a suite "
        "that keeps them beside its data)",
    )
    _add_batch_options(parser)
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the response cache")
    parser.add_argument(
        "--cache-file", type=Path, default=CACHE_FILE, metavar="FILE", help="SQLite response cache"
    )


def _add_retry_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--retry-errors`` and ``--retry-truncated`` (records set aside to be asked again)."""
    parser.add_argument(
        "--retry-errors",
        action="store_true",
        help="ask again the items the server refused (e.g. after raising the context size)",
    )
    parser.add_argument(
        "--retry-truncated",
        action="store_true",
        help="ask again the items whose reply was cut at the token limit (e.g. after raising max_tokens)",
    )


def _add_batch_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--batch``, ``--wait`` and ``--batch-output`` (batch mode: ``common.models.batch``)."""
    parser.add_argument(
        "--batch",
        action="store_true",
        help="send what is still to ask as a batch (OpenAI batch JSONL): submitted to the server's Batch "
        "API, or written for an offline engine; a rerun collects it and goes on (docs/models.md)",
    )
    parser.add_argument(
        "--wait",
        action="store_true",
        help="with --batch: wait for each batch (progress bar) and go on to the end",
    )
    parser.add_argument(
        "--batch-output",
        type=Path,
        default=None,
        metavar="FILE",
        help="with --batch: the output file an offline engine wrote for the batch in hand "
        "(default: beside its input)",
    )


def add_modality_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--modality`` (repeatable): ask a set that shows its scenes as pictures in these
    modalities only (``common.pictures.modality``; default: every one its config names)."""
    from common.pictures.modality import MODALITIES

    parser.add_argument(
        "--modality",
        action="append",
        default=[],
        choices=MODALITIES,
        help="ask the set in this modality only (repeatable; default: every modality of the set's config)",
    )


def add_dry_run_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--dry-run``: print the requests, tokens (pictures included) and cost a run would take,
    and ask nothing (``common.models.estimate``)."""
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the requests, input tokens (pictures by OpenAI's rule or the config's image_tokens), "
        "the most output and the cost a run would take; ask nothing",
    )


def runner_options(args: argparse.Namespace) -> dict[str, Any]:
    """Return the keyword arguments of ``run_items`` that the shared options set: refused items
    asked again (``--retry-errors``), items cut at the token limit asked again
    (``--retry-truncated``), built-in baselines run afresh (``--baselines``), batch mode
    (``--batch``, ``--wait``, ``--batch-output``)."""
    from common.models.batch import BatchOptions

    return {
        "retry_refused": args.retry_errors,
        "retry_truncated": args.retry_truncated,
        "fresh": args.baselines,
        "batch": BatchOptions(wait=args.wait, output=args.batch_output) if args.batch else None,
    }


def check_model_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exit with a usage error (code 2) when ``--limit`` is negative, or the batch options do not
    go together (``--wait`` or ``--batch-output`` without ``--batch``, ``--batch`` without the cache).
    Sets ``prompting`` to the script's default when ``--prompting`` was not given
    (``prompting_given`` says whether it was: ``resolve.promptings_of``)."""
    if hasattr(args, "prompting"):  # the script's default when not given (a config may list others)
        args.prompting_given = args.prompting is not None
        args.prompting = args.prompting or args.default_prompting
    if args.limit is not None and args.limit < 0:
        parser.error("--limit must be 0 or more")
    if (args.wait or args.batch_output) and not args.batch:
        parser.error("--wait and --batch-output go with --batch")
    if args.batch and args.no_cache:
        parser.error("--batch needs the response cache (the batch output goes into it): drop --no-cache")
