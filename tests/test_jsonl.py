"""Tests of common.jsonl: round trips, byte-identical output, errors naming the line, atomicity."""

import bz2

import pytest

from common.errors import DataError
from common.jsonl import atomic_write, iter_jsonl, read_jsonl, write_jsonl

RECORDS = [{"Key": 3, "text": "Is it über?", "expectedresp": ["TRUE", "FALSE"]}, {"Key": -1, "resp": ""}]


@pytest.mark.parametrize("name", ["t.jsonl", "t.jsonl.bz2"])
def test_round_trip_plain_and_bz2(tmp_path, name):
    path = tmp_path / name
    assert write_jsonl(path, RECORDS) == 2
    assert read_jsonl(path) == RECORDS


def test_bz2_file_is_really_compressed_and_byte_identical(tmp_path):
    a, b = tmp_path / "a.jsonl.bz2", tmp_path / "b.jsonl.bz2"
    write_jsonl(a, RECORDS)
    write_jsonl(b, RECORDS)
    assert a.read_bytes() == b.read_bytes()
    assert bz2.decompress(a.read_bytes()).decode() == (
        '{"Key":3,"text":"Is it über?","expectedresp":["TRUE","FALSE"]}\n{"Key":-1,"resp":""}\n'
    )


def test_blank_lines_are_skipped(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"a":1}\n\n{"a":2}\n')
    assert [r["a"] for r in iter_jsonl(path)] == [1, 2]


def test_malformed_line_names_file_and_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"a":1}\n{"a":\n')
    with pytest.raises(DataError, match=r"t\.jsonl:2: not valid JSON"):
        read_jsonl(path)


def test_non_object_line_is_refused(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text("[1, 2]\n")
    with pytest.raises(DataError, match=r":1: expected a JSON object, got list"):
        read_jsonl(path)


def test_missing_file_raises_before_reading(tmp_path):
    with pytest.raises(FileNotFoundError):
        iter_jsonl(tmp_path / "nope.jsonl")


def test_atomic_write_keeps_old_content_on_failure(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_write(path) as handle:
        handle.write("half")
        raise RuntimeError("crash")
    assert path.read_text() == "old\n"
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_atomic_write_creates_parents_and_readable_file(tmp_path):
    path = tmp_path / "a" / "b" / "out.txt"
    with atomic_write(path) as handle:
        handle.write("new")
    assert path.read_text() == "new"
    assert path.stat().st_mode & 0o044 == 0o044
