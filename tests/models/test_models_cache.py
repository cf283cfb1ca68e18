"""The response cache: what is cached, what never is, and several processes sharing one file."""

import sqlite3
import subprocess
import sys
import threading

import pytest
from model_helpers import SENTINEL_KEY, make_config

from common.models import cache as cache_module
from common.models.base import RequestFailed
from common.models.cache import ResponseCache, request_key
from common.models.client import HTTPModel
from tests.timing import timeout

ASK = [{"role": "user", "content": "Is it so?"}]


def test_identical_requests_are_answered_from_the_cache(server, tmp_path):
    cache_file = tmp_path / "cache.sqlite"
    first = HTTPModel(make_config(server), cache=ResponseCache(cache_file))
    assert first.complete(ASK).cached is False
    first.close()  # the end of a run commits its answers
    second = HTTPModel(make_config(server), cache=ResponseCache(cache_file))  # a new run
    reply = second.complete(ASK)
    assert (reply.text, reply.cached, reply.attempts, reply.prompt_tokens) == ("TRUE", True, 0, 3)
    assert len(server.requests) == 1
    assert second.counters.cache_hits == 1
    assert second.counters.prompt_tokens == 0  # cached tokens cost nothing


def test_different_settings_or_endpoints_are_different_requests(server, tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    for settings in ({}, {"temperature": 0.7}, {"seed": 1}, {"model": "other"}, {"api": "completions"}):
        HTTPModel(make_config(server, **settings), cache=cache).complete(ASK)
    HTTPModel(make_config(server), cache=cache).complete([{"role": "user", "content": "Other?"}])
    assert len(server.requests) == 6 and len(cache) == 6


def test_errors_and_empty_answers_are_never_cached(server, tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    model = HTTPModel(make_config(server, max_retries=0), cache=cache)
    server.script("empty", "500")
    assert model.complete(ASK).text == ""
    with pytest.raises(RequestFailed):
        model.complete(ASK)
    assert len(cache) == 0
    assert model.complete(ASK).text == "TRUE" and len(cache) == 1


def test_key_is_neither_in_the_cache_key_nor_the_file(server, tmp_path, monkeypatch):
    monkeypatch.setenv("STUB_KEY", SENTINEL_KEY)
    cache_file = tmp_path / "cache.sqlite"
    with_key = HTTPModel(make_config(server, api_key_env="STUB_KEY"), cache=ResponseCache(cache_file))
    with_key.complete(ASK)
    with_key.cache.close()
    for path in tmp_path.iterdir():  # the database and its WAL
        assert SENTINEL_KEY.encode() not in path.read_bytes(), path
    no_key = HTTPModel(make_config(server), cache=ResponseCache(cache_file))
    assert no_key.complete(ASK).cached  # the key does not change what the request is


def test_request_key_is_canonical():
    assert request_key("u", {"a": 1, "b": [1, 2]}) == request_key("u", {"b": [1, 2], "a": 1})
    assert request_key("u", {"a": 1}) != request_key("v", {"a": 1})


WRITER = """
import sys
from common.models.base import RequestFailed
from common.models.cache import ResponseCache
cache = ResponseCache(sys.argv[1])
for i in range(300):
    cache.put(f"{sys.argv[2]}-{i}", {"text": str(i)})
    assert cache.get(f"{sys.argv[2]}-{i}") == {"text": str(i)}
cache.close()
"""


def test_pending_answers_are_visible_at_once_and_committed_on_close(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_module, "REFRESH_SECONDS", 0)  # look for other processes' rows at once
    cache = ResponseCache(tmp_path / "cache.sqlite")
    cache.put("k", {"text": "TRUE"})
    assert cache.get("k") == {"text": "TRUE"}
    other = ResponseCache(tmp_path / "cache.sqlite")  # as another process sees the file
    assert other.get("k") is None
    cache.close()
    assert other.get("k") == {"text": "TRUE"}


def test_a_miss_is_answered_from_memory_and_other_processes_rows_are_seen_a_second_later(
    tmp_path, monkeypatch
):
    statements = []
    real_connect = sqlite3.connect

    def connect(*args, **kwargs):
        connection = real_connect(*args, **kwargs)
        connection.set_trace_callback(statements.append)
        return connection

    first = ResponseCache(tmp_path / "cache.sqlite")
    first.put("old", {"text": "TRUE"})
    first.close()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cache_module.sqlite3, "connect", connect)
        cache = ResponseCache(tmp_path / "cache.sqlite")
    statements.clear()
    assert cache.get("missing") is None and cache.get("old") == {"text": "TRUE"}
    assert [s for s in statements if "SELECT value" in s] == ["SELECT value FROM answers WHERE key = 'old'"]
    other = ResponseCache(tmp_path / "cache.sqlite")  # another process commits an answer
    other.put("new", {"text": "FALSE"})
    other.close()
    monkeypatch.setattr(cache_module, "REFRESH_SECONDS", 3600)
    assert cache.get("new") is None  # not looked for yet: less than REFRESH_SECONDS since the last look
    monkeypatch.setattr(cache_module, "REFRESH_SECONDS", 0)
    assert cache.get("new") == {"text": "FALSE"}  # the next miss looks


def test_an_answer_being_committed_is_still_seen(tmp_path, monkeypatch):
    # hold the commit at its BEGIN (as another process holding the write lock would), whichever
    # thread makes it (the cache's writer thread may come first on a loaded machine), and look
    reached, release = threading.Event(), threading.Event()
    real_connect = sqlite3.connect

    def hold_at_begin(statement: str) -> None:
        if statement == "BEGIN IMMEDIATE":
            reached.set()
            release.wait(timeout(30))

    def connect(*args, **kwargs):
        connection = real_connect(*args, **kwargs)
        connection.set_trace_callback(hold_at_begin)
        return connection

    monkeypatch.setattr(cache_module.sqlite3, "connect", connect)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    cache.put("k", {"text": "TRUE"})
    committer = threading.Thread(target=cache.flush, name="committer")
    committer.start()
    try:
        assert reached.wait(timeout(30)), "the commit never started"
        assert cache.get("k") == {"text": "TRUE"}  # neither in memory nor on disk before the fix
        cache.put("k", {"text": "FALSE"})  # a newer answer put meanwhile is the one kept
    finally:
        release.set()
        committer.join()
    assert cache.get("k") == {"text": "FALSE"}
    cache.close()
    assert ResponseCache(tmp_path / "cache.sqlite").get("k") == {"text": "FALSE"}


def test_several_processes_write_one_cache_at_once(tmp_path):
    cache_file = tmp_path / "cache.sqlite"
    ResponseCache(cache_file).close()
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(cache_file), name]) for name in "abc"]
    assert [writer.wait(timeout=timeout(120)) for writer in writers] == [0, 0, 0]
    cache = ResponseCache(cache_file)
    assert len(cache) == 900
    assert cache.get("b-299") == {"text": "299"}


def test_the_key_of_a_body_encoded_once_is_the_key_it_always_was():
    import hashlib

    from common.models.cache import canonical_json, key_of_canonical, request_key

    body = {"model": "m", "messages": [{"role": "user", "content": "héllo \u2603"}], "seed": 3, "top_p": None}
    for draw in (0, 2):
        assert key_of_canonical("http://x/v1/chat/completions", canonical_json(body), draw) == request_key(
            "http://x/v1/chat/completions", body, draw
        )
    wrapped = b'{"endpoint":"u","payload":{"a":1}}'  # how keys were always made
    assert request_key("u", {"a": 1}) == hashlib.sha256(wrapped).hexdigest()
