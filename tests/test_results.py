"""Tests of common.results: names, append-only writing, resume, torn lines, concurrency."""

import json
import logging
import subprocess
import sys
import threading

import pytest

from common.errors import DataError, UserError
from common.results import (
    ResultsWriter,
    find_results_files,
    parse_results_filename,
    read_results,
    results_filename,
)


def test_name_round_trip():
    name = results_filename("basic", "Llama2-FT+1M")
    assert name == "basic___Llama2-FT+1M___results.jsonl"
    assert parse_results_filename(f"/x/y/{name}") == ("basic", "Llama2-FT+1M")


@pytest.mark.parametrize(
    "name",
    [
        "basic_results.jsonl",
        "a___b___c___results.jsonl",
        "___m___results.jsonl",
        "basic___gpt___results.json",
    ],
)
def test_bad_names_are_refused(name):
    with pytest.raises(DataError, match="triple underscores"):
        parse_results_filename(name)


@pytest.mark.parametrize("label", ["", "a___b", "a/b", ".hidden"])
def test_labels_that_would_not_parse_back_are_refused(label):
    with pytest.raises(ValueError, match="cannot be used"):
        results_filename(label, "model")


def test_find_results_files_sorted_and_filtered(tmp_path):
    for name in ["b___m___results.jsonl", "a___m___results.jsonl", "a___m___results.jsonl.done", "x.jsonl"]:
        (tmp_path / name).write_text("")
    found = [p.name for p in find_results_files(tmp_path)]
    assert found == ["a___m___results.jsonl", "b___m___results.jsonl"]
    assert find_results_files(tmp_path / "missing") == []


def test_append_skips_keys_already_present_and_resumes(tmp_path):
    path = tmp_path / "p___m___results.jsonl"
    with ResultsWriter(path) as writer:
        assert writer.append({"Key": 1, "resp": "TRUE"})
        assert not writer.append({"Key": 1, "resp": "FALSE"})
    with ResultsWriter(path) as writer:
        assert writer.done == {(1, 0)} and writer.has(1) and not writer.has(1, 1)
        assert not writer.append({"Key": 1, "resp": "FALSE"})
        assert writer.append({"Key": 2, "resp": ""})
    assert path.read_text() == '{"Key":1,"resp":"TRUE"}\n{"Key":2,"resp":""}\n'


def test_each_line_is_flushed_before_close(tmp_path):
    path = tmp_path / "p___m___results.jsonl"
    writer = ResultsWriter(path)
    writer.append({"Key": 7, "resp": "1"})
    assert read_results(path) == [{"Key": 7, "resp": "1"}]  # visible to another reader at once
    writer.close()


@pytest.mark.parametrize("torn", [b'{"Key":3,"re', b'{"Key":3,"resp":"x"}', b"\xff\xfe"])
def test_torn_last_line_is_dropped_and_rewritten(tmp_path, caplog, torn):
    path = tmp_path / "p___m___results.jsonl"
    path.write_bytes(b'{"Key":1,"resp":"a"}\n{"Key":2,"resp":"b"}\n' + torn)
    with caplog.at_level(logging.WARNING):
        assert [r["Key"] for r in read_results(path)] == [1, 2]
        with ResultsWriter(path) as writer:
            assert writer.done == {(1, 0), (2, 0)}
            writer.append({"Key": 3, "resp": "c"})
    assert "torn last line" in caplog.text
    assert [json.loads(line)["Key"] for line in path.read_text().splitlines()] == [1, 2, 3]


def test_malformed_line_in_the_middle_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / "p___m___results.jsonl"
    path.write_text('{"Key":1,"resp":"a"}\nnot json\n{"Key":2,"resp":"b"}\n')
    with pytest.raises(DataError, match=r"p___m___results\.jsonl:2"):
        read_results(path)
    with pytest.raises(DataError):
        ResultsWriter(path)
    assert path.read_text().count("\n") == 3  # nothing was cut


def test_record_without_key_is_an_error(tmp_path):
    path = tmp_path / "p___m___results.jsonl"
    path.write_text('{"resp":"a"}\n')
    with pytest.raises(DataError, match=":1: results record has no 'Key'"):
        read_results(path)


def test_duplicate_keys_keep_the_first_answer(tmp_path, caplog):
    path = tmp_path / "p___m___results.jsonl"
    path.write_text('{"Key":1,"resp":"a"}\n{"Key":1,"resp":"b"}\n')
    with caplog.at_level(logging.WARNING):
        assert read_results(path) == [{"Key": 1, "resp": "a"}]
    assert "1 duplicate Keys" in caplog.text


def test_many_threads_never_write_a_key_twice(tmp_path):
    path = tmp_path / "p___m___results.jsonl"
    with ResultsWriter(path) as writer:

        def work(offset):
            for i in range(200):
                writer.append({"Key": (i + offset) % 300, "resp": str(offset)})

        threads = [threading.Thread(target=work, args=(k * 37,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    keys = [json.loads(line)["Key"] for line in path.read_text().splitlines()]
    assert len(keys) == len(set(keys)) == 300


def test_a_second_writer_is_refused_until_the_first_process_dies(tmp_path):
    path = tmp_path / "basic___m___results.jsonl"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time; from common.results import ResultsWriter; "
                "w = ResultsWriter(sys.argv[1]); w.append({'Key': 1, 'resp': 'a'}); "
                "print('ok', flush=True); time.sleep(3600)"  # killed by the test
            ),
            str(path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ok"
        with pytest.raises(UserError, match=rf"being written by another run \(process {holder.pid}\)"):
            ResultsWriter(path)
    finally:
        holder.kill()  # SIGKILL: the OS releases the lock, no cleanup needed
        holder.wait()
    with ResultsWriter(path) as writer:
        assert writer.done == {(1, 0)} and writer.append({"Key": 2, "resp": "b"})


def test_drop_refused_rewrites_the_file_without_refused_records(tmp_path):
    path = tmp_path / "basic___m___results.jsonl"
    lines = [
        {"Key": 1, "resp": "a"},
        {"Key": 2, "resp": "", "refused": "content_filter", "error": "x"},
        {"Key": 3, "resp": "c"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with ResultsWriter(path) as writer:
        assert writer.done == {(1, 0), (2, 0), (3, 0)} and writer.dropped == 0
    with ResultsWriter(path, redo=("refused",)) as writer:
        assert writer.done == {(1, 0), (3, 0)} and writer.dropped == 1
    assert [json.loads(line)["Key"] for line in path.read_text().splitlines()] == [1, 3]


def test_a_file_the_writer_created_and_never_wrote_is_removed(tmp_path):
    path = tmp_path / "basic___m___results.jsonl"
    with ResultsWriter(path) as writer:
        assert writer.untouched
    assert writer.removed and not path.exists()  # a run that answered nothing leaves no empty file
    path.write_text("")
    with ResultsWriter(path) as writer:  # a file that was there before is left as it was
        assert not writer.untouched
    assert not writer.removed and path.exists()
    path.unlink()
    with ResultsWriter(path) as writer:
        writer.append({"Key": 1, "resp": "a"})
    assert read_results(path) == [{"Key": 1, "resp": "a"}]


def test_finish_reasons_of_every_shape_in_order():
    """One string, a list (a reply per turn), a mapping per part, lists of those: every reason in
    order (a mapping's by its keys); none without the field."""
    from common.results import finish_reasons, truncated

    assert finish_reasons({}) == [] and finish_reasons({"finish_reason": None}) == []
    assert finish_reasons({"finish_reason": "stop"}) == ["stop"]
    flat = {"finish_reason": ["stop", "length", "stop"]}
    assert finish_reasons(flat) == ["stop", "length", "stop"] and truncated(flat)
    assert finish_reasons(flat) is not flat["finish_reason"]  # a copy: the record stays as it was
    nested = {"finish_reason": ["stop", {"b": "length", "a": ["stop", "stop"]}, None]}
    assert finish_reasons(nested) == ["stop", "stop", "stop", "length"]
