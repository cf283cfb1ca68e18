"""The Already Said That conversation: the task prompt, the turn schedule, answer parsing, grading.

One conversation per sample of 100 distinct words. Each turn is a distractor question with
probability 1/3 (never when the set has no distractors), else a main-task word shown as
``MAIN TASK - <word>``: with probability 1/2 a word already shown, else a new one; with the
adversarial option, half of the main-task turns instead show a word that appeared in a
distractor question or in one of the model's answers (its gold answer is "no" unless it was
shown as a main-task word before). A wrong or malformed main-task answer ends the
conversation; a wrong distractor answer does not.

Pairing. The randomness comes from five separate streams per (seed, sample), each a
``random.Random`` seeded with a string (SHA-512 based, so independent of PYTHONHASHSEED):

- ``main``: the non-adversarial main-task words: two draws per such turn, whatever happens (new
  or repeated, then which word). As in the original, a repeated word is drawn uniformly from
  every word already shown as a main-task word, adversarial ones included, and a new one from
  the sample's words not shown yet. The draws are the same in every variant and for every
  model, so the j-th non-adversarial main-task word of a sample is the same wherever the words
  shown before it are: always without the adversarial option, else up to the first adversarial
  word shown (it joins the words a repeat draws from, so later repeats may differ);
- ``turns``: whether each turn is a distractor (drawn every turn, also in ``distractorless``,
  where it is ignored), so all variants with distractors put them on the same turns;
- ``questions``: the order of each source's questions for this sample (a shuffled cycle per
  source, as the original cycled through its shuffled pool);
- ``sources``: with several sources (``mixed``), which one each distractor turn draws from,
  uniformly, whatever the sizes of their pools (a generated set has 67 written ambiguous
  sentences beside 200 questions of each other source); not drawn with a single source;
- ``adversarial``: the adversarial coin of each main-task turn and the word it picks.

A model's answers influence only which words are drawn (they add to the adversarial pool, and
the words shown add to the repeat pool), never the other streams.
"""

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

DISTRACTOR_PROBABILITY = 1 / 3
REPEAT_PROBABILITY = 1 / 2
ADVERSARIAL_PROBABILITY = 1 / 2
MAIN_PREFIX = "MAIN TASK - "

# The original's parser: the first "[answer: ...]" (lower-case "answer", one space after the
# colon, at least one character before the closing bracket), its content stripped and lower-cased.
ANSWER_PATTERN = re.compile(r"\[answer: ([^\]]+)\]")
# Alphabetic words (an apostrophe inside keeps "don't" whole, and such words are then skipped).
WORD_PATTERN = re.compile(r"[A-Za-z]+(?:['`][A-Za-z]+)*")


def parse_answer(reply: str) -> str | None:
    """Return the answer inside the first ``[answer: ...]`` of ``reply``, stripped and lower-cased,
    or None when there is none (a format violation), exactly as the original eval parsed it.

    ``"[answer: Yes ]"`` gives "yes"; ``"[Answer: yes]"``, ``"[answer:yes]"`` and ``"[answer: ]"``
    give None; text around the brackets is ignored; of several, the first counts.
    """
    match = ANSWER_PATTERN.search(reply)
    return match.group(1).strip().lower() if match else None


def alpha_words(text: str) -> list[str]:
    """Return the purely alphabetic words of ``text``, lower-cased, in order (the words a model's
    answer adds to the adversarial pool; "don't" and "a1" are skipped, as in the original)."""
    return [word.lower() for word in WORD_PATTERN.findall(text) if word.isalpha()]


def normalise(answer: str) -> str:
    """Return a gold or given answer as compared: stripped and lower-cased."""
    return answer.strip().lower()


def example_word(example: dict[str, Any]) -> str:
    """Return the word of the worked example's distractor question that the example then shows as a
    main-task word (answered "no": words of unrelated questions do not count): its longest word."""
    words = example.get("words") or alpha_words(example["question"])
    return max(words, key=len) if words else "apple"


def task_description(example: dict[str, Any] | None) -> str:
    """Return the system message: the task, the answer format, and a worked example that uses the
    held-out ``example`` distractor (a record of the pool's format; None: no distractor lines)."""
    lines = [
        (
            "You will be shown words one at a time. Your main task is to say whether the user has "
            "already shown you the word, in this conversation, as a main-task word. Main-task words "
            f"come as '{MAIN_PREFIX}<word>'."
        ),
        (
            "From time to time you will also be asked an unrelated question. Always answer it, then "
            "go back to the main task. Words that appear in unrelated questions, or in your own "
            "answers, do not count as shown."
        ),
        "",
        (
            "Reply with [answer: <answer>], where <answer> is yes or no for the main task, or your "
            "answer to an unrelated question."
        ),
        "An example exchange:",
        "",
        "```example",
        f"input: {MAIN_PREFIX}river",
        "response: [answer: no]",
        f"input: {MAIN_PREFIX}river",
        "response: [answer: yes]",
    ]
    if example is not None:
        word = example_word(example)
        lines += [
            f"input: {example['question']}",
            f"response: [answer: {example['answer']}]",
            f"input: {MAIN_PREFIX}{word}",
            "response: [answer: no] # it was only part of an unrelated question",
        ]
    lines += [
        f"input: {MAIN_PREFIX}lantern",
        "response: [answer: no]",
        f"input: {MAIN_PREFIX}lantern",
        "response: [answer: yes]",
        "```",
        "",
        "The task starts now.",
    ]
    return "\n".join(lines)


def _stream(seed: int, sample: int, name: str) -> random.Random:
    """Return the random stream ``name`` of one conversation (string seed: hash-order free)."""
    return random.Random(f"already_said_that:{seed}:{sample}:{name}")


@dataclass
class Turn:
    """One turn asked: what was shown and what the correct answer is."""

    index: int  # 1-based turn number
    kind: str  # "main" | "distractor"
    message: str  # the user message
    gold: str  # "yes"/"no" for the main task, else the distractor's answer (normalised)
    word: str = ""  # the main-task word
    adversarial: bool = False  # a main-task word drawn from the adversarial pool
    question: dict[str, Any] | None = None  # the distractor record


@dataclass
class Outcome:
    """How the model's reply to one turn is judged."""

    answer: str | None  # parsed answer (None: no [answer: ...])
    correct: bool
    violation: bool  # no [answer: ...], or (main task) an answer other than yes/no
    ends: bool  # this reply ends the conversation
    ending: str = ""  # false_positive | false_negative | violation when it ends


@dataclass
class Conversation:
    """The state of one conversation: ask ``next_turn()``, then ``judge(reply)``, until ``over``."""

    words: Sequence[str]
    pool: Sequence[dict[str, Any]]  # distractor questions ({"id", "source", "question", "answer", "words"})
    seed: int
    sample: int
    distractors: bool = True
    adversarial: bool = True
    max_turns: int = 100
    turns_done: int = 0  # turns passed (the failing one excluded)
    distractors_done: int = 0  # distractor turns passed
    ending: str = ""  # "" while going on, then survived | false_positive | false_negative | violation
    violation_occurred: bool = False  # the original's flag: the last reply judged had no valid answer
    shown: set[str] = field(default_factory=set)  # words shown as main-task words (membership only)
    distracting: set[str] = field(default_factory=set)  # the adversarial pool (sorted before drawing)

    def __post_init__(self) -> None:
        self.unseen = list(self.words)  # the sample's words not shown as main-task words, in sample order
        self.repeatable: list[str] = []  # every word shown as a main-task word, in the order first shown
        self._main = _stream(self.seed, self.sample, "main")
        self._turns = _stream(self.seed, self.sample, "turns")
        self._adversarial = _stream(self.seed, self.sample, "adversarial")
        by_source: dict[str, list[int]] = {}  # pool indices per source, sources in pool order
        for index, record in enumerate(self.pool):
            by_source.setdefault(str(record.get("source", "")), []).append(index)
        questions = _stream(self.seed, self.sample, "questions")
        for order in by_source.values():
            questions.shuffle(order)
        self._cycles = list(by_source.values())
        self._asked = [0] * len(self._cycles)  # questions asked from each source's cycle
        self._sources = _stream(self.seed, self.sample, "sources")
        self._turn: Turn | None = None

    @property
    def over(self) -> bool:
        """Whether the conversation has ended (a main-task failure, or all turns passed)."""
        return bool(self.ending)

    def next_turn(self) -> Turn:
        """Return the next turn to ask (the same one again until it is judged)."""
        if self._turn is not None:
            return self._turn
        if self.over:
            raise RuntimeError("the conversation is over")
        index = self.turns_done + 1
        is_distractor = self._turns.random() < DISTRACTOR_PROBABILITY
        if is_distractor and self.distractors and self._cycles:
            record = self.pool[self._next_question()]
            self._turn = Turn(
                index, "distractor", record["question"], normalise(str(record["answer"])), question=record
            )
        else:
            adversarial = self._adversarial.random() < ADVERSARIAL_PROBABILITY
            if self.adversarial and adversarial and self.distracting:
                pool = sorted(self.distracting)
                word = pool[self._adversarial.randrange(len(pool))]
            else:
                adversarial = False
                word = self._main_word()
            gold = "yes" if word in self.shown else "no"
            self._turn = Turn(index, "main", f"{MAIN_PREFIX}{word}", gold, word=word, adversarial=adversarial)
        return self._turn

    def _main_word(self) -> str:
        """Return a non-adversarial main-task word from two draws of the ``main`` stream: with
        probability 1/2 a word already shown as a main-task word (uniformly among them, adversarial
        ones included, as the original's repeat pool), else a word of the sample not shown yet;
        when the pool chosen is empty (no word shown yet, or every word shown), the other."""
        repeat = self._main.random() < REPEAT_PROBABILITY
        where = self._main.random()  # drawn every time: the stream stays in step across variants
        pool = self.repeatable if repeat and self.repeatable else self.unseen or self.repeatable
        return pool[int(where * len(pool))]

    def _next_question(self) -> int:
        """Return the pool index of the next distractor question: a source drawn uniformly (when
        there are several), then the next question of that source's shuffled cycle."""
        source = self._sources.randrange(len(self._cycles)) if len(self._cycles) > 1 else 0
        cycle = self._cycles[source]
        self._asked[source] += 1
        return cycle[(self._asked[source] - 1) % len(cycle)]

    def judge(self, reply: str) -> Outcome:
        """Judge the model's ``reply`` to the current turn, update the state, and return the outcome.

        As in the original, ``violation_occurred`` is set from every reply judged, so it tells
        whether the last one had no valid answer: a malformed main-task reply (which ends the
        conversation), or a malformed reply to a distractor on the last turn."""
        turn = self.next_turn()
        self._turn = None
        answer = parse_answer(reply)
        if turn.kind == "distractor":
            outcome = Outcome(answer, answer is not None and answer == turn.gold, answer is None, ends=False)
        else:
            outcome = _judge_main(answer, turn.gold)
        self.violation_occurred = outcome.violation
        if outcome.ends:
            self.ending = outcome.ending
            return outcome
        if turn.kind == "distractor":
            self.distractors_done += 1
            self.distracting.update(turn.question.get("words") or alpha_words(turn.message))
        else:
            self._show(turn.word)
        if answer is not None:
            self.distracting.update(alpha_words(answer))
        self.turns_done += 1
        if self.turns_done >= self.max_turns:
            self.ending = "survived"
        return outcome

    def _show(self, word: str) -> None:
        """Record ``word`` as shown as a main-task word: it may be repeated from now on."""
        if word not in self.shown:
            self.shown.add(word)
            self.repeatable.append(word)
        if word in self.unseen:
            self.unseen.remove(word)


def _judge_main(answer: str | None, gold: str) -> Outcome:
    """Return the outcome of a main-task ``answer`` (parsed; None: none) against ``gold``: anything
    but yes/no is a violation; a wrong or malformed answer ends the conversation."""
    violation = answer not in ("yes", "no")
    correct = not violation and answer == gold
    if correct:
        return Outcome(answer, True, False, ends=False)
    ending = "violation" if violation else "false_positive" if answer == "yes" else "false_negative"
    return Outcome(answer, False, violation, ends=True, ending=ending)
