"""Several endpoints (base_url as a list) and the concurrency that adapts to 429s, against real servers."""

import json
import subprocess
import sys
import threading
import time

import pytest
from model_helpers import make_config, make_items, run_items

from common.errors import ConfigError
from common.models.cache import ResponseCache, request_key
from common.models.client import HTTPModel
from common.models.config import config_from_mapping
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
    assert 20 <= served[doomed_url]["served"] < 200 and served[doomed_url]["failed"] >= 1
    assert served[alive_url]["served"] > served[doomed_url]["served"]


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


def test_the_limit_halves_on_a_429_grows_by_one_per_window_and_never_passes_the_maximum():
    limiter = AdaptiveLimiter(8)
    cohorts = [limiter.acquire() for _ in range(8)]
    for cohort in cohorts[:3]:  # three 429s of one cohort: one cut
        limiter.release(cohort, answered=False, throttled=True)
    for cohort in cohorts[3:]:  # answers sent before the cut do not grow the limit back at once
        limiter.release(cohort, answered=False)
    assert limiter.limit == 4
    for _ in range(4):  # a window of answers: +1
        limiter.release(limiter.acquire(), answered=True)
    assert limiter.limit == 5
    for _ in range(100):
        limiter.release(limiter.acquire(), answered=True)
    stats = limiter.stats()
    assert (stats["final"], stats["lowest"], stats["max"], stats["throttled"]) == (8, 4, 8, 3)


def test_retry_after_pauses_every_new_attempt():
    limiter = AdaptiveLimiter(4)
    limiter.release(limiter.acquire(), answered=False, throttled=True, retry_after=0.3)
    start = time.monotonic()
    limiter.release(limiter.acquire(), answered=True)
    assert time.monotonic() - start >= 0.25


def test_a_server_that_answers_429_above_n_at_once_gets_about_n(tmp_path):
    n = 4
    with StubServer(latency=0.02, max_concurrent=n) as server:
        model = HTTPModel(make_config(server, concurrency=16, max_retries=10, retry_budget=0))
        out = tmp_path / "basic___stub___results.jsonl"
        summary = run_items(model, make_items(400), out)
    assert (summary.answered, summary.failed) == (400, 0)  # 429s spend no retry budget (0 here)
    meta = json.loads(metadata_path(out).read_text())["runs"][-1]
    reached = meta["concurrency"]
    assert n // 2 <= reached["final"] <= n + 2 and reached["lowest"] <= n
    assert reached["mean_in_flight"] <= n + 2 and meta["throttled"] < 400  # settled, not a storm
