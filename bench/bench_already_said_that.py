"""Time Already Said That runs: the built-in solvers on every set, and the runner over HTTP vs a bare loop.

1. Built-ins: random and oracle play every set (default: the sets built under
   data/already_said_that/) through the real runner (results file, turn log, metadata), the
   conversations of each set (500 in the shipped sets) in one run. Target: all of it well under
   a minute.
2. HTTP: a stub server in its own process answers "[answer: no]" at once. The runner plays N
   conversations at concurrency C (response cache on, a fresh one per repetition, so every
   request is a miss and a cache write); the anchor is a bare thread pool of C workers that
   plays the very same conversations (the same request bodies, turns in order) with one
   requests.Session per thread. Alternating, several repetitions; median turns (requests) per
   second. The HTTP set is distractorless when built (no two conversations send the same request).
   ``--temperature 1`` (the suite's default) times a model that samples: each request is then
   cached under its conversation too, and sent with no seed (common/models/independence.py).

$ python bench/bench_already_said_that.py
$ python bench/bench_already_said_that.py --sets data/already_said_that/mixed --repetitions 5
$ python bench/bench_already_said_that.py --sets data/already_said_that/distractorless --temperature 1
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests
from measure import load_line, spread

from common import cli, paths
from common.already_said_that.baselines import BASELINES
from common.already_said_that.generate import load_set
from common.already_said_that.run import ConversationRunner, items, read_turns
from common.errors import UserError
from common.models.cache import ResponseCache
from common.models.client import HTTPModel
from common.models.config import config_from_mapping
from common.models.runner import run_items
from common.models.stub_server import server_process

log = logging.getLogger("bench_already_said_that")


def time_builtins(sets: list[Path], workdir: Path) -> list[tuple[str, str, int, float]]:
    """Return (set, solver, conversations, seconds) of random and oracle playing every set."""
    rows = []
    for set_dir in sets:
        data = load_set(set_dir)
        for name in ("random", "oracle"):
            model = BASELINES[name](0)
            start = time.perf_counter()
            with ConversationRunner(data, workdir / f"{data.name}-{name}-turns.jsonl", name) as player:
                run_items(
                    model,
                    items(data),
                    workdir / f"{data.name}-{name}-results.jsonl",
                    answer=player.answer,
                    show_progress=False,
                )
            rows.append((data.name, name, len(data.samples), time.perf_counter() - start))
    return rows


def decoding(temperature: float) -> dict:
    """Return the decoding fields both clients send: greedy with the default seed, or sampled with
    no seed (the suite's default)."""
    return {"temperature": temperature, "max_tokens": 8, **({} if temperature else {"seed": 0})}


def run_http(
    base_url: str, data, limit: int, concurrency: int, workdir: Path, temperature: float = 0.0
) -> tuple[int, float]:
    """Return (turns, seconds) of the runner playing ``limit`` conversations over HTTP (turns: HTTP
    requests plus answers from the cache, when two conversations send the same request)."""
    settings = {"seed": None, **decoding(temperature)}
    config = config_from_mapping(
        {"name": "bench", "base_url": base_url, "concurrency": concurrency, "model": "stub-model", **settings}
    )
    model = HTTPModel(config, cache=ResponseCache(workdir / "cache.sqlite"))
    player = ConversationRunner(data, workdir / "turns.jsonl", "bench")
    start = time.perf_counter()
    try:
        run_items(
            model,
            items(data, limit),
            workdir / "direct___bench___results.jsonl",
            answer=player.answer,
            show_progress=False,
        )
    finally:
        player.close()
        model.close()
    return model.counters.requests + model.counters.cache_hits, time.perf_counter() - start


def conversations_of(turns_path: Path, system: str, temperature: float = 0.0) -> list[list[dict]]:
    """Return, per conversation of a turn log, the request bodies it sent (growing histories)."""
    by_key: dict = {}
    for line in read_turns(turns_path):
        by_key.setdefault(line["Key"], []).append(line)
    bodies = []
    for lines in by_key.values():
        messages, sent = [{"role": "system", "content": system}], []
        for line in (line for line in lines if "reply" in line):  # a refused request has none
            messages = [*messages, {"role": "user", "content": line["message"]}]
            sent.append({"model": "stub-model", "messages": messages, **decoding(temperature)})
            messages = [*messages, {"role": "assistant", "content": line["reply"]}]
        bodies.append(sent)
    return bodies


def bare_loop(url: str, conversations: list[list[dict]], concurrency: int) -> tuple[int, float]:
    """Return (requests, seconds) of a thread pool posting each conversation's bodies in order."""
    local = threading.local()

    def play(bodies: list[dict]) -> None:
        if not hasattr(local, "session"):
            local.session = requests.Session()
        for body in bodies:
            local.session.post(
                url, data=json.dumps(body), headers={"Content-Type": "application/json"}, timeout=(10, 60)
            ).json()

    start = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(play, conversations))
    return sum(map(len, conversations)), time.perf_counter() - start


def http_rates(data, args) -> dict[str, list[float]]:
    """Return the turns per second of the runner and of the bare loop playing the same
    conversations over HTTP, ``args.repetitions`` times each, alternating which goes first. The
    bare loop's requests are those of a first runner run (not counted): the same bodies."""
    rates: dict[str, list[float]] = {"runner": [], "bare Session loop": []}
    with server_process(answer="[answer: no]") as base_url, tempfile.TemporaryDirectory() as scratch:
        first = Path(scratch) / "first"
        sent, _seconds = run_http(base_url, data, args.conversations, args.concurrency, first)
        system = ConversationRunner(data, Path(scratch) / "unused", "bench").system
        conversations = conversations_of(first / "turns.jsonl", system)
        for rep in range(args.repetitions):
            clients = {
                "runner": lambda rep=rep: run_http(
                    base_url, data, args.conversations, args.concurrency, Path(scratch) / f"rep{rep}"
                ),
                "bare Session loop": lambda: bare_loop(
                    base_url + "/chat/completions", conversations, args.concurrency
                ),
            }
            for name in clients if rep % 2 == 0 else reversed(clients):
                turns, seconds = clients[name]()
                if turns != sent:
                    raise RuntimeError(f"{name} played {turns} turns, the first runner run {sent}")
                rates[name].append(turns / seconds)
            log.info(
                "repetition %d: %d requests; %s",
                rep + 1,
                sent,
                ", ".join(f"{name} {values[-1]:,.0f}/s" for name, values in rates.items()),
            )
    return rates


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("--sets", nargs="+", type=Path, help="set directories (default: every built set)")
    parser.add_argument("--conversations", type=int, default=500, help="conversations per HTTP measurement")
    parser.add_argument("--repetitions", type=int, default=5, help="HTTP measurements of each client")
    parser.add_argument("--concurrency", type=int, default=16, help="worker threads of both HTTP clients")
    parser.add_argument("--temperature", type=float, default=0.0, help="of both HTTP clients (> 0: sampled)")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    logging.getLogger("common.models.runner").setLevel(logging.WARNING)
    sets = args.sets or sorted(p.parent for p in (paths.DATA / "already_said_that").glob("*/manifest.json"))
    if not sets:
        raise UserError("no Already Said That sets built: run `make sets` first, or pass --sets DIR ...")

    with tempfile.TemporaryDirectory() as scratch:
        rows = time_builtins(sets, Path(scratch))
    total = sum(row[3] for row in rows)
    print(f"built-in solvers, {len(sets)} sets:")
    for set_name, solver, count, seconds in rows:
        print(f"  {set_name:<22} {solver:<7} {count:5,} conversations {seconds:6.2f} s")
    print(f"  total {total:.1f} s")

    data = load_set(next((s for s in sets if s.name == "distractorless"), sets[0]))
    print(f"  {load_line()}")
    rates = http_rates(data, args)
    print(
        f"HTTP ({data.name}, {args.conversations} conversations, concurrency {args.concurrency}, "
        f"{args.repetitions} repetitions, alternating):"
    )
    for name, values in rates.items():
        print(
            f"  {name:<18} {statistics.median(values):7,.0f} turns/s  (runs: "
            f"{', '.join(f'{v:,.0f}' for v in values)})"
        )
    paired = [r / b for r, b in zip(rates["runner"], rates["bare Session loop"], strict=True)]
    print(f"  runner / bare loop per repetition: {spread(paired, '{:.1%}')}")
    print(f"  {load_line()}")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
