"""Several endpoints (base_url as a list) and the concurrency that adapts to 429s, against real servers."""

import json
import queue
import subprocess
import sys
import threading
import time

import pytest
from model_helpers import make_config, make_items, run_items

from common.errors import ConfigError
from common.models import limiter as limiter_module
from common.models.cache import ResponseCache, request_key
from common.models.client import HTTPModel
from common.models.config import config_from_mapping
from common.models.endpoints import Endpoints
from common.models.limiter import AdaptiveLimiter
from common.models.stub_server import StubServer
from common.paths import ROOT
from common.results import metadata_path, read_results
from tests.timing import timeout, wait_for


def test_requests_are_shared_and_the_metadata_counts_each_endpoint(tmp_path):
    with StubServer(latency=0.01) as one, StubServer(latency=0.01) as two:
        config = make_config(one, base_url=[one.url, two.url], concurrency=8)
        out = tmp_path / "basic___stub___results.jsonl"
        summary = run_items(HTTPModel(config), make_items(120), out)
    assert (summary.answered, summary.status) == (120, "complete")
    served = json.loads(metadata_path(out).read_text())["runs"][-1]["endpoints"]
    assert served[one.url]["served"] + served[two.url]["served"] == 120
    assert min(served[one.url]["served"], served[two.url]["served"]) >= 40  # fewest in flight first


def test_the_cache_key_names_the_first_url_whichever_replica_answers(tmp_path):
    with StubServer() as one, StubServer() as two:
        cache = ResponseCache(tmp_path / "cache.sqlite")
        model = HTTPModel(make_config(one, base_url=[one.url, two.url]), cache=cache)
        single = HTTPModel(make_config(one))
        messages = [{"role": "user", "content": "is it so?"}]
        model.complete(messages)
        key = request_key(single.url, single.payload(messages))
        assert model.url == single.url and cache.get(key)["text"] == "TRUE"


def _stub_process(latency: float) -> tuple[subprocess.Popen, str]:
    """Start a stub server in its own process (so that it can be killed -9); return it and its URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "common.models.stub_server", "--port", "0", "--latency", str(latency)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    return process, process.stdout.readline().split()[-1]


def test_a_killed_endpoint_is_set_aside_and_the_run_completes_on_the_other(tmp_path):
    (alive, alive_url), (doomed, doomed_url) = _stub_process(0.01), _stub_process(0.01)
    try:
        config = make_config(None, base_url=[doomed_url, alive_url], concurrency=4, max_retries=5)
        out = tmp_path / "basic___stub___results.jsonl"
        result = {}
        run = threading.Thread(
            target=lambda: result.update(s=run_items(HTTPModel(config), make_items(300), out))
        )
        run.start()
        wait_for(lambda: out.exists() and len(out.read_text().splitlines()) >= 40, 30, "40 answers")
        doomed.kill()
        run.join(timeout(60))
    finally:
        for process in (alive, doomed):
            process.kill()
            process.wait()
            process.stdout.close()
    assert (result["s"].answered, result["s"].failed, result["s"].status) == (300, 0, "complete")
    assert sorted(r["Key"] for r in read_results(out)) == list(range(300))
    served = json.loads(metadata_path(out).read_text())["runs"][-1]["endpoints"]
    # it served about half of the first 40 (fewest in flight) before it was killed, then no more
    assert 10 <= served[doomed_url]["served"] < 200 and served[doomed_url]["failed"] >= 1
    assert served[alive_url]["served"] > served[doomed_url]["served"]


def test_each_thread_keeps_its_endpoint_while_it_is_no_busier_than_the_others():
    # a worker plays one conversation at a time: its turns stay where its prefix is cached
    endpoints = Endpoints(["http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"], "/chat/completions")
    orders = {name: queue.Queue() for name in "ab"}
    picked: dict[str, list[str]] = {"a": [], "b": []}
    held = queue.Queue()

    def worker(name: str) -> None:  # picks when told, in the order the test tells it
        while (order := orders[name].get()) is not None:
            if order == "pick":
                endpoint = endpoints.pick()
                picked[name].append(endpoint.base_url)
                held.put(endpoint)
            else:
                endpoints.done(order)
                held.put(None)

    threads = [threading.Thread(target=worker, args=(name,)) for name in "ab"]
    for thread in threads:
        thread.start()
    for turn in range(6):  # both free at each turn, the first to ask alternating
        first, second = ("a", "b") if turn % 2 == 0 else ("b", "a")
        mine = {}
        for name in (first, second):
            orders[name].put("pick")
            mine[name] = held.get(timeout=timeout(10))
        for name in (first, second):
            orders[name].put(mine[name])
            held.get(timeout=timeout(10))
    for name in "ab":
        orders[name].put(None)
    for thread in threads:
        thread.join()
    assert picked["a"][0] != picked["b"][0]
    assert all(set(urls) == {urls[0]} for urls in picked.values()), picked


def test_base_url_takes_a_list_and_names_the_field_when_it_is_wrong():
    good = config_from_mapping({"name": "m", "model": "x", "base_url": ["http://a:1/v1", "http://b:2/v1"]})
    assert good.base_url == ["http://a:1/v1", "http://b:2/v1"]
    for bad, message in (
        ([], "empty list"),
        (["http://a/v1", "ftp://b"], "http"),
        (["http://a", "http://a"], "twice"),
    ):
        with pytest.raises(ConfigError, match=f"field 'base_url'.*{message}"):
            config_from_mapping({"name": "m", "model": "x", "base_url": bad})


class Clock:
    """A monotonic clock that moves only when told (the limiter's ``time``)."""

    def __init__(self):
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now


def test_a_429_brings_the_limit_down_to_what_was_answered_then_it_grows_by_one_per_window():
    limiter = AdaptiveLimiter(8)
    for _ in range(8):
        limiter.acquire()
    for _ in range(3):  # three 429s come back while 7, 6, then 5 others are in flight
        limiter.release(answered=False, throttled=True)
    assert limiter.limit == 5  # what the server was still answering
    for _ in range(5):  # they come back answered
        limiter.release(answered=True)
    assert limiter.limit == 6  # a window of answers: +1
    for _ in range(100):
        limiter.acquire()
        limiter.release(answered=True)
    stats = limiter.stats()
    assert (stats["final"], stats["lowest"], stats["max"], stats["throttled"]) == (8, 5, 8, 3)


def test_a_server_answering_only_429s_brings_the_limit_to_one():
    limiter = AdaptiveLimiter(16)
    for _ in range(16):
        limiter.acquire()
    for _ in range(16):
        limiter.release(answered=False, throttled=True)
    assert (limiter.limit, limiter.throttled_in_a_row) == (1, 16)
    limiter.acquire()
    limiter.release(answered=True)
    assert limiter.throttled_in_a_row == 0


def test_retry_after_holds_the_limit_but_pauses_no_other_attempt(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(limiter_module, "time", clock)
    limiter = AdaptiveLimiter(4)
    for _ in range(4):
        limiter.acquire()
    limiter.release(answered=False, throttled=True, retry_after=1.0)
    assert limiter.limit == 3
    for _ in range(3):
        limiter.release(answered=True)
    for _ in range(9):  # three windows of answers, all at once: no waiting for the Retry-After ...
        limiter.acquire()
        limiter.release(answered=True)
    assert limiter.limit == 3  # ... and no growth while it runs
    clock.now += 1.0
    limiter.acquire()
    limiter.release(answered=True)
    assert limiter.limit == 4


def test_a_429_delays_only_the_request_that_got_it(server):
    model = HTTPModel(make_config(server, concurrency=2))
    wait = timeout(1)
    server.script(f"429:{wait:.2f}")
    late = threading.Thread(target=model.complete, args=([{"role": "user", "content": "first"}],))
    start = time.monotonic()
    late.start()
    wait_for(lambda: len(server.requests) == 1, 10, "the first request")
    for n in range(5):  # the second worker goes on meanwhile
        assert model.complete([{"role": "user", "content": f"other {n}"}]).attempts == 1
    assert late.is_alive() or time.monotonic() - start >= wait
    others_done = time.monotonic() - start
    late.join()
    assert others_done < wait <= time.monotonic() - start  # the others did not wait for its Retry-After
    assert [r["body"]["messages"][0]["content"] for r in server.requests][-1] == "first"


def test_a_server_that_answers_429_above_n_at_once_gets_about_n(tmp_path):
    n = 4
    with StubServer(latency=0.02, max_concurrent=n) as server:
        model = HTTPModel(make_config(server, concurrency=16, max_retries=0, retry_budget=0))
        out = tmp_path / "basic___stub___results.jsonl"
        summary = run_items(model, make_items(400), out)
    assert (summary.answered, summary.failed) == (400, 0)  # 429s spend neither max_retries nor budget
    meta = json.loads(metadata_path(out).read_text())["runs"][-1]
    reached = meta["concurrency"]
    assert n // 2 <= reached["final"] <= n + 2 and reached["lowest"] <= n
    assert reached["mean_in_flight"] <= n + 2 and meta["throttled"] < 400  # settled, not a storm
