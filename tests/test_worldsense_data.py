"""WorldSense loading, the parsed-columns cache, and the analyse_results script."""

import importlib.util
import json
import logging
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor

import pytest

from common import cli, paths
from common.errors import DataError
from common.jsonl import read_jsonl, write_jsonl
from common.worldsense import cache, load_testset
from common.worldsense.data import load_results_columns, load_results_in_testset_dir, load_trial_columns
from tests.worldsense_fixtures import answers_for, compl_tuple, tf_tuple, write_testset


def _script():
    path = paths.ROOT / "scripts" / "analyse_results.py"
    spec = importlib.util.spec_from_file_location("analyse_results", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def testset(tmp_path):
    trials = tf_tuple("t1", "Infer.normal", 3, "race") + compl_tuple("c1", 4, "trips")
    answers = {"GPT4": [*answers_for(trials[:2], [1]), "1", "2", "3"], "random": ["FALSE"] * 2 + ["3"] * 3}
    return write_testset(tmp_path / "ts", trials, answers, compressed=True)


def test_load_testset_deobfuscates_and_keeps_every_field(tmp_path):
    trials = [
        {
            "Key": 7,
            "text": "q?",
            "expectedresp": ["TRUE", "FALSE"],
            "goldresp_obfusc": "Megi",
            "tuple_ID": "a",
            "problemname": "Infer.normal",
        }
    ]
    write_jsonl(tmp_path / "trials.jsonl.bz2", trials)
    df = load_testset(tmp_path)
    assert df.loc[0, "goldresp"] == "FALSE"
    assert "goldresp_obfusc" not in df.columns
    assert df.loc[0, "expectedresp"] == ["TRUE", "FALSE"] and df.loc[0, "text"] == "q?"
    columns = load_trial_columns(tmp_path, cache_dir=None)
    assert "text" not in columns.columns and columns.loc[0, "n_options"] == 2
    assert columns.loc[0, "goldresp"] == "FALSE"


def test_bad_trials_line_is_named(tmp_path):
    (tmp_path / "trials.jsonl").write_text('{"Key": 1}\n{"Key": 2,\n')
    with pytest.raises(DataError, match=r"trials.jsonl:2"):
        load_testset(tmp_path)


def test_cache_is_used_and_invalidated_when_an_input_changes(testset, tmp_path):
    cache_dir = tmp_path / "cache"
    first = load_results_in_testset_dir(testset, cache_dir, fields=[])
    entries = sorted(p.name.split("-v")[0] for p in cache_dir.iterdir())
    assert entries == [
        "fieldnames",
        "results",
        "results",
        "trials-Key",
        "trials-expectedresp",
        "trials-goldresp",
        "trials-problemname",
        "trials-problemsize",
        "trials-tuple_ID",
    ]
    again = load_results_in_testset_dir(testset, cache_dir, fields=[])
    assert again.equals(first)
    assert len(list(cache_dir.iterdir())) == 9  # nothing re-parsed
    with_skin = load_results_in_testset_dir(testset, cache_dir, fields=["skin"])
    assert with_skin["skin"].tolist()[:2] == ["race", "race"]
    assert len(list(cache_dir.iterdir())) == 10  # only the new field was parsed
    # change one answer: the results file's hash changes, so its columns are parsed again
    results = testset / "results" / "basic___random___results.jsonl"
    rows = read_jsonl(results)
    rows[0]["resp"] = "TRUE"
    write_jsonl(results, rows)
    changed = load_results_in_testset_dir(testset, cache_dir, fields=["skin"])
    assert len(list(cache_dir.iterdir())) == 11
    random_rows = changed[changed["modelname"] == "random"]
    assert random_rows["resp"].tolist()[0] == "TRUE"


def test_damaged_cache_entry_is_rebuilt(testset, tmp_path, caplog):
    cache_dir = tmp_path / "cache"
    expected = load_trial_columns(testset, cache_dir)
    entry = next(cache_dir.glob("trials-*"))
    entry.write_bytes(b"not a zip file")
    with caplog.at_level(logging.WARNING):
        assert load_trial_columns(testset, cache_dir).equals(expected)
    assert "damaged cache entry" in caplog.text


def test_results_columns_keep_the_first_answer_of_a_duplicated_key(tmp_path):
    path = tmp_path / "basic___m___results.jsonl"
    path.write_text('{"Key": 1, "resp": "TRUE"}\n{"Key": 1, "resp": "FALSE"}\n{"Key": 2}\n')
    df = load_results_columns(path, cache_dir=None)
    assert df["Key"].tolist() == [1, 2] and df["resp"].tolist() == ["TRUE", ""]
    path.write_text('{"Key":1,"resp":"TRUE"}\n{"Key":-5,"resp":""}\n{"Key":1,"resp":"FALSE"}\n')  # plain
    df = load_results_columns(path, cache_dir=None)
    assert df["Key"].tolist() == [1, -5] and df["resp"].tolist() == ["TRUE", ""]
    path.write_text('{"Key":1,"resp":"TRUE"}\n{"Key":2,"resp":"FALSE"}')  # torn last line: ignored
    assert load_results_columns(path, cache_dir=None)["Key"].tolist() == [1]


def test_a_non_integer_key_is_named_with_its_line(tmp_path):
    path = tmp_path / "basic___m___results.jsonl"
    path.write_text('{"Key": 1, "resp": "TRUE"}\n{"Key": "7", "resp": "FALSE", "raw": ["x"]}\n')
    with pytest.raises(DataError, match=r"basic___m___results.jsonl:2: 'Key' must be an integer.*got '7'"):
        load_results_columns(path, cache_dir=None)


@pytest.mark.parametrize("compressed", [False, True])
def test_a_trial_without_an_integer_key_is_named_with_its_line(tmp_path, compressed):
    directory = write_testset(tmp_path / "ts", tf_tuple("t1", "Infer.normal", 3) * 2, {}, compressed)
    name = "trials.jsonl.bz2" if compressed else "trials.jsonl"
    trials = list(read_jsonl(directory / name))
    trials[2]["Key"] = "x102"
    write_jsonl(directory / name, trials)
    message = rf"{name}:3: every trial needs an integer 'Key' \(got 'x102'\)"
    with pytest.raises(DataError, match=message):
        load_testset(directory)  # what ask_model.py and test_random_model.py read
    with pytest.raises(DataError, match=message):
        load_trial_columns(directory, cache_dir=None)  # what the analysis reads


def test_refused_items_are_kept_in_a_column(tmp_path):
    path = tmp_path / "basic___m___results.jsonl"
    path.write_text(
        '{"Key": 1, "resp": "TRUE", "raw": ["TRUE"]}\n'
        '{"Key": 2, "resp": "", "refused": "context_length_exceeded", "error": "too long"}\n'
    )
    df = load_results_columns(path, cache_dir=None)
    assert df["refused"].tolist() == ["", "context_length_exceeded"] and df["resp"].tolist() == ["TRUE", ""]


def test_script_prints_tables_and_writes_outputs(testset, tmp_path, capsys):
    out = tmp_path / "out"
    argv = [
        "-t",
        str(testset),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--by",
        "problemsize",
        "--out",
        str(out / "report.txt"),
        "--csv",
        str(out / "s.csv"),
        "--markdown",
        str(out / "r.md"),
        "--plot",
        str(out / "acc.png"),
    ]
    assert cli.run_main(_script().main, argv) == 0
    printed = capsys.readouterr().out
    assert "ACCURACY by problemsize" in printed and "AVERAGE ACCURACY" in printed
    assert (out / "report.txt").read_text() == printed
    csv = (out / "s.csv").read_text().splitlines()
    assert csv[0] == "metric,prompting,modelname,problemsize,mean,conf95,sem,count"
    # GPT4 got the size-3 tuple right and the size-4 completeness tuple right: accuracy 1
    assert "accuracy,basic,GPT4,3,1.0," in "\n".join(csv)
    assert "| prompting | modelname | 3 | 4 |" in (out / "r.md").read_text()
    assert (out / "acc.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_script_no_cache_writes_no_cache(testset, tmp_path, capsys):
    cache_dir = tmp_path / "cache"
    argv = ["-t", str(testset), "--no-cache", "--cache-dir", str(cache_dir)]
    assert cli.run_main(_script().main, argv) == 0
    assert not cache_dir.exists()
    assert "random" in capsys.readouterr().out


def test_script_exits_2_on_a_missing_test_set(tmp_path, capsys):
    assert cli.run_main(_script().main, ["-t", str(tmp_path / "nowhere")]) == 2
    assert "No such test set or results directory" in capsys.readouterr().err


def test_script_exits_2_without_results_files(tmp_path, capsys):
    write_testset(tmp_path / "ts", tf_tuple("t", "Infer.normal", 3), {})
    assert cli.run_main(_script().main, ["-t", str(tmp_path / "ts"), "--no-cache"]) == 2
    assert "test_random_model.py" in capsys.readouterr().err


def test_cache_entry_names_carry_the_format_version_and_hash():
    name = cache.entry_path("x", "trials", cache.content_digest(b"abc")).name
    assert name == f"trials-v{cache.FORMAT_VERSION}-{cache.content_digest(b'abc')}.npz"


@pytest.mark.parametrize(
    ("last", "compact"),
    [
        ("plain", True),
        ("plain, json.dumps spacing", False),
        ("a {brace} forces the record-by-record parse", True),
    ],
)
def test_trial_columns_match_load_testset_with_tricky_texts(tmp_path, last, compact):
    texts = ['say "TRUE" or \\"FALSE\\"', "ends in a backslash \\", '"text":"inside"', last]
    trials = [
        {
            "Key": i,
            "text": text,
            "tuple_ID": f"t{i // 2}",
            "problemname": "Infer.normal",
            "expectedresp": ["TRUE", "FALSE"],
            "goldresp": "TRUE",
        }
        for i, text in enumerate(texts)
    ]
    trials[-1] = {**{k: v for k, v in trials[-1].items() if k != "text"}, "text": texts[-1]}  # text last
    if compact:
        write_jsonl(tmp_path / "trials.jsonl.bz2", trials)
    else:  # '"Key": 0, ...' and non-ASCII escaped
        trials[0]["problemname"] = "Infer.normal é"
        (tmp_path / "trials.jsonl").write_text("".join(json.dumps(t) + "\n" for t in trials))
    full = load_testset(tmp_path)
    assert full["text"].tolist() == texts
    columns = load_trial_columns(tmp_path, cache_dir=None)
    assert columns["Key"].tolist() == [0, 1, 2, 3]
    assert columns["tuple_ID"].tolist() == full["tuple_ID"].tolist()
    assert columns["problemname"].tolist() == full["problemname"].tolist()
    assert columns["goldresp"].tolist() == ["TRUE"] * 4
    assert columns["n_options"].tolist() == [2] * 4
    assert list(columns.columns) == ["Key", "tuple_ID", "problemname", "n_options", "goldresp"]


def test_outputs_are_byte_identical_across_hash_seeds(testset, tmp_path):
    outputs = []
    for seed in ("0", "12345"):
        out = tmp_path / seed
        argv = [
            sys.executable,
            str(paths.ROOT / "scripts" / "analyse_results.py"),
            "-t",
            str(testset),
            "--no-cache",
            "--by",
            "skin",
            "problemsize",
            "--csv",
            str(out / "s.csv"),
            "--plot",
            str(out / "a.png"),
        ]
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(argv, capture_output=True, check=True, env=env)
        outputs.append((done.stdout, (out / "s.csv").read_bytes(), (out / "a.png").read_bytes()))
    assert outputs[0] == outputs[1]


def test_big_results_files_are_parsed_by_worker_processes_with_the_same_errors(
    testset, tmp_path, monkeypatch
):
    """Results files of 1 MB or more go to the worker pool; a bad line there still names file:line."""
    submitted = []
    submit = ProcessPoolExecutor.submit
    monkeypatch.setattr(
        ProcessPoolExecutor,
        "submit",
        lambda pool, fn, *args: submitted.append(args[0].name) or submit(pool, fn, *args),
    )
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})  # two workers even on one core
    results = testset / "results" / "basic___big___results.jsonl"
    keys = load_trial_columns(testset, None)["Key"].tolist()
    filler = [{"Key": 10**12 + i, "resp": "TRUE"} for i in range(45_000)]  # unknown Keys: ignored
    write_jsonl(results, [{"Key": keys[0], "resp": "FALSE"}, *filler])
    assert results.stat().st_size >= 1 << 20
    df = load_results_in_testset_dir(testset, tmp_path / "cache", fields=[])
    big = df[df["modelname"] == "big"]
    assert big["resp"].tolist() == ["FALSE"] and big["Key"].tolist() == [keys[0]]
    assert submitted == ["basic___big___results.jsonl"]  # the two small files were parsed here
    lines = results.read_text().splitlines(keepends=True)
    lines[2] = "{not json\n"
    results.write_text("".join(lines))
    with pytest.raises(DataError, match=r"basic___big___results.jsonl:3"):
        load_results_in_testset_dir(testset, None, fields=[])
