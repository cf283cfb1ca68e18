"""Already Said That schedules, measured: the protocol's probabilities (distractor 1/3, repeated
word 1/2, adversarial word 1/2) hold on the schedules it draws, a repeat draws uniformly from
every word shown as a main-task word (adversarial ones too, as the original), ``mixed`` draws
its sources evenly whatever their pool sizes, and distractor variants put their questions on
the same turns.

Conversations are played with the gold answers (the oracle's replies) straight on
``Conversation``, so every turn of every conversation is drawn: 300 conversations x 100 turns.
Each share is checked with an exact two-sided binomial test (scipy.stats.binomtest); the
schedules are seeded, so the p-values are fixed numbers, not flaky draws.
"""

import pytest
from scipy.stats import binomtest, chisquare

from common.already_said_that.generate import load_set
from common.already_said_that.prompts import Conversation
from tests.already_said_that.fixtures import QUESTIONS, write_set

CONVERSATIONS = 300
P_MIN = 0.001  # a share whose binomial test gives less than this is not the protocol's


def play_all(tmp_path, variant, adversarial=True, samples=CONVERSATIONS):
    """Return every turn of ``samples`` oracle conversations of a fixture set, each as (Key, Turn,
    whether the adversarial pool was non-empty when it was drawn, the words shown as main-task
    words before it, in the order first shown, with whether each was first shown adversarially)."""
    data = load_set(write_set(tmp_path / variant, variant, samples=samples, adversarial=adversarial))
    played = []
    for sample in data.samples:
        conversation = data.conversation(sample)
        shown: dict[str, bool] = {}
        while not conversation.over:
            pool_ready = bool(conversation.distracting)
            turn = conversation.next_turn()
            played.append((sample["sample"], turn, pool_ready, dict(shown)))
            if turn.kind == "main":
                shown.setdefault(turn.word, turn.adversarial)
            assert not conversation.judge(f"[answer: {turn.gold}]").ends
    return played


def share_test(hits: int, n: int, p: float) -> float:
    """Return the two-sided exact binomial p-value of ``hits`` out of ``n`` under share ``p``."""
    return binomtest(hits, n, p).pvalue


@pytest.mark.parametrize("variant", ["which_is_heavier", "mixed"])
def test_distractor_repeat_and_adversarial_probabilities(tmp_path, variant):
    turns = play_all(tmp_path, variant)
    assert len(turns) == CONVERSATIONS * 100
    distractors = sum(t.kind == "distractor" for _, t, _, _ in turns)
    assert share_test(distractors, len(turns), 1 / 3) > P_MIN, distractors / len(turns)
    # the adversarial coin counts where the pool had a word to offer (after the first answer)
    main = [(t, ready) for _, t, ready, _ in turns if t.kind == "main"]
    offered = [t for t, ready in main if ready]
    adversarial = sum(t.adversarial for t in offered)
    assert not any(t.adversarial for t, ready in main if not ready)
    assert share_test(adversarial, len(offered), 1 / 2) > P_MIN, adversarial / len(offered)
    # a non-adversarial word repeats one shown before with probability 1/2 (from the second on) ...
    drawn = [(t, before) for _, t, _, before in turns if t.kind == "main" and not t.adversarial and before]
    repeats = [(t, before) for t, before in drawn if t.word in before]
    assert share_test(len(repeats), len(drawn), 1 / 2) > P_MIN, len(repeats) / len(drawn)
    # ... uniformly among all of them: those first shown adversarially as often as their share
    first_adversarial = sum(before[t.word] for t, before in repeats)
    expected = sum(sum(before.values()) / len(before) for _, before in repeats)
    spread = sum(
        (share := sum(before.values()) / len(before)) * (1 - share) for _, before in repeats
    )  # a sum of Bernoulli draws: z-score on its variance
    assert first_adversarial > 100 and abs(first_adversarial - expected) < 4 * spread**0.5, (
        first_adversarial,
        expected,
    )


def test_adversarial_off_never_asks_a_distracting_word(tmp_path):
    turns = play_all(tmp_path, "which_is_heavier", adversarial=False, samples=50)
    assert not any(t.adversarial for _, t, _, _ in turns)
    scheduled = [(t, before) for _, t, _, before in turns if t.kind == "main" and before]
    repeats = sum(t.word in before for t, before in scheduled)
    assert share_test(repeats, len(scheduled), 1 / 2) > P_MIN


def test_distractorless_asks_no_question_and_adversarial_words_are_answers(tmp_path):
    turns = play_all(tmp_path, "distractorless", samples=50)
    assert not any(t.kind == "distractor" for _, t, _, _ in turns)
    # with no question, the adversarial pool holds the answers' words: "yes" and "no"
    assert {t.word for _, t, _, _ in turns if t.adversarial} == {"yes", "no"}


def test_mixed_draws_every_source_evenly_whatever_its_pool_size(tmp_path):
    """The fixture's pools hold 3, 2, 2 and 2 questions; the generated ones 200, 200, 200 and 67.
    Each distractor turn draws its source uniformly, so each gets a quarter of the questions."""
    assert sorted(len(q) for q in QUESTIONS.values()) == [2, 2, 2, 3]
    counts = {source: 0 for source in QUESTIONS}
    for _, turn, _, _ in play_all(tmp_path, "mixed"):
        if turn.kind == "distractor":
            counts[turn.question["source"]] += 1
    total = sum(counts.values())
    assert chisquare(list(counts.values())).pvalue > P_MIN, counts
    for source, count in counts.items():
        assert share_test(count, total, 1 / 4) > P_MIN, (source, counts)


def test_unequal_pools_are_drawn_evenly_and_each_cycles_through_its_questions():
    pool = [
        {"id": f"big-{i}", "source": "big", "question": f"Big question {i}?", "answer": "yes"}
        for i in range(200)
    ]
    pool += [
        {"id": f"small-{i}", "source": "small", "question": f"Small question {i}?", "answer": "no"}
        for i in range(5)
    ]
    asked = {"big": [], "small": []}
    for sample in range(100):
        conversation = Conversation([f"w{i}" for i in range(100)], pool, seed=3, sample=sample)
        ids = {"big": [], "small": []}
        while not conversation.over:
            turn = conversation.next_turn()
            if turn.kind == "distractor":
                ids[turn.question["source"]].append(turn.question["id"])
            conversation.judge(f"[answer: {turn.gold}]")
        small = ids["small"]  # a cycle: all five before any comes again
        assert all(len(set(small[i : i + 5])) == len(small[i : i + 5]) for i in range(0, len(small), 5))
        assert len(set(ids["big"])) == len(ids["big"])  # 200 questions: none repeats in 100 turns
        for source in asked:
            asked[source] += ids[source]
    total = len(asked["big"]) + len(asked["small"])
    assert share_test(len(asked["small"]), total, 1 / 2) > P_MIN, len(asked["small"]) / total


def test_distractor_variants_put_their_questions_on_the_same_turns(tmp_path):
    positions = {}
    for variant in ("which_is_heavier", "reverse_sort", "mixed"):
        turns = play_all(tmp_path, variant, samples=20)
        positions[variant] = [(key, t.index) for key, t, _, _ in turns if t.kind == "distractor"]
    assert positions["which_is_heavier"] == positions["reverse_sort"] == positions["mixed"]
