"""Benchmark a real model's runs against its engine's own ceiling, and the prompt cache of conversations.

The engine of a model config (default: smollm2-135m, llama.cpp on this machine's CPU) is
started once, kept for every measurement, and its servers' logs are read.

1. The ceiling, per question-answer suite (WorldSense, canvas): the first ``--items`` trials of
   the suite's default set are asked through the runner as a run does it (the suite's protocol,
   ``run_items``, ``concurrency`` workers on ``parallel`` slots, results written, no response
   cache), timed from its first request to its last reply (loading the set before is the same
   whatever the engine, and with a few trials of WorldSense's 87,048 it would dominate), and
   every request body it sends is kept with the server it went to. Then a bare loop sends
   exactly those bodies again, one thread per slot sending that slot's bodies in their order
   with its own requests.Session: the most that work can get from the engine with the same
   slots. At temperature 0 both get the same replies, so the same prompt and generated tokens.
   Alternating which goes first, ``--reps`` times; the median prompt and generated tokens per
   second of each, and their ratio (run / bare, the median of the ratios within a repetition).
   Target: at least 0.9.
2. The prompt cache, Already Said That: ``--conversations`` conversations of a set played through
   the runner (direct prompting). llama.cpp's server logs, per request, how much of the prompt it
   found evaluated already ("prefix-match hit, remaining N prompt tokens to eval"); each slot's
   requests are matched in order with what the client sent there, and the share of prompt tokens
   evaluated anew is given for the first turns and for the turns after. Target: at most 10%
   after the first turn.

$ python bench/bench_engine.py
$ python bench/bench_engine.py --model gemma3-270m --items 40 --reps 3 --parts ceiling
"""

try:  # first: bench/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside bench/: the installed package serves
    pass

import json
import logging
import re
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import requests
from measure import load_line, spread

from common import cli, suites
from common.already_said_that import run as conversations
from common.already_said_that.generate import load_set
from common.already_said_that.prompting import DECODING
from common.models.client import HTTPModel
from common.models.config import load_model_config
from common.models.resolve import MODEL_CONFIGS
from common.models.runner import run_items

log = logging.getLogger("bench_engine")
PREFIX_HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens to eval")
FULLY_CACHED = "full prompt already cached"
QA_SETS = {"worldsense": "test_set", "canvas": "standard"}  # each suite's main set
ANSWERED = re.compile(r'"POST /v1/(chat/)?completions HTTP/1\.1" 200')


class Recorder:
    """Wraps a model's one-request method: keeps every body sent, on which server, with the
    tokens of its reply, in order."""

    def __init__(self, model: HTTPModel):
        self.sent: list[tuple[str, bytes, int, int]] = []  # (base URL, body, prompt, completion tokens)
        self.first = self.last = 0.0  # when the first request went out, when the last reply came
        self._lock = threading.Lock()
        self._post = model._post_once
        model._post_once = self.post

    def post(self, body: dict[str, Any], sent: bytes, endpoint: Any) -> Any:
        with self._lock:
            self.first = self.first or time.perf_counter()
        reply = self._post(body, sent, endpoint)
        with self._lock:
            self.sent.append((endpoint.base_url, sent, reply.prompt_tokens, reply.completion_tokens))
            self.last = time.perf_counter()
        return reply


def rates(prompt: int, completion: int, seconds: float) -> dict[str, float]:
    """Return the tokens per second of a measurement."""
    return {"seconds": seconds, "prompt_tps": prompt / seconds, "generated_tps": completion / seconds}


def run_suite(model: HTTPModel, suite_name: str, items: int, directory: Path) -> tuple[dict, list]:
    """Ask the first ``items`` trials of the suite's first default set through the runner; return
    the rates and what was sent."""
    suite = suites.get(suite_name)
    ref = suites.require_built(suites.resolve_set(f"{suite_name}/{QA_SETS[suite_name]}"))
    protocol = suite.part("protocol")
    recorder = Recorder(model)
    out = directory / f"basic___{model.name}___results.jsonl"
    out.unlink(missing_ok=True)
    run_items(model, protocol.items(ref.data, items), out, answer=protocol.answer, show_progress=False)
    seconds = recorder.last - recorder.first  # the engine's share: not the set's loading before
    model._post_once = recorder._post
    prompt = sum(p for *_, p, _ in recorder.sent)
    completion = sum(c for *_, c in recorder.sent)
    return rates(prompt, completion, seconds), recorder.sent


def bare_loop(urls: list[str], route: str, sent: list[tuple[str, bytes, int, int]]) -> dict:
    """Send every body of ``sent`` again to the server it went to, in the same order, one thread
    per server with a Session of its own; return the rates. (A shared queue instead sends a
    re-prompt to either server, where the first turn's prompt is not evaluated: slower than the
    run, which keeps a worker on its slot.)"""
    by_slot: dict[str, list[bytes]] = defaultdict(list)
    for url, body, *_ in sent:
        by_slot[url].append(body)
    lock = threading.Lock()
    totals = [0, 0]

    def slot(url: str) -> None:
        with requests.Session() as session:
            for body in by_slot[url]:
                usage = session.post(
                    url + route, data=body, headers={"Content-Type": "application/json"}, timeout=(10, 600)
                ).json()["usage"]
                with lock:
                    totals[0] += usage["prompt_tokens"]
                    totals[1] += usage["completion_tokens"]

    start = time.perf_counter()
    threads = [threading.Thread(target=slot, args=(url,)) for url in by_slot]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return rates(totals[0], totals[1], time.perf_counter() - start)


def ceiling(model: HTTPModel, suite_name: str, items: int, reps: int, directory: Path) -> dict:
    """Measure a suite's run against the bare loop, alternating, ``reps`` times; print and return."""
    runs, bares, ratios = [], [], []
    sent: list = []  # the bodies the run sends: the same every time at temperature 0
    for rep in range(reps):
        order = ("run", "bare") if rep % 2 == 0 else ("bare", "run")
        measured: dict[str, dict] = {}
        for side in order:
            if side == "run":
                measured["run"], sent = run_suite(model, suite_name, items, directory)
            else:
                measured["bare"] = bare_loop(model.engine.base_urls, model.route, sent)
        runs.append(measured["run"])
        bares.append(measured["bare"])
        ratios.append(measured["bare"]["seconds"] / measured["run"]["seconds"])
        print(
            f"  {suite_name} rep {rep + 1}: run {measured['run']['seconds']:.1f} s, bare "
            f"{measured['bare']['seconds']:.1f} s, ratio {ratios[-1]:.3f}",
            flush=True,
        )
    summary = {
        side: {key: statistics.median(r[key] for r in results) for key in results[0]}
        for side, results in (("run", runs), ("bare", bares))
    }
    print(
        f"{suite_name}: {items} trials, {len(sent or [])} requests on {len(model.engine.base_urls)} slots; "
        f"run {summary['run']['prompt_tps']:.0f} prompt + {summary['run']['generated_tps']:.1f} generated "
        f"tokens/s, bare loop {summary['bare']['prompt_tps']:.0f} + {summary['bare']['generated_tps']:.1f}; "
        f"ratio run/bare {spread(ratios, '{:.3f}')}"
    )
    return {**summary, "ratios": ratios}


def prompt_cache(model: HTTPModel, set_name: str, conversations_n: int, directory: Path) -> dict:
    """Play conversations through the runner; return the share of prompt tokens evaluated anew
    in first turns and in later turns (from the servers' logs)."""
    ref = suites.require_built(suites.resolve_set(f"already_said_that/{set_name}"))
    data = load_set(ref.data)
    recorder = Recorder(model)
    marks = [log_file.stat().st_size for log_file in model.engine.logs]
    files = conversations.run_paths(set_name, model.name, directory)
    start = time.perf_counter()
    with conversations.ConversationRunner(data, files["turns"], model.name) as player:
        run_items(
            model,
            conversations.items(data, conversations_n),
            files["results"],
            answer=player.answer,
            show_progress=False,
            include=data.plays,
        )
    seconds = time.perf_counter() - start
    model._post_once = recorder._post
    by_slot: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for url, body, prompt, _ in recorder.sent:
        turn = sum(m["role"] == "user" for m in json.loads(body)["messages"])
        by_slot[url].append((turn, prompt))
    totals = {"first": [0, 0], "later": [0, 0]}  # [evaluated anew, prompt tokens]
    for url, log_file, mark in zip(model.engine.base_urls, model.engine.logs, marks, strict=True):
        anew = evaluated_anew(log_file, mark)
        sent = by_slot.get(url, [])
        if len(anew) != len(sent):
            raise SystemExit(f"{log_file}: {len(anew)} requests in the log, {len(sent)} sent there")
        for (turn, prompt), fresh in zip(sent, anew, strict=True):
            kind = "first" if turn == 1 else "later"
            totals[kind][0] += prompt if fresh is None else fresh
            totals[kind][1] += prompt
    shares = {kind: done / max(1, prompt) for kind, (done, prompt) in totals.items()}
    requests_n = len(recorder.sent)
    print(
        f"already_said_that/{set_name}: {conversations_n} conversations, {requests_n} requests in "
        f"{seconds:.0f} s; prompt tokens evaluated anew: first turns {shares['first']:.1%} of "
        f"{totals['first'][1]:,}, later turns {shares['later']:.1%} of {totals['later'][1]:,}"
    )
    return {"seconds": seconds, "requests": requests_n, "totals": totals, "shares": shares}


def evaluated_anew(log_file: Path, offset: int) -> list[int | None]:
    """Return, per request a server answered after ``offset`` of its log, the prompt tokens it
    evaluated anew (None: no prefix found, the whole prompt)."""
    found: list[int | None] = []
    current: int | None = None
    with open(log_file, encoding="utf-8", errors="replace") as handle:
        handle.seek(offset)
        for line in handle:
            if hit := PREFIX_HIT.search(line):
                current = int(hit.group(2))
            elif FULLY_CACHED in line:
                current = 0
            elif ANSWERED.search(line):
                found.append(current)
                current = None
    return found


def main() -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("--model", default="smollm2-135m", help="an engine config of configs/models/")
    parser.add_argument("--items", type=int, default=30, help="trials per question-answer suite")
    parser.add_argument("--reps", type=int, default=3, help="repetitions of run and bare loop")
    parser.add_argument("--conversations", type=int, default=8, help="Already Said That conversations")
    parser.add_argument("--set", default="which_is_heavier", help="the Already Said That set")
    parser.add_argument("--parts", nargs="+", default=["ceiling", "cache"], choices=["ceiling", "cache"])
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    cli.setup_logging(args.loglevel)
    config_file = MODEL_CONFIGS / f"{args.model}.yaml"
    figures: dict[str, Any] = {}
    print(load_line(), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        model = HTTPModel(load_model_config(config_file))
        model.engine.keep_logs, model.engine.log_dir = True, directory / "engine"
        try:
            model.start_engine()
            if "ceiling" in args.parts:
                for suite_name in QA_SETS:
                    figures[suite_name] = ceiling(model, suite_name, args.items, args.reps, directory)
                    print(load_line(), flush=True)
            if "cache" in args.parts:
                chat = HTTPModel(load_model_config(config_file, defaults=DECODING, suite="already_said_that"))
                chat.engine, chat._serving = model.engine, True
                chat.endpoints = model.endpoints
                chat.route = model.route
                figures["already_said_that"] = prompt_cache(chat, args.set, args.conversations, directory)
                print(load_line(), flush=True)
        finally:
            model.close()
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
