"""Board generators: exact state counts (OEIS A000262), uniformity, and the paper's legacy shape."""

import math
import random
from collections import Counter

from scipy.stats import chisquare

from common.blocks.boards import count_states, legacy_board, uniform_board
from common.blocks.state import canonical
from tests.blocks.test_planner import all_states

ITEMS = ["w", "x", "y", "z"]


def test_state_counts_are_a000262():
    assert [count_states(n) for n in range(1, 8)] == [1, 3, 13, 73, 501, 4051, 37633]


def test_counts_agree_with_exhaustive_enumeration():
    for n in range(1, 6):
        assert len(all_states([f"i{k}" for k in range(n)])) == count_states(n)


def test_uniform_generator_reaches_every_state_equally_often():
    rng = random.Random(2024)
    draws = Counter(canonical(uniform_board(ITEMS, rng)) for _ in range(73 * 200))
    assert set(draws) == set(all_states(ITEMS))
    counts = [draws[state] for state in all_states(ITEMS)]
    assert chisquare(counts).pvalue > 0.01


def test_legacy_generator_is_not_uniform_and_keeps_the_paper_shape():
    rng = random.Random(2024)
    boards = [legacy_board(ITEMS, rng) for _ in range(73 * 200)]
    assert all(len(b) <= math.ceil(math.sqrt(len(ITEMS))) + 1 for b in boards)
    assert all(sorted(i for s in b for i in s) == ITEMS for b in boards)
    draws = Counter(canonical(b) for b in boards)
    counts = [draws[state] for state in all_states(ITEMS)]
    assert chisquare(counts).pvalue < 1e-6


def test_generators_depend_only_on_the_seed():
    for generate in (uniform_board, legacy_board):
        assert generate(ITEMS, random.Random(3)) == generate(ITEMS, random.Random(3))
    # uniform sorts the items first, so the order they were chosen in does not matter
    assert uniform_board(ITEMS, random.Random(3)) == uniform_board(ITEMS[::-1], random.Random(3))


def test_counts_equal_the_stack_sum_and_need_no_recursion():
    # the recurrence used equals the definition: the first item's stack has k items
    for n in range(1, 40):
        stack_sum = sum(
            math.comb(n - 1, k - 1) * math.factorial(k) * count_states(n - k) for k in range(1, n + 1)
        )
        assert count_states(n) == stack_sum
    assert len(str(count_states(1000))) > 2000  # was a RecursionError from about 400 items


def test_a_thousand_item_set_is_generated(tmp_path):
    from common.blocks.generate import load_spec, make_problems

    spec = tmp_path / "big.yaml"
    names = ", ".join(f"item{i}" for i in range(1000))
    spec.write_text(
        "seed: 1\ntrivial: drop\n"
        f"vocab: [{names}]\nweird_vocab: [{names.replace('item', 'odd')}]\n"
        "views:\n  - {name: c3, constraints: 3, rename: none}\n"
        "problems:\n  - {num_obj: 3, count: 1}\n  - {num_obj: 1000, test: true, count: 1}\n",
        encoding="utf-8",
    )
    big = make_problems(load_spec(spec))[1]
    board = uniform_board([f"item{i}" for i in range(1000)], random.Random(5))
    assert sorted(i for s in board for i in s) == sorted(f"item{i}" for i in range(1000))
    assert len(big.view("c3").items) == 1000
