"""The ablation check: its classifiers find a planted rule and keep to chance on noise, it fails on
a deliberately leaky generator (the old existence tracking, the old transitivity chain) and
passes on the shipped sets."""

import numpy as np
import pandas as pd
import pytest

from common.canvas import ablation, learners
from common.canvas.generate import SetConfig, generate_set, load_config
from common.canvas.tasks import TASKS
from common.canvas.tasks.existence_tracking import ExistenceTrackingTask
from common.canvas.tasks.transitivity import TransitivityTask
from common.paths import CONFIGS
from common.stats import wilson_interval


def rows_of(features: list[dict], gold: list[bool], per_trial: int = 2) -> learners.Rows:
    """Rows of trials of ``per_trial`` candidates each, one item and one stratum per trial."""
    trials = [i // per_trial for i in range(len(features))]
    return learners.Rows.build(pd.DataFrame(features), trials, trials, [0] * len(trials), gold)


def test_the_search_finds_a_planted_feature_and_keeps_to_chance_on_noise():
    rng = np.random.default_rng(0)
    features, gold, noise = [], [], []
    for _ in range(200):
        clue, answer = rng.integers(2), rng.integers(2)
        for label in (0, 1):
            features.append({"label": label, "clue": int(clue), "junk": int(rng.integers(3))})
            gold.append(label == clue)  # the clue gives the answer
            noise.append(label == answer)  # nothing gives the answer
    planted = learners.best(rows_of(features, gold))
    assert "clue" in repr(planted) or "logistic" in repr(planted)
    assert learners.accuracy(planted, rows_of(features, gold)) == 1.0
    assert learners.cross_fit(rows_of(features, gold))[0].all()
    right, _ = learners.cross_fit(rows_of(features, noise))
    lo, hi = wilson_interval(int(right.sum()), len(right))
    assert lo <= 0.5 <= hi


def test_folds_split_by_item_and_stratum():
    trials = list(range(12))
    strata = ["a"] * 4 + ["b"] * 8
    rows = learners.Rows.build(pd.DataFrame({"label": [0] * 12}), trials, trials, strata, [True] * 12)
    folds = learners.folds(rows, 4)
    assert sum(f.sum() for f in folds) == 12 and all(f.sum() == 3 for f in folds)
    for stratum in ("a", "b"):  # each stratum in every fold, as evenly as its size allows
        counts = [int((f & (np.array(strata) == stratum)).sum()) for f in folds]
        assert max(counts) - min(counts) <= 1


class OldTracking(ExistenceTrackingTask):
    """The old behaviour: after a two-event history the one other event is a removal when the
    answer is Yes and an addition when it is No (so the other shapes' events tell the answer)."""

    def answer_strata(self, num_shapes):
        return [
            s for s in super().answer_strata(num_shapes) if s.endswith("last-remove") == s.startswith("Yes")
        ]


class OldTransitivity(TransitivityTask):
    """The old behaviour on 3 shapes: subject and reference on either side of the pivot, so the
    sentence introducing the subject gives the answer."""

    min_shapes = 3

    def generate_questions(self, shapes, rng, geometry, selected=None, examples=2):
        from common.canvas import describe
        from common.canvas.tasks.base import Impossible, Questions
        from common.canvas.tasks.transitivity import _side

        answer = self.pick_stratum(rng, len(shapes), selected).split(":")[0]
        back = describe.OPPOSITE[answer]
        for pivot in shapes:
            ahead, behind = _side(pivot, shapes, answer, geometry), _side(pivot, shapes, back, geometry)
            if ahead and behind:
                question = f"Where is the {ahead[0].name} relative to the {behind[0].name}?"
                text = describe.chain(pivot, [(answer, ahead[:1]), (back, behind[:1])])
                return Questions([(question, answer)], ["Left", "Right", "Above", "Below"], description=text)
        raise Impossible("no 3-shape chain")

    def unsupported(self, num_shapes, stratum=None):
        return None


@pytest.mark.parametrize(
    "task, leaky, check",
    [
        ("existence_tracking", OldTracking, "existence_tracking"),
        ("transitivity", OldTransitivity, "transitivity, one sentence"),
    ],
)
def test_the_check_flags_a_leaky_generator(monkeypatch, task, leaky, check):
    monkeypatch.setitem(TASKS, task, leaky)
    built = generate_set(SetConfig(seed=2, items=32, num_shapes=[3, 5], tasks=[task], fewshot=["none"]))
    row = ablation.check(pd.DataFrame(built.trials)).set_index("check").loc[check]
    assert not row["at_chance"] and row["lo"] > row["chance"] + 0.2, row


def test_the_check_holds_chance_on_a_small_set():
    built = generate_set(SetConfig(seed=2, items=8, num_shapes=[5, 8]))
    table = ablation.check(pd.DataFrame(built.trials))
    assert set(table["check"]) == set(ablation.CHECKS)
    assert table["at_chance"].all(), table


@pytest.mark.parametrize("name", ["standard", "scaling"])
def test_the_shipped_sets_hold_chance_on_every_check(name):
    trials = pd.DataFrame(generate_set(load_config(CONFIGS / "canvas" / f"{name}.yaml")).trials)
    table = ablation.check(trials)
    assert table["at_chance"].all(), table[["check", "score", "lo", "hi", "chance"]]
