"""The random baseline's expected metrics, derived from first principles under the original's
rules, against what the suite's conversations give (within sampling error).

The random solver answers yes or no, 1/2 each, at every turn, whatever it is asked. A turn is a
distractor question with probability 1/3 (never without distractors) and cannot end the
conversation; a main-task turn ends it with probability 1/2, whatever its gold answer. So the
turns passed are geometric with failure probability p = 1/3 (1/2 without distractors), cut at
100: E[turns] = (1 - p) / p * (1 - (1 - p)^100) = 2.0 (1.0).

Which way it ends depends on the gold answer of the failing main-task turn: a false "yes" when
it is "no". Since the solver's survival does not depend on the golds, and a surviving answer is
the gold itself, the false-positive rate is sum over turns of P(alive before, main turn, gold
"no") / 2, where the golds follow the original's rules:

- adversarial (probability 1/2 when the pool of distracting words is not empty): a word drawn
  uniformly from the words of the questions shown and of every answer given; its gold is "yes"
  when it was shown as a main-task word before;
- else a repeat (probability 1/2, when a word was shown): gold "yes", whichever word of the
  original's repeat pool (every word shown as a main-task word, adversarial ones included) it
  is; else a new word of the sample: gold "no". Under the rule this suite used to follow
  (repeats only of the pre-drawn schedule's words) a repeat is impossible until a
  non-adversarial word was shown, which moves the rate up.

When every question has the same words Q (none of them "yes", "no" or a sample word), the
state of a conversation is small: whether a question was shown, how many words of Q were shown
as main-task words, whether "yes" and "no" are in the pool and were shown as main-task words,
whether any word was shown. ``expectations`` follows the distribution of that state turn by
turn, exactly.
"""

import math
from collections import defaultdict

import numpy as np
import pytest

from common.already_said_that.baselines import RandomSolver
from common.already_said_that.distractors import question_words
from common.already_said_that.prompts import Conversation
from common.already_said_that.run import turn_item
from tests.already_said_that.fixtures import lemmas

QUESTIONS = [  # one set of words in every question: Q = is, the, red, box, heavier, than, blue
    ("Is the red box heavier than the blue box?", "yes"),
    ("Is the blue box heavier than the red box?", "no"),
    ("Is the box the red box heavier than the blue?", "no"),
]
POOL = [
    {"id": f"q{i}", "source": "which_is_heavier", "question": q, "answer": a, "words": question_words(q)}
    for i, (q, a) in enumerate(QUESTIONS)
]
CONVERSATIONS = 20_000


def _main_turn(state: tuple, q: int) -> list[tuple[float, str, tuple]]:
    """Return the main-task turn's outcomes from ``state``: (probability, gold, state if answered
    right). ``state`` = (question shown, Q words shown, yes in pool, no in pool, yes shown, no
    shown, any word shown)."""
    asked, q_shown, yes_pool, no_pool, yes_shown, no_shown, any_shown = state
    pool = q * asked + yes_pool + no_pool
    picks = []
    if pool:  # adversarial, 1/2: a word of the pool, uniformly
        if q_shown:
            picks.append((q_shown / pool / 2, "yes", state))
        if q - q_shown and asked:
            picks.append(
                ((q - q_shown) / pool / 2, "no", (1, q_shown + 1, yes_pool, no_pool, yes_shown, no_shown, 1))
            )
        if yes_pool:
            picks.append((1 / pool / 2, "yes" if yes_shown else "no", (*state[:4], 1, no_shown, 1)))
        if no_pool:
            picks.append((1 / pool / 2, "yes" if no_shown else "no", (*state[:5], 1, 1)))
    rest = 1 / 2 if pool else 1.0  # not adversarial: a repeat (1/2, once a word was shown) or a new word
    if any_shown:
        return [*picks, (rest / 2, "yes", state), (rest / 2, "no", state)]
    return [*picks, (rest, "no", (*state[:6], 1))]


def expectations(q: int, p_distractor: float, turns: int = 100) -> dict[str, float]:
    """Return the random solver's exact ``avg_turns``, ``false_positive`` and ``false_negative``
    rates under the original's rules, with questions of ``q`` words (``p_distractor`` 0: none)."""
    alive = {(0, 0, 0, 0, 0, 0, 0): 1.0}
    out = {"avg_turns": 0.0, "false_positive": 0.0, "false_negative": 0.0}
    for _ in range(turns):
        after: dict[tuple, float] = defaultdict(float)
        for state, p in alive.items():
            for answer in ("yes", "no"):  # a question: the answer's word joins the pool
                pooled = (1, state[1], state[2] or answer == "yes", state[3] or answer == "no", *state[4:])
                after[pooled] += p * p_distractor / 2
            for w, gold, shown in _main_turn(state, q):
                reach = p * (1 - p_distractor) * w
                out["false_positive" if gold == "no" else "false_negative"] += reach / 2
                answered = (*shown[:2], shown[2] or gold == "yes", shown[3] or gold == "no", *shown[4:])
                after[answered] += reach / 2
        alive = after
        out["avg_turns"] += sum(alive.values())
    return out


def play_random(words: list[str], distractors: bool, sample: int) -> Conversation:
    """Return a conversation of the suite played to its end by the built-in random solver."""
    conversation = Conversation(
        words, POOL if distractors else [], seed=0, sample=sample, distractors=distractors
    )
    solver = RandomSolver(seed=0)
    while not conversation.over:
        turn = conversation.next_turn()
        conversation.judge(solver.complete([], turn_item(sample, turn)).text)
    return conversation


def test_expectations_by_hand():
    """Without distractors: the first main-task word is new (gold "no"); the second, reached and
    failed with probability 1/4, has gold "no" with probability 3/4 (the adversarial "no", 1/2,
    or a new word, 1/4): false positives 1/2 + 3/4 x 1/4 + (at most 1/4 from later turns)."""
    none = expectations(0, 0.0)
    assert none["avg_turns"] == pytest.approx(1.0, abs=1e-12)
    assert none["false_positive"] + none["false_negative"] == pytest.approx(1.0, abs=1e-12)
    assert 1 / 2 + 3 / 16 < none["false_positive"] < 1 / 2 + 3 / 16 + 1 / 4  # turns 3+: at most 1/4
    assert {frozenset(record["words"]) for record in POOL} == {frozenset(POOL[0]["words"])}
    some = expectations(len(POOL[0]["words"]), 1 / 3)
    assert some["avg_turns"] == pytest.approx(2.0, abs=1e-12)
    assert some["false_positive"] + some["false_negative"] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("distractors", [True, False])
def test_random_solver_plays_as_first_principles_say(distractors):
    expected = expectations(len(POOL[0]["words"]), 1 / 3) if distractors else expectations(0, 0.0)
    words = lemmas(100)
    played = [play_random(words, distractors, sample) for sample in range(CONVERSATIONS)]
    turns = np.array([c.turns_done for c in played], dtype=float)
    assert abs(turns.mean() - expected["avg_turns"]) < 4 * turns.std(ddof=1) / math.sqrt(CONVERSATIONS)
    for ending in ("false_positive", "false_negative"):
        share = sum(c.ending == ending for c in played) / CONVERSATIONS
        p = expected[ending]
        assert abs(share - p) < 4 * math.sqrt(p * (1 - p) / CONVERSATIONS), (ending, share, p)
