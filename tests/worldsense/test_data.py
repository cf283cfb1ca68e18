"""WorldSense data: loading test sets, reading results files once into the results database, the script."""

import importlib.util
import os
import subprocess
import sys

import pytest

from common import cli, paths
from common.errors import DataError
from common.jsonl import read_jsonl, write_jsonl
from common.results import READ_LOG
from common.trials.data import load_testset
from common.worldsense.scoring import read_answers
from tests.worldsense.fixtures import answers_for, compl_tuple, section, tf_tuple, write_testset


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


def test_bad_trials_line_is_named(tmp_path):
    (tmp_path / "trials.jsonl").write_text('{"Key": 1}\n{"Key": 2,\n')
    with pytest.raises(DataError, match=r"trials.jsonl:2"):
        load_testset(tmp_path)


def test_each_results_file_is_read_once_then_only_when_it_changes(testset, tmp_path, monkeypatch):
    """The database reads a results file once (per content and scorer); an analysis after that
    reads nothing; a file that changes is read again, the others not."""
    log = tmp_path / "reads.log"
    monkeypatch.setenv(READ_LOG, str(log))
    first = section(testset)
    assert sorted(line.split("\t")[0].rsplit("/", 1)[1] for line in log.read_text().splitlines()) == [
        "basic___GPT4___results.jsonl",
        "basic___random___results.jsonl",
    ]
    log.unlink()
    again = section(testset)
    assert not log.exists() and again.tables[0][1].equals(first.tables[0][1])
    random = testset / "results" / "basic___random___results.jsonl"
    random.write_text(random.read_text().replace('"resp":"3"', '"resp":"1"', 1))
    changed = section(testset)
    assert [line.split("\t")[0].rsplit("/", 1)[1] for line in log.read_text().splitlines()] == [random.name]
    assert not changed.tables[1][1].equals(first.tables[1][1])  # random's accuracy moved


def test_results_columns_keep_the_first_answer_of_a_duplicated_key(tmp_path):
    path = tmp_path / "basic___m___results.jsonl"
    path.write_text('{"Key": 1, "resp": "TRUE"}\n{"Key": 1, "resp": "FALSE"}\n{"Key": 2}\n')
    df = read_answers(path)
    assert df["Key"].tolist() == [1, 2] and df["answer"].tolist() == ["TRUE", ""]
    path.write_text('{"Key":1,"resp":"TRUE"}\n{"Key":-5,"resp":""}\n{"Key":1,"resp":"FALSE"}\n')  # plain
    df = read_answers(path)
    assert df["Key"].tolist() == [1, -5] and df["answer"].tolist() == ["TRUE", ""]
    path.write_text('{"Key":1,"resp":"TRUE"}\n{"Key":2,"resp":"FALSE"}')  # torn last line: ignored
    assert read_answers(path)["Key"].tolist() == [1]


def test_a_non_integer_key_is_named_with_its_line(tmp_path):
    path = tmp_path / "basic___m___results.jsonl"
    path.write_text('{"Key": 1, "resp": "TRUE"}\n{"Key": "7", "resp": "FALSE", "raw": ["x"]}\n')
    with pytest.raises(DataError, match=r"basic___m___results.jsonl:2: 'Key' must be an integer.*got '7'"):
        read_answers(path)


@pytest.mark.parametrize("compressed", [False, True])
def test_a_trial_without_an_integer_key_is_named_with_its_line(tmp_path, compressed):
    directory = write_testset(tmp_path / "ts", tf_tuple("t1", "Infer.normal", 3) * 2, {}, compressed)
    name = "trials.jsonl.bz2" if compressed else "trials.jsonl"
    trials = list(read_jsonl(directory / name))
    trials[2]["Key"] = "x102"
    write_jsonl(directory / name, trials)
    message = rf"{name}:3: every trial needs an integer 'Key' \(got 'x102'\)"
    with pytest.raises(DataError, match=message):
        load_testset(directory)  # what ask_model.py, test_random_model.py and the scorer read


def test_refused_items_are_kept_in_a_column(tmp_path):
    path = tmp_path / "basic___m___results.jsonl"
    path.write_text(
        '{"Key": 1, "resp": "TRUE", "raw": ["TRUE"]}\n'
        '{"Key": 2, "resp": "", "refused": "context_length_exceeded", "error": "too long"}\n'
    )
    df = read_answers(path)
    assert df["refused"].fillna("").tolist() == ["", "context_length_exceeded"]
    assert df["answer"].tolist() == ["TRUE", ""]


def test_script_prints_tables_and_writes_outputs(testset, tmp_path, capsys):
    out = tmp_path / "out"
    argv = [
        "-t",
        str(testset),
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


def test_script_exits_2_on_a_missing_test_set(tmp_path, capsys):
    assert cli.run_main(_script().main, ["-t", str(tmp_path / "nowhere")]) == 2
    assert "no set" in capsys.readouterr().err


def test_script_exits_2_without_results_files(tmp_path, capsys):
    write_testset(tmp_path / "ts", tf_tuple("t", "Infer.normal", 3), {})
    assert cli.run_main(_script().main, ["-t", str(tmp_path / "ts")]) == 2
    assert "test_random_model.py" in capsys.readouterr().err


def test_outputs_are_byte_identical_across_hash_seeds(testset, tmp_path):
    outputs = []
    for seed in ("0", "12345"):
        out = tmp_path / seed
        argv = [
            sys.executable,
            str(paths.ROOT / "scripts" / "analyse_results.py"),
            "-t",
            str(testset),
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
