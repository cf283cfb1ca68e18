"""The built-in models of Already Said That (``BASELINES``): random, oracle, and a person (human).

The runner asks them turn by turn like any model; ``item`` is the turn's context (see
``run.turn_item``): ``Key`` (the sample), ``turn``, ``kind`` ("main" or "distractor") and
``gold`` (the correct answer).

- ``random``: the original's random baseline: yes or no at random to every turn, distractor
  questions included. Seeded per (seed, sample, turn) where the original's was not seeded, so a
  turn gets the same answer however the run is ordered or resumed (and turn t of a sample the
  same answer in every variant).
- ``oracle``: perfect memory and the gold distractor answers (it reads ``gold``): it survives
  all turns of every variant, the self-check of the protocol and the data.

Neither of the two reads the conversation (``reads_messages`` False), so they play a set of the
original's wording without its texts (``make all`` stays offline).
- ``human``: a person at a terminal: as the original, the tool shows the whole conversation so
  far every turn (the task, every message and answer), reads a line and wraps it as
  ``[answer: <line>]`` (a line that already holds ``[answer: ...]`` is kept;
  ``y``/``1`` and ``n``/``0``, any case, stand for yes and no, as in the original eval).
"""

import sys
from typing import IO, Any

from common.models.base import Message, ModelError, Reply
from common.models.builtin import BuiltinModel


class RandomSolver(BuiltinModel):
    """The original's random baseline: yes or no at random to every turn, seeded per turn."""

    name = "random"
    seeded = True
    reads_messages = False  # it never looks at the conversation (run.ConversationRunner)

    def complete(self, messages: list[Message], item: dict[str, Any]) -> Reply:
        """Return ``[answer: yes]`` or ``[answer: no]``, drawn by
        ``random.Random(f"{seed}:{Key}:{turn}")``."""
        rng = self.rng(item, item["Key"], item["turn"])
        return Reply(f"[answer: {rng.choice(('yes', 'no'))}]", attempts=0)


class OracleSolver(BuiltinModel):
    """Answers every turn correctly from the turn's gold answer."""

    name = "oracle"
    reads_messages = False  # it reads the turn's gold answer, never the conversation

    def complete(self, messages: list[Message], item: dict[str, Any]) -> Reply:
        """Return ``[answer: <gold>]``."""
        return Reply(f"[answer: {item['gold']}]", attempts=0)


SHORT_ANSWERS = {"y": "yes", "1": "yes", "n": "no", "0": "no"}  # what a person may type for yes/no


class HumanSolver(BuiltinModel):
    """A person typing plain answers: reads ``stdin``, writes the conversation to ``stdout``.

    Asked by name only (``default`` False: never by ``--baselines`` or make), one conversation
    at a time, in order (``concurrency`` cannot be changed)."""

    name = "human"
    default = False

    def __init__(self, seed: int = 0, stdin: IO[str] | None = None, stdout: IO[str] | None = None):
        super().__init__(seed)
        self.stdin = stdin
        self.stdout = stdout

    @property
    def concurrency(self) -> int:
        """One conversation at a time (a property: ``--set concurrency=...`` is refused)."""
        return 1

    def complete(self, messages: list[Message], item: dict[str, Any]) -> Reply:
        """Show the whole conversation so far (the task, every message; the hint to type plain
        answers at a conversation's first turn), read one line, and return it wrapped as
        ``[answer: <line>]`` (``y``/``n`` read as yes/no). Raises ModelError (the run stops;
        finished conversations are kept) when the input ends."""
        stdin, stdout = self.stdin or sys.stdin, self.stdout or sys.stdout
        lines = [f"\n=== conversation {item['Key']}, turn {item['turn']}: the conversation so far ==="]
        lines += [f"{message['role']}: {message['content']}" for message in messages]
        if item["turn"] == 1:
            lines.append("(type plain answers: yes / no, or the answer to a question)")
        stdout.write("\n".join(lines) + "\nyour answer> ")
        stdout.flush()
        line = stdin.readline()
        if not line:
            raise ModelError(
                "the input ended before the conversation did; run the same command again "
                "to play the conversations not finished"
            )
        typed = line.strip()
        if "[answer: " in typed:
            return Reply(typed, attempts=0)
        return Reply(f"[answer: {SHORT_ANSWERS.get(typed.lower(), typed)}]", attempts=0)

    def conversation_over(self, record: dict[str, Any]) -> None:
        """Tell the player how the conversation ended: survived, or the turn, word and answer
        that lost it (the runner calls this after each conversation)."""
        stdout = self.stdout or sys.stdout
        ending, failed = record["ended"], record.get("failed_turn") or {}
        if ending == "survived":
            verdict = f"you survived all {record['turns']} turns"
        else:
            told = failed.get("answer") or "no answer in the [answer: ...] form"
            verdict = (
                f"game lost at turn {failed.get('turn')} ({ending.replace('_', ' ')}): the word "
                f"{failed.get('word')!r} called for {failed.get('gold')!r}, you answered {told!r}"
            )
        stdout.write(
            f"\n=== conversation {record['Key']} over: {verdict}; {record['turns']} turns passed ===\n"
        )
        stdout.flush()


BASELINES = {
    "random": RandomSolver,
    "oracle": OracleSolver,
    "human": HumanSolver,
}
