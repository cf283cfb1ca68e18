"""Canvas set generation: balance over prefixes, skipped requests, few-shot without leaks, configs."""

import re
from collections import Counter

import pytest

from common.canvas.build import content_key, generate_set, schedule
from common.canvas.generate import summary
from common.canvas.setconfig import SetConfig, load_config
from common.canvas.tasks import TASKS
from common.errors import ConfigError
from common.paths import CONFIGS
from tests.sandbox import shipped


@pytest.fixture(scope="module")
def built():
    return generate_set(SetConfig(seed=5, items=12, num_shapes=[3, 12]))


def items(trials):
    """One trial per item, in file order."""
    seen, out = set(), []
    for trial in trials:
        if trial["item"] not in seen:
            seen.add(trial["item"])
            out.append(trial)
    return out


def test_schedule_blocks_hold_every_stratum_once():
    import random

    plan = schedule(["a", "b", "c"], 10, random.Random(0))
    assert len(plan) == 10 and all(sorted(plan[i : i + 3]) == ["a", "b", "c"] for i in (0, 3, 6))
    # composite strata: every prefix is balanced over the first label too
    strata = [f"{a}:{m}" for a in ("Yes", "No") for m in "abcdefg"]
    plan = schedule(strata, 30, random.Random(1))
    assert sorted(plan[:14]) == sorted(strata)
    for k in range(1, 31):
        answers = Counter(p.split(":")[0] for p in plan[:k])
        assert abs(answers["Yes"] - answers["No"]) <= 1


def test_every_prefix_is_balanced_within_each_stratum(built):
    counts: dict = {}
    for trial in items(built.trials):
        key = (trial["task"], trial["num_shapes"])
        labels = trial["stratum"].split("|")
        axes = TASKS[trial["task"]]().strata(trial["num_shapes"])
        assert len(labels) == len(axes)
        for axis, (label, options) in enumerate(zip(labels, axes, strict=True)):
            counter = counts.setdefault((key, axis), Counter())
            counter[label] += 1
            got = [counter[option] for option in options]
            assert max(got) - min(got) <= 1, (key, axis, counter)
        answers = counts.setdefault((key, "answer"), Counter())
        answers[labels[0].split(":")[0]] += 1
    # composite strata (existence "Yes:colour", existence tracking "Yes:2") keep the answers even
    for (key, axis), counter in counts.items():
        if axis == "answer" and key[0] in ("existence", "transitivity", "existence_tracking"):
            assert max(counter.values()) - min(counter.values()) <= 1, (key, counter)
    # and the file interleaves tasks and sizes: every prefix of 11 items covers the 11 strata that
    # run (transitivity needs 12 shapes)
    first = items(built.trials)[:11]
    assert len({(t["task"], t["num_shapes"]) for t in first}) == 11
    assert ("transitivity", 3) not in {(t["task"], t["num_shapes"]) for t in built.trials}


MEMBERS = {"existence": 4, "count": 2, "transitivity": 4, "coordinate": 2, "existence_tracking": 2}


def test_one_trial_per_member_description_and_fewshot(built):
    per_item = Counter(t["item"] for t in built.trials)
    per_tuple = Counter(t["tuple_ID"] for t in built.trials)
    for trial in items(built.trials):
        kinds = 1 if trial["task"] in ("transitivity", "shuffle_tracking", "coordinate") else 3
        # no same-canvas shuffle examples; no pair of 3 shapes avoids both asked coordinate shapes
        few = trial["task"] == "shuffle_tracking" or (
            trial["task"] == "coordinate" and trial["num_shapes"] == 3
        )
        styles = 2 if few else 3
        members = MEMBERS.get(trial["task"], 2)
        assert per_item[trial["item"]] in (kinds * styles * members, kinds * (styles - 1) * members)
        assert per_tuple[trial["tuple_ID"]] == members
    assert {t["description"] for t in built.trials if t["task"] == "coordinate"} == {"coordinates"}
    keys = [t["Key"] for t in built.trials]
    assert len(set(keys)) == len(keys) and all(isinstance(k, int) and 0 <= k < 2**53 for k in keys)
    assert all(t["Key"] == content_key(t["text"], t["goldresp"]) for t in built.trials)
    tuples: dict = {}
    for t in built.trials:  # a tuple: one item, one variant, its members in order
        tuples.setdefault(t["tuple_ID"], []).append(t)
    for members in tuples.values():
        assert len({(m["item"], m["description"], m["fewshot"]) for m in members}) == 1
        assert [m["member"] for m in members] == list(range(len(members)))
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
        if trial["fewshot"] == "same_canvas":  # no example asks a question of the tuple
            asked = {t["question"] for t in built.trials if t["tuple_ID"] == trial["tuple_ID"]}
            assert not asked & {q for q, _ in shots}
        assert not (trial["fewshot"] == "same_canvas" and trial["task"] == "shuffle_tracking")  # elimination
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
        TASKS["transitivity"]().unsupported(2),
    }
    full = generate_set(
        SetConfig(
            items=2, num_shapes=[24], tasks=["existence"], fewshot=["none"], descriptions=["coordinates"]
        )
    )
    assert full.trials == [] and sum(full.skipped.values()) == 2
    why = "every identity is on the canvas: every answer would be Yes"
    assert {reason for *_, reason in full.skipped} == {why}
    cfg = SetConfig(
        items=2, num_shapes=[24], tasks=["existence"], fewshot=["none"], descriptions=["coordinates"]
    )
    assert summary(cfg, full, 0)["not_run"] == [{"task": "existence", "num_shapes": 24, "reasons": [why]}]


def test_large_canvases_balance_every_task_that_runs():
    """At 24 shapes each task either runs with balanced answers or is listed as not run, with why."""
    cfg = SetConfig(
        items=8, num_shapes=[24], fewshot=["none"], descriptions=["coordinates"], canvas_attempts=20
    )
    built = generate_set(cfg)
    manifest = summary(cfg, built, 0)
    not_run = {"existence", "count", "shuffle_tracking", "existence_tracking"}
    assert {entry["task"] for entry in manifest["not_run"]} == not_run
    assert all(entry["reasons"] for entry in manifest["not_run"])
    answers = manifest["item_answers_by_task"]
    assert set(answers["transitivity"].values()) == {2} and set(answers["coordinate"].values()) == {1}


@pytest.mark.parametrize("path", shipped(CONFIGS / "canvas"), ids=lambda p: p.stem)
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
        ("seed: 1\nnum_shapes: []\n", "bad.yaml:2: field 'num_shapes': needs at least one entry"),
        ("fewshot: []\n", "bad.yaml:1: field 'fewshot': needs at least one entry"),
    ],
)
def test_bad_configs_name_file_line_and_field(tmp_path, text, fragment):
    (tmp_path / "bad.yaml").write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path / "bad.yaml")
    assert fragment in str(err.value)


def test_the_readmes_task_example_makes_a_set_with_its_twins(monkeypatch):
    """The task in common/canvas/README.md ("Adding a task"), registered as it says, generates a
    set whose every twin reads like its item through the view of the input it varies."""
    from common import paths
    from common.canvas import views

    readme = (paths.ROOT / "common" / "canvas" / "README.md").read_text()
    code = re.search(r"```python\n# common/canvas/tasks/above.py\n(.*?)```", readme, re.DOTALL).group(1)
    namespace: dict = {}
    exec(compile(code, "above.py", "exec"), namespace)
    monkeypatch.setitem(TASKS, "above", namespace["AboveTask"])
    monkeypatch.setitem(views.VIEWS, "above", [views.SUBJECT])
    monkeypatch.setitem(views.INPUT_VIEWS, "above", {"subject": views.SUBJECT})
    built = generate_set(SetConfig(seed=2, items=6, num_shapes=[5], tasks=["above"]))
    tuples: dict = {}
    for trial in built.trials:
        tuples.setdefault(trial["tuple_ID"], []).append(trial)
    assert len(tuples) >= 6
    for item, twin in tuples.values():
        assert item["goldresp"] != twin["goldresp"] and twin["varies"] == ["subject"]
        seen = [views.SUBJECT.mask(views.parts(t["text"])).text() for t in (item, twin)]
        assert seen[0] == seen[1]
