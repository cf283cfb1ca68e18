"""Already Said That: the protocol, the solvers, the runner script, the metrics and the report."""

import importlib.util
import itertools
import json
import logging
import math
import os
import re
import signal
import subprocess
import sys

import pytest
from scipy.stats import binomtest

from common import analysis as analysis_entry
from common import scoring
from common.already_said_that import analysis
from common.already_said_that import run as run_module
from common.already_said_that.generate import load_set
from common.already_said_that.prompts import parse_answer, task_description
from common.already_said_that.run import read_turns, run_paths
from common.errors import UserError
from common.models.base import Reply, RequestRefused
from common.paths import ROOT
from common.results import read_results
from tests.already_said_that.fixtures import QUESTIONS, VARIANTS, write_set
from tests.conftest import live_then_batch
from tests.timing import timeout, wait_for


def load_main():
    """Return the script's ``main`` (run in-process: faster than a subprocess per test)."""
    spec = importlib.util.spec_from_file_location("asat_script", ROOT / "scripts" / "already_said_that.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def play(tmp_path, variant, model, samples=20, *extra):
    """Write a fixture set, run ``model`` on it in-process, return (results records, turn lines)."""
    set_dir = tmp_path / "sets" / variant
    if not (set_dir / "manifest.json").is_file():
        write_set(set_dir, variant, samples=samples)
    assert (
        load_main()(
            [
                "-t",
                str(set_dir),
                "--model",
                model,
                "--results-dir",
                str(tmp_path / "results"),
                "--loglevel",
                "WARNING",
                *extra,
            ]
        )
        == 0
    )
    files = run_paths(variant, model, tmp_path / "results")
    records = read_results(files["results"])
    return records, read_turns(files["turns"], {r["Key"] for r in records})


# ---- the answer parser: the original's rules ----------------------------------------------
@pytest.mark.parametrize(
    "reply, answer",
    [
        ("[answer: yes]", "yes"),
        ("[answer: No]", "no"),  # lower-cased
        ("[answer:   yes  ]", "yes"),  # stripped
        ("Sure. [answer: yes] I saw it.", "yes"),  # text around is ignored
        ("[answer: no] [answer: yes]", "no"),  # the first one counts
        ("[answer: cherry, banana, apple]", "cherry, banana, apple"),
        ("[answer: the\ntrophy]", "the\ntrophy"),  # any character but ']' inside
        ("yes", None),  # no brackets: a violation
        ("[Answer: yes]", None),  # the original's pattern is case-sensitive
        ("[answer:yes]", None),  # ... and needs the space after the colon
        ("[answer: ]", None),  # ... and something before the bracket
        ("answer: yes", None),
        ("[answer: yes", None),
    ],
)
def test_parse_answer_follows_the_original(reply, answer):
    assert parse_answer(reply) == answer


# ---- choosing the set: -t DIR or -t NAME (under data/already_said_that) ------------------------
def test_a_set_is_named_by_its_directory_or_its_name(tmp_path, monkeypatch):
    from common import paths

    monkeypatch.setattr(paths, "DATA", tmp_path / "data")
    write_set(tmp_path / "data" / "already_said_that" / "first_letters", "first_letters", samples=3)
    main = load_main()
    out = ["--model", "oracle", "--results-dir", str(tmp_path / "results"), "--loglevel", "WARNING"]
    assert main(["-t", "first_letters", *out]) == 0
    records = read_results(run_paths("first_letters", "oracle", tmp_path / "results")["results"])
    assert len(records) == 3 and {r["ended"] for r in records} == {"survived"}
    with pytest.raises(
        UserError, match=r"already_said_that/mixed is not built.*make .*sets built: .*first_letters"
    ):
        main(["-t", "mixed", *out])  # not built: what exists and the fix named
    for wrong in (["-t", "mixed", "--model", "oracle", "--baselines"], [], ["--model", "oracle"]):
        with pytest.raises(SystemExit) as exit_info:  # a usage error: exit code 2
            main([*wrong, "--results-dir", str(tmp_path / "results")])
        assert exit_info.value.code == 2


# ---- metric definitions on hand-written transcripts --------------------------------------------
def record(key, turns, ended, distractors=0, accuracy=None, violations=0, refused=False):
    out = {
        "Key": key,
        "turns": turns,
        "distractors": distractors,
        "distractor_accuracy": accuracy,
        "violations": violations,
        "asked": turns + (ended != "survived"),
        "ended": ended,
    }
    return {**out, "refused": "context_length_exceeded"} if refused else out


def test_metrics_survivor_first_message_failure_and_violation():
    records = [
        record(0, 100, "survived", distractors=33, accuracy=1.0),  # survived every turn
        record(1, 0, "false_positive"),  # failed on the first message
        record(2, 7, "violation", distractors=2, accuracy=0.5, violations=2),  # malformed at turn 8
        record(3, 4, "false_negative", distractors=1, accuracy=0.0),
    ]
    m = analysis.seed_metrics(analysis.conversation_frame(records))
    assert m["n"] == 4 and m["refused"] == 0
    assert m["avg_num_turns"] == pytest.approx((100 + 0 + 7 + 4) / 4)
    assert m["median_num_turns"] == 5.5 and m["max_num_turns"] == 100 and m["min_num_turns"] == 0
    assert m["stddev_num_turns"] == pytest.approx(float(__import__("numpy").std([100, 0, 7, 4])))
    assert m["avg_num_distractors"] == pytest.approx(36 / 4)
    assert m["false_positive_rate"] == m["false_negative_rate"] == m["violation_rate"] == 0.25
    assert m["avg_distractor_accuracy"] == pytest.approx(
        (1.0 + 0.5 + 0.0) / 3
    )  # conversations with distractors
    assert m["avg_num_turns_lo"] < m["avg_num_turns"] < m["avg_num_turns_hi"]
    assert m["violations_all_turns"] == 2 and m["survived"] == 1


def test_metrics_count_refused_conversations_as_violations_and_the_curves_censor_them():
    frame = analysis.conversation_frame(
        [record(0, 0, "false_negative"), record(1, 30, "refused", refused=True), record(2, 100, "survived")]
    )
    m = analysis.seed_metrics(frame)  # the original's rule: the error was the reply, a violation there
    assert m["n"] == 3 and m["refused"] == 1 and m["refused_turns"] == 1
    assert m["avg_num_turns"] == pytest.approx(130 / 3) and m["violation_rate"] == pytest.approx(1 / 3)
    assert m["false_negative_rate"] == pytest.approx(1 / 3) and m["false_positive_rate"] == 0
    curve = analysis.survival(frame).set_index("turn")["alive"]
    assert curve[0] == 1.0 and curve[1] == pytest.approx(2 / 3)  # the first-message failure
    assert curve[100] == pytest.approx(2 / 3)  # the refused one is censored at 30, not a failure
    # refused last (a 2k-context model): nobody is followed past turn 30, so no estimate there
    frame = analysis.conversation_frame(
        [record(0, 0, "false_negative"), record(1, 30, "refused", refused=True), record(2, 5, "violation")]
    )
    curve = analysis.survival(frame).set_index("turn")
    assert curve.loc[5, "alive"] == pytest.approx(2 / 3) and curve.loc[30, "alive"] == pytest.approx(1 / 3)
    assert curve.loc[31:, ["alive", "lo", "hi"]].isna().all().all()
    # survivors of a 50-turn set: censored at 50, nothing said of turn 75
    frame = analysis.conversation_frame([record(0, 50, "survived"), record(1, 3, "violation")])
    curve = analysis.survival(frame)
    assert curve.set_index("turn").loc[50, "alive"] == 0.5 and curve["alive"].iloc[51:].isna().all()


def test_the_paired_test_compares_two_runs_sample_by_sample_as_far_as_censoring_tells():
    a = analysis.conversation_frame(
        [
            record(0, 100, "survived"),  # b failed at turn 6: a longer
            record(1, 9, "violation"),  # b failed at turn 4: a longer
            record(2, 3, "false_positive"),  # the same failing turn: a tie
            record(3, 5, "refused", refused=True),  # refused when b failed there: undecided
            record(4, 2, "false_negative"),  # b refused later, at 8: b longer
            record(5, 1, "false_negative"),  # not played by b
        ]
    )
    b = analysis.conversation_frame(
        [
            record(0, 5, "false_positive"),
            record(1, 3, "violation"),
            record(2, 3, "false_negative"),
            record(3, 5, "false_negative"),
            record(4, 8, "refused", refused=True),
            record(9, 0, "violation"),
        ]
    )
    paired = analysis.paired_survival(a, b)
    assert (paired["n"], paired["a_better"], paired["b_better"]) == (5, 2, 1)
    assert paired["p"] == pytest.approx(1.0)  # 2 against 1 of 3 decided: exact binomial
    assert analysis.paired_survival(a, a)["a_better"] == 0 and analysis.paired_survival(a, a)["p"] == 1.0


@pytest.mark.parametrize("longest", [12, 400])  # few turn counts (matrix products), many (blocks)
def test_every_pair_s_paired_test_at_once_is_each_pair_tested_alone(longest):
    """The report's paired survival tests of a set, every pair in one array operation, give what
    the test of each pair alone gives (samples missing from a run, censoring, refusals, ties);
    a run with a sample twice (every draw of a Key) leaves them to the pair-by-pair test."""
    rng = __import__("random").Random(7)
    ends = ["survived", "violation", "false_positive", "false_negative", "refused"]
    frames = []
    for _ in range(6):
        records = []
        for key in rng.sample(range(40), 30):
            ended = rng.choice(ends)
            records.append(record(key, rng.randrange(0, longest), ended, refused=ended == "refused"))
        frames.append(analysis.conversation_frame(records))
    together = analysis.paired_survival_all(frames)
    assert len(together) == 15
    for (i, j), found in together.items():
        alone = analysis.paired_survival(frames[i], frames[j])
        assert {**found, "p": pytest.approx(alone["p"], rel=1e-9)} == alone, (i, j)
    assert sum(t["a_better"] + t["b_better"] for t in together.values()) > 0
    twice = [frames[0], analysis.conversation_frame([record(1, 3, "violation"), record(1, 4, "violation")])]
    assert analysis.paired_survival_all(twice) == {}


def test_conversation_ends_on_main_task_failure_not_on_distractor_failure(tmp_path):
    data = load_set(write_set(tmp_path / "which_is_heavier", "which_is_heavier", samples=3))
    conversation = data.conversation(data.samples[0])
    wrong_distractors = 0
    while True:
        turn = conversation.next_turn()
        if turn.kind == "distractor":  # always wrong: the conversation goes on
            wrong_distractors += 1
            outcome = conversation.judge("[answer: maybe]")
            assert not outcome.correct and not outcome.ends
        elif wrong_distractors >= 2:  # then a malformed main-task answer ends it
            outcome = conversation.judge("I think yes")
            assert outcome.ends and outcome.violation and conversation.ending == "violation"
            break
        else:
            assert not conversation.judge(f"[answer: {turn.gold}]").ends
    assert conversation.turns_done == turn.index - 1 and conversation.distractors_done == wrong_distractors


def test_task_description_has_the_worked_example(tmp_path):
    data = load_set(write_set(tmp_path / "first_letters", "first_letters", samples=1))
    text = task_description(data.example)
    assert data.example["question"] in text and f"[answer: {data.example['answer']}]" in text
    assert data.example["id"] not in {q["id"] for q in data.pool}  # held out of the pool
    assert "[answer: <answer>]" in text and "unrelated" in task_description(None)


# ---- solvers ------------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", VARIANTS)
def test_oracle_survives_every_variant(tmp_path, variant):
    records, turns = play(tmp_path, variant, "oracle")
    assert len(records) == 20 and {r["ended"] for r in records} == {"survived"}
    assert {r["turns"] for r in records} == {100}
    assert all(t["correct"] for t in turns) and len(turns) == 20 * 100
    distractor_turns = [t for t in turns if t["kind"] == "distractor"]
    if variant == "distractorless":
        assert not distractor_turns
    else:
        assert 0.25 < len(distractor_turns) / len(turns) < 0.42  # probability 1/3
        assert {t["source"] for t in distractor_turns} == (
            set(QUESTIONS) if variant == "mixed" else {variant}
        )


def test_random_solver_averages_match_its_rule(tmp_path):
    """The random solver's averages fall where its rule puts them (n = 500 conversations; each
    check allows 4 standard errors, or is a one-sided exact binomial test at p > 0.001).

    Turns passed T: a distractor turn (probability 1/3) never ends the conversation and a
    main-task turn ends it when the coin misses (1/2), so a turn fails with probability
    p = 2/3 * 1/2 = 1/3 with distractors and p = 1/2 without: T is geometric, cut at 100, with
    E[T] = (1 - p) / p * (1 - (1 - p)^100) = 2.0 and 1.0 and sd sqrt(1 - p) / p = 2.45 and 1.41.
    The sample sd's standard error is about sd * sqrt((8 + p^2 / (1 - p)) / n) / 2 (a geometric
    law's fourth moment is sd^4 (9 + p^2 / (1 - p))): 0.16 and 0.09.
    Distractors passed D: a passed turn is a distractor or a main-task success, 1/3 each, so given
    T, D is Binomial(T, 1/2): E[D] = E[T] / 2 = 1.0, Var(D) = E[T] / 4 + Var(T) / 4 = 2.0.
    Distractor accuracy: yes or no at random, the two answers of the fixture's which-is-heavier
    questions, right with probability 1/2 at every question, so the mean of the conversations'
    accuracies is 1/2 (each accuracy lies in [0, 1]: its sd is at most 1/2).
    Endings: the first main-task word is always new (nothing was shown), and the conversation
    ends there, on a false "yes", with probability 1/2: false_positive_rate >= 1/2. The second
    one repeats a word shown with probability at least 1/2 * 1/2 (not adversarial, then a
    repeat), and the conversation reaches it and ends there on a false "no" with probability
    1/2 * 1/2: false_negative_rate >= 1/16. (tests/already_said_that/test_random_baseline.py derives both
    rates exactly.)
    """
    for variant, p in (("which_is_heavier", 1 / 3), ("distractorless", 1 / 2)):
        records, _ = play(tmp_path, variant, "random", 500)
        m = analysis.seed_metrics(analysis.conversation_frame(records))
        n = m["n"]
        mean_t, sd_t = (1 - p) / p * (1 - (1 - p) ** 100), math.sqrt(1 - p) / p
        assert abs(m["avg_num_turns"] - mean_t) < 4 * sd_t / math.sqrt(n), (variant, m)
        se_sd = sd_t * math.sqrt((8 + p * p / (1 - p)) / n) / 2
        assert abs(m["stddev_num_turns"] - sd_t) < 4 * se_sd, (variant, m)
        if variant == "distractorless":
            assert m["avg_num_distractors"] == 0 and math.isnan(m["avg_distractor_accuracy"])
        else:
            mean_d, sd_d = mean_t / 2, math.sqrt(mean_t / 4 + sd_t**2 / 4)
            assert abs(m["avg_num_distractors"] - mean_d) < 4 * sd_d / math.sqrt(n), m
            with_questions = sum(r["distractor_accuracy"] is not None for r in records)
            assert abs(m["avg_distractor_accuracy"] - 0.5) < 4 * 0.5 / math.sqrt(with_questions), m
        false_yes = round(m["false_positive_rate"] * n)
        assert binomtest(false_yes, n, 1 / 2, alternative="less").pvalue > 0.001, m
        assert binomtest(n - false_yes, n, 1 / 16, alternative="less").pvalue > 0.001, m
        assert m["violation_rate"] == 0
        assert m["false_negative_rate"] == pytest.approx(1 - m["false_positive_rate"])


def main_words(tmp_path, adversarial: bool) -> dict[tuple[str, str], list[tuple[str, bool]]]:
    """Return the main-task words (word, adversarial) of sample 3 per (variant, model)."""
    sequences = {}
    for variant in ("which_is_heavier", "mixed", "distractorless"):
        set_dir = tmp_path / f"adversarial_{adversarial}" / variant
        write_set(set_dir, variant, samples=5, adversarial=adversarial)
        for model in ("oracle", "random"):
            argv = ["-t", str(set_dir), "--model", model, "--results-dir", str(set_dir / "out")]
            assert load_main()(argv) == 0
            files = run_paths(variant, model, set_dir / "out")
            turns = read_turns(files["turns"])
            sequences[variant, model] = [
                (t["word"], t["adversarial"]) for t in turns if t["Key"] == 3 and t["kind"] == "main"
            ]
    return sequences


def test_variants_and_models_share_the_main_task_draws(tmp_path):
    """The main-task draws are common to every variant and model: without the adversarial
    option a sample's main-task words are the same everywhere (each run a prefix of the longest);
    with it, the non-adversarial ones are the same up to the first adversarial word shown."""
    sequences = main_words(tmp_path, adversarial=False)
    longest = max(sequences.values(), key=len)
    assert len(longest) > 60 and not any(adversarial for _, adversarial in longest)
    assert all(words == longest[: len(words)] for words in sequences.values())
    sequences = main_words(tmp_path, adversarial=True)
    before = [
        [word for word, _ in itertools.takewhile(lambda shown: not shown[1], words)]
        for words in sequences.values()
    ]
    longest = max(before, key=len)
    assert all(words == longest[: len(words)] for words in before)
    assert len(sequences["distractorless", "oracle"]) > len(sequences["mixed", "oracle"]) > 10


def test_runs_are_byte_identical_under_any_hash_seed(tmp_path):
    write_set(tmp_path / "sets" / "mixed", "mixed", samples=10)
    outputs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"results{hash_seed}"
        subprocess.run(
            [
                sys.executable,
                "scripts/already_said_that.py",
                "-t",
                str(tmp_path / "sets" / "mixed"),
                "--model",
                "random",
                "--results-dir",
                str(out),
            ],
            cwd=ROOT,
            check=True,
            capture_output=True,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
        )
        files = run_paths("mixed", "random", out)
        outputs.append((files["results"].read_bytes(), files["turns"].read_bytes()))
    assert outputs[0] == outputs[1]


def test_dry_run_estimates_and_asks_nothing(tmp_path, capsys):
    set_dir = write_set(tmp_path / "sets" / "mixed", "mixed", samples=4)
    assert (
        load_main()(
            [
                "-t",
                str(set_dir),
                "--model",
                "oracle",
                "--dry-run",
                "--results-dir",
                str(tmp_path / "results"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "4 conversations; at most 400 requests" in out
    tokens = int(out.split("~")[1].split(" input")[0].replace(",", ""))
    system = len(task_description(load_set(set_dir).example)) / 4
    # turn t sends the system message and t - 1 earlier exchanges of 5 to 40 tokens: quadratic
    assert 4 * (100 * system + 4950 * 5) < tokens < 4 * (100 * system + 4950 * 40)
    assert not (tmp_path / "results").exists()
    # a model config: also the bound of replies that spend the whole budget, as thinking models may
    config = tmp_path / "thinker.yaml"
    config.write_text("base_url: http://127.0.0.1:9/v1\nmodel: m\nmax_tokens: 1000\n")
    assert load_main()(["-t", str(set_dir), "--model", str(config), "--dry-run"]) == 0
    assert "max_tokens=1,000 each (a thinking model's reasoning counts): up to 400,000 output tokens" in (
        capsys.readouterr().out
    )
    # priced, as a live run and as batches (half the price, one batch per turn)
    config.write_text(config.read_text() + "price_per_1k_tokens: {input: 1.0, output: 2.0}\n")
    costs = []
    for batch in ([], ["--batch"]):
        assert load_main()(["-t", str(set_dir), "--model", str(config), "--dry-run", *batch]) == 0
        out = capsys.readouterr().out
        costs.append(float(out.split("at most $")[1].split()[0].rstrip(";.").replace(",", "")))
    assert costs[1] == pytest.approx(costs[0] / 2, abs=0.01)
    assert "at the batch price (50%); as batches: one per turn, at most 100" in out


def test_read_turns_keeps_the_last_block_of_a_replayed_conversation(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = [
        {"Key": 0, "turn": 1, "v": "old"},
        {"Key": 0, "turn": 2, "v": "old"},
        {"Key": 1, "turn": 1, "v": "x"},
        {"Key": 0, "turn": 1, "v": "new"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"Key": 2, "tu', encoding="utf-8")
    turns = read_turns(path, {0, 1})
    assert [(t["Key"], t["v"]) for t in turns] == [(0, "new"), (1, "x")]


# ---- the report ---------------------------------------------------------------------------------
def test_report_section_tables_figures_summary(tmp_path):
    for model in ("oracle", "random"):
        for variant in ("which_is_heavier", "distractorless"):
            play(tmp_path, variant, model, 30)
    other = write_set(tmp_path / "sets" / "distractorless_seed1", "distractorless", samples=30, seed=1)
    assert (
        load_main()(["-t", str(other), "--model", "random", "--results-dir", str(tmp_path / "results")]) == 0
    )
    assert {ref.suite for ref in analysis_entry.resolve(tmp_path / "results")} == {"already_said_that"}
    assert [ref.key for ref in analysis_entry.resolve(tmp_path / "results" / "distractorless")] == [
        "already_said_that/distractorless"
    ]
    section = scoring.score_and_analyse(str(tmp_path / "results"), figures_dir=tmp_path / "figures")
    titles = " ".join(title for title, _ in section.tables)
    for needed in ("Metrics", "alive", "question", "violations", "log-rank", "main-task turns"):
        assert needed in titles
    assert all(path.is_file() and path.stat().st_size > 10_000 for _, path in section.figures)
    assert "main-task turn" in section.figures[1][0]  # variants compared: on main-task turns
    assert 1 <= len(section.summary) <= 3 and "oracle" in section.summary[0]
    metrics = section.data["metrics"].set_index(["set", "model"])
    assert metrics.loc[("distractorless", "oracle"), "avg_num_turns"] == 100
    models, variants = (table for _, table in section.tables[-2:])
    row = models.loc["which_is_heavier: oracle vs random"]
    assert float(row["z"]) < -5 and float(row["p"]) < 1e-6 and row["survives longer"] == "oracle"
    assert "z" not in variants.columns  # variants share their samples: the paired test only
    assert variants.loc["oracle: which_is_heavier vs distractorless", "lasts longer"] == "-"  # no failure
    row = variants.loc["random: which_is_heavier vs distractorless"]  # 1/2 of main-task turns fail in both
    assert float(row["p"]) > 0.001 and row["n"] == 30
    assert len(variants) == 2  # other word samples (seed 1): nothing to pair with


def documented_table() -> dict[tuple[str, str], list[str]]:
    """Return the table of the built-in solvers in docs/already_said_that.md: (set, model) -> its cells."""
    text = (ROOT / "docs" / "already_said_that.md").read_text(encoding="utf-8")
    table = text[text.index("**Built-in solvers on the six shipped sets**") :].split("\n\n")[1]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()[2:]]
    return {(row[0], row[1]): row[2:] for row in rows}


def matches(cell: str, value: float, lo: float = math.nan, hi: float = math.nan, scale: float = 1.0) -> bool:
    """Return whether a table cell ("2.0 (1.8-2.3)", "87.2", "1", "-") shows ``value`` (and, when
    the cell has one, its interval) at the cell's precision."""
    if cell == "-":
        return math.isnan(value)
    shown = [float(x) for x in re.findall(r"[\d.]+", cell)]
    digits = len(cell.split(" ")[0].partition(".")[2])
    wanted = [value, lo, hi][: len(shown)]
    return all(round(scale * w, digits) == pytest.approx(s) for w, s in zip(wanted, shown, strict=True))


@pytest.mark.slow
def test_documented_table_is_what_the_shipped_sets_give(tmp_path):
    from common.already_said_that.generate import load_set_config
    from common.already_said_that.generate import write_set as write_shipped_set

    table = documented_table()
    assert len(table) == 7
    for variant in VARIANTS:
        set_dir = tmp_path / "sets" / variant
        config = load_set_config(ROOT / "configs" / "already_said_that" / f"{variant}.yaml")
        write_shipped_set(config, set_dir)
        for model in ("random", "oracle"):
            assert (
                load_main()(
                    [
                        "-t",
                        str(set_dir),
                        "--model",
                        model,
                        "--results-dir",
                        str(tmp_path / "results"),
                        "--loglevel",
                        "WARNING",
                    ]
                )
                == 0
            )
            records = read_results(run_paths(variant, model, tmp_path / "results")["results"])
            m = analysis.seed_metrics(analysis.conversation_frame(records))
            turns, median, main, distractors, accuracy, fp, fn, violation = table[
                (variant, model) if model == "random" else ("every set", "oracle")
            ]
            if model == "oracle":  # one row for all: 33.3 distractors, none in distractorless
                main = "100.0" if variant == "distractorless" else main.split(" ")[0]
                distractors = "0.0" if variant == "distractorless" else distractors.split(" ")[0]
                accuracy = "-" if variant == "distractorless" else accuracy
            checks = [
                matches(turns, m["avg_num_turns"], m["avg_num_turns_lo"], m["avg_num_turns_hi"]),
                matches(median, m["median_num_turns"]),
                matches(main, m["avg_main_turns"], m["avg_main_turns_lo"], m["avg_main_turns_hi"]),
                matches(distractors, m["avg_num_distractors"]),
                matches(
                    accuracy,
                    m["avg_distractor_accuracy"],
                    m["avg_distractor_accuracy_lo"],
                    m["avg_distractor_accuracy_hi"],
                    scale=100,
                ),
                matches(fp, m["false_positive_rate"], scale=100),
                matches(fn, m["false_negative_rate"], scale=100),
                matches(violation, m["violation_rate"], scale=100),
            ]
            assert all(checks), (variant, model, checks, m)


# ---- human, refused, resume ---------------------------------------------------------------------
def read_until(stream, marker: str) -> str:
    text = ""
    while not text.endswith(marker):
        char = stream.read(1)
        if not char:
            raise AssertionError(f"output ended before {marker!r}: {text[-500:]}")
        text += char
    return text


def test_human_solver_through_a_pipe(tmp_path):
    """A person who remembers every word (typing Y / n) and knows the questions' answers, then
    slips on turn 6."""
    set_dir = write_set(tmp_path / "sets" / "mixed", "mixed", samples=3)
    gold = {q["question"]: q["answer"] for q in load_set(set_dir).pool}
    process = subprocess.Popen(
        [
            sys.executable,
            "scripts/already_said_that.py",
            "-t",
            str(set_dir),
            "--model",
            "human",
            "--limit",
            "1",
            "--results-dir",
            str(tmp_path / "results"),
        ],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        bufsize=1,
    )
    seen = set()
    try:
        for turn in range(1, 7):
            shown = read_until(process.stdout, "your answer> ")
            assert f"=== conversation 0, turn {turn}: the conversation so far ===" in shown
            so_far = shown.rsplit("=== conversation", 1)[1]
            assert "system: You will be shown words" in so_far  # the whole conversation, every turn
            assert so_far.count("\nuser: ") == turn and so_far.count("\nassistant: [answer: ") == turn - 1
            message = so_far.rsplit("\nuser: ", 1)[1].split("\n")[0]
            if message.startswith("MAIN TASK - "):
                word = message.removeprefix("MAIN TASK - ")
                answer = ("Y" if word in seen else "n") if turn < 6 else ("no" if word in seen else "yes")
                seen.add(word)
            else:
                answer = gold[message] if turn < 6 else "[answer: yes]"  # typed already wrapped: kept
            process.stdin.write(answer + "\n")
            process.stdin.flush()
            if turn == 6 and not message.startswith("MAIN TASK - "):
                pytest.skip("turn 6 happened to be a question")  # not with this fixture's seed
        process.stdin.close()
        assert process.wait(timeout=timeout(60)) == 0
        told = process.stdout.read()
    finally:
        process.kill()
    [result] = read_results(run_paths("mixed", "human", tmp_path / "results")["results"])
    assert result["turns"] == 5 and result["ended"] in ("false_positive", "false_negative")
    assert "=== conversation 0 over: game lost at turn 6 (false " in told and "5 turns passed ===" in told
    turns = read_turns(run_paths("mixed", "human", tmp_path / "results")["turns"])
    assert {t["reply"] for t in turns if t["kind"] == "main"} <= {"[answer: yes]", "[answer: no]"}


def stub_config(tmp_path, server, **settings):
    path = tmp_path / "stub.yaml"
    lines = {
        "base_url": server.url,
        "model": "stub-model",
        "backoff_s": 0.001,
        "max_retries": 2,
        "price_per_1k_tokens": {"input": 0.5, "output": 2.0},
        **settings,
    }
    path.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in lines.items()), encoding="utf-8")
    return path


def test_context_refusal_ends_a_conversation_as_a_violation_counted_apart(tmp_path):
    from common.models.stub_server import StubServer

    set_dir = write_set(tmp_path / "sets" / "distractorless", "distractorless", samples=4)
    system_words = len(task_description(None).split())
    # "[answer: no]" to every word: new words pass; the third request no longer fits
    with StubServer(answer=lambda prompt: "[answer: no]", max_context=system_words + 8 + 14) as server:
        config = stub_config(tmp_path, server, max_tokens=8)
        assert (
            load_main()(
                [
                    "-t",
                    str(set_dir),
                    "--model",
                    str(config),
                    "--no-cache",
                    "--results-dir",
                    str(tmp_path / "results"),
                    "--loglevel",
                    "WARNING",
                ]
            )
            == 0
        )
    files = run_paths("distractorless", "stub", tmp_path / "results")
    records = read_results(files["results"])
    refused = [r for r in records if r.get("refused")]
    assert refused and all(
        r["refused"] == "context_length_exceeded" and r["ended"] == "refused" for r in refused
    )
    assert all(r["violation_occurred"] and r["refused_turns"] == 1 for r in refused)
    metrics = analysis.seed_metrics(analysis.conversation_frame(records))
    assert metrics["refused"] == len(refused)
    assert metrics["n"] == len(records)  # none left out: the original's rule
    assert metrics["violation_rate"] == pytest.approx(len(refused) / len(records))
    summary = json.loads(files["summary"].read_text())
    assert summary["this_run"]["refused"] == len(refused)
    meta = json.loads(files["results"].with_name("direct___stub___results.meta.json").read_text())
    assert meta["runs"][-1]["refused"] == len(refused)
    run = summary["this_run"]  # real usage, priced as the config says
    assert run["prompt_tokens"] > 0 and run["cost_usd"] == pytest.approx(
        (run["prompt_tokens"] * 0.5 + run["completion_tokens"] * 2.0) / 1000, abs=1e-6
    )

    # a larger context: --retry-errors plays the refused conversations again, each written once
    with StubServer(answer=lambda prompt: "[answer: no]") as server:
        config = stub_config(tmp_path, server, max_tokens=8)
        assert (
            load_main()(
                [
                    "-t",
                    str(set_dir),
                    "--model",
                    str(config),
                    "--no-cache",
                    "--retry-errors",
                    "--results-dir",
                    str(tmp_path / "results"),
                    "--loglevel",
                    "WARNING",
                ]
            )
            == 0
        )
    again = read_results(files["results"])
    assert sorted(r["Key"] for r in again) == [0, 1, 2, 3] and not any(r.get("refused") for r in again)
    turns = read_turns(files["turns"], {0, 1, 2, 3})
    assert len(turns) == sum(r["asked"] for r in again) and not any("refused" in t for t in turns)


class RefusesQuestions:
    """A model that answers every main-task turn right (from the turn's gold) and whose server
    refuses every distractor question as ``kind`` says; it keeps what it was sent."""

    name, concurrency = "refuser", 1

    def __init__(self, kind: str):
        self.sent, self.kind = [], kind

    def complete(self, messages, item):
        self.sent.append([dict(m) for m in messages])
        if item["kind"] == "distractor":
            raise RequestRefused(self.kind, "HTTP 400: the question was filtered")
        return Reply(f"[answer: {item['gold']}]")


@pytest.mark.parametrize(
    ("kind", "filtered"),
    [("context_length_exceeded", "stop"), ("content_filter", "violation")],  # a filter played on
)
def test_a_refused_distractor_turn_is_a_violation_and_the_game_goes_on(tmp_path, kind, filtered):
    data = load_set(write_set(tmp_path / "which_is_heavier", "which_is_heavier", samples=3, turns=30))
    model = RefusesQuestions(kind)
    player = run_module.ConversationRunner(data, tmp_path / "turns.jsonl", model.name, filtered=filtered)
    records = [player.answer(model, item) for item in run_module.items(data)]
    turns = read_turns(tmp_path / "turns.jsonl")
    refused = [t for t in turns if "refused" in t]
    assert refused and all(t["kind"] == "distractor" and t["violation"] and not t["correct"] for t in refused)
    assert all(r["ended"] == "survived" and r["turns"] == 30 for r in records)  # the game went on
    assert all(r["distractor_accuracy"] == 0 and r["refused_turns"] == r["distractors"] for r in records)
    assert not any(r.get("refused") for r in records)  # it did not end on one
    last = {r["Key"]: max(t["turn"] for t in turns if t["Key"] == r["Key"]) for r in records}
    for r in records:  # the original's flag: the last reply judged had no valid answer
        ended_on_question = any(t["Key"] == r["Key"] and t["turn"] == last[r["Key"]] for t in refused)
        assert r["violation_occurred"] == ended_on_question
    # the error stood as the reply in the history the next turn was sent, as the original's did
    after = next(sent for sent in model.sent if any(m["content"].endswith("was filtered") for m in sent))
    assert after[-2] == {"role": "assistant", "content": "HTTP 400: the question was filtered"}
    m = analysis.seed_metrics(analysis.conversation_frame(records))
    assert m["refused"] == 0 and m["refused_turns"] == len(refused) and m["avg_distractor_accuracy"] == 0


@pytest.mark.slow
def test_resume_after_sigkill_writes_no_conversation_twice(tmp_path):
    from common.models.stub_server import StubServer

    set_dir = write_set(tmp_path / "sets" / "mixed", "mixed", samples=40)
    cache = tmp_path / "cache.sqlite"
    with StubServer(answer=lambda prompt: "[answer: no]", default="slow:0.03") as server:
        config = stub_config(tmp_path, server, concurrency=4)
        command = [
            sys.executable,
            "scripts/already_said_that.py",
            "-t",
            str(set_dir),
            "--model",
            str(config),
            "--results-dir",
            str(tmp_path / "results"),
            "--cache-file",
            str(cache),
        ]
        results = run_paths("mixed", "stub", tmp_path / "results")["results"]
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: results.is_file() and len(results.read_text().splitlines()) >= 8, 120, "8 results")
        process.send_signal(signal.SIGKILL)
        process.wait()
        first = len(read_results(results))
        assert 8 <= first < 40
        asked_before = len(server.requests)
        finished = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout(300))
        assert finished.returncode == 0, finished.stderr
    keys = [json.loads(line)["Key"] for line in results.read_text().splitlines()]
    assert sorted(keys) == list(range(40))  # every conversation once
    turns = read_turns(results.with_name("direct___stub___turns.jsonl"), set(keys))
    assert len(turns) == sum(r["asked"] for r in read_results(results))  # one block per conversation
    assert len(server.requests) - asked_before < sum(r["asked"] for r in read_results(results))


@pytest.mark.slow
def test_benchmark_script_runs(tmp_path):
    set_dir = write_set(tmp_path / "distractorless", "distractorless", samples=30)
    result = subprocess.run(
        [
            sys.executable,
            "bench/bench_already_said_that.py",
            "--sets",
            str(set_dir),
            "--conversations",
            "30",
            "--repetitions",
            "1",
            "--concurrency",
            "4",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout(300),
    )
    assert result.returncode == 0, result.stderr
    assert "distractorless" in result.stdout and "runner / bare loop per repetition: " in result.stdout
    assert "machine load: " in result.stdout


def test_a_thinking_model_is_judged_on_its_answer_and_sent_back_its_answers_only(tmp_path):
    from common.models.stub_server import StubServer

    set_dir = write_set(tmp_path / "sets" / "mixed", "mixed", samples=3)
    tempted = "<think>I am tempted to say [answer: yes] here</think>"
    played = {}
    for label, think, budget in (("plain", "", 64), ("thinking", tempted, 64), ("cut", tempted, 3)):
        with StubServer(answer=lambda prompt, think=think: think + "[answer: no]") as server:
            config = stub_config(tmp_path, server, max_tokens=budget, name=label)
            arguments = ["-t", str(set_dir), "--model", str(config), "--no-cache"]
            arguments += ["--results-dir", str(tmp_path / "results"), "--loglevel", "WARNING"]
            assert load_main()(arguments) == 0
            sent = [m for r in server.requests for m in r["body"]["messages"] if m["role"] == "assistant"]
        files = run_paths("mixed", label, tmp_path / "results")
        played[label] = (read_results(files["results"]), read_turns(files["turns"]), sent)
    plain, thinking, cut = played["plain"], played["thinking"], played["cut"]
    assert thinking[2] and {m["content"] for m in thinking[2]} == {"[answer: no]"}  # no reasoning sent back
    own = ("reasoning", "reasoning_tokens", "completion_tokens", "model", "run")
    same = lambda rows: sorted(  # noqa: E731
        ({k: v for k, v in row.items() if k not in own} for row in rows),
        key=lambda r: (r["Key"], r.get("turn", 0)),
    )
    assert same(thinking[0]) == same(plain[0]) and same(thinking[1]) == same(plain[1])
    assert {tuple(t["reasoning"]) for t in thinking[1]} == {("I am tempted to say [answer: yes] here",)}
    # cut while thinking: no answer, every turn a violation, the first main-task turn ends it
    assert {r["ended"] for r in cut[0]} == {"violation"}
    assert all(t["answer"] is None and t["reply"] == "" and t["finish_reason"] == "length" for t in cut[1])


def test_a_batch_run_plays_every_conversation_as_a_live_run_one_batch_per_turn(tmp_path):
    from common.models.stub_server import StubServer

    set_dir = write_set(tmp_path / "sets" / "mixed", "mixed", samples=4, turns=30)
    with StubServer(answer=lambda prompt: "[answer: no]") as server:
        config = stub_config(tmp_path, server, max_tokens=8, batch_poll_s=0.01)
        for _, options, code in live_then_batch(tmp_path):
            command = ["-t", str(set_dir), "--model", str(config), *options, "--loglevel", "WARNING"]
            assert load_main()(command) == code
        live_requests = len(server.requests)
    played = {}
    for name in ("live", "batch"):
        files = run_paths("mixed", "stub", tmp_path / name)
        played[name] = (  # each run's record (``run``) says how it was asked: a batch, or live
            sorted(
                ({k: v for k, v in r.items() if k != "run"} for r in read_results(files["results"])),
                key=lambda r: r["Key"],
            ),
            sorted(read_turns(files["turns"]), key=lambda t: (t["Key"], t["turn"])),
        )
    assert played["batch"] == played["live"]
    records, turns = played["batch"]
    assert live_requests == len(turns) and server.batches.lines_answered == len(turns)  # each turn once
    assert len(server.batches.batches) == max(r["asked"] for r in records)  # one batch per turn


def test_a_limit_on_a_set_whose_seeds_each_play_their_own_pick_gives_whole_items_and_says_so(
    tmp_path, caplog
):
    # the original's protocol: each of 3 seeds (1-3, as its runs) plays 10 of the 20 conversations,
    # its own 10; a limit of 3 plays the first 3 every seed plays (4 do here), each with its 3 draws
    # (not 3 samples of which some seeds play none)
    set_dir = write_set(
        tmp_path / "sets" / "which_is_heavier", "which_is_heavier", samples=20, play=10, seeds=3, first_seed=1
    )
    data = load_set(set_dir)
    chosen = data.limited(3)
    assert len(chosen) == 3 and all(data.plays(s, draw) for s in chosen for draw in range(3))
    assert chosen != data.samples[:3]  # the first three are not each played by every seed
    with caplog.at_level(logging.WARNING):
        play(tmp_path, "which_is_heavier", "random", 20, "--limit", "3")
    records = read_results(
        run_paths("which_is_heavier", "random", tmp_path / "results")["results"], all_draws=True
    )
    assert sorted((r["Key"], r.get("draw", 0)) for r in records) == [
        (s["sample"], draw) for s in chosen for draw in range(3)
    ]
    said = [r.getMessage() for r in caplog.records if "--limit 3" in r.getMessage()]
    samples = ", ".join(str(s["sample"]) for s in chosen)
    assert (
        said
        and f"the first 3 that every seed plays (samples {samples}), each played by all its seeds" in said[0]
    )
