"""The canvas measures of every group at once (``analysis.accuracy``, ``analysis.tuple_table``: one
grouping of all rows, which a hundred runs need) equal each group's computed alone, as they were
before: the same numbers to the last bit, the same rows in the same order."""

import numpy as np
import pandas as pd
import pytest

from common.canvas import analysis
from common.stats import clustered_wilson_interval


def _alone_interval(rows, field="strict"):
    per_item = rows.groupby("item", sort=True)[field].agg(["sum", "count"])
    return clustered_wilson_interval(per_item["sum"].tolist(), per_item["count"].tolist())


def _alone_accuracy(scored, by):
    rows = []
    for key, group in scored.groupby(by, sort=False):
        p, lo, hi = _alone_interval(group)
        rows.append(
            dict(zip(by, key, strict=True))
            | {
                "trials": len(group),
                "items": group["item"].nunique(),
                "strict": p,
                "lo": lo,
                "hi": hi,
                "contains": _alone_interval(group, "contains")[0],
                "invalid": int(group["invalid"].sum()),
                "refused": int(group["refused"].sum()),
            }
        )
    table = pd.DataFrame(rows)
    order = [t for t in analysis.TASK_ORDER if t in set(table["task"])]
    table["task"] = pd.Categorical(table["task"], order + sorted(set(table["task"]) - set(order)))
    return table.sort_values(by, kind="stable").reset_index(drop=True).astype({"task": str})


def _alone_tuples(scored, trials, by, rates):
    sizes = trials.groupby("tuple_ID")["Key"].size()
    rows = []
    for key, group in scored.groupby(by, sort=False):
        group = group.assign(chance=rates.reindex(group["Key"]).to_numpy())
        counted = group.groupby("tuple")["Key"].size()
        whole = group[group["tuple"].map(counted).to_numpy() == sizes.reindex(group["tuple"]).to_numpy()]
        if whole.empty:
            continue
        per = whole.groupby("tuple").agg(
            item=("item", "first"), right=("strict", "min"), chance=("chance", "prod")
        )
        per["balanced"] = whole.groupby(["tuple", "gold"])["strict"].mean().groupby("tuple").mean()
        per["balanced_chance"] = whole.groupby("tuple")["chance"].mean()
        row = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)) | {"tuples": len(per)}
        for name in ("right", "balanced"):
            clusters = per.groupby("item")[name].agg(["sum", "count"])
            p, lo, hi = clustered_wilson_interval(clusters["sum"].tolist(), clusters["count"].tolist())
            row |= {name: p, f"{name}_lo": lo, f"{name}_hi": hi}
        row |= {
            "right_chance": float(per["chance"].mean()),
            "balanced_chance": float(per["balanced_chance"].mean()),
        }
        rows.append(row)
    return pd.DataFrame(rows)


@pytest.fixture
def runs(monkeypatch):
    """Six runs over 150 trials (tuples of 2 or 3 trials, two tuples an item, three tasks), each
    leaving some trials out (so some tuples are partial), the trials' chance rates drawn."""
    rng = np.random.default_rng(7)
    keys = np.arange(150)
    tuples = np.repeat(np.arange(60), [2 + (t % 2) for t in range(60)])[: len(keys)]
    trials = pd.DataFrame({"Key": keys, "tuple_ID": tuples})
    rates = pd.Series(rng.uniform(0.1, 0.6, len(keys)), index=keys)
    monkeypatch.setattr(analysis, "trial_chance", lambda _: rates)
    frames = []
    for model in ["m5", "m0", "m3", "m1", "m4", "m2"]:  # not in order: groups in the order the rows came
        kept = keys[rng.random(len(keys)) > 0.1]
        strict = (rng.random(len(kept)) < rng.uniform(0.2, 0.9)).astype(float)
        frames.append(
            pd.DataFrame(
                {
                    "model": model,
                    "task": np.array(["count", "existence", "coordinate"])[tuples[kept] % 3],
                    "num_shapes": 1 + tuples[kept] % 4,
                    "item": tuples[kept] // 2,
                    "tuple": tuples[kept],
                    "Key": kept,
                    "gold": np.array(["yes", "no", "2"])[kept % 3],
                    "strict": strict,
                    "contains": np.maximum(strict, rng.random(len(kept)) < 0.3),
                    "invalid": (rng.random(len(kept)) < 0.1).astype(int),
                    "refused": (rng.random(len(kept)) < 0.05).astype(int),
                }
            )
        )
    return pd.concat(frames, ignore_index=True), trials, rates


@pytest.mark.parametrize("by", [["model", "task"], ["model", "task", "num_shapes"]])
def test_accuracy_of_every_group_at_once_is_each_groups_alone(runs, by):
    scored, _, _ = runs
    pd.testing.assert_frame_equal(
        analysis.accuracy(scored, by), _alone_accuracy(scored, by), check_exact=True
    )


@pytest.mark.parametrize("by", [["model"], ["model", "task"]])
def test_tuple_measures_of_every_group_at_once_are_each_groups_alone(runs, by):
    scored, trials, rates = runs
    expected = _alone_tuples(scored, trials, by, rates)
    assert len(expected) and expected["tuples"].sum() > 0
    pd.testing.assert_frame_equal(analysis.tuple_table(scored, trials, by), expected, check_exact=True)
