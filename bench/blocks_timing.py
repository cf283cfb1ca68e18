"""Timing for bench/bench_blocks.py: the planners and the generator, and pyperplan's BFS beside them.

Each measure runs several times; a run's figure is the mean time per problem (or the total
for the generator) and the reported figure is the median over runs, which shrugs off the
noise of a shared machine. pyperplan (``requirements-bench.txt``, not a runtime dependency) is
timed once per problem, on the same problems, through its Python API.

``compare_full_goals`` is the worst-case view for larger problems: each problem's own time
(median over runs) for the exact full-goal method and for A* (the method before it, stopped
after a number of expansions, so the set of problems it finishes is the same in every run),
summarised as median, 90th percentile and maximum, with the ratio on the problems both finish.
"""

import logging
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from common.blocks.boards import uniform_board
from common.blocks.generate import ProblemSpec, SetSpec, make_problems
from common.blocks.pddl import problem_pddl
from common.blocks.planner import SearchBudgetExceeded, near_optimal_plan, optimal_plan
from common.blocks.state import Relation, board_relations

Problem = tuple[list[list[str]], list[Relation]]


def random_problems(n_items: int, count: int, constraints: int | None, seed: int) -> list[Problem]:
    """Return ``count`` problems: a uniform initial board and the first ``constraints`` relations
    (all when None) of a shuffled uniform goal board."""
    rng = random.Random(f"bench:{seed}:{n_items}:{constraints}")
    items = [f"item{i:03d}" for i in range(n_items)]
    problems = []
    for _ in range(count):
        start, goal = uniform_board(items, rng), board_relations(uniform_board(items, rng))
        rng.shuffle(goal)
        problems.append((start, goal if constraints is None else goal[:constraints]))
    return problems


def median_per_problem(solve: Callable[[list, list], object], problems: list[Problem], runs: int) -> float:
    """Return the median over ``runs`` of the mean seconds per problem of ``solve(board, goal)``."""
    means = []
    for _ in range(runs):
        start = time.perf_counter()
        for board, goal in problems:
            solve(board, goal)
        means.append((time.perf_counter() - start) / len(problems))
    return statistics.median(means)


def time_optimal(
    problems: list[Problem], runs: int, greedy_first: bool = True, method: str = "auto"
) -> float:
    """Return the median seconds per problem of ``optimal_plan`` (``method``: see there)."""
    return median_per_problem(
        lambda b, g: optimal_plan(b, g, greedy_first=greedy_first, method=method), problems, runs
    )


def time_near_optimal(problems: list[Problem], runs: int) -> float:
    """Return the median seconds per problem of ``near_optimal_plan``."""
    return median_per_problem(near_optimal_plan, problems, runs)


def time_generation(count: int, runs: int) -> dict[str, list[dict[str, float]]]:
    """Return the wall and CPU seconds (``{"wall", "cpu"}``) of each of ``runs`` runs generating
    ``count`` 4-item problems with optimal lengths (``generation``), and of its anchor in the
    same runs, alternating (``anchor``): drawing the same number of pairs of uniform 4-item
    boards alone, what any generator of such problems does before it plans."""
    spec = SetSpec(
        problems=[ProblemSpec(4, test=True, count=count)],
        vocab=[f"v{i}" for i in range(8)],
        weird_vocab=[f"w{i}" for i in range(8)],
    )
    items = [f"v{i}" for i in range(4)]

    def boards(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(count):
            uniform_board(items, rng), uniform_board(items, rng)

    work = {"generation": lambda seed: make_problems(spec, seed=seed), "anchor": boards}
    times: dict[str, list[dict[str, float]]] = {name: [] for name in work}
    for run in range(runs):  # a new seed per run: no cached pattern from the run before
        for name in work if run % 2 == 0 else reversed(work):
            wall, cpu = time.perf_counter(), time.process_time()
            work[name](run)
            times[name].append({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu})
    return times


def time_pyperplan(problems: list[Problem], domain: Path) -> tuple[float, list[int]]:
    """Return pyperplan BFS's median seconds per problem and its plan lengths (one run each).

    Raises ImportError when pyperplan is not installed (``make bench-blocks`` installs it).
    """
    from pyperplan.planner import SEARCHES, search_plan

    logging.getLogger().setLevel(logging.WARNING)  # pyperplan logs every search at INFO
    seconds, lengths = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for index, (board, goal) in enumerate(problems):
            path = Path(tmp) / f"problem_{index}.pddl"
            path.write_text(problem_pddl(board, goal, f"bench{index}"))
            start = time.perf_counter()
            plan = search_plan(str(domain), str(path), SEARCHES["bfs"], None)
            seconds.append(time.perf_counter() - start)
            lengths.append(len(plan))
    return statistics.median(seconds), lengths


def run_times(solve: Callable[[list, list], object], problems: list[Problem], runs: int) -> list[list[float]]:
    """Return, per problem, the seconds of each of ``runs`` runs of ``solve(board, goal)``."""
    times: list[list[float]] = [[] for _ in problems]
    for _ in range(runs):
        for index, (board, goal) in enumerate(problems):
            start = time.perf_counter()
            solve(board, goal)
            times[index].append(time.perf_counter() - start)
    return times


def per_problem_seconds(
    solve: Callable[[list, list], object], problems: list[Problem], runs: int
) -> list[float]:
    """Return each problem's median seconds over ``runs`` runs of ``solve(board, goal)`` (the
    worst case of a method is a per-problem figure; a mean per problem would hide it)."""
    return [statistics.median(t) for t in run_times(solve, problems, runs)]


def spread(seconds: list[float]) -> tuple[float, float, float]:
    """Return ``(median, p90, max)`` of ``seconds`` (p90: the inclusive 90th percentile)."""
    p90 = statistics.quantiles(seconds, n=10, method="inclusive")[-1] if len(seconds) > 1 else seconds[0]
    return statistics.median(seconds), p90, max(seconds)


def compare_full_goals(problems: list[Problem], runs: int, limit: int) -> dict:
    """Return the exact full-goal method against A* on the same full-goal problems.

    Keys: ``exact`` and ``astar`` (per-problem median seconds; None where A* gave up after
    ``limit`` expansions), ``astar_given_up_seconds`` (total time A* spent on those, once),
    ``lengths_agree`` (plan lengths equal wherever A* finished). Both run without the
    near-optimal shortcut, so the methods themselves are timed.
    """
    exact = per_problem_seconds(lambda b, g: optimal_plan(b, g, greedy_first=False), problems, runs)
    first: dict[int, tuple[float, int]] = {}  # A*'s first run (it decides what A* finishes)
    given_up = 0.0
    for index, (board, goal) in enumerate(problems):
        start = time.perf_counter()
        try:
            plan = optimal_plan(board, goal, greedy_first=False, method="astar", max_expansions=limit)
        except SearchBudgetExceeded:
            given_up += time.perf_counter() - start
            continue
        first[index] = (time.perf_counter() - start, len(plan))
    done = sorted(first)
    more = run_times(
        lambda b, g: optimal_plan(b, g, greedy_first=False, method="astar"),
        [problems[i] for i in done],
        runs - 1,
    )
    astar: list[float | None] = [None] * len(problems)
    for index, extra in zip(done, more, strict=True):
        astar[index] = statistics.median([first[index][0], *extra])
    agree = all(len(optimal_plan(*problems[i], greedy_first=False)) == first[i][1] for i in done)
    return {"exact": exact, "astar": astar, "astar_given_up_seconds": given_up, "lengths_agree": agree}
