"""Ask a model every trial of a set, in parallel, appending each answer to a results file as it comes.

A thread pool of ``model.concurrency`` workers answers items with the answering protocol and
appends each record (flushed) through ``ResultsWriter``: Keys already in the file are skipped,
a Key is never written twice, and a killed run loses at most the items in flight. At most
``2 * concurrency`` items are queued at once, so a stop (a refused request, a spent retry
budget, Ctrl-C) ends the run quickly: items in flight finish and are written, no new one
starts. Each run adds an entry to a metadata JSON next to the
results file: settings, totals, tokens, and cost when the model has a price.
"""

import functools
import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import cli
from common.jsonl import write_json
from common.models.answering import answer_item
from common.models.base import Counters, Model, ModelError, RequestFailed
from common.results import ResultsWriter

log = logging.getLogger(__name__)

FAILED_IN_A_ROW = 10  # items failing one after the other (at least, or 2 x concurrency) stop the run


@dataclass
class RunSummary:
    """What one run did."""

    total: int = 0  # items asked for (after --limit)
    already_done: int = 0  # skipped: their Key was in the results file
    answered: int = 0  # records written by this run
    invalid: int = 0  # of those, how many have an error (WorldSense: resp "", no valid option)
    failed: int = 0  # not answered after retries (not written; a later run asks them again)
    status: str = "running"  # complete | incomplete (some failed) | stopped: <why>
    elapsed_s: float = 0.0
    failures: list[dict[str, Any]] = field(default_factory=list)  # first few {Key, error}
    failed_in_a_row: int = 0  # items failed since the last answer; too many stop the run


def metadata_path(results_path: str | Path) -> Path:
    """Return the run metadata file of a results file: ``<name without .jsonl>.meta.json`` beside it."""
    results_path = Path(results_path)
    return results_path.with_name(results_path.name.removesuffix(".jsonl") + ".meta.json")


def run_items(model: Model, items: Iterable[dict[str, Any]], results_path: str | Path, *,
              reprompts: int = 1, answer: Callable[[Model, dict[str, Any]], dict[str, Any]] | None = None,
              counters: Counters | None = None, labels: dict[str, Any] | None = None,
              show_progress: bool = True) -> RunSummary:
    """Answer every item not yet in ``results_path``; return the summary (also saved as metadata).

    ``answer(model, item)`` returns the record of one item (with its ``Key``; a true ``error``
    field counts it as invalid). The default is the WorldSense protocol (``answer_item`` with
    ``reprompts``); another suite passes its own (the blocks planning and translation runs).
    ``labels`` (e.g. prompting and model name) are recorded in the metadata. Raises the
    ModelError that stopped the run, after the answers so far and the metadata are written.
    """
    counters = counters if counters is not None else getattr(model, "counters", None) or Counters()
    summary = RunSummary()
    started = time.time()
    with ResultsWriter(results_path) as writer:
        items = _unique_keys(items)
        todo = [item for item in items if item["Key"] not in writer.done]
        summary.total, summary.already_done = len(items), len(items) - len(todo)
        log.info("%s: %s items, %s already answered, %s to ask %s with %d worker(s)",
                 Path(results_path).name, f"{len(items):,}", f"{summary.already_done:,}", f"{len(todo):,}",
                 model.name, model.concurrency)
        try:
            protocol = answer or functools.partial(answer_item, reprompts=reprompts)
            _run_pool(model, todo, writer, protocol, counters, summary, show_progress)
            summary.status = "complete" if not summary.failed else "incomplete"
        except BaseException as exc:
            summary.status = f"stopped: {type(exc).__name__}: {exc}"
            raise
        finally:
            summary.elapsed_s = round(time.time() - started, 3)
            settings = {**(labels or {}), **({} if answer else {"reprompts": reprompts})}
            _save_metadata(model, results_path, summary, counters, settings, started)
    return summary


def _unique_keys(items: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return ``items`` as a list without later repeats of a Key (warning once if any)."""
    seen: set[Any] = set()
    unique, repeats = [], 0
    for item in items:
        if item["Key"] in seen:
            repeats += 1
        else:
            seen.add(item["Key"])
            unique.append(item)
    if repeats:
        log.warning("%d items repeat a Key already seen; only the first of each is asked", repeats)
    return unique


def _run_pool(model: Model, todo: list[dict[str, Any]], writer: ResultsWriter,
              answer: Callable[[Model, dict[str, Any]], dict[str, Any]], counters: Counters,
              summary: RunSummary, show_progress: bool) -> None:
    """Answer ``todo`` with a thread pool, at most ``2 * concurrency`` items queued; update ``summary``.

    Workers answer and append; they hand each outcome to this (main) thread through a queue,
    which counts it, moves the progress bar, and re-raises what must stop the run.
    """
    stop = threading.Event()
    outcomes: queue.SimpleQueue = queue.SimpleQueue()

    def work(item: dict[str, Any]) -> None:
        try:
            record = None
            if not stop.is_set():
                record = answer(model, item)
                record = record if writer.append(record) else None  # None: its Key was already written
            outcomes.put((item, record, None))
        except BaseException as exc:  # handed to the main thread, which decides
            outcomes.put((item, None, exc))

    bar = cli.progress(None, total=len(todo), desc=f"ask {model.name}", unit="item",
                       disable=not show_progress)
    in_flight, window, shown = 0, 2 * model.concurrency, 0.0
    give_up = max(window, FAILED_IN_A_ROW)
    with ThreadPoolExecutor(max_workers=model.concurrency, thread_name_prefix="ask") as pool:
        try:
            for item in [*todo, None]:
                while in_flight and (in_flight >= window or item is None):
                    _collect(*outcomes.get(), summary, counters, max_failed_in_a_row=give_up)
                    in_flight -= 1
                    bar.update(1)
                    if time.monotonic() - shown > 0.1:  # formatting the postfix each item would cost more
                        shown = time.monotonic()
                        bar.set_postfix_str(_postfix(counters), refresh=False)
                if item is not None:
                    pool.submit(work, item)
                    in_flight += 1
            bar.set_postfix_str(_postfix(counters), refresh=False)
        except BaseException:
            stop.set()  # queued items return at once; those in flight finish and are written
            raise
        finally:
            bar.close()


def _postfix(counters: Counters) -> str:
    """Return the progress bar's counters: retries, errors, tokens."""
    return (f"retries={counters.retries} errors={counters.errors} "
            f"tokens={counters.prompt_tokens + counters.completion_tokens:,}")


def _collect(item: dict[str, Any], record: dict[str, Any] | None, exc: BaseException | None,
             summary: RunSummary, counters: Counters, max_failed_in_a_row: int) -> None:
    """Count the outcome of one item; a failed request is logged and counted, other errors re-raised.

    Raises ModelError when ``max_failed_in_a_row`` items failed with no answer in between: a
    server that is down would otherwise cost every item its full backoff.
    """
    if isinstance(exc, RequestFailed):
        counters.add(errors=1)
        summary.failed += 1
        summary.failed_in_a_row += 1
        if len(summary.failures) < 20:
            summary.failures.append({"Key": item["Key"], "error": str(exc)})
        log.warning("Key %s not answered (asked again by the next run): %s", item["Key"], exc)
        if summary.failed_in_a_row >= max_failed_in_a_row:
            raise ModelError(f"{summary.failed_in_a_row} items in a row failed after their retries; "
                             f"is the server up? Last error: {exc}")
    elif exc is not None:
        raise exc
    elif record is not None:
        summary.answered += 1
        summary.invalid += bool(record.get("error"))
        summary.failed_in_a_row = 0


def _save_metadata(model: Model, results_path: str | Path, summary: RunSummary, counters: Counters,
                   labels: dict[str, Any], started: float) -> None:
    """Append this run's entry to the metadata JSON beside the results file (rewritten atomically)."""
    path = metadata_path(results_path)
    runs = []
    if path.is_file():
        try:
            runs = json.loads(path.read_text(encoding="utf-8"))["runs"]
        except (ValueError, KeyError, TypeError):
            log.warning("%s: not a run metadata file; starting it afresh", path)
    totals = counters.as_dict()
    settings = model.settings()
    entry = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        **labels, "model": settings,
        **{name: value for name, value in vars(summary).items()},
        **totals,
        "items_per_s": round(summary.answered / summary.elapsed_s, 2) if summary.elapsed_s else None,
    }
    price = settings.get("price_per_1k_tokens")
    if price:  # tokens of cached answers cost nothing and are not in the counters
        entry["cost_usd"] = round((totals["prompt_tokens"] * price["input"]
                                   + totals["completion_tokens"] * price["output"]) / 1000, 6)
    write_json(path, {"results_file": Path(results_path).name, "runs": [*runs, entry]})
