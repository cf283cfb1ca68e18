"""Benchmark the blocks-world planners and generator; pyperplan's BFS side by side as a ratio.

Targets: optimal plans for random 8-item problems well under 0.1 s each and 10 items about
1 s; a near-optimal plan for 100 items under 1 s; 10,000 generated 4-item problems with
optimal lengths in a few seconds. The paper's planner (pyperplan BFS) took about 2.7 s per
8-item problem. Figures are medians over --runs runs (pyperplan: one run per problem).

$ python scripts/bench_blocks.py
$ python scripts/bench_blocks.py --runs 3 --pyperplan-full 0
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import logging
import sys

from common import cli
from common.blocks import bench
from common.blocks.planner import optimal_plan
from common.blocks.release import RELEASE

log = logging.getLogger("bench_blocks")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("--runs", type=int, default=5, help="runs per measure (the median is reported)")
    parser.add_argument("--problems", type=int, default=20, help="random problems per measure")
    parser.add_argument("--pyperplan-partial", type=int, default=10,
                        help="8-item problems with 2 goal constraints (paper's view two) for pyperplan")
    parser.add_argument("--pyperplan-full", type=int, default=2,
                        help="8-item problems with a full goal for pyperplan (about 40 s each)")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the problems")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)

    def problems(n, constraints=None, count=args.problems):
        return bench.random_problems(n, count, constraints, args.seed)

    runs = args.runs
    rows = [
        ("optimal, 8 items, full goal", bench.time_optimal(problems(8), runs), "well under 0.1 s"),
        ("optimal (A* only), 8 items, full goal", bench.time_optimal(problems(8), runs, False), ""),
        ("optimal, 10 items, full goal", bench.time_optimal(problems(10), runs), "about 1 s"),
        ("optimal (A* only), 10 items, full goal", bench.time_optimal(problems(10), runs, False), ""),
        ("near-optimal, 100 items, full goal", bench.time_near_optimal(problems(100), runs), "under 1 s"),
        ("generate 10,000 4-item problems (total)", bench.time_generation(10_000, runs), "a few seconds"),
    ]
    print(f"{'measure':<44}{'median s':>12}  target")
    for name, seconds, target in rows:
        print(f"{name:<44}{seconds:>12.5f}  {target}")
    domain = RELEASE / "dataset" / "simple_stack" / "domain.pddl"
    print("\npyperplan BFS vs ours on the same problems (paper: about 2.7 s per 8-item problem):")
    for label, constraints, count in (("8 items, 2 constraints", 2, args.pyperplan_partial),
                                      ("8 items, full goal", None, args.pyperplan_full)):
        if count <= 0:
            continue
        same = problems(8, constraints, count)
        try:
            theirs, lengths = bench.time_pyperplan(same, domain)
        except ImportError:
            log.warning("pyperplan is not installed: `make bench-blocks` installs requirements-bench.txt")
            return 0
        ours, search = bench.time_optimal(same, runs), bench.time_optimal(same, runs, greedy_first=False)
        if lengths != [len(optimal_plan(b, g)) for b, g in same]:
            log.error("pyperplan's plan lengths %s differ from ours: a planner bug", lengths)
            return 1
        print(f"  {label:<24} pyperplan {theirs:9.4f} s | ours {ours:9.6f} s, ratio {theirs / ours:,.0f}x | "
              f"A* only {search:9.6f} s, ratio {theirs / search:,.0f}x ({count} problems, same plan lengths)")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
