"""Exact shortest plans for full goals (every item's support given) without state-space search.

Why: A* (``planner.optimal_plan``) is fast on most full-goal problems of 20 items but its
heuristic counts each item's moves separately, so a problem whose blocked items form long
interlocking chains leaves a plateau of millions of states (one 20-item problem in ten took
81 s, 24 items did not finish in minutes). A full goal is one state, and blocks world with a
complete goal has a known structure (Gupta & Nau 1992, "On the complexity of blocks-world
planning"; Slaney & Thiebaux 2001, "Blocks World revisited") that turns the search into a
small combinatorial problem:

1. An item is *in position* when it sits on its goal support and the items below it are in
   position; such items never have to move. Every other item (the set M) moves at least once.
2. Some shortest plan moves each item of M either once, straight to its goal place, or twice,
   first to the table (set T) and then to its goal place. So the optimal length is
   ``|M| + min |T|`` over the sets T for which such a plan exists.
3. Whether a plan exists for a given T is an ordering question. Each item x of M has a *first*
   move (to the table if x is in T, else its final move) and a *final* move. The final move of
   x needs x clear (the first move of the item above x before it), its goal support d final
   (d's final move before it, if d is in M) and d clear (the first move of the item above d
   in the initial board before it); a first move to the table needs only x clear. A plan
   exists exactly when these "before" relations have no cycle (then any topological order is
   a plan; with a cycle no order is).
4. Putting y in T splits y's single move into "to the table" (which keeps only the "y clear"
   requirement and everything that waited for y to leave) and "final" (which keeps the
   rest). A cycle is broken at y exactly when it enters y through a requirement of y's final
   move (support final / support clear) and leaves through something that waits for y to
   leave. T must break every such cycle: a minimum feedback vertex set of the deadlock graph,
   with the breaking rule per vertex. It is found exactly by branching on the breakable items
   of one cycle at a time (every feasible T contains one of them), with iterative deepening on
   |T|; at 20-24 items the deadlock graphs are small and this takes milliseconds.

The result is checked against breadth-first search and against A* in the tests (every pair of
4-item states, hundreds of random problems of each size from 5 to 12 items) and by
``make bench-blocks`` wherever A* finishes.

Why this and not the other options (measured with ``make bench-blocks``; figures in docs/benchmarks.md):
on 100 random full-goal problems per size its worst case is tens of milliseconds at 20 and 24
items, while A* needs seconds to minutes on a tail of problems. A stronger admissible bound
for A* would have to count the deadlocks, which is this computation anyway; with the exact
count A* degenerates into walking one plan, which is what ``_topological_moves`` does
directly. IDA* re-expands the same plateau once per bound and symmetry reduction has little to
reduce (the items of a full goal are all distinct). An external planner (Fast Downward: on
PyPI only as unofficial forks) would add a binary dependency, a PDDL round trip per problem
and, in its optimal configurations, still a state-space search on a problem that is NP-hard in
general; this method is plain Python, deterministic and about 200 lines. Partial goals are
not one state, so they stay with A* (``planner.optimal_plan``).
"""

import heapq
import itertools
from collections.abc import Sequence

TABLE = -1

# Edge kinds of the ordering graph (see the module docstring, point 4). Each kind leaves one
# move of its source item and enters one move of its target item: FIRST or FINAL (for an item
# outside T the two are the same move).
FIRST, FINAL = 0, 1
CLEAR_SELF = 1  # the item above x leaves (its first move) before x moves at all
SUPPORT_CLEAR = 2  # the item above x's goal support leaves before x's final move
SUPPORT_FINAL = 4  # x's goal support is final before x's final move
TABLE_THEN_GOAL = 8  # for x in T: x goes to the table before it goes to its goal place
ENDS = {
    CLEAR_SELF: (FIRST, FIRST),
    SUPPORT_CLEAR: (FIRST, FINAL),
    SUPPORT_FINAL: (FINAL, FINAL),
    TABLE_THEN_GOAL: (FIRST, FINAL),
}


class SearchBudgetExceeded(RuntimeError):
    """A search went past its budget: A* states expanded, or steps of the deadlock search."""


class _Problem:
    """The ordering graph of a full-goal problem: items of M, who sits on whom, goal supports."""

    def __init__(self, support: Sequence[int], start: Sequence[Sequence[int]]):
        n = len(support)
        self.n = n
        self.support = list(support)
        self.on_top = [None] * n  # the item directly on x in the start board
        below = [TABLE] * n  # the item directly under x in the start board
        for stack in start:
            for lower, upper in itertools.pairwise(stack):
                self.on_top[lower] = upper
                below[upper] = lower
        placed = [False] * n
        for stack in start:
            ok = True
            for item in stack:
                ok = ok and self.support[item] == below[item]
                placed[item] = ok
        self.moving = [x for x in range(n) if not placed[x]]
        self.in_m = [not p for p in placed]

    def edges(self, table_first: Sequence[bool]) -> dict[int, dict[int, int]]:
        """Return the ordering graph for the set T given as flags: ``{node: {successor: kinds}}``.

        Node ``x`` is x's first move; node ``n + x`` is x's final move when x is in T (otherwise
        the first move is the final one). ``kinds`` ORs the edge kinds between the two nodes.
        """
        n, support, on_top, in_m = self.n, self.support, self.on_top, self.in_m
        graph: dict[int, dict[int, int]] = {x: {} for x in self.moving}

        def add(a: int, b: int, kind: int) -> None:
            graph.setdefault(a, {})
            graph[a][b] = graph[a].get(b, 0) | kind

        for x in self.moving:
            final = n + x if table_first[x] else x
            if table_first[x]:
                add(x, final, TABLE_THEN_GOAL)
                graph.setdefault(final, {})
            above = on_top[x]
            if above is not None:
                add(above, x, CLEAR_SELF)
            d = support[x]
            if d >= 0:
                blocker = on_top[d]
                if blocker is not None:
                    add(blocker, final, SUPPORT_CLEAR)
                if in_m[d]:
                    add(n + d if table_first[d] else d, final, SUPPORT_FINAL)
        return graph


def _find_cycle(graph: dict[int, dict[int, int]]) -> list[int] | None:
    """Return the nodes of one cycle of ``graph`` in order (deterministic), or None if acyclic."""
    state: dict[int, int] = {}  # 1: on the DFS path, 2: done
    for root in sorted(graph):
        if state.get(root):
            continue
        path, iters = [root], [iter(sorted(graph[root]))]
        state[root] = 1
        while path:
            child = next(iters[-1], None)
            if child is None:
                state[path.pop()] = 2
                iters.pop()
                continue
            mark = state.get(child, 0)
            if mark == 1:
                return path[path.index(child) :]
            if mark == 0:
                state[child] = 1
                path.append(child)
                iters.append(iter(sorted(graph.get(child, {}))))
    return None


def _breakers(graph: dict[int, dict[int, int]], cycle: list[int], n: int) -> list[int]:
    """Return items not yet in T such that every plan must put one of them in T to break
    ``cycle``, as few as possible.

    Two consecutive nodes may be joined by edges of several kinds; each choice of one edge per
    step is a cycle of the multigraph. Splitting item y breaks such a cycle exactly when its
    edge into y enters y's final move and its edge out of y leaves y's first move (nothing
    leads from the final move back to the first). Every cycle has such an item (the first
    moves alone and the final moves alone are ordered by "above" and by the goal towers, both
    acyclic), so the choice with the fewest of them (found by dynamic programming around the
    cycle) gives a non-empty, small branching set.
    """
    size = len(cycle)
    steps = [
        [ENDS[kind] for kind in ENDS if graph[cycle[i]][cycle[(i + 1) % size]] & kind] for i in range(size)
    ]

    def breaks(i: int, entered: int, leaves: int) -> bool:
        return cycle[i] < n and entered == FINAL and leaves == FIRST  # node >= n: a final move of T

    best: list[int] | None = None
    for first in steps[0]:
        # table[j]: the fewest breakers so far for each choice j of the current step
        table = {first: []}
        for i in range(1, size):
            nxt: dict[tuple[int, int], list[int]] = {}
            for ends in steps[i]:
                options = [
                    [*prev, cycle[i]] if breaks(i, came[1], ends[0]) else prev for came, prev in table.items()
                ]
                nxt[ends] = min(options, key=len)
            table = nxt
        for last, found in table.items():
            closing = [*found, cycle[0]] if breaks(0, last[1], first[0]) else found
            if best is None or len(closing) < len(best):
                best = closing
    return sorted(best or [])


def _search(
    problem: _Problem,
    table_first: list[bool],
    forbidden: list[bool],
    budget: int,
    steps: list[int],
    max_steps: int | None,
) -> bool:
    """Extend ``table_first`` in place with at most ``budget`` items so the graph is acyclic;
    return whether that is possible (flags are restored on failure). ``steps[0]`` counts the
    calls; past ``max_steps`` SearchBudgetExceeded is raised."""
    steps[0] += 1
    if max_steps is not None and steps[0] > max_steps:
        raise SearchBudgetExceeded(f"full_goal_steps: more than {max_steps:,} deadlock-search steps")
    graph = problem.edges(table_first)
    cycle = _find_cycle(graph)
    if cycle is None:
        return True
    if budget == 0:
        return False
    candidates = [x for x in _breakers(graph, cycle, problem.n) if not forbidden[x]]
    newly_forbidden = []
    found = False
    for x in candidates:
        table_first[x] = True
        if _search(problem, table_first, forbidden, budget - 1, steps, max_steps):
            found = True
            break
        table_first[x] = False
        forbidden[x] = True  # later branches leave x out: each T is tried once
        newly_forbidden.append(x)
    for x in newly_forbidden:
        forbidden[x] = False
    return found


def _topological_moves(problem: _Problem, table_first: list[bool]) -> list[tuple[int, int]]:
    """Return the ``(item, dest)`` moves of the plan for an acyclic T: nodes in topological
    order, the smallest ready node first (all first moves are numbered before final moves)."""
    graph = problem.edges(table_first)
    indegree = {node: 0 for node in graph}
    for successors in graph.values():
        for node in successors:
            indegree[node] += 1
    ready = [node for node, degree in indegree.items() if degree == 0]
    heapq.heapify(ready)
    n, steps = problem.n, []
    while ready:
        node = heapq.heappop(ready)
        item = node % n if node >= n else node
        if node < n and table_first[node]:
            steps.append((item, TABLE))
        else:
            steps.append((item, problem.support[item]))
        for child in sorted(graph[node]):
            indegree[child] -= 1
            if indegree[child] == 0:
                heapq.heappush(ready, child)
    return steps


def _minimum_table_first(problem: _Problem, lower: int, max_steps: int | None) -> list[bool]:
    """Return the flags of a minimum set T (iterative deepening on |T| from ``lower``)."""
    table_first, forbidden = [False] * problem.n, [False] * problem.n
    budget, steps = lower, [0]
    while not _search(problem, table_first, forbidden, budget, steps, max_steps):
        budget += 1
    return table_first


def full_goal_steps(
    support: Sequence[int], start: Sequence[Sequence[int]], lower: int = 0, max_steps: int | None = None
) -> list[tuple[int, int]]:
    """Return the ``(item, dest)`` moves (dest -1 for the table) of a shortest plan from the
    integer board ``start`` to the state where each item x sits on ``support[x]`` (-1: table).

    Exact (see the module docstring): every item not in position moves once, the items of a
    minimum deadlock-breaking set T twice (to the table first). ``lower``: a known lower bound
    on |T| (the items whose goal tower is partly below them), which only saves time. The
    support map must describe one state (no cycle, no two items on one support). Raises
    SearchBudgetExceeded after ``max_steps`` steps of the deadlock search (a few hundred at
    most on 100 random 24-item problems; the search is exponential in the worst case).
    """
    problem = _Problem(support, start)
    return _topological_moves(problem, _minimum_table_first(problem, lower, max_steps))
