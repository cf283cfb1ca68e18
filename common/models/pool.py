"""The worker threads of a run, and how each item's outcome is counted (``common.models.runner``).

``run_pool`` answers (item, draw) pairs with ``concurrency`` threads: each takes its next pair
itself, answers it with the suite's protocol, appends the record and counts the outcome under a
lock (``_collect``: a failed request is counted and logged, a refused one recorded, what
concerns the whole run stops it); the calling thread only moves the progress bar and updates
the metadata. A stop lets the items in flight finish, be written and counted, and starts no
other.
"""

import functools
import logging
import threading
from collections.abc import Callable
from typing import Any

from common.models.base import (
    Counters,
    Deferred,
    Model,
    ModelError,
    RequestFailed,
    RequestRefused,
    ServerUnreachable,
)
from common.models.summary import RunSummary
from common.progress import progress
from common.results import ResultsWriter

log = logging.getLogger("common.models.runner")

FAILED_IN_A_ROW = 10  # items failing one after the other (at least, or 2 x concurrency) stop the run
PROGRESS_EVERY_S = 0.1  # how often the calling thread moves the progress bar


def asked_item(item: dict[str, Any], draw: int) -> dict[str, Any]:
    """Return the item as the protocol asks it for answer ``draw``: unchanged for the first, else
    with ``draw`` set (the model seeds and caches each draw apart; built-ins draw with it)."""
    return {**item, "draw": draw} if draw else item


def _with_draw(record: dict[str, Any], draw: int) -> dict[str, Any]:
    """Return ``record`` marked as answer ``draw`` (``draw`` right after ``Key``; none for draw 0,
    so one answer per item writes exactly what it always did)."""
    return {"Key": record["Key"], "draw": draw, **record} if draw else record


def refused_record(item: dict[str, Any], refusal: RequestRefused) -> dict[str, Any]:
    """Return the results record of an item whose request the server refused: no answer
    (``resp`` ""), ``refused`` the kind and ``error`` the server's message (key already masked)."""
    return {"Key": item["Key"], "resp": "", "refused": refusal.kind, "error": refusal.message}


def _item_label(item: dict[str, Any]) -> str:
    """Return how messages name an item: "Key 7", and for a blocks item, whose Key is a hash, also
    its problem and view ("Key 935...360 (problem 003, view c1)")."""
    extra = [
        f"{label} {item[field]}" for field, label in (("id", "problem"), ("view", "view")) if field in item
    ]
    return f"Key {item['Key']}" + (f" ({', '.join(extra)})" if extra else "")


def run_pool(
    model: Model,
    todo: list[tuple[dict[str, Any], int]],
    writer: ResultsWriter,
    answer: Callable[[Model, dict[str, Any]], dict[str, Any]],
    counters: Counters,
    summary: RunSummary,
    show_progress: bool,
    tick: Callable[[], None],
) -> None:
    """Answer ``todo`` ((item, draw) pairs) with ``concurrency`` worker threads; update ``summary``.

    Each worker takes the next pair, answers and appends it (a refused request as its
    ``refused_record``) and counts the outcome (``_collect``, under a lock); what must stop the
    run stops every worker before its next item and is re-raised here once the items still in
    flight have finished and been counted. This (main) thread only looks in every
    ``PROGRESS_EVERY_S``: the progress bar and ``tick`` (the metadata update). No hand-over per
    item: a queue to this thread and back cost a thread switch per request.
    """
    pool = _Pool(todo, summary, counters, max(2 * model.concurrency, FAILED_IN_A_ROW))
    bar = progress(None, total=len(todo), desc=f"ask {model.name}", unit="item", disable=not show_progress)
    job = functools.partial(pool.work, model=model, answer=answer, writer=writer)
    workers = [
        threading.Thread(target=job, name=f"ask-{n}") for n in range(min(model.concurrency, len(todo)))
    ]
    if not workers:
        pool.finished.set()
    try:
        for worker in workers:
            worker.start()
        while not pool.finished.wait(PROGRESS_EVERY_S):
            bar.update(pool.done - bar.n)
            bar.set_postfix_str(_postfix(counters, summary), refresh=False)
            tick()
    except BaseException:
        pool.stop.set()  # workers finish the items in hand, write and count them, and take no other
        raise
    finally:
        for worker in workers:
            worker.join()
        bar.update(pool.done - bar.n)
        bar.set_postfix_str(_postfix(counters, summary), refresh=False)
        bar.close()
    if pool.error is not None:
        raise pool.error


class _Pool:
    """What the workers of ``_run_pool`` share: the pairs to answer, the counts, the stop."""

    def __init__(self, todo: list, summary: RunSummary, counters: Counters, give_up: int):
        self.feed = iter(todo)
        self.summary, self.counters, self.give_up = summary, counters, give_up
        self.stop, self.finished = threading.Event(), threading.Event()
        self.done, self.running = 0, 0
        self.error: BaseException | None = None  # what stopped the run, re-raised by the main thread
        self.lock = threading.Lock()

    def work(self, model: Model, answer: Callable, writer: ResultsWriter) -> None:
        """A worker: answer pairs until none is left or the run stops; count each outcome."""
        with self.lock:
            self.running += 1
        try:
            while not self.stop.is_set():
                with self.lock:
                    entry = next(self.feed, None)
                if entry is None:
                    break
                outcome = _answer_and_write(*entry, model, answer, writer, self.stop)
                self._count(outcome)
        finally:
            with self.lock:
                self.running -= 1
                if not self.running:
                    self.finished.set()

    def _count(self, outcome: tuple) -> None:
        """Count one outcome (``_collect``); after a stop only what was written counts, quietly."""
        with self.lock:
            self.done += 1
            if self.stop.is_set():
                _count_quietly(*outcome, self.summary)
                return
            try:
                _collect(*outcome, self.summary, self.counters, max_failed_in_a_row=self.give_up)
            except BaseException as exc:  # stops the run: re-raised by the main thread
                self.error = exc
                self.stop.set()


def _answer_and_write(
    item: dict[str, Any],
    draw: int,
    model: Model,
    answer: Callable[[Model, dict[str, Any]], dict[str, Any]],
    writer: ResultsWriter,
    stop: threading.Event,
) -> tuple[dict[str, Any], dict[str, Any] | None, BaseException | None]:
    """A worker's job: answer ``item`` for the ``draw``-th time (a refused request as its
    ``refused_record``) and append the record, unless ``stop`` is set; return ``(item, record or
    None, exception or None)``: what an exception means is for ``_collect`` to say."""
    try:
        record = None
        if not stop.is_set():
            try:
                record = answer(model, asked_item(item, draw))
            except RequestRefused as refusal:
                record = refused_record(item, refusal)
            record = _with_draw(record, draw)
            record = record if writer.append(record) else None  # None: already written
        return item, record, None
    except BaseException as exc:
        return item, None, exc


def _postfix(counters: Counters, summary: RunSummary) -> str:
    """Return the progress bar's counters: retries, errors, refused items, tokens."""
    return (
        f"retries={counters.retries} errors={counters.errors} refused={summary.refused} "
        f"tokens={counters.prompt_tokens + counters.completion_tokens:,}"
    )


def _collect(
    item: dict[str, Any],
    record: dict[str, Any] | None,
    exc: BaseException | None,
    summary: RunSummary,
    counters: Counters,
    max_failed_in_a_row: int,
) -> None:
    """Count the outcome of one item; a failed request is logged and counted, other errors re-raised
    with the item's Key in the message.

    Raises ModelError when ``max_failed_in_a_row`` items failed with no answer in between: a
    server that is down would otherwise cost every item its full backoff.
    """
    if isinstance(exc, Deferred):
        summary.deferred += 1  # its request is in the coming batch: nothing written, nothing failed
    elif isinstance(exc, RequestFailed):
        counters.add(errors=1)
        summary.failed += 1
        summary.failed_in_a_row += 1
        if len(summary.failures) < 20:
            summary.failures.append({"Key": item["Key"], "error": str(exc)})
        log.warning("%s not answered (asked again by the next run): %s", _item_label(item), exc)
        if summary.failed_in_a_row >= max_failed_in_a_row:
            raise ModelError(
                f"{summary.failed_in_a_row} items in a row failed after their retries; "
                f"is the server up? Last error: {exc}"
            )
    elif isinstance(exc, ServerUnreachable):
        raise exc  # concerns the run, not this item
    elif isinstance(exc, ModelError):
        raise ModelError(f"{_item_label(item)}: {exc}") from None
    elif exc is not None:
        raise exc
    elif record is not None:
        _count_quietly(item, record, None, summary)
        if record.get("refused"):
            log.warning(
                "%s refused by the server, recorded and skipped by later runs "
                "(--retry-errors asks again): %s",
                _item_label(item),
                record.get("error"),
            )


def _count_quietly(
    item: dict[str, Any], record: dict[str, Any] | None, exc: BaseException | None, summary: RunSummary
) -> None:
    """Count a written record in ``summary`` (answered, refused or invalid); ignore anything else."""
    if record is None:
        return
    summary.answered += 1
    summary.failed_in_a_row = 0  # the server answered, if only to refuse
    if record.get("refused"):
        summary.refused += 1
    else:
        summary.invalid += bool(record.get("error"))
