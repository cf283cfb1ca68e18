"""Repeated sampling: k answers per item asked, cached and recorded apart; k = 1 exactly as before;
the statistics of the draws against hand-computed values, scipy and a coverage simulation; the
tables a suite's section gains."""

import itertools
import json
import math
import random

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from common import sampling
from common.models.cache import ResponseCache
from common.models.client import HTTPModel
from common.models.independence import identity, item_seed
from common.models.resolve import resolve_model
from common.models.stub_server import StubServer
from common.results import read_results
from common.stats import mean_interval, pairwise_exact_tests, pass_at_k
from common.trials.baselines import BASELINES
from tests.models.model_helpers import make_config, make_items, run_items
from tests.worldsense.fixtures import answers_for, tf_tuple, write_testset
from tests.worldsense.fixtures import section as worldsense_section


# ---- the statistics ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "n, c, k", [(5, 2, 1), (5, 2, 2), (5, 2, 3), (4, 3, 2), (3, 0, 2), (6, 6, 6), (7, 3, 4)]
)
def test_pass_at_k_is_the_share_of_k_subsets_with_a_right_answer(n, c, k):
    answers = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    brute = sum(any(answers[i] for i in subset) for subset in subsets) / len(subsets)
    assert pass_at_k(n, c, k) == pytest.approx(brute)


def test_pass_at_k_hand_values_and_bad_input():
    assert (pass_at_k(5, 2, 1), pass_at_k(5, 2, 2)) == (pytest.approx(0.4), pytest.approx(0.7))
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_at_k(3, 1, 4)


def frame(rows):
    return pd.DataFrame(rows, columns=["Key", "draw", "score", "answer"])


def test_majority_vote_disagreement_and_draw_rates_by_hand():
    answers = frame(
        [
            (1, 0, 1.0, "A"), (1, 1, 0.0, "B"), (1, 2, 1.0, "A"),  # majority A: right
            (2, 0, 0.0, "B"), (2, 1, 1.0, "A"), (2, 2, 0.0, "B"),  # majority B: wrong
            (3, 0, 1.0, "A"), (3, 1, 0.0, "B"), (3, 2, 0.0, None),  # a three-way tie: the first drawn
            (4, 0, 1.0, "A"), (4, 1, 1.0, "A"), (4, 2, 1.0, "A"),  # all agree
        ]
    )  # fmt: skip
    assert sampling.majority_vote(answers) == 0.75
    assert sampling.disagreement(answers) == 0.75
    assert sampling.draws(answers) == 3
    rates = [0.75, 0.5, 0.5]  # per draw: the share of the 4 items right
    mean, se = sampling.draw_rates(answers)
    assert mean == pytest.approx(np.mean(rates)) and se == pytest.approx(np.std(rates, ddof=1) / math.sqrt(3))
    assert sampling.mean_pass_at_k(answers, 3) == 1.0 and sampling.mean_pass_at_k(
        answers, 1
    ) == pytest.approx(7 / 12)


def test_paired_tests_on_item_means_are_the_sign_test_of_scipy():
    rng = random.Random(3)
    a = {key: np.mean([rng.random() < 0.7 for _ in range(4)]) for key in range(60)}
    b = {key: np.mean([rng.random() < 0.5 for _ in range(4)]) for key in range(60)}
    [test] = pairwise_exact_tests(pd.DataFrame({"a": a, "b": b})).to_dict("records")
    wins, losses = sum(a[k] > b[k] for k in a), sum(b[k] > a[k] for k in a)
    assert (test["a_better"], test["b_better"]) == (wins, losses)
    assert test["p"] == pytest.approx(scipy.stats.binomtest(wins, wins + losses).pvalue)


def _drawn_runs(sets, runs_per_set, items=30, k=3, seed=5):
    """Runs of several sets, k draws each of the same Keys 0..items-1 in every set (so that runs of
    two sets share Keys, as Already Said That's sets do), each run's right rate its own."""
    rng = random.Random(seed)
    frames, groups = {}, {}
    for name in sets:
        for r in range(runs_per_set):
            label = f"{name} {'random' if r == 0 else f'model-{r:02d}'}"
            rate = 0.2 + 0.6 * rng.random()
            rows = [(key, d, float(rng.random() < rate), None) for key in range(items) for d in range(k)]
            frames[label], groups[label] = frame(rows), name
    return frames, groups


def test_runs_of_several_sets_are_paired_within_their_set_and_past_the_rule_by_it():
    frames, groups = _drawn_runs(["first", "second"], 3)
    tables = dict(sampling.sampling_tables(frames, None, "score", groups=groups, baselines=["first random"]))
    [paired] = [table for title, table in tables.items() if title.startswith("PAIRED")]
    pairs = [(a.split()[0], b.split()[0]) for a, b in paired.index]
    assert len(pairs) == 2 * 3 and all(a == b for a, b in pairs)  # every pair of each set, no other
    ungrouped = dict(sampling.sampling_tables(frames, None, "score"))  # as one set: the sets' Keys meet
    [crossed] = [table for title, table in ungrouped.items() if title.startswith("PAIRED")]
    assert len(crossed) == 15
    many, groups = _drawn_runs(["first", "second"], 12)
    tests, largest = sampling.paired_on_item_means(many, groups, ["first random", "second random"])
    assert largest == 12 and (tests["a"].str.split().str[0] == tests["b"].str.split().str[0]).all()
    for name in ("first", "second"):  # each against the next ranked, and against the baseline
        mine = tests[tests["a"].str.startswith(name)]
        labels = [label for label in many if label.startswith(name)]
        means = {label: sampling.item_means(many[label]).mean() for label in labels}
        ranked = sorted(labels, key=lambda label: -means[label])
        wanted = {frozenset(p) for p in itertools.pairwise(ranked)}
        wanted |= {frozenset((label, f"{name} random")) for label in labels if label != f"{name} random"}
        assert {frozenset(p) for p in zip(mine["a"], mine["b"], strict=True)} == wanted
    shown = sampling.sampling_tables(
        many, None, "score", groups=groups, baselines=["first random", "second random"]
    )
    [(title, _)] = [t for t in shown if "PAIRED" in t[0]]
    assert "runs of the same set" in title and f"Bonferroni over the {len(tests)} tests" in title


def test_the_interval_clustered_by_item_covers_the_true_rate_95_percent_of_the_time():
    """Items of different rates (drawn from Beta(2, 2), whose mean 0.5 is the rate a set
    estimates), each answered k = 5 times: the interval on item means covers 0.5 in about 95% of
    1,000 simulated sets of 200 items; treating a set's 1,000 answers as independent gives a
    narrower interval that covers far less."""
    rng = np.random.default_rng(11)
    covered = naive = 0
    for _ in range(1000):
        rates = rng.beta(2, 2, size=200)
        scores = rng.random((200, 5)) < rates[:, None]
        _, lo, hi = mean_interval(scores.mean(axis=1).tolist())
        covered += lo <= 0.5 <= hi
        _, lo, hi = mean_interval(scores.ravel().astype(float).tolist())
        naive += lo <= 0.5 <= hi
    assert 0.93 <= covered / 1000 <= 0.97 and naive / 1000 < 0.9
    print(f"\ncoverage clustered by item {covered / 1000:.3f}; answers as independent {naive / 1000:.3f}")


# ---- asking k times --------------------------------------------------------------------------------
def test_a_builtin_random_model_answers_each_draw_apart_and_k_1_is_unchanged(tmp_path):
    items = make_items(40)
    one = resolve_model("random", builtins=BASELINES)
    run_items(one, items, tmp_path / "one.jsonl")
    three = resolve_model("random", builtins=BASELINES, overrides={"samples": 3})
    run_items(three, items, tmp_path / "three.jsonl")
    timeless = lambda path: [  # noqa: E731
        {k: v for k, v in json.loads(line).items() if k not in ("latency_s", "run")}
        for line in path.read_text().splitlines()
    ]
    assert timeless(tmp_path / "three.jsonl")[:40] == timeless(tmp_path / "one.jsonl")  # draw 0 as k = 1
    records = read_results(tmp_path / "three.jsonl", all_draws=True)
    assert sorted((r["Key"], r.get("draw", 0)) for r in records) == [
        (k, d) for k in range(40) for d in range(3)
    ]
    by_draw = {d: [r["resp"] for r in records if r.get("draw", 0) == d] for d in range(3)}
    assert by_draw[0] != by_draw[1] != by_draw[2]  # each draw its own answers
    assert [r["resp"] for r in read_results(tmp_path / "three.jsonl")] == by_draw[0]  # what main tables read


def test_raising_k_asks_only_the_new_draws_each_with_its_own_seed_and_cache_entry(tmp_path):
    cache = tmp_path / "cache.sqlite"
    out = tmp_path / "r.jsonl"
    with StubServer(answer=lambda prompt: "TRUE") as server:
        for samples, asked in ((1, 5), (3, 15), (3, 15)):  # k = 1, then k = 3 (10 new), then a rerun
            model = HTTPModel(
                make_config(server, temperature=0.7, samples=samples), cache=ResponseCache(cache)
            )
            run_items(model, make_items(5), out)
            model.close()
            assert len(server.requests) == asked
        seeds = sorted(request["body"]["seed"] for request in server.requests)
        # sampled (temperature 0.7): each draw of each item its own seed, seed + draw moved by the
        # item's identity (common/models/independence.py)
        items = [{"Key": item["Key"], "draw": draw} for item in make_items(5) for draw in range(3)]
        assert seeds == sorted(item_seed(draw["draw"], identity(draw)) for draw in items)
        # a new results file: every draw from the cache, none asked again
        model = HTTPModel(make_config(server, temperature=0.7, samples=3), cache=ResponseCache(cache))
        summary = run_items(model, make_items(5), tmp_path / "again.jsonl")
        model.close()
        assert len(server.requests) == 15 and summary.answered == 15
    assert len(ResponseCache(cache)) == 15
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(line.get("draw", 0) for line in lines) == [0] * 5 + [1] * 5 + [2] * 5
    assert all(list(line)[:2] == ["Key", "draw"] for line in lines if line.get("draw"))


def test_draws_without_a_seed_still_get_their_own_cache_entries(tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    replies = iter(["TRUE", "FALSE", "TRUE"])
    with StubServer(answer=lambda prompt: next(replies)) as server:
        model = HTTPModel(
            make_config(server, temperature=1.0, seed=None, samples=3, concurrency=1), cache=cache
        )
        run_items(model, make_items(1), tmp_path / "r.jsonl")
        model.close()
        assert all("seed" not in request["body"] for request in server.requests)
    assert [r["resp"] for r in read_results(tmp_path / "r.jsonl", all_draws=True)] == [
        "TRUE",
        "FALSE",
        "TRUE",
    ]


# ---- what a section shows ------------------------------------------------------------------------------
def test_a_worldsense_section_gains_the_sampling_tables_only_with_repeats(tmp_path):
    trials = (
        tf_tuple("t1", "Infer.normal", 3)
        + tf_tuple("t2", "Infer.trivial", 3)
        + tf_tuple("t3", "Infer.normal", 4)
    )
    testset = write_testset(tmp_path / "ts", trials, {"A": answers_for(trials, [1, 0, 1])})
    plain = worldsense_section(testset)
    assert not any("REPEATED" in title for title, _ in plain.tables)
    results = testset / "results" / "basic___A___results.jsonl"
    records = read_results(results)
    flipped = {"TRUE": "FALSE", "FALSE": "TRUE"}
    extra = [
        {"Key": r["Key"], "draw": d, "resp": flipped[r["resp"]] if d == 2 else r["resp"]}
        for r in records
        for d in (1, 2)
    ]
    with open(results, "a") as handle:
        handle.write("".join(json.dumps(record) + "\n" for record in extra))
    section = worldsense_section(testset)
    assert [t for t, _ in section.tables if "REPEATED" not in t] == [
        t for t, _ in plain.tables
    ]  # main tables: draw 0
    [table] = [table for title, table in section.tables if title.startswith("REPEATED")]
    row = table.loc["A (basic)"]
    assert (row["k"], row["questions"], row["items whose draws disagree"]) == (3, 6, "100.0%")
    assert row["majority vote"] == "66.7"  # two of three draws give the first run's answers
    assert row["mean [95%, clustered by item]"].startswith("55.6 [")  # tuple means (2/3 + 1/3 + 2/3) / 3
    assert "repeated samples: A (basic) k=3" in section.summary


def test_already_said_that_original_protocol_plays_a_different_subset_per_seed(tmp_path):
    """The original's protocol as a set config: each of 3 seeds plays `play` of the samples, the
    ones it picks, with streams of its own; the run asks each once per seed (draws 0, 1, 2)."""
    from common.already_said_that.generate import load_set
    from tests.already_said_that.test_run import load_main
    from tests.test_scripts import run_script

    config = tmp_path / "proto.yaml"
    config.write_text("variant: distractorless\nsources: []\nturns: 10\nsamples: 20\nplay: 8\nseeds: 3\n")
    made = run_script(
        "scripts/generate_problems.py",
        "--suite",
        "already_said_that",
        "-t",
        str(config),
        "--out",
        str(tmp_path / "proto"),
    )
    assert made.returncode == 0, made.stderr
    data = load_set(tmp_path / "proto")
    chosen = [{s["sample"] for s in data.samples if data.plays(s, draw)} for draw in range(3)]
    assert [len(c) for c in chosen] == [8, 8, 8] and len({frozenset(c) for c in chosen}) == 3
    arguments = [
        "-t",
        str(tmp_path / "proto"),
        "--model",
        "random",
        "--results-dir",
        str(tmp_path / "results"),
    ]
    assert load_main()([*arguments, "--loglevel", "WARNING"]) == 0
    records = read_results(tmp_path / "results" / "proto" / "direct___random___results.jsonl", all_draws=True)
    assert sorted((r["Key"], r.get("draw", 0)) for r in records) == sorted(
        (key, draw) for draw in range(3) for key in chosen[draw]
    )
    same_seed = data.conversation(data.samples[0], 0).next_turn().message
    assert [data.conversation(data.samples[0], 0).next_turn().message for _ in range(2)] == [same_seed] * 2
