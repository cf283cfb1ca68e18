"""Ask a model every trial of a set, in parallel, appending each answer to a results file as it comes.

``model.concurrency`` worker threads (``pool``) answer items with the suite's protocol and
append each record (flushed) through ``ResultsWriter``, which holds the file's lock for the
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
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from common import paths
from common.models.base import Counters, Model
from common.models.batch import BatchJob, BatchOptions
from common.models.metadata import RunMetadata
from common.models.pool import refused_record, run_pool
from common.models.summary import RunSummary
from common.models.vision import check_takes_images
from common.results import ResultsWriter

log = logging.getLogger(__name__)

METADATA_EVERY_S = 5.0  # how often a running run's metadata entry is brought up to date


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
    include: Callable[[dict[str, Any], int], bool] | None = None,
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
    batch still out are counted in ``deferred``. ``include(item, draw)`` says which items a
    draw asks (default: all; Already Said That's original protocol plays 250 of its 500 samples
    per seed). An item with ``images`` (the names of the pictures its requests show) is refused,
    before any request, to a model whose config says it takes none (``vision.check_takes_images``),
    and the first of such items is asked alone, then the rest (a server that turns pictures away
    stops the run at its first request).
    ``labels`` (e.g. prompting and model name) are recorded in the metadata, and with the
    model's settings on the first record the run writes (``ResultsWriter.run``). ``items``
    is read only once the file's lock is held (a lazy iterable costs a second writer nothing
    before it is refused), and a model server that is down stops the run before the items load
    (``check_endpoint``). Raises UserError when another
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
        if batch is None and hasattr(model, "check_endpoint"):  # a server that is down: said before a
            model.check_endpoint()  # large set loads (an offline batch needs no server)
        meta = RunMetadata(model, results_path, labels or {}, started, len(writer.done), counters)
        writer.run = {**meta.stamp(), **({"batch": True} if batch is not None else {})}  # its first record
        unique = _unique_keys(items)
        pictured = any(item.get("images") for item in unique)
        if pictured:  # a set shown as pictures: a text-only model is refused before its first request
            check_takes_images(model)
        todo = _todo(model, unique, writer, include, summary)
        _log_plan(model, results_path, summary, meta.runs)
        try:
            meta.save(summary, counters)
            tick = lambda: meta.save(summary, counters, every=METADATA_EVERY_S)  # noqa: E731
            pool = functools.partial(run_pool, model, writer=writer, answer=answer, counters=counters)
            ask = functools.partial(pool, summary=summary, show_progress=show_progress, tick=tick)
            if batch is not None and hasattr(model, "batch"):  # an HTTP model (built-ins answer at once)
                BatchJob(model, results_path, batch, retry_refused).run(todo, writer.has, ask, summary)
            elif pictured:  # the first request alone: a server that turns pictures away (400)
                ask(todo[:1])  # stops the run at it, not at the `concurrency` sent at once
                ask(todo[1:])
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


def _todo(
    model: Model,
    items: list[dict[str, Any]],
    writer: ResultsWriter,
    include: Callable[[dict[str, Any], int], bool] | None,
    summary: RunSummary,
) -> list[tuple[dict[str, Any], int]]:
    """Return the (item, draw) pairs still to ask: every item ``samples_of(model)`` times (those
    ``include`` takes), less those in the file; set ``summary.total`` and ``already_done``."""
    draws = range(samples_of(model))
    asked = [(item, draw) for draw in draws for item in items if include is None or include(item, draw)]
    todo = [(item, draw) for item, draw in asked if not writer.has(item["Key"], draw)]
    summary.total, summary.already_done = len(asked), len(asked) - len(todo)
    return todo


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


__all__ = ["RunSummary", "refused_record", "run_items", "samples_of"]
