"""Random boards: the paper's ``legacy`` cut-at-markers generator and the exact ``uniform`` one.

``uniform`` draws every state of N labelled items with the same probability. States are sets
of ordered stacks, counted by OEIS A000262: a(n) = sum_k C(n-1, k-1) k! a(n-k) (the stack of
the first remaining item has k items: choose its k-1 companions and an order). Sampling
follows that recurrence with exact integer weights, so no state is favoured.

Every function takes a ``random.Random`` and never iterates a set, so a seed gives the same
board under any PYTHONHASHSEED.
"""

import math
import random
from collections.abc import Callable, Sequence

_STATE_COUNTS = [1, 1]  # count_states(n) for n < len(_STATE_COUNTS), grown on demand


def count_states(n: int) -> int:
    """Return the number of states of ``n`` labelled items (OEIS A000262: 1, 1, 3, 13, 73, ...).

    Computed iteratively (no recursion limit: 1,000 items and more work) with the sequence's
    linear recurrence a(n) = (2n - 1) a(n-1) - (n-1)(n-2) a(n-2), which equals the stack sum
    above (checked by the tests); values are kept, so a board costs no recount.
    """
    if n < 0:
        raise ValueError(f"count_states needs n >= 0, not {n}")
    while len(_STATE_COUNTS) <= n:
        m = len(_STATE_COUNTS)
        _STATE_COUNTS.append((2 * m - 1) * _STATE_COUNTS[m - 1] - (m - 1) * (m - 2) * _STATE_COUNTS[m - 2])
    return _STATE_COUNTS[n]


def uniform_board(items: Sequence[str], rng: random.Random) -> list[list[str]]:
    """Return a state of ``items`` (stacks bottom to top) drawn uniformly from all states."""
    remaining = sorted(items)
    stacks = []
    while remaining:
        n = len(remaining)
        draw = rng.randrange(count_states(n))
        size = 0
        for k in range(1, n + 1):
            weight = math.comb(n - 1, k - 1) * math.factorial(k) * count_states(n - k)
            if draw < weight:
                size = k
                break
            draw -= weight
        first, rest = remaining[0], remaining[1:]
        stack = [first, *rng.sample(rest, size - 1)]
        rng.shuffle(stack)
        chosen = set(stack)
        remaining = [item for item in rest if item not in chosen]
        stacks.append(stack)
    return stacks


def legacy_board(items: Sequence[str], rng: random.Random) -> list[list[str]]:
    """Return a state made the paper's way: add ceil(sqrt(N)) partition markers to the items,
    shuffle, and cut into stacks at the markers (empty stacks dropped), so at most that many
    plus one stacks. States are not equally likely."""
    markers = math.ceil(math.sqrt(len(items)))
    tokens: list[str | None] = [*items, *([None] * markers)]
    rng.shuffle(tokens)
    stacks: list[list[str]] = [[]]
    for token in tokens:
        if token is None:
            stacks.append([])
        else:
            stacks[-1].append(token)
    return [stack for stack in stacks if stack]


GENERATORS: dict[str, Callable[[Sequence[str], random.Random], list[list[str]]]] = {
    "uniform": uniform_board,
    "legacy": legacy_board,
}
