"""Benchmark the model runner against bare thread-pool loops, and several endpoints against one.

1. Overhead: the clients hit the same local stub server (a separate process that answers at
   once), at the same concurrency, in one run, alternating, several repetitions; the median
   request rate of each is reported with the runner's ratio to each bare loop (ratio of the
   medians, and median of the ratios within a repetition, which is steadier on a shared
   machine). The runner works as in a real run: answering protocol, SQLite cache on (a fresh one
   per repetition, so every request is a miss and a cache write), results appended and flushed,
   metadata written, progress bar on. The anchors: requests.post per request; one
   requests.Session per thread (as the runner has); and the same with the environment read once
   (``trust_env`` off, as the runner sets its sessions up where no proxy is configured).
   Target: the runner reaches at least 95% of the per-thread Session loop's rate.
2. Endpoints: two stub servers of fixed latency (``--latency``); the runner with one of them at
   concurrency C (``--per-endpoint``) against the runner with both at 2C. Target: at least 1.8x.
3. 429s: a stub server of that latency answering 429 above N requests at once (``--throttle``
   N ...); the runner at ``--concurrency``: where its limit settles, and the rate it gets.

$ python bench/bench_runner.py
$ python bench/bench_runner.py --requests 3000 --repetitions 7 --concurrency 16
$ python bench/bench_runner.py --parts endpoints 429 --latency 0.05 --per-endpoint 8
"""

try:  # first: bench/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside bench/: the installed package serves
    pass

import json
import logging
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import requests
from measure import load_line, spread

from common import cli
from common.models.cache import ResponseCache
from common.models.client import HTTPModel
from common.models.config import config_from_mapping
from common.models.runner import run_items
from common.models.stub_server import server_process
from common.models.summary import RunSummary
from common.results import metadata_path
from common.worldsense.run import answer

log = logging.getLogger("bench_runner")


def bare_post(url: str, bodies: list[dict], concurrency: int) -> None:
    """The anchor: a thread pool calling requests.post for each body."""

    def one(body: dict) -> None:
        requests.post(url, json=body, timeout=(10, 60)).json()

    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, bodies))


def bare_session(url: str, bodies: list[dict], concurrency: int) -> None:
    """A stricter anchor: the same loop with one keep-alive Session per thread."""
    local = threading.local()

    def one(body: dict) -> None:
        if not hasattr(local, "session"):
            local.session = requests.Session()
        local.session.post(url, json=body, timeout=(10, 60)).json()

    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, bodies))


def bare_session_env_once(url: str, bodies: list[dict], concurrency: int) -> None:
    """The same loop with each Session reading the environment once (``trust_env`` off)."""
    local = threading.local()

    def one(body: dict) -> None:
        if not hasattr(local, "session"):
            local.session = requests.Session()
            local.session.trust_env = False
        local.session.post(url, json=body, timeout=(10, 60)).json()

    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, bodies))


def runner(
    base_url: str | list[str], items: list[dict], concurrency: int, workdir: Path, show_progress: bool = True
) -> RunSummary:
    """The runner as ask_model.py uses it, with cache and results writing on; return its summary."""
    config = config_from_mapping(
        {"name": "bench", "base_url": base_url, "model": "stub", "concurrency": concurrency, "max_tokens": 4}
    )
    model = HTTPModel(config, cache=ResponseCache(workdir / "cache.sqlite"))
    try:
        results = workdir / "basic___bench___results.jsonl"
        return run_items(model, items, results, answer=answer, show_progress=show_progress)
    finally:
        model.close()
        model.cache.close()


def timed(function: Callable[[], None]) -> float:
    """Return the seconds ``function`` took."""
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def overhead(args) -> None:
    """Print the rates of the runner and the bare loops on one stub server (part 1)."""
    rates: dict[str, list[float]] = {
        "runner": [],
        "bare requests.post": [],
        "bare Session.post": [],
        "bare Session, env once": [],
    }
    load_before = load_line()
    with server_process() as base_url:
        url = base_url + "/chat/completions"
        for rep in range(args.repetitions):
            # fresh prompts each repetition: no cache hits anywhere
            items = [
                {
                    "Key": i,
                    "text": f"rep {rep} question {i}: TRUE or FALSE?",
                    "expectedresp": ["TRUE", "FALSE"],
                }
                for i in range(args.requests)
            ]
            bodies = [
                {"model": "stub", "messages": [{"role": "user", "content": item["text"]}], "max_tokens": 4}
                for item in items
            ]
            with tempfile.TemporaryDirectory() as workdir:
                clients = {
                    "runner": partial(runner, base_url, items, args.concurrency, Path(workdir)),
                    "bare requests.post": partial(bare_post, url, bodies, args.concurrency),
                    "bare Session.post": partial(bare_session, url, bodies, args.concurrency),
                    "bare Session, env once": partial(bare_session_env_once, url, bodies, args.concurrency),
                }
                order = list(clients) if rep % 2 == 0 else list(reversed(clients))
                for name in order:
                    rates[name].append(args.requests / timed(clients[name]))
            log.info("repetition %d: %s", rep + 1, ", ".join(f"{n} {r[-1]:,.0f}/s" for n, r in rates.items()))
    medians = {name: statistics.median(values) for name, values in rates.items()}
    print(
        f"requests per second, median of {args.repetitions} x {args.requests:,} requests "
        f"at concurrency {args.concurrency}:"
    )
    print(f"  {load_before}")
    for name, median in medians.items():
        print(f"  {name:<20} {median:8,.0f}/s   (runs: {', '.join(f'{r:,.0f}' for r in rates[name])})")
    for anchor in list(rates)[1:]:
        paired = [r / a for r, a in zip(rates["runner"], rates[anchor], strict=True)]
        print(
            f"  runner / {anchor:<22} {medians['runner'] / medians[anchor]:6.1%} of the medians; "
            f"per repetition {spread(paired, '{:.1%}')}"
        )
    print(f"  {load_line()}")


def endpoints(args) -> None:
    """Print the runner's rate with one stub server of fixed latency and with two (part 2)."""
    rates: dict[str, list[float]] = {"one endpoint": [], "two endpoints": []}
    count = args.requests // 3
    load_before = load_line()
    with server_process(latency=args.latency) as one, server_process(latency=args.latency) as two:
        for rep in range(args.repetitions):
            items = [
                {"Key": i, "text": f"rep {rep} q {i}: TRUE or FALSE?", "expectedresp": ["TRUE", "FALSE"]}
                for i in range(count)
            ]
            both = (("one endpoint", [one]), ("two endpoints", [one, two]))
            for name, urls in both if rep % 2 == 0 else reversed(both):
                with tempfile.TemporaryDirectory() as workdir:
                    work = partial(runner, urls, items, args.per_endpoint * len(urls), Path(workdir))
                    rates[name].append(count / timed(work))
            log.info("repetition %d: %s", rep + 1, ", ".join(f"{n} {r[-1]:,.0f}/s" for n, r in rates.items()))
    print(
        f"several endpoints: stub servers answering in {args.latency * 1000:.0f} ms, concurrency "
        f"{args.per_endpoint} per endpoint, median of {args.repetitions} x {count:,} requests, alternating:"
    )
    print(f"  {load_before}")
    for name, values in rates.items():
        runs = ", ".join(f"{r:,.0f}" for r in values)
        print(f"  {name:<14} {statistics.median(values):8,.0f}/s   (runs: {runs})")
    paired = [b / a for a, b in zip(rates["one endpoint"], rates["two endpoints"], strict=True)]
    print(f"  two / one per repetition: {spread(paired, '{:.2f}x')}")
    print(f"  {load_line()}")


def throttled(args) -> None:
    """Print how close the runner keeps N requests in flight against a server that answers 429
    above N at once, with ``Retry-After: 0`` (the anchor) and ``Retry-After: args.retry_after``
    (part 3), for each N of ``args.throttle``, at concurrency 4N; fail loudly if a run loses an
    item."""
    latency = args.latency
    waits = (0.0, args.retry_after)
    print(
        f"429s: a stub server answering in {latency * 1000:.0f} ms, and 429 with Retry-After to a "
        f"request arriving while N are answered; the runner at concurrency 4N; {args.repetitions} "
        f"repetitions of {args.throttle_requests} x N requests, alternating"
    )
    print(f"  {load_line()}")
    for n in args.throttle:
        runs: dict[float, list[dict]] = {wait: [] for wait in waits}
        for rep in range(args.repetitions):
            for wait in waits if rep % 2 == 0 else reversed(waits):
                runs[wait].append(throttled_run(n, wait, latency, args.throttle_requests * n))
        for wait in waits:
            share = [run["mean_in_flight"] / n for run in runs[wait]]
            served = [run["served_in_flight"] / n for run in runs[wait]]
            rate = [run["rate"] for run in runs[wait]]
            throttled_429s = [run["throttled"] for run in runs[wait]]
            print(
                f"  N={n}, Retry-After {wait:g}: mean in flight {spread(share, '{:.0%}')} of N, "
                f"answering {spread(served, '{:.0%}')} of N, {spread(rate, '{:,.0f}')}/s, "
                f"429s {spread(throttled_429s, '{:,.0f}')}, lost {sum(run['lost'] for run in runs[wait])}"
            )
        paired = [b["mean_in_flight"] / a["mean_in_flight"] for a, b in zip(*runs.values(), strict=True)]
        print(f"  N={n}, in flight with Retry-After {waits[1]:g} / with 0: {spread(paired, '{:.2f}x')}")
    print(f"  {load_line()}")


def throttled_run(n: int, wait: float, latency: float, count: int) -> dict:
    """Return what one run of ``count`` items against a server answering 429 (``Retry-After:
    wait``) above ``n`` at once shows: the limiter's ``mean_in_flight``, ``served_in_flight``
    (answers x latency / seconds: requests the server was answering, on average), ``rate``,
    ``throttled`` (429s) and ``lost`` (items not answered). Raises RuntimeError when the run did
    not complete."""
    items = [
        {"Key": i, "text": f"q {i}: TRUE or FALSE?", "expectedresp": ["TRUE", "FALSE"]} for i in range(count)
    ]
    server = server_process(latency=latency, max_concurrent=n, retry_after=wait)
    with server as url, tempfile.TemporaryDirectory() as workdir:
        start = time.perf_counter()
        summary = runner(url, items, 4 * n, Path(workdir), show_progress=False)
        seconds = time.perf_counter() - start
        meta = json.loads(metadata_path(Path(workdir) / "basic___bench___results.jsonl").read_text())
    if summary.status != "complete":
        raise RuntimeError(f"the run against 429s above {n} ended {summary.status!r}")
    run = meta["runs"][-1]
    return {
        "mean_in_flight": run["concurrency"]["mean_in_flight"],
        "served_in_flight": summary.answered * latency / seconds,
        "rate": summary.answered / seconds,
        "throttled": run["throttled"],
        "lost": count - summary.answered,
    }


PARTS = {"overhead": overhead, "endpoints": endpoints, "429": throttled}


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("--requests", type=int, default=1500, help="requests per measurement")
    parser.add_argument("--repetitions", type=int, default=9, help="measurements of each client")
    parser.add_argument("--concurrency", type=int, default=16, help="worker threads of every client")
    parser.add_argument(
        "--parts", nargs="+", choices=PARTS, default=list(PARTS), help="which parts to measure, in this order"
    )
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per answer (parts 2 and 3)")
    parser.add_argument("--per-endpoint", type=int, default=8, help="part 2: concurrency per endpoint")
    parser.add_argument(
        "--throttle", type=int, nargs="*", default=[2, 4, 8], metavar="N", help="part 3: 429 above N at once"
    )
    parser.add_argument("--retry-after", type=float, default=1.0, help="part 3: the 429s' Retry-After (s)")
    parser.add_argument("--throttle-requests", type=int, default=300, help="part 3: requests per run, x N")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    logging.getLogger("common.models.runner").setLevel(logging.WARNING)
    logging.getLogger("common.models.endpoints").setLevel(logging.WARNING)  # "stub" is not "stub-model"

    for part in args.parts:
        PARTS[part](args)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
