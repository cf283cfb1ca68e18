"""Already Said That's reproduction mode, around the runs: the set fields it adds (wording,
wrong_golds, first_seed), the protocol set's seeds 1-3, built-ins that play the original's
wording without its texts, a results file that keeps one wording, the report's wording column,
the original's standard error beside the project's, and the runs whose replies were cut at the
token limit said so in the section and in the report's token budget."""

import json
import math

import numpy as np
import pytest

from common import analysis as suites
from common import report as common_report
from common.already_said_that import generate, original
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
        reproduces = path.stem.startswith(("original_", "protocol_"))
        assert settings.wording == ("original" if reproduces else "suite"), path.name
        if settings.distractors == "original" and settings.sources:
            assert settings.wrong_golds == "keep", path.name  # as the original played them
    protocol = load_set_config(CONFIGS / "already_said_that" / "protocol_which_is_heavier.yaml")
    assert (protocol.seed, protocol.first_seed, protocol.seeds, protocol.play) == (0, 1, 3, 250)


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


def test_the_report_shows_the_wording_and_the_originals_standard_error(tmp_path):
    protocol = write_set(
        tmp_path / "sets" / "protocol", "which_is_heavier", samples=60, seeds=3, first_seed=1
    )
    assert run(tmp_path, protocol, "random") == 0  # a run of the set's protocol: one draw per seed
    section = suites.analyse(tmp_path / "results")
    metrics = dict(section.tables)[next(t for t, _ in section.tables if t.startswith("Metrics"))]
    assert metrics.loc[("protocol", "random"), "wording"] == "suite"
    table = next(d for t, d in section.tables if t.startswith("REPEATED SAMPLES"))
    row = table.loc["protocol random"]
    records = read_results(run_paths("protocol", "random", tmp_path / "results")["results"], all_draws=True)
    means = [np.mean([r["turns"] for r in records if r.get("draw", 0) == d]) for d in range(3)]
    mean = f"{np.mean(means):.2f} +- "
    assert (
        row["mean of draws +- SE (sample SD / sqrt k)"]
        == mean + f"{np.std(means, ddof=1) / math.sqrt(3):.3f}"
    )
    assert row["mean of draws +- SE as the original (population SD / sqrt k)"] == (
        mean + f"{np.std(means) / math.sqrt(3):.3f}"
    )


def test_replies_cut_at_the_token_limit_are_said_in_the_section_and_the_token_budget(tmp_path):
    set_dir = write_set(tmp_path / "sets" / "heavier", "which_is_heavier", samples=4, turns=10)
    # the stub cuts a reply longer than max_tokens words: "Well, [answer: no] for sure" at 2 words
    with StubServer(answer=lambda prompt: "Well, [answer: no] for sure") as server:
        config = stub_config(tmp_path, server, max_tokens=2, concurrency=1)
        assert run(tmp_path, set_dir, config, "--no-cache", "--prompting", "cot") == 0
    files = run_paths("heavier", "stub", tmp_path / "results", "cot")
    turns = read_turns(files["turns"])
    assert {tuple(t["finish_reason"]) for t in turns} == {("length", "length")}  # reasoning and reply
    section = suites.analyse(tmp_path / "results")
    cut = [line for line in section.summary if "cut at the token limit" in line]
    assert (
        len(cut) == 1
        and "stub (cot) on heavier" in cut[0]
        and "(100.0%)" in cut[0]
        and "max_tokens=2" in cut[0]
    )
    assert cut[0] in section.notes
    common_report.save_section(section, tmp_path / "section.json")
    prov = provenance([common_report.load_section(tmp_path / "section.json")])
    table = token_budget_table(prov)
    replies = 2 * len(turns)
    assert [row[4:6] for row in table["rows"]] == [[f"{replies:,}", f"100.0% ({replies:,})"]]
    said = f"stub: {replies} of {replies} replies cut at max_tokens=2 (already_said_that {replies}/{replies})"
    assert token_budget_lines(prov) == [f"{said}; raise it and rerun with --retry-truncated"]


def test_a_run_with_few_replies_cut_says_nothing(tmp_path):
    set_dir = write_set(tmp_path / "sets" / "heavier", "which_is_heavier", samples=4, turns=10)
    with StubServer(answer=lambda prompt: "[answer: no]") as server:
        assert run(tmp_path, set_dir, stub_config(tmp_path, server, max_tokens=8), "--no-cache") == 0
    section = suites.analyse(tmp_path / "results")
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
    section = suites.analyse(tmp_path / "results")
    note = next(n for n in section.notes if "wrong gold" in n)
    assert f"asked {len(turns)} times" in note and pool[0]["id"] in note
