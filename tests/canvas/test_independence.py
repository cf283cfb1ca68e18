"""The invariant of every canvas task: the answer is drawn first and every surface choice apart
from it. For each task, at least 10,000 trials of fresh seeds; for each generic surface feature
(``surface.features``: where and how often the question's shapes are named, in which order, the
kind of each of the last six sentences, the sentence count, the prompt's length decile, ...) a
chi-square test of independence from the gold answer within each stratum of the design, per
variant: no feature reaches p < 0.001 after a Bonferroni correction (the features that are the
skill itself are listed in ``surface.EXEMPT`` with why). The test fails on main's generators."""

import dataclasses

import pandas as pd
import pytest

from common.canvas import surface
from common.canvas.generate import SetConfig, generate_set, load_config
from common.canvas.tasks import TASKS
from common.paths import CONFIGS
from tests.canvas.legacy import LegacyExistenceTracking, LegacyTransitivity

TRIALS = 10_000
# items per (task, number of shapes) that make TRIALS trials with the standard config's variants
ITEMS = {
    "existence": 371,
    "count": 371,
    "transitivity": 3334,  # one size (7 shapes are needed), three variants
    "coordinate": 1250,
    "existence_tracking": 371,
    "shuffle_tracking": 1667,
}


@pytest.fixture(
    scope="module",
    params=[pytest.param(1.0, marks=pytest.mark.slow, id="10000"), pytest.param(0.25, id="2500")],
)
def tested(request):
    """Every task's trials of fresh seeds (from the standard config: its sizes and variants): 10,000
    per task (slow: `make test-all`), and a quarter of that in the fast suite."""
    cfg = load_config(CONFIGS / "canvas" / "standard.yaml")
    frames = []
    for task, items in ITEMS.items():
        scaled = dataclasses.replace(cfg, items=round(items * request.param), tasks=[task])
        built = generate_set(scaled, seed=f"independence:{task}:{request.param}")
        frames.append(pd.DataFrame(built.trials))
    trials = pd.concat(frames, ignore_index=True)
    return trials, surface.independence(trials)


def test_every_task_has_its_trials_of_fresh_seeds(tested, request):
    trials, _ = tested
    wanted = TRIALS * request.node.callspec.params["tested"]
    assert all(trials["task"].value_counts() >= wanted * 0.99), trials["task"].value_counts()


def test_no_surface_feature_depends_on_the_answer(tested, request):
    _, table = tested
    tested_ = table[table["exempt"] == ""]
    # count is tested within (number of shapes, query type): a quarter of the trials leaves its
    # strata too thin, so the fast suite tests the five others
    tasks = set(ITEMS) - ({"count"} if request.node.callspec.params["tested"] < 1 else set())
    assert len(tested_) > 150 and set(tested_["task"]) >= tasks
    failing = tested_[tested_["p_bonferroni"] < 0.001]
    assert failing.empty, failing[["task", "variant", "feature", "chi2", "df", "p"]].to_string()


def test_the_exempt_features_are_the_skill_and_say_why(tested):
    _, table = tested
    exempt = table[table["exempt"] != ""]
    assert set(zip(exempt["task"], exempt["feature"], strict=True)) <= set(surface.EXEMPT)
    assert all(len(reason) > 60 for reason in surface.EXEMPT.values())


@pytest.mark.parametrize(
    "task, leaky, feature",
    [
        ("existence_tracking", LegacyExistenceTracking, "end_2"),
        ("transitivity", LegacyTransitivity, "first_pair_kind"),
    ],
)
def test_the_test_fails_on_mains_generator(monkeypatch, task, leaky, feature):
    monkeypatch.setitem(TASKS, task, leaky)
    cfg = SetConfig(seed=4, items=500, num_shapes=[5, 8], tasks=[task], fewshot=["none"], events=4)
    table = surface.independence(pd.DataFrame(generate_set(cfg).trials))
    flagged = table[(table["exempt"] == "") & (table["p_bonferroni"] < 0.001)]
    assert feature in set(flagged["feature"]), table.sort_values("p").head()
