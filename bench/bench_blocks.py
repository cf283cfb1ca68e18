"""Benchmark the blocks-world planners and generator; pyperplan's BFS side by side as a ratio.

Targets: optimal plans for random 8-item problems well under 0.1 s each and 10 items about
1 s; a near-optimal plan for 100 items under 1 s; 10,000 generated 4-item problems with
optimal lengths in a few seconds. The paper's planner (pyperplan BFS) took about 2.7 s per
8-item problem. Figures are medians over --runs runs (pyperplan: one run per problem).

Then full goals at --sizes items: each problem's time (median of --runs runs) for the exact
full-goal method and for A* (the method before it), as median / p90 / max over the problems;
target: every 20-item problem under 1 s. A* stops after --limit expansions; the ratio is
taken on the problems it finishes, and the time it spent giving up is shown apart.

$ python bench/bench_blocks.py
$ python bench/bench_blocks.py --runs 3 --pyperplan-full 0 --sizes 16 20 --scaling-problems 30
"""

try:  # first: bench/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside bench/: the installed package serves
    pass

import argparse
import logging
import statistics
import sys
from collections.abc import Callable

from measure import load_line, spread

from bench import blocks_timing as timing
from common import cli
from common.blocks.planner import optimal_plan
from common.blocks.release import RELEASE

log = logging.getLogger("bench_blocks")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("--runs", type=int, default=5, help="runs per measure (the median is reported)")
    parser.add_argument("--problems", type=int, default=20, help="random problems per measure")
    parser.add_argument(
        "--pyperplan-partial",
        type=int,
        default=10,
        help="8-item problems with 2 goal constraints (paper's view two) for pyperplan",
    )
    parser.add_argument(
        "--pyperplan-full",
        type=int,
        default=2,
        help="8-item problems with a full goal for pyperplan (about 40 s each)",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed of the problems")
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="*",
        default=[16, 20, 24],
        help="item counts of the full-goal comparison (empty: skip it)",
    )
    parser.add_argument("--scaling-problems", type=int, default=100, help="full-goal problems per size")
    parser.add_argument("--generated", type=int, default=10_000, help="4-item problems generated per run")
    parser.add_argument(
        "--limit",
        type=int,
        default=2000,
        help="A* expansions allowed per problem in the comparison (past it: unfinished)",
    )
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)

    def problems(n, constraints=None, count=args.problems):
        return timing.random_problems(n, count, constraints, args.seed)

    runs = args.runs
    rows = [
        ("optimal, 8 items, full goal", timing.time_optimal(problems(8), runs), "well under 0.1 s"),
        ("  exact full-goal method alone", timing.time_optimal(problems(8), runs, False), ""),
        ("  A* alone (the method before)", timing.time_optimal(problems(8), runs, False, "astar"), ""),
        ("optimal, 10 items, full goal", timing.time_optimal(problems(10), runs), "about 1 s"),
        ("  exact full-goal method alone", timing.time_optimal(problems(10), runs, False), ""),
        ("  A* alone (the method before)", timing.time_optimal(problems(10), runs, False, "astar"), ""),
        ("near-optimal, 100 items, full goal", timing.time_near_optimal(problems(100), runs), "under 1 s"),
    ]
    print(load_line())
    print(f"{'measure':<44}{'median s':>12}  target")
    for name, seconds, target in rows:
        print(f"{name:<44}{seconds:>12.5f}  {target}")
    generation_table(args.generated, runs)
    if not full_goal_table(args.sizes, args.scaling_problems, runs, args.limit, args.seed):
        return 1
    status = pyperplan_table(args, problems)
    print(load_line())
    return status


def generation_table(count: int, runs: int) -> None:
    """Print the generator's time for ``count`` 4-item problems with optimal lengths beside its
    anchor (drawing their boards alone), wall and CPU, and their ratio per run."""
    times = timing.time_generation(count, runs)
    print(
        f"\ngenerate {count:,} 4-item problems with optimal lengths, {runs} runs alternating with the "
        f"anchor (drawing {count:,} pairs of boards alone):"
    )
    for name, label in (("generation", "generator"), ("anchor", "anchor")):
        wall = [t["wall"] for t in times[name]]
        cpu = [t["cpu"] for t in times[name]]
        print(f"  {label:<10} wall {spread(wall, '{:.2f} s')}; CPU {spread(cpu, '{:.2f} s')}")
    ratio = [g["wall"] / a["wall"] for g, a in zip(times["generation"], times["anchor"], strict=True)]
    print(f"  generator / anchor (wall, per run): {spread(ratio, '{:.1f}x')}")


def pyperplan_table(args: argparse.Namespace, problems: Callable[..., list]) -> int:
    """Print pyperplan's BFS beside ours on the same 8-item problems (partial and full goals);
    return the exit code: 1 when the plan lengths differ, 0 otherwise (also without pyperplan)."""
    domain = RELEASE / "dataset" / "simple_stack" / "domain.pddl"
    if args.pyperplan_partial > 0 or args.pyperplan_full > 0:
        print(
            "\npyperplan BFS vs ours on the same problems (paper: about 2.7 s per 8-item problem;\n"
            "method alone: A* for a partial goal, the exact full-goal method for a full one):"
        )
    for label, constraints, count in (
        ("8 items, 2 constraints", 2, args.pyperplan_partial),
        ("8 items, full goal", None, args.pyperplan_full),
    ):
        if count <= 0:
            continue
        same = problems(8, constraints, count)
        try:
            theirs, lengths = timing.time_pyperplan(same, domain)
        except ImportError:
            log.warning("pyperplan is not installed: `make bench-blocks` installs requirements-bench.txt")
            return 0
        ours = timing.time_optimal(same, args.runs)
        search = timing.time_optimal(same, args.runs, greedy_first=False)
        if lengths != [len(optimal_plan(b, g)) for b, g in same]:
            log.error("pyperplan's plan lengths %s differ from ours: a planner bug", lengths)
            return 1
        print(
            f"  {label:<24} pyperplan {theirs:9.4f} s | ours {ours:9.6f} s, ratio {theirs / ours:,.0f}x | "
            f"method alone {search:9.6f} s, ratio {theirs / search:,.0f}x "
            f"({count} problems, same plan lengths)"
        )
    return 0


def full_goal_table(sizes: list[int], count: int, runs: int, limit: int, seed: int) -> bool:
    """Print the exact full-goal method beside A* per size; return False if plan lengths differ."""
    if not sizes:
        return True
    print(
        f"\nfull goals, {count} random problems per size; per problem the median of {runs} runs "
        f"(ms), then median / p90 / max over problems; A* stopped after {limit:,} expansions:"
    )
    print(
        f"{'items':>5} | {'exact: median':>13} {'p90':>7} {'max':>8} | {'A* finished':>11} {'median':>8} "
        f"{'p90':>8} {'max':>8} | {'A*/exact (median, total)':>24} | A* gave up after"
    )
    for n in sizes:
        result = timing.compare_full_goals(timing.random_problems(n, count, None, seed), runs, limit)
        if not result["lengths_agree"]:
            log.error("%d items: A*'s plan lengths differ from the exact method's: a planner bug", n)
            return False
        exact, astar = result["exact"], result["astar"]
        pairs = [(a, e) for a, e in zip(astar, exact, strict=True) if a is not None]
        ms = " ".join(f"{1e3 * x:{w}.2f}" for x, w in zip(timing.spread(exact), (13, 7, 8), strict=True))
        theirs = [a for a, _e in pairs]
        a_ms = " ".join(f"{1e3 * x:8.2f}" for x in timing.spread(theirs)) if theirs else f"{'-':>26}"
        ratios = (
            (
                f"{statistics.median(a / e for a, e in pairs):9.0f}x "
                f"{sum(theirs) / sum(e for _a, e in pairs):11.0f}x"
            )
            if pairs
            else f"{'-':>24}"
        )
        print(
            f"{n:>5} | {ms} | {len(pairs):>5} / {count:<3} {a_ms} | {ratios:>24} | "
            f"{count - len(pairs)} problems ({result['astar_given_up_seconds']:.1f} s)"
        )
    return True


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
