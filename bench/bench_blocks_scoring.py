"""Time scoring and analysing the blocks sets from the results database, against an anchor checkout.

The anchor is a checkout of the project before the results database was scored once per file
(e.g. `git worktree add /tmp/anchor cccdced`) holding the same data/blocks and results/blocks as
this one (those of `make all`). Side by side, each step a fresh process per run, the CPU time it
takes (user + system of the child processes), median of --runs with its spread (min - max), and
the load average of the machine before and after:

- scoring: every results file of the default blocks sets scored into an empty results database
  (scripts/score_results.py), against the anchor's blocks share of the database
  (scripts/build_database.py --suite blocks, which scores every file again);
- analysis: the section of each default blocks set from its scored rows (the database up to
  date, as after make's scoring step), against the anchor's analysis (which scores every file of
  the set again, and make ran it twice per set: report.txt, then the report's section);
- baselines: lm_plan.py and codex_translate.py --baselines on each set (into a scratch
  directory), against the anchor's (which also re-scored each file it wrote, for a summary make
  threw away, and loaded the set's problems once per model and view).

$ python bench/bench_blocks_scoring.py --anchor /tmp/anchor
$ python bench/bench_blocks_scoring.py --anchor /tmp/anchor --runs 3
"""

try:  # first: bench/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside bench/: the installed package serves
    pass

import os
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from common import cli, paths

SETS = ("cogsci_problems", "scaling")  # the default blocks sets (make all)
Command = tuple[Path, list[str]]  # (checkout, arguments of its Python)


def cpu_seconds(commands: list[Command]) -> float:
    """Return the CPU time (user + system) the commands take, each run to its end in turn."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for checkout, arguments in commands:
        done = subprocess.run(
            [sys.executable, *arguments],
            cwd=checkout,
            capture_output=True,
            text=True,
            env={**os.environ, "LOGLEVEL": "WARNING"},
        )
        if done.returncode:
            raise SystemExit(f"{checkout}: {' '.join(arguments)} failed:\n{done.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def steps(
    anchor: Path, scratch: Path
) -> dict[str, tuple[Callable[[], list[Command]], Callable[[], list[Command]]]]:
    """Return each step's (commands of this checkout, commands of the anchor), made afresh per run
    (a run's scratch files are removed first)."""
    here, db = paths.ROOT, scratch / "results.sqlite"
    out = ["--quiet", "--out", str(scratch / "report.txt"), "--figures", str(scratch / "figures")]

    def scoring() -> list[Command]:
        db.unlink(missing_ok=True)
        return [
            (
                here,
                [
                    "scripts/score_results.py",
                    *(a for s in SETS for a in ("-t", f"blocks/{s}")),
                    "--database",
                    str(db),
                ],
            )
        ]

    def anchor_scoring() -> list[Command]:
        return [
            (
                anchor,
                ["scripts/build_database.py", "--suite", "blocks", "--out", str(scratch / "anchor.sqlite")],
            )
        ]

    def analysis() -> list[Command]:
        return [
            (here, ["scripts/analyse_results.py", "-t", f"blocks/{s}", *out, "--database", str(db)])
            for s in SETS
        ]

    def anchor_analysis() -> list[Command]:
        return [(anchor, ["scripts/analyse_results.py", f"results/blocks/{s}", *out]) for s in SETS]

    def baselines(checkout: Path) -> Callable[[], list[Command]]:
        def commands() -> list[Command]:
            target = scratch / f"baselines-{checkout.name}"
            subprocess.run(["rm", "-rf", str(target)], check=True)
            return [
                (
                    checkout,
                    [
                        f"scripts/{script}",
                        "-t",
                        f"data/blocks/{s}",
                        "--baselines",
                        "--results-dir",
                        str(target),
                    ],
                )
                for s in SETS
                for script in ("lm_plan.py", "codex_translate.py")
            ]

        return commands

    return {
        "scoring": (scoring, anchor_scoring),
        "analysis": (analysis, anchor_analysis),
        "baselines": (baselines(here), baselines(anchor)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument(
        "--anchor", type=Path, required=True, help="a checkout of the project before this change"
    )
    parser.add_argument("--runs", type=int, default=5, help="runs to take the median of")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as scratch:
        table = steps(args.anchor.resolve(), Path(scratch))
        cpu_seconds(table["scoring"][0]())  # the analysis reads the database the scoring step fills
        for name, (mine, theirs) in table.items():
            new = [cpu_seconds(mine()) for _ in range(args.runs)]
            old = [cpu_seconds(theirs()) for _ in range(args.runs)]
            ratio = statistics.median(new) / statistics.median(old)
            print(
                f"{name:<10} new {statistics.median(new):6.2f} s CPU [{min(new):.2f}-{max(new):.2f}]   "
                f"anchor {statistics.median(old):6.2f} s [{min(old):.2f}-{max(old):.2f}]   ratio {ratio:.2f}"
            )
    after = os.getloadavg()
    print(
        f"{args.runs} runs each; load average {load[0]:.1f} before, {after[0]:.1f} after "
        f"({os.cpu_count()} cores)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
