"""Contrast twins: every item is asked with, for each input its task needs (``Task.inputs``), a twin
that differs from it in that input alone and has another gold answer. Checked generically on
every task, from the generated trials alone: through the view that hides the input
(``views.INPUT_VIEWS``) an item and its twin read the same, so any rule of what the view leaves
(thousands of random functions of it, and the suite's own shortcuts and partial skills declared
blind to that input) answers them alike and gets at most one of the two right."""

import dataclasses
import hashlib
import itertools
from collections import defaultdict

import pytest

from common.canvas import views
from common.canvas.build import generate_set
from common.canvas.partial import PARTIAL_SKILLS
from common.canvas.setconfig import SetConfig
from common.canvas.shortcuts import SHORTCUTS
from common.canvas.tasks import TASKS

RANDOM_RULES = 2000


@pytest.fixture(scope="module")
def tuples():
    """Return the trials of a small set of every task, grouped by tuple (members in order)."""
    cfg = dataclasses.replace(SetConfig(seed=11), num_shapes=[3, 6, 12], items=6)
    grouped = defaultdict(list)
    for trial in generate_set(cfg).trials:
        grouped[trial["tuple_ID"]].append(trial)
    return list(grouped.values())


def pairs_of(tuples, task=None):
    """Yield (input, a, b) for every two members of a tuple that differ in exactly one input."""
    for members in tuples:
        if task and members[0]["task"] != task:
            continue
        for a, b in itertools.combinations(members, 2):
            differ = set(a["varies"]) ^ set(b["varies"])
            if len(differ) == 1:
                yield next(iter(differ)), a, b


def seen(view, trial) -> str:
    """Return the prompt of ``trial`` as ``view`` leaves it."""
    return view.mask(views.parts(trial["text"])).text()


@pytest.mark.parametrize("task", list(TASKS))
def test_every_item_has_a_twin_for_each_input_its_task_needs(tuples, task):
    mine = [members for members in tuples if members[0]["task"] == task]
    assert mine, f"no {task} tuple generated"
    for members in mine:
        assert members[0]["varies"] == []
        varied = {name for m in members[1:] for name in m["varies"] if len(m["varies"]) == 1}
        assert varied == set(TASKS[task].inputs), (task, [m["varies"] for m in members])


@pytest.mark.parametrize("task", list(TASKS))
def test_an_item_and_its_twin_read_alike_without_the_varied_input_and_differ_in_gold(tuples, task):
    count = 0
    for name, a, b in pairs_of(tuples, task):
        view = views.INPUT_VIEWS[task][name]
        assert seen(view, a) == seen(view, b), (task, name, a["text"], b["text"])
        assert a["goldresp"] != b["goldresp"]
        assert a["text"] != b["text"]
        count += 1
    assert count >= 10


def random_rule(seed: int):
    """Return a random function of a (blinded) prompt to one of its options."""

    def rule(text: str, options: list[str]) -> str:
        digest = hashlib.sha256(f"{seed}\x00{text}".encode()).digest()
        return options[int.from_bytes(digest[:4], "big") % len(options)]

    return rule


def test_thousands_of_random_rules_blind_to_an_input_get_at_most_one_of_each_pair(tuples):
    pairs = []
    for name, a, b in pairs_of(tuples):
        view = views.INPUT_VIEWS[a["task"]][name]
        pairs.append((seen(view, a), seen(view, b), a["expectedresp"], a["goldresp"], b["goldresp"]))
    both = right = 0
    for seed in range(RANDOM_RULES):
        rule = random_rule(seed)
        for text_a, text_b, options, gold_a, gold_b in pairs[seed % 7 :: 7]:  # a seventh per rule
            ra, rb = rule(text_a, options), rule(text_b, options)
            both += ra == gold_a and rb == gold_b
            right += (ra == gold_a) + (rb == gold_b)
    assert both == 0
    assert right > 0  # the rules do get answers right: one of a pair, never both


@pytest.mark.parametrize("rule", [*SHORTCUTS, *PARTIAL_SKILLS], ids=lambda r: r.name)
def test_the_suites_rules_blind_to_an_input_answer_its_twins_alike(tuples, rule):
    checked = 0
    for name, a, b in pairs_of(tuples, rule.task):
        if name not in rule.blind_to:
            continue
        ra, rb = rule.rule(a["text"]), rule.rule(b["text"])
        assert ra == rb, (rule.name, name, a["text"], b["text"])
        assert not (ra == a["goldresp"] and rb == b["goldresp"])
        checked += 1
    assert checked or not rule.blind_to
