"""Already Said That's reproduction mode, around the runs: the set fields it adds (wording,
wrong_golds, first_seed), the protocol set's seeds 1-3, built-ins that play the original's
wording without its texts, a results file that keeps one wording, the report's wording column,
the original's standard error beside the project's, and the runs whose replies were cut at the
token limit said so in the section and in the report's token budget."""

import json
import math

import numpy as np
import pytest

from common import database, scoring
from common import report as common_report
from common.already_said_that import analysis, generate, original, paper, report
from common.already_said_that.generate import load_set, load_set_config
from common.already_said_that.run import read_turns, run_paths
from common.errors import ConfigError
from common.models.stub_server import StubServer
from common.paths import CONFIGS
from common.provenance import provenance, token_budget_lines, token_budget_table
from common.results import read_results
from tests.already_said_that.fixtures import write_set
from tests.already_said_that.test_run import load_main, stub_config


def run(tmp_path, set_dir, model, *extra, out="results"):
    """Run the script on ``set_dir`` with ``model``; return its exit code (as ``cli.run_main``)."""
    from common.cli import run_main

    argv = ["-t", str(set_dir), "--model", str(model), "--results-dir", str(tmp_path / out)]
    return run_main(load_main(), [*argv, "--loglevel", "WARNING", *extra])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("wrong_golds: keep\n", r"x.yaml:2: field 'wrong_golds': only the original's distractors"),
        ("first_seed: -1\n", r"x.yaml:2: field 'first_seed': must be 0 or more"),
        ("wording: ours\n", r"x.yaml:2: field 'wording': 'ours' is not one of 'original', 'suite'"),
    ],
)
def test_the_new_set_fields_are_checked(tmp_path, text, message):
    path = tmp_path / "x.yaml"
    path.write_text("variant: which_is_heavier\n" + text + "sources: [which_is_heavier]\n")
    with pytest.raises(ConfigError, match=message):
        load_set_config(path)


def test_shipped_reproduction_sets_read_the_originals_texts_and_the_others_their_own():
    for path in sorted((CONFIGS / "already_said_that").glob("*.yaml")):
        settings = load_set_config(path)
        reproduces = path.stem.startswith("original_")
        assert settings.wording == ("original" if reproduces else "suite"), path.name
        if settings.distractors == "original" and settings.sources:
            assert settings.wrong_golds == "keep", path.name  # as the original played them
        if reproduces:  # the original's published protocol: seeds 1-3, 250 conversations each
            assert (settings.first_seed, settings.seeds, settings.play) == (1, 3, 250), path.name
            assert (settings.words, settings.distractors) == ("original", "original"), path.name


def test_a_set_that_uses_none_of_the_new_fields_keeps_its_manifest():
    """So the fingerprints of its conversations (common/stale.py) and the results that answered
    them stay: a manifest names the later fields only where a set uses them."""
    settings = load_set_config(CONFIGS / "already_said_that" / "distractorless.yaml")
    written = ["variant", "sources", "adversarial", "turns", "samples", "seed", "play", "seeds"]
    assert list(settings.as_dict()) == [*written, "words", "distractors"]
    settings.first_seed, settings.wording = 1, "original"
    assert settings.as_dict()["first_seed"] == 1 and settings.as_dict()["wording"] == "original"


def test_the_protocol_set_plays_the_originals_seeds(tmp_path):
    data = load_set(
        write_set(tmp_path / "protocol", "which_is_heavier", samples=40, first_seed=1, seeds=3, play=10)
    )
    assert data.first_seed == 1 and data.pairing.endswith(":1")
    seeds = [data.conversation(data.samples[0], draw).seed for draw in range(3)]
    assert seeds == [1, 2, 3]
    chosen = [sorted(s["sample"] for s in data.samples if data.plays(s, draw)) for draw in range(3)]
    assert all(len(c) == 10 for c in chosen) and chosen[0] != chosen[1]
    same_words = load_set(write_set(tmp_path / "plain", "which_is_heavier", samples=40, seed=0))
    assert same_words.first_seed == 0 and same_words.pairing != data.pairing  # other streams: not paired


def test_builtins_play_the_originals_wording_without_its_texts_a_model_needs_them(tmp_path, monkeypatch):
    monkeypatch.setattr(original, "ORIGINAL_DIR", tmp_path / "not_fetched")
    set_dir = write_set(tmp_path / "protocol", "which_is_heavier", samples=5, wording="original")
    assert run(tmp_path, set_dir, "oracle") == 0 and run(tmp_path, set_dir, "random") == 0
    records = read_results(run_paths("protocol", "oracle", tmp_path / "results")["results"])
    assert {(r["wording"], r["ended"]) for r in records} == {("original", "survived")}
    with StubServer(answer=lambda prompt: "[answer: no]") as server:
        assert run(tmp_path, set_dir, stub_config(tmp_path, server)) == 2
        assert not server.requests
    assert not run_paths("protocol", "stub", tmp_path / "results")["results"].exists()


def test_a_results_file_keeps_one_wording(tmp_path, capsys):
    set_dir = write_set(tmp_path / "heavier", "which_is_heavier", samples=3)
    with StubServer(answer=lambda prompt: "[answer: no]") as server:
        config = stub_config(tmp_path, server)
        assert run(tmp_path, set_dir, config, "--limit", "2") == 0
        manifest = json.loads((set_dir / "manifest.json").read_text())
        manifest["config"]["wording"] = "original"  # the set changed its wording since
        (set_dir / "manifest.json").write_text(json.dumps(manifest))
        asked = len(server.requests)
        assert run(tmp_path, set_dir, config) == 2 and len(server.requests) == asked
    assert (
        "holds conversations played with wording suite; this set's wording is original"
        in capsys.readouterr().err
    )


def original_aggregate(records: list[dict]) -> dict[str, float]:
    """The original's metrics of one seed's conversations, as its ``_compute_agg_metrics`` makes
    them from each conversation's metrics (numpy means; nanmean for distractor accuracy)."""
    accuracy = [np.nan if r["distractor_accuracy"] is None else r["distractor_accuracy"] for r in records]
    return {
        "avg_num_turns": np.mean([r["turns"] for r in records]),
        "avg_num_distractors": np.mean([r["distractors"] for r in records]),
        "avg_distractor_accuracy": np.nanmean(accuracy) if not np.isnan(accuracy).all() else np.nan,
        "false_positive_rate": np.mean([r["ended"] == "false_positive" for r in records]),
        "false_negative_rate": np.mean([r["ended"] == "false_negative" for r in records]),
        "violation_rate": np.mean([r["violation_occurred"] for r in records]),
    }


def test_every_metric_gets_the_mean_over_seeds_and_both_standard_errors(tmp_path):
    """A set played with 3 seeds: the metrics table has a row per seed, the seeds table every
    metric the original's plots show with its mean over the seeds and both standard errors (the
    original's: numpy's std over sqrt 3; the sample SD's) to three decimals, and the headline is
    that mean +- the original's SE, as published."""
    protocol = write_set(
        tmp_path / "sets" / "protocol", "which_is_heavier", samples=60, seeds=3, first_seed=1, play=40
    )
    assert run(tmp_path, protocol, "random") == 0  # a run of the set's protocol: one draw per seed
    section = scoring.score_and_analyse(tmp_path / "results")
    metrics = dict(section.tables)[next(t for t, _ in section.tables if t.startswith("Metrics"))]
    assert list(metrics.loc[("protocol", "random")].index) == ["1", "2", "3"]  # a row per seed
    assert set(metrics["wording"]) == {"suite"} and set(metrics["conversations"]) == {40}
    records = read_results(run_paths("protocol", "random", tmp_path / "results")["results"], all_draws=True)
    per_seed = [original_aggregate([r for r in records if r.get("draw", 0) == d]) for d in range(3)]
    table = dict(section.tables)[report.SEEDS_TITLE]
    assert list(table.loc[("protocol", "random")].index) == list(analysis.SEED_METRICS)
    for name in analysis.SEED_METRICS:
        values = [seed[name] for seed in per_seed]
        row = table.loc[("protocol", "random", name)]
        assert row["per seed"] == " / ".join(f"{v:.3f}" for v in values), name
        mean = f"{np.mean(values):.3f} +- "
        assert row[paper.ORIGINAL_SE] == mean + f"{np.std(values) / math.sqrt(3):.3f}", name
        assert row[paper.SAMPLE_SE] == mean + f"{np.std(values, ddof=1) / math.sqrt(3):.3f}", name
    turns = [seed["avg_num_turns"] for seed in per_seed]
    headline = f"{np.mean(turns):.3f} +- {np.std(turns) / math.sqrt(3):.3f} (3 seeds)"
    assert section.headline["cells"] == [["random", "protocol", headline, 120]]
    assert dict(section.tables)[report.TURNS_TITLE].loc["random", "protocol"] == headline
    assert f"random: avg turns protocol {headline.removesuffix(' (3 seeds)')}" in section.summary


def test_replies_cut_at_the_token_limit_are_said_in_the_section_and_the_token_budget(tmp_path):
    set_dir = write_set(tmp_path / "sets" / "heavier", "which_is_heavier", samples=4, turns=10)
    # the stub cuts a reply longer than max_tokens words: "Well, [answer: no] for sure" at 2 words
    with StubServer(answer=lambda prompt: "Well, [answer: no] for sure") as server:
        config = stub_config(tmp_path, server, max_tokens=2, concurrency=1)
        assert run(tmp_path, set_dir, config, "--no-cache", "--prompting", "cot") == 0
    files = run_paths("heavier", "stub", tmp_path / "results", "cot")
    turns = read_turns(files["turns"])
    assert {tuple(t["finish_reason"]) for t in turns} == {("length", "length")}  # reasoning and reply
    section = scoring.score_and_analyse(tmp_path / "results")
    cut = [line for line in section.summary if "cut at the token limit" in line]
    assert (
        len(cut) == 1
        and "stub (cot) on heavier" in cut[0]
        and "(100.0%)" in cut[0]
        and "max_tokens=2" in cut[0]
    )
    assert cut[0] in section.notes
    common_report.save_section(section, tmp_path / "section.json")
    with database.connection(readonly=True) as conn:  # what the score stage recorded
        prov = provenance([common_report.load_section(tmp_path / "section.json")], conn)
    table = token_budget_table(prov)
    replies = 2 * len(turns)
    assert [row[4:6] for row in table["rows"]] == [[f"{replies:,}", f"100.0% ({replies:,})"]]
    said = f"stub: {replies} of {replies} replies cut at max_tokens=2 (already_said_that {replies}/{replies})"
    assert token_budget_lines(prov) == [f"{said}; raise it and rerun with --retry-truncated"]


def test_a_run_with_few_replies_cut_says_nothing(tmp_path):
    set_dir = write_set(tmp_path / "sets" / "heavier", "which_is_heavier", samples=4, turns=10)
    with StubServer(answer=lambda prompt: "[answer: no]") as server:
        assert run(tmp_path, set_dir, stub_config(tmp_path, server, max_tokens=8), "--no-cache") == 0
    section = scoring.score_and_analyse(tmp_path / "results")
    assert not any("cut at the token limit" in line for line in section.summary + section.notes)


def test_wrong_golds_kept_are_named_in_the_section(tmp_path):
    set_dir = write_set(tmp_path / "sets" / "sort", "reverse_sort", samples=20)
    pool = [json.loads(line) for line in (set_dir / "distractors.jsonl").read_text().splitlines()]
    pool[0]["wrong_gold"] = "reverse-sorted the words are ..."  # as the original's line 1
    (set_dir / "distractors.jsonl").write_text("".join(json.dumps(r) + "\n" for r in pool))
    manifest = json.loads((set_dir / "manifest.json").read_text())
    manifest["sha256"]["distractors.jsonl"] = generate.sha256_file(set_dir / "distractors.jsonl")
    (set_dir / "manifest.json").write_text(json.dumps(manifest))
    assert run(tmp_path, set_dir, "oracle") == 0
    turns = [
        t
        for t in read_turns(run_paths("sort", "oracle", tmp_path / "results")["turns"])
        if t.get("wrong_gold")
    ]
    assert turns and {t["question_id"] for t in turns} == {pool[0]["id"]}
    section = scoring.score_and_analyse(tmp_path / "results")
    note = next(n for n in section.notes if "wrong gold" in n)
    assert f"asked {len(turns)} times" in note and pool[0]["id"] in note
