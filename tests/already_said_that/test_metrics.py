"""Already Said That metrics as the original computes them: the violation flag of the last turn,
and the 14 metrics recomputed from the turn log, line by line as the original's loop and its
aggregation do, against ``analysis.seed_metrics``."""

import math
import random

import numpy as np
import pytest

from common.already_said_that import analysis
from common.already_said_that.generate import load_set
from common.already_said_that.run import ConversationRunner, items, read_turns
from common.models.base import Reply
from common.models.builtin import BuiltinModel
from tests.already_said_that.fixtures import write_set


class Scripted(BuiltinModel):
    """Answers from the gold, except where ``wrong(item, draw)`` returns a reply of its own
    (``draw``: a number in [0, 1) seeded per sample and turn)."""

    name = "scripted"

    def __init__(self, wrong=lambda item, draw: None):
        super().__init__(0)
        self.wrong = wrong

    def complete(self, messages, item):
        draw = random.Random(f"{item['Key']}:{item['turn']}").random()
        return Reply(self.wrong(item, draw) or f"[answer: {item['gold']}]", attempts=0)


def play(tmp_path, variant, model, samples=20):
    """Play ``model`` on a fixture set through the conversation runner; return (records, turn lines)."""
    data = load_set(write_set(tmp_path / variant, variant, samples=samples))
    with ConversationRunner(data, tmp_path / f"{variant}-turns.jsonl", model.name) as player:
        records = [player.answer(model, item) for item in items(data)]
    return records, read_turns(tmp_path / f"{variant}-turns.jsonl")


def test_a_malformed_distractor_reply_on_the_last_turn_is_a_violation(tmp_path):
    """The original sets its violation flag at every turn and a distractor turn does not stop the
    loop, so a conversation whose 100th turn is a distractor answered without [answer: ...]
    passes all 100 turns and still counts in violation_rate; on a main-task 100th turn the
    malformed reply ends it at 99 turns, a violation too."""
    records, turns = play(
        tmp_path, "which_is_heavier", Scripted(lambda item, draw: item["turn"] == 100 and "?")
    )
    last = {t["Key"]: t for t in turns if t["turn"] == 100}
    on_question = [r for r in records if last[r["Key"]]["kind"] == "distractor"]
    on_word = [r for r in records if last[r["Key"]]["kind"] == "main"]
    assert on_question and on_word
    for record in on_question:
        assert (record["ended"], record["turns"], record["violation_occurred"]) == ("survived", 100, True)
    for record in on_word:
        assert (record["ended"], record["turns"], record["violation_occurred"]) == ("violation", 99, True)
    m = analysis.seed_metrics(analysis.conversation_frame(records))
    assert m["violation_rate"] == 1.0 and m["survived"] == len(on_question)
    # a malformed reply to an earlier question is forgotten by the next turn's flag
    records, _ = play(
        tmp_path / "early",
        "which_is_heavier",
        Scripted(lambda item, draw: item["kind"] == "distractor" and "?"),
    )
    survivors = [r for r in records if last[r["Key"]]["kind"] != "distractor"]
    assert survivors and all(r["violations"] > 0 and not r["violation_occurred"] for r in survivors)


def original_metrics(turns: list[dict]) -> dict[str, float]:
    """Return the original's 14 metrics of the conversations in ``turns`` (a turn log), computed
    the way its loop and ``_compute_agg_metrics`` do, from the turn lines alone."""
    conversations: dict[int, list[dict]] = {}
    for line in turns:
        conversations.setdefault(line["Key"], []).append(line)
    logged = []
    for lines in conversations.values():
        passed = [t for t in lines if t["kind"] == "distractor" or t["correct"]]  # the failing turn ends it
        failing = lines[-1] if lines[-1]["kind"] == "main" and not lines[-1]["correct"] else None
        accuracy = [t["correct"] for t in lines if t["kind"] == "distractor"]
        logged.append(
            {
                "num_turns": len(passed),
                "num_distractors": sum(t["kind"] == "distractor" for t in passed),
                "was_false_pos": bool(failing) and failing["answer"] == "yes",
                "was_false_neg": bool(failing) and failing["answer"] == "no",
                "violation_occurred": lines[-1]["violation"],  # set every turn: the last one's
                "distractor_accuracy": np.mean(accuracy) if accuracy else np.nan,
            }
        )
    out = {}
    for name in ("num_turns", "num_distractors"):
        values = np.array([x[name] for x in logged])
        out |= {
            f"avg_{name}": np.mean(values),
            f"stddev_{name}": np.std(values),
            f"median_{name}": np.median(values),
            f"max_{name}": np.max(values),
            f"min_{name}": np.min(values),
        }
    out["false_positive_rate"] = np.mean([x["was_false_pos"] for x in logged])
    out["false_negative_rate"] = np.mean([x["was_false_neg"] for x in logged])
    out["avg_distractor_accuracy"] = np.nanmean([x["distractor_accuracy"] for x in logged])
    out["violation_rate"] = np.mean([x["violation_occurred"] for x in logged])
    return {name: float(value) for name, value in out.items()}


def sloppy(item, draw):
    """Format slips on questions, wrong and malformed main-task answers now and then."""
    if item["kind"] == "distractor":
        return "I am not sure" if draw < 0.2 else "[answer: maybe]" if draw < 0.4 else None
    if draw < 0.02:
        return "[answer: perhaps]"
    return {"yes": "[answer: no]", "no": "[answer: yes]"}[item["gold"]] if draw > 0.97 else None


@pytest.mark.filterwarnings("ignore:Mean of empty slice")  # no question at all: NaN, as the original
@pytest.mark.parametrize("variant", ["which_is_heavier", "mixed", "distractorless"])
def test_the_14_metrics_agree_with_the_originals_computation(tmp_path, variant):
    guessing = Scripted(lambda item, draw: draw < 0.5 and "[answer: yes]")
    for index, model in enumerate((Scripted(sloppy), guessing)):
        records, turns = play(tmp_path / str(index), variant, model, samples=60)
        ours = analysis.seed_metrics(analysis.conversation_frame(records))
        theirs = original_metrics(turns)
        assert len(theirs) == 14
        for name, value in theirs.items():
            assert ours[name] == pytest.approx(value, abs=1e-12) or (
                math.isnan(value) and math.isnan(ours[name])
            )
        assert (ours["violation_rate"] > 0) == (index == 0)
