"""The HTTP client against a real server on 127.0.0.1: formats, retries, timeouts, stops, masking."""

import threading
import time

import pytest
from model_helpers import SENTINEL_KEY, SHORT_READ_S, TOO_SLOW, make_config

from common.errors import ConfigError
from common.models.base import Counters, ModelError, RequestFailed
from common.models.client import HTTPModel
from tests.timing import timeout

ASK = [{"role": "user", "content": "Is it so? Answer TRUE or FALSE."}]


def test_chat_request_and_reply(server):
    model = HTTPModel(make_config(server, temperature=0.5, max_tokens=7, stop=["\n"]))
    reply = model.complete(ASK)
    assert (reply.text, reply.attempts, reply.cached) == ("TRUE", 1, False)
    assert (reply.prompt_tokens, reply.completion_tokens) == (7, 1)  # the stub counts words
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["body"] == {
        "model": "stub-model",
        "messages": ASK,
        "temperature": 0.5,
        "max_tokens": 7,
        "stop": ["\n"],
        "seed": 0,
    }
    assert "Authorization" not in request["headers"]  # no api_key_env: no key sent


def test_completions_api_sends_one_prompt(server):
    model = HTTPModel(make_config(server, api="completions", seed=None, top_p=0.9))
    conversation = [*ASK, {"role": "assistant", "content": "maybe"}, {"role": "user", "content": "Only TRUE"}]
    assert model.complete(conversation).text == "TRUE"
    request = server.requests[0]
    assert request["path"] == "/v1/completions"
    assert request["body"]["prompt"] == "Is it so? Answer TRUE or FALSE.\n\nmaybe\n\nOnly TRUE"
    assert "seed" not in request["body"] and request["body"]["top_p"] == 0.9


def test_429_is_retried_after_the_servers_retry_after(server):
    counters = Counters()
    model = HTTPModel(make_config(server), counters=counters)
    server.script("429:0.3")
    start = time.monotonic()
    reply = model.complete(ASK)
    assert time.monotonic() - start >= 0.3  # waited as long as the server asked
    assert (reply.text, reply.attempts, counters.retries, counters.requests) == ("TRUE", 2, 1, 2)


@pytest.mark.parametrize("failure", ["500", "503", "malformed", "drop", "too slow"])
def test_transient_failures_are_retried(server, failure):
    failure = TOO_SLOW if failure == "too slow" else failure  # its seconds scale with the load
    model = HTTPModel(make_config(server, timeout_s=[timeout(2), SHORT_READ_S]))
    server.script(failure, failure)
    reply = model.complete(ASK)
    assert (reply.text, reply.attempts) == ("TRUE", 3)
    assert len(server.requests) == 3


def test_backoff_grows_exponentially(server):
    model = HTTPModel(make_config(server, backoff_s=0.04, backoff_max_s=10))
    server.script("500", "500", "500")
    start = time.monotonic()
    assert model.complete(ASK).attempts == 4
    # waits of 0.04, 0.08, 0.16 s, each at least half its ceiling (equal jitter): >= 0.14 s
    assert time.monotonic() - start >= 0.14


def test_a_request_gives_up_after_max_retries(server):
    counters = Counters()
    model = HTTPModel(make_config(server, max_retries=2), counters=counters)
    server.script("500", "500", "500", "500")
    with pytest.raises(RequestFailed, match=r"HTTP 500.*gave up after 3 attempts"):
        model.complete(ASK)
    assert len(server.requests) == 3 and counters.retries == 2
    assert model.complete(ASK).text == "TRUE"  # the next request still works (one 500 left, retried)


@pytest.mark.parametrize(
    ("status", "message"),
    [
        ("400", "max_tokens is too large"),
        ("401", "Incorrect API key"),
        ("403", "stub error 403"),
        ("404", "model does not exist"),
    ],
)
def test_client_errors_stop_at_once_with_the_servers_message(server, status, message):
    model = HTTPModel(make_config(server))
    server.script(status)
    with pytest.raises(ModelError, match=rf"HTTP {status} .*not retried.*{message}"):
        model.complete(ASK)
    assert len(server.requests) == 1


def test_key_is_sent_but_masked_out_of_errors(server, monkeypatch):
    monkeypatch.setenv("STUB_KEY", SENTINEL_KEY)
    model = HTTPModel(make_config(server, api_key_env="STUB_KEY"))
    server.script("401")
    with pytest.raises(ModelError) as caught:
        model.complete(ASK)
    assert server.requests[0]["headers"]["Authorization"] == f"Bearer {SENTINEL_KEY}"
    assert "Incorrect API key provided: Bearer ***" in str(caught.value)
    assert "SENTINEL" not in str(caught.value) and "4f1c9a7e2b" not in str(caught.value)
    assert "STUB_KEY" in repr(model.settings()) and SENTINEL_KEY not in repr(model.settings())


def test_missing_key_variable_is_a_config_error_naming_it(server, monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(ConfigError, match="NO_SUCH_KEY_VAR, which is not set"):
        HTTPModel(make_config(server, api_key_env="NO_SUCH_KEY_VAR"))


def test_retry_budget_zero_stops_on_the_first_transient_error(server):
    model = HTTPModel(make_config(server, retry_budget=0))
    server.script("500")
    with pytest.raises(ModelError, match=r"retry budget of 0 used up.*HTTP 500"):
        model.complete(ASK)
    assert len(server.requests) == 1


def test_retry_budget_is_shared_by_the_whole_run(server):
    model = HTTPModel(make_config(server, retry_budget=2))
    server.script("500", "ok", "503", "ok", "500")
    assert model.complete(ASK).attempts == 2
    assert model.complete(ASK).attempts == 2
    with pytest.raises(ModelError, match="retry budget of 2 used up"):
        model.complete(ASK)


def test_one_session_per_thread_keeps_connections_alive(server):
    model = HTTPModel(make_config(server))
    threads = [threading.Thread(target=lambda: [model.complete(ASK) for _ in range(5)]) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(server.requests) == 20
    assert len(server.connections) == 4  # one keep-alive connection per worker thread
    model.close()


def test_retry_after_as_an_http_date_in_the_past_means_at_once(server, monkeypatch):
    delays = []
    delay = HTTPModel._delay
    monkeypatch.setattr(HTTPModel, "_delay", lambda *args: delays.append(delay(*args)) or delays[-1])
    model = HTTPModel(make_config(server, backoff_s=5, backoff_max_s=5))
    server.script("429:Wed, 21 Oct 2015 07:28:00 GMT")
    assert model.complete(ASK).attempts == 2
    assert delays == [0.0]  # not the 2.5-5 s backoff: the server's date wins


def test_a_server_answering_nothing_but_429s_stops_the_run(server):
    server.default = "429:0"
    model = HTTPModel(make_config(server, concurrency=1, max_retries=0))
    with pytest.raises(ModelError, match=r"50 answers in a row were 429 .* quota used up"):
        model.complete(ASK)  # 429s spend no max_retries: only the run-wide count stops it
    assert len(server.requests) == 50


def test_a_refused_connection_is_retried_then_fails(server):
    model = HTTPModel(make_config(server, max_retries=2))
    model.complete(ASK)  # the server was up when the run started ...
    server.stop()  # ... and nothing listens on the port any more
    model.close()  # (its keep-alive connection would still be served)
    with pytest.raises(RequestFailed, match=r"connection failed.*gave up after 3 attempts"):
        model.complete([{"role": "user", "content": "another question"}])
    assert model.counters.requests == 4  # attempts that could not connect count as requests too


def test_a_model_name_the_server_does_not_list_is_a_warning_only_where_it_lists_several(server, caplog):
    import logging

    caplog.set_level(logging.INFO, logger="common.models.endpoints")
    model = HTTPModel(make_config(server, model="local-gguf"))  # the stub lists one model, stub-model
    assert model.complete(ASK).text == "TRUE"
    unlisted = [r for r in caplog.records if "does not list model 'local-gguf'" in r.getMessage()]
    assert [r.levelname for r in unlisted] == ["INFO"]  # one model served whatever the name: no warning


def test_sessions_read_the_environment_once_unless_a_proxy_needs_it(monkeypatch, tmp_path):
    import requests

    from common.models.responses import read_environment_once

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "NETRC"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.netrc
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/some/bundle.pem")
    session = requests.Session()
    read_environment_once(session)
    assert (session.trust_env, session.verify) == (False, "/some/bundle.pem")
    plain = requests.Session()
    read_environment_once(plain, tls=False)  # plain http: no bundle, no stat of it per request
    assert (plain.trust_env, plain.verify) == (False, True)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    read_environment_once(session)
    assert session.trust_env  # requests reads the proxy (and NO_PROXY) per request, as it always did
