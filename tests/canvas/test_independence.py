"""The invariant of every canvas task: the answer is drawn first and every surface choice apart
from it. For each task, 10,000 fresh trials (one member of a new item's tuple each, so they are
independent; 2,500 in the fast suite); for each generic surface feature (``surface.features``:
where and how often the question's shapes are named, in which order, the kind of each of the last
six sentences, the sentence count, the prompt's length decile, ...) a chi-square test of
independence from the gold answer within each stratum of the design, per variant: no feature
reaches p < 0.001 after a Bonferroni correction (the features that are the skill itself are listed
in ``surface.EXEMPT`` with why). The test fails on planted leaks (``common.canvas.power``)."""

import pandas as pd
import pytest

from common.canvas import power, surface
from common.canvas.build import fresh_trials
from common.canvas.setconfig import SetConfig, load_config
from common.paths import CONFIGS

TRIALS = 10_000
TASKS = ["existence", "count", "transitivity", "coordinate", "existence_tracking", "shuffle_tracking"]


@pytest.fixture(
    scope="module",
    params=[pytest.param(1.0, marks=pytest.mark.slow, id="10000"), pytest.param(0.25, id="2500")],
)
def tested(request):
    """Every task's fresh trials (the standard config's sizes and variants): 10,000 per task (slow:
    `make test-all`), and a quarter of that in the fast suite."""
    cfg = load_config(CONFIGS / "canvas" / "standard.yaml")
    count = round(TRIALS * request.param)
    frames = [pd.DataFrame(fresh_trials(cfg, task, count, f"independence:{task}")) for task in TASKS]
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
    tasks = set(TASKS) - ({"count"} if request.node.callspec.params["tested"] < 1 else set())
    assert len(tested_) > 150 and set(tested_["task"]) >= tasks
    failing = tested_[tested_["p_bonferroni"] < 0.001]
    assert failing.empty, failing[["task", "variant", "feature", "chi2", "df", "p"]].to_string()


def test_the_exempt_features_are_the_skill_and_say_why(tested):
    _, table = tested
    exempt = table[table["exempt"] != ""]
    assert set(zip(exempt["task"], exempt["feature"], strict=True)) <= set(surface.EXEMPT)
    assert all(len(reason) > 60 for reason in surface.EXEMPT.values())


@pytest.mark.parametrize(
    "leak, feature",
    [(power.LEAKS[3], "end_1"), (power.LEAKS[1], "last_pair_kind")],
    ids=["asked shape's event told last", "subject's link told last"],
)
def test_the_test_fails_on_planted_leaks(leak, feature):
    cfg = SetConfig(seed=4, num_shapes=[12], fewshot=["none"])
    trials = pd.DataFrame(fresh_trials(cfg, power.plant(leak, 1.0), 2000, "planted"))
    table = surface.independence(trials)
    flagged = table[(table["exempt"] == "") & (table["p_bonferroni"] < 0.001)]
    assert feature in set(flagged["feature"]), table.sort_values("p").head()
