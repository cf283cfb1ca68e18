"""Ask a model every trial of a set, in parallel, appending each answer to a results file as it comes.

A thread pool of ``model.concurrency`` workers answers items with the suite's protocol and
appends each record (flushed) through ``ResultsWriter``, which holds the file's lock for the
run (a second run on the same file is refused at once): Keys already in the file are skipped,
a Key is never written twice, and a killed run loses at most the items in flight. A model with
``samples`` k > 1 answers every item k times (``draw`` 0 .. k-1, each a record of its own,
``common.sampling``); draws already in the file are skipped the same way.

A request the server refuses for that item alone (RequestRefused: too long for the context, a
content filter) is recorded on the item (``resp`` "", ``refused`` the kind, ``error`` the
server's message) and the run goes on; a rerun does not ask it again unless
``retry_refused``. Whole-run errors (ModelError: bad key, unknown model, spent retry budget, a
server that is down) stop the run: each worker takes its next item only when it is done with
one, so the items in flight finish, are written and counted, and no new one starts.

Each run has an entry in a metadata JSON next to the results file: settings, totals, tokens,
and cost when the model has a price. It is written when the run starts and every
``METADATA_EVERY_S`` seconds, so even a run killed with SIGKILL leaves one; the next run marks
such an entry ``killed`` and sets its ``answered`` from the file (only one run writes at a time).
"""

import functools
import logging
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from common import cli, paths
from common.models.base import (
    Counters,
    Deferred,
    Model,
    ModelError,
    RequestFailed,
    RequestRefused,
    ServerUnreachable,
)
from common.models.batch import BatchJob, BatchOptions
from common.models.metadata import RunMetadata
from common.models.summary import RunSummary
from common.results import ResultsWriter

log = logging.getLogger(__name__)

FAILED_IN_A_ROW = 10  # items failing one after the other (at least, or 2 x concurrency) stop the run
METADATA_EVERY_S = 5.0  # how often a running run's metadata entry is brought up to date
PROGRESS_EVERY_S = 0.1  # how often the main thread moves the progress bar


def run_items(
    model: Model,
    items: Iterable[dict[str, Any]],
    results_path: str | Path,
    *,
    answer: Callable[[Model, dict[str, Any]], dict[str, Any]],
    counters: Counters | None = None,
    labels: dict[str, Any] | None = None,
    show_progress: bool = True,
    retry_refused: bool = False,
    retry_truncated: bool = False,
    fresh: bool = False,
    batch: BatchOptions | None = None,
) -> RunSummary:
    """Answer every item not yet in ``results_path``; return the summary (also saved as metadata).

    ``answer(model, item)`` returns the record of one item (with its ``Key``; a true ``error``
    field counts it as invalid): the suite's protocol, ``common/<suite>/run.py``. When it
    raises RequestRefused the runner writes ``refused_record`` instead. With ``retry_refused``
    the refused records already in the file are dropped and asked again, with
    ``retry_truncated`` those with a reply cut at the token limit; with ``fresh`` the
    run's files are removed first and every item is asked anew (for built-in baselines, whose
    answers cost nothing and must follow the current code). With ``batch`` an HTTP model's
    requests go out as batches, round by round (``common.models.batch``); items waiting for a
    batch still out are counted in ``deferred``. ``labels`` (e.g. prompting and model name) are
    recorded in the metadata. ``items`` is read only once the file's lock is held (a lazy
    iterable costs a second writer nothing before it is refused). Raises UserError when another
    process writes the file, and the ModelError that stopped the run, after the answers so far
    and the metadata are written; a run that created the results file, answered nothing and
    sent no batch leaves neither it nor a metadata file.
    """
    counters = counters if counters is not None else getattr(model, "counters", None) or Counters()
    summary = RunSummary()
    started = time.time()
    redo = ("refused",) * retry_refused + ("truncated",) * retry_truncated
    with ResultsWriter(results_path, redo=redo, fresh=fresh) as writer:
        summary.retried = writer.dropped
        meta = RunMetadata(model, results_path, labels or {}, started, len(writer.done), counters)
        items = _unique_keys(items)
        draws = range(samples_of(model))
        todo = [(item, draw) for draw in draws for item in items if not writer.has(item["Key"], draw)]
        summary.total = len(items) * len(draws)
        summary.already_done = summary.total - len(todo)
        _log_plan(model, results_path, summary, meta.runs)
        try:
            meta.save(summary, counters)
            tick = lambda: meta.save(summary, counters, every=METADATA_EVERY_S)  # noqa: E731
            pool = functools.partial(_run_pool, model, writer=writer, answer=answer, counters=counters)
            ask = functools.partial(pool, summary=summary, show_progress=show_progress, tick=tick)
            if batch is not None and hasattr(model, "batch"):  # an HTTP model (built-ins answer at once)
                BatchJob(model, results_path, batch, retry_refused).run(todo, writer.has, ask, summary)
            else:
                ask(todo)
            summary.status = "complete" if not summary.failed else "incomplete"
            if summary.deferred:
                summary.status = f"waiting for batch ({summary.deferred:,} items)"
        except BaseException as exc:
            summary.status = f"stopped: {type(exc).__name__}: {exc}"
            raise
        finally:
            _finish(summary, meta, counters, started, leave_no_trace=writer.untouched and not meta.runs)
    return summary


def _finish(
    summary: RunSummary, meta: RunMetadata, counters: Counters, started: float, leave_no_trace: bool
) -> None:
    """Complete ``summary`` (time, this run's counts) and save the metadata entry; remove the
    metadata file instead when ``leave_no_trace`` (a new results file with nothing written)
    unless a batch went out for it."""
    summary.elapsed_s = round(time.time() - started, 3)
    summary.counts = counters.since(meta.start)
    if leave_no_trace and not summary.deferred:
        meta.path.unlink(missing_ok=True)
    else:
        meta.save(summary, counters)


def samples_of(model: Model) -> int:
    """Return how many answers the runner asks ``model`` for per item: its ``samples`` setting
    (the config's, or ``--set samples=k``), 1 by default."""
    return max(1, int(getattr(model, "samples", 1) or 1))


def asked_item(item: dict[str, Any], draw: int) -> dict[str, Any]:
    """Return the item as the protocol asks it for answer ``draw``: unchanged for the first, else
    with ``draw`` set (the model seeds and caches each draw apart; built-ins draw with it)."""
    return {**item, "draw": draw} if draw else item


def _with_draw(record: dict[str, Any], draw: int) -> dict[str, Any]:
    """Return ``record`` marked as answer ``draw`` (``draw`` right after ``Key``; none for draw 0,
    so one answer per item writes exactly what it always did)."""
    return {"Key": record["Key"], "draw": draw, **record} if draw else record


def _log_plan(
    model: Model, results_path: str | Path, summary: RunSummary, runs: list[dict[str, Any]]
) -> None:
    """Log what the run will do; when every item is already answered, say so, as a warning unless
    an earlier run of the same model settings wrote the file (a plain rerun)."""
    log.info(
        "%s: %s items, %s already answered, %s to ask %s with %d worker(s)",
        Path(results_path).name,
        f"{summary.total:,}",
        f"{summary.already_done:,}",
        f"{summary.total - summary.already_done:,}",
        model.name,
        model.concurrency,
    )
    if summary.total and summary.total == summary.already_done:
        same = any(run.get("model") == model.settings() for run in runs)
        other = (
            " (an earlier run with other model settings, or another program, wrote it: a new model or "
            "prompt needs a new results file, i.e. another model name or prompting label)"
        )
        log.log(
            logging.INFO if same else logging.WARNING,
            "every item is already answered in %s: nothing to ask%s",
            paths.shown(results_path),
            "" if same else other,
        )


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


def _run_pool(
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
    bar = cli.progress(
        None, total=len(todo), desc=f"ask {model.name}", unit="item", disable=not show_progress
    )
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
