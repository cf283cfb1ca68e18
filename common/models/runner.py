"""Ask a model every trial of a set, in parallel, appending each answer to a results file as it comes.

A thread pool of ``model.concurrency`` workers answers items with the answering protocol and
appends each record (flushed) through ``ResultsWriter``: Keys already in the file are skipped,
a Key is never written twice, and a killed run loses at most the items in flight. At most
``2 * concurrency`` items are queued at once, so a stop (a refused request, a spent retry
budget, Ctrl-C) ends the run quickly. Each run adds an entry to a metadata JSON next to the
results file: settings, totals, tokens, and cost when the model has a price.
"""

import json
import logging
import threading
import time
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import cli
from common.jsonl import write_json
from common.models.answering import answer_item
from common.models.base import Counters, Model, RequestFailed
from common.results import ResultsWriter

log = logging.getLogger(__name__)


@dataclass
class RunSummary:
    """What one run did."""

    total: int = 0  # items asked for (after --limit)
    already_done: int = 0  # skipped: their Key was in the results file
    answered: int = 0  # records written by this run
    invalid: int = 0  # of those, how many got resp "" (no valid option)
    failed: int = 0  # not answered after retries (not written; a later run asks them again)
    status: str = "running"  # complete | incomplete (some failed) | stopped: <why>
    elapsed_s: float = 0.0
    failures: list[dict[str, Any]] = field(default_factory=list)  # first few {Key, error}


def metadata_path(results_path: str | Path) -> Path:
    """Return the run metadata file of a results file: ``<name without .jsonl>.meta.json`` beside it."""
    results_path = Path(results_path)
    return results_path.with_name(results_path.name.removesuffix(".jsonl") + ".meta.json")


def run_items(model: Model, items: Iterable[dict[str, Any]], results_path: str | Path, *,
              reprompts: int = 1, counters: Counters | None = None,
              labels: dict[str, Any] | None = None, show_progress: bool = True) -> RunSummary:
    """Answer every item not yet in ``results_path``; return the summary (also saved as metadata).

    ``labels`` (e.g. prompting and model name) are recorded in the metadata. Raises the
    ModelError that stopped the run, after the answers so far and the metadata are written.
    """
    counters = counters if counters is not None else getattr(model, "counters", None) or Counters()
    summary = RunSummary()
    started = time.time()
    with ResultsWriter(results_path) as writer:
        items = list(items)
        todo = [item for item in items if item["Key"] not in writer.done]
        summary.total, summary.already_done = len(items), len(items) - len(todo)
        log.info("%s: %s items, %s already answered, %s to ask %s with %d worker(s)",
                 Path(results_path).name, f"{len(items):,}", f"{summary.already_done:,}", f"{len(todo):,}",
                 model.name, model.concurrency)
        try:
            _run_pool(model, todo, writer, reprompts, counters, summary, show_progress)
            summary.status = "complete" if not summary.failed else "incomplete"
        except BaseException as exc:
            summary.status = f"stopped: {type(exc).__name__}: {exc}"
            raise
        finally:
            summary.elapsed_s = round(time.time() - started, 3)
            _save_metadata(model, results_path, summary, counters, labels or {}, reprompts, started)
    return summary


def _run_pool(model: Model, todo: list[dict[str, Any]], writer: ResultsWriter, reprompts: int,
              counters: Counters, summary: RunSummary, show_progress: bool) -> None:
    """Answer ``todo`` with a bounded thread pool, updating ``summary`` and the progress bar."""
    stop = threading.Event()

    def work(item: dict[str, Any]) -> dict[str, Any] | None:
        if stop.is_set():
            return None
        record = answer_item(model, item, reprompts)
        writer.append(record)
        return record

    bar = cli.progress(None, total=len(todo), desc=f"ask {model.name}", unit="item",
                       disable=not show_progress)
    queue = iter(todo)
    window = 2 * model.concurrency
    pending: dict[Future, dict[str, Any]] = {}
    with ThreadPoolExecutor(max_workers=model.concurrency, thread_name_prefix="ask") as pool:
        try:
            while True:
                while len(pending) < window and (item := next(queue, None)) is not None:
                    pending[pool.submit(work, item)] = item
                if not pending:
                    break
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    _collect(future, pending.pop(future), summary, counters)
                    bar.update(1)
                c = counters
                bar.set_postfix_str(f"retries={c.retries} errors={c.errors} "
                                    f"tokens={c.prompt_tokens + c.completion_tokens:,}", refresh=False)
        except BaseException:
            stop.set()  # workers not yet started return at once; those in flight finish their item
            raise
        finally:
            bar.close()


def _collect(future: Future, item: dict[str, Any], summary: RunSummary, counters: Counters) -> None:
    """Count the outcome of one item; a failed request is logged and counted, anything else re-raised."""
    try:
        record = future.result()
    except RequestFailed as exc:
        counters.add(errors=1)
        summary.failed += 1
        if len(summary.failures) < 20:
            summary.failures.append({"Key": item["Key"], "error": str(exc)})
        log.warning("Key %s not answered (asked again by the next run): %s", item["Key"], exc)
        return
    if record is not None:
        summary.answered += 1
        summary.invalid += record["resp"] == ""


def _save_metadata(model: Model, results_path: str | Path, summary: RunSummary, counters: Counters,
                   labels: dict[str, Any], reprompts: int, started: float) -> None:
    """Append this run's entry to the metadata JSON beside the results file (rewritten atomically)."""
    path = metadata_path(results_path)
    runs = json.loads(path.read_text(encoding="utf-8")).get("runs", []) if path.is_file() else []
    totals = counters.as_dict()
    settings = model.settings()
    entry = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        **labels, "model": settings, "reprompts": reprompts,
        **{name: value for name, value in vars(summary).items()},
        **totals,
        "items_per_s": round(summary.answered / summary.elapsed_s, 2) if summary.elapsed_s else None,
    }
    price = settings.get("price_per_1k_tokens")
    if price:  # tokens of cached answers cost nothing and are not in the counters
        entry["cost_usd"] = round((totals["prompt_tokens"] * price["input"]
                                   + totals["completion_tokens"] * price["output"]) / 1000, 6)
    write_json(path, {"results_file": Path(results_path).name, "runs": [*runs, entry]})
