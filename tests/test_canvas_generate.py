"""Canvas set generation: balance over prefixes, skipped requests, few-shot without leaks, configs."""

import re
from collections import Counter

import pytest

from common.canvas.generate import SetConfig, generate_set, load_config, schedule, summary
from common.canvas.tasks import TASKS
from common.errors import ConfigError
from common.paths import CONFIGS


@pytest.fixture(scope="module")
def built():
    return generate_set(SetConfig(seed=5, items=12, num_shapes=[3, 5]))


def items(trials):
    """One trial per item, in file order."""
    seen, out = set(), []
    for trial in trials:
        if trial["item"] not in seen:
            seen.add(trial["item"])
            out.append(trial)
    return out


def stratum(trial):
    if trial["task"] == "shuffle_tracking":  # balanced over the position asked
        ordinal, end = re.fullmatch(
            r"What shape is (\S+) from the (top|bottom)\?", trial["question"]
        ).groups()
        k = ["first", "second", "third"].index(ordinal)
        return k if end == "bottom" else trial["num_shapes"] - 1 - k
    return trial["goldresp"]


def test_schedule_blocks_hold_every_stratum_once():
    import random

    plan = schedule(["a", "b", "c"], 10, random.Random(0))
    assert len(plan) == 10 and all(sorted(plan[i : i + 3]) == ["a", "b", "c"] for i in (0, 3, 6))


def test_every_prefix_is_balanced_within_each_stratum(built):
    counts: dict = {}
    for trial in items(built.trials):
        key = (trial["task"], trial["num_shapes"])
        counts.setdefault(key, Counter())[stratum(trial)] += 1
        task = TASKS[trial["task"]]()
        strata = task.answer_strata(trial["num_shapes"])
        got = [counts[key][s if trial["task"] != "shuffle_tracking" else int(s)] for s in strata]
        assert max(got) - min(got) <= 1, (key, counts[key])
    # and the file interleaves tasks and sizes: every prefix of 12 items covers all 12 strata
    first = items(built.trials)[:12]
    assert len({(t["task"], t["num_shapes"]) for t in first}) == 12


def test_one_trial_per_item_description_and_fewshot(built):
    per_item = Counter(t["item"] for t in built.trials)
    for trial in items(built.trials):
        kinds = 1 if trial["task"] in ("transitivity", "shuffle_tracking") else 3
        assert per_item[trial["item"]] == kinds * 3
    assert [t["Key"] for t in built.trials] == list(range(len(built.trials)))
    assert len({t["tuple_ID"] for t in built.trials}) == len(built.trials)
    assert all(t["problemname"] == t["task"] and t["problemsize"] == len(t["shapes"]) for t in built.trials)


def test_fewshot_never_repeats_nor_gives_away_the_test_question(built):
    for trial in built.trials:
        test_q = trial["question"]
        shots = re.findall(r"Question: (.+)\nAnswer: (.+)", trial["text"])
        assert trial["text"].count(test_q) == 1, trial["Key"]
        assert all(q != test_q for q, _ in shots)
        if trial["fewshot"] == "none":
            assert not shots
        if trial["fewshot"] == "same_canvas" and trial["task"] in ("coordinate", "transitivity"):
            pair = set(re.fullmatch(r"Where is the (.+) relative to the (.+)\?", test_q).groups())
            for q, _ in shots:
                assert set(re.fullmatch(r"Where is the (.+) relative to the (.+)\?", q).groups()) != pair
        if trial["fewshot"] == "same_canvas" and trial["task"] == "shuffle_tracking":
            named = {a for _, a in shots}
            assert len(set(trial["expectedresp"]) - named) >= 2  # no answer by elimination
        if trial["fewshot"] == "same_canvas" and trial["task"] in ("existence", "count"):
            for q, _ in shots:
                assert not attribute_values(test_q) & attribute_values(q), (test_q, q)


def attribute_values(question):
    """The sizes, colours and kinds a question names ("triangles" -> "triangle")."""
    values = {"small", "large", "red", "blue", "yellow", "green", "square", "circle", "triangle"}
    return {w.removesuffix("s") for w in re.findall(r"[a-z]+", question)} & values


def test_impossible_requests_are_skipped_and_counted():
    built = generate_set(
        SetConfig(
            items=4, num_shapes=[2], tasks=["shuffle_tracking", "transitivity", "existence"], fewshot=["none"]
        )
    )
    assert {t["task"] for t in built.trials} == {"existence"}
    assert sum(built.skipped.values()) == 8
    manifest = summary(SetConfig(), built, 0)
    assert manifest["skipped_total"] == 8
    assert {s["reason"] for s in manifest["skipped"]} == {
        "shuffle_tracking needs at least 3 shapes",
        "transitivity needs at least 3 shapes",
    }
    full = generate_set(
        SetConfig(
            items=2, num_shapes=[24], tasks=["existence"], fewshot=["none"], descriptions=["coordinates"]
        )
    )
    assert [t["goldresp"] for t in full.trials] == ["Yes"] and sum(full.skipped.values()) == 1


@pytest.mark.parametrize("path", sorted((CONFIGS / "canvas").glob("*.yaml")), ids=lambda p: p.stem)
def test_every_config_loads_and_generates(path):
    cfg = load_config(path, {"items": 1})
    built = generate_set(cfg)
    assert built.trials and built.items <= len(cfg.tasks) * len(cfg.num_shapes)


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("seed: 1\nitemz: 3\n", "bad.yaml:2: unknown config key: itemz"),
        ("tasks: [count, sorting]\n", "bad.yaml:1: field 'tasks.1': unknown task 'sorting'"),
        ("num_shapes:\n  - 3\n  - 30\n", "bad.yaml:3: field 'num_shapes.1': 30 is not between 1 and 24"),
        ("fewshot: [some]\n", "bad.yaml:1: field 'fewshot.0': 'some' is not one of"),
        ("geometry:\n  side: {small: 2}\n", "bad.yaml:2: field 'geometry.side'"),
        ("items: many\n", "bad.yaml:1: field 'items': expected int"),
    ],
)
def test_bad_configs_name_file_line_and_field(tmp_path, text, fragment):
    (tmp_path / "bad.yaml").write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path / "bad.yaml")
    assert fragment in str(err.value)
