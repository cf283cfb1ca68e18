"""Batch mode (``--batch``): the requests a run still needs go out as one batch per round, in the
OpenAI batch JSONL format, and their answers come back through the cache.

A round runs the suite's protocol on every item not yet in the results file, as a live run
would, with the model collecting instead of sending: a request the cache answers is answered,
one it cannot answer is written down and the item stops there (``Deferred``: nothing written).
The round's requests become one input file (one line each: ``custom_id``, ``method``, ``url``,
``body``), submitted to the server's Batch API (``batch_api``) or, without one, left for an
offline engine (vLLM's ``run_batch``). Its output goes into the response cache; the next round
runs the protocols again: every answered request is a cache hit and is given as the live answer
it stands for (``cached`` False, one attempt), so the records are those of a live run, and a
multi-turn protocol reaches its next request, which goes into the next batch (one round per
turn). A request the batch refused for itself (context too long) is that refusal again;
a failed or expired one is asked again by the next round (at most ``MAX_TRIES`` in a run).

The batch state, ``<results>.batch.json`` beside the results file (written atomically), holds
the batch in hand (round, input file, file id, batch id, status, custom_id -> request) and the
rounds done: after ``kill -9`` at any point the same command picks up the same batch (a batch
created but not yet written down is found by its input file id). ``custom_id`` is
``<Key>[-d<draw>][-t<turn>]-r<round>-<request hash>``: readable, and unique per request.
"""

import dataclasses
import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import paths
from common.errors import UserError
from common.models.base import ModelError, Reply, RequestFailed, RequestRefused
from common.models.batch_api import FINAL, BatchAPI, requests_done
from common.models.batch_files import (
    MAX_BYTES,
    MAX_REQUESTS,
    BatchState,
    custom_id,
    input_lines,
    lines_that_fit,
    output_lines,
    read_output_line,
    write_input,
)
from common.models.responses import cache_entry, reply_from_cache, worth_caching
from common.progress import progress

log = logging.getLogger(__name__)

MAX_TRIES = 3  # batches one request may go into in one run without an answer; then the item fails
ENGINE_COMMAND = "python -m vllm.entrypoints.openai.run_batch -i {input} -o {output} --model {model}"


@dataclasses.dataclass
class BatchOptions:
    """What ``--batch`` asks of the runner."""

    wait: bool = False  # poll until each batch is in and go on round after round (else submit and stop)
    output: Path | None = None  # an offline engine's output file to import (default: beside the input)


class BatchJob:
    """The batches of one results file, round after round; while a round runs it is the model's
    ``batch`` (``imported`` and ``defer``, called by ``HTTPModel.complete`` from worker threads)."""

    def __init__(
        self, model: Any, results_path: str | Path, options: BatchOptions, retry_refused: bool = False
    ):
        if model.cache is None:
            raise UserError(
                "--batch needs the response cache (the batch output goes into it): drop --no-cache"
            )
        self.model, self.options = model, options
        self.results_path = Path(results_path)
        self.api = BatchAPI(model)
        self.store = BatchState(self.results_path)
        self.state, self.answered = self.store.data, self.store.answered
        if retry_refused:
            self.state["refused"] = {}
        self.empty: dict[str, Reply] = {}  # answers the cache does not keep (empty): this run only
        self.tries: dict[str, int] = {}  # batches each request went into during this run
        self.errors: dict[str, str] = {}  # why the last batch did not answer a request
        self.asking: dict[str, tuple[str, dict[str, Any]]] = {}  # this round: key -> (custom_id, body)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<BatchJob {self.store.path.name}: round {self.state['round']}>"

    # ---- called by the model while a round runs ------------------------------------------------
    def imported(self, key: str) -> Reply | None:
        """Return the answer a batch gave to the request ``key`` in this run (raise its
        RequestRefused when the batch refused it), or None."""
        refused = self.state["refused"].get(key)
        if refused is not None:
            raise RequestRefused(*refused)
        if key in self.empty:
            return self.empty[key]
        if key not in self.answered or (hit := self.model.cache.get(key)) is None:
            return None
        return dataclasses.replace(reply_from_cache(hit), attempts=1, cached=False)

    def defer(self, key: str, body: dict[str, Any], item: dict[str, Any]) -> None:
        """Put the request ``key`` into this round's batch; raise RequestFailed when it already went
        into MAX_TRIES batches of this run without an answer."""
        if self.tries.get(key, 0) >= MAX_TRIES:
            raise RequestFailed(f"no answer from {MAX_TRIES} batches: {self.errors.get(key, 'unknown')}")
        with self._lock:
            if key not in self.asking:
                self.asking[key] = (custom_id(key, item, self.state["round"] + 1), body)

    # ---- the rounds ----------------------------------------------------------------------------
    def run(
        self,
        todo: list[tuple[dict[str, Any], int]],
        done: Callable[[Any, int], bool],
        ask: Callable,
        summary: Any,
    ) -> None:
        """Run rounds until every item of ``todo`` ((item, draw) pairs) is ``done`` (in the results
        file), a batch is still out (without ``wait``), or a round asks nothing new.

        ``ask(pairs)`` runs the protocol on ``pairs`` (the runner's pool: records written, items
        waiting for a batch counted in ``summary.deferred``). Sets ``summary.batch``."""
        try:
            self._rounds(todo, done, ask, summary)
        finally:
            summary.batch = self.store.account()

    def _rounds(
        self, todo: list[tuple[dict[str, Any], int]], done: Callable, ask: Callable, summary: Any
    ) -> None:
        """Do the rounds of ``run``."""
        while True:
            if self.state.get("pending") and not self._collect():
                summary.deferred = sum(not done(item["Key"], draw) for item, draw in todo)
                return
            remaining = [(item, draw) for item, draw in todo if not done(item["Key"], draw)]
            if not remaining:
                return
            summary.deferred, self.asking = 0, {}
            self.model.batch = self
            try:
                ask(remaining)
            finally:
                self.model.batch = None
            if not self.asking:
                return
            self._submit()
            if not self.options.wait:
                return

    def _submit(self) -> None:
        """Write this round's requests as a batch input file, then submit it (or leave it for an
        offline engine); the state is saved after every step."""
        number = self.state["round"] + 1
        route = "/v1" + self.model.route
        lines = sorted((custom_id, key, body) for key, (custom_id, body) in self.asking.items())
        texts = input_lines([(name, body) for name, _, body in lines], route)
        fit = lines_that_fit(texts)
        if fit < len(lines):  # the rest are asked again by the protocols of the next round
            log.info(
                "round %d: %s of %s requests fit one batch input file (at most %s requests, %s bytes); "
                "the others go into the next round's",
                number,
                f"{fit:,}",
                f"{len(lines):,}",
                f"{MAX_REQUESTS:,}",
                f"{MAX_BYTES:,}",
            )
            lines, texts = lines[:fit], texts[:fit]
        for _, key, _ in lines:
            self.tries[key] = self.tries.get(key, 0) + 1
        input_path = self.store.path.with_name(
            self.store.path.name.replace(".batch.json", f".batch{number}.input.jsonl")
        )
        write_input(input_path, texts)
        mode = "api" if self.api.available() else "offline"
        self.state["round"] = number
        self.state["pending"] = {
            "round": number,
            "mode": mode,
            "input": input_path.name,
            "status": "written",
            "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "requests": {name: key for name, key, _ in lines},
        }
        self.store.save()
        if mode == "api":
            self._send()
        else:
            self._tell_offline()

    def _send(self) -> None:
        """Upload the pending input file and create its batch, unless done already (a resumed run)."""
        pending = self.state["pending"]
        if not pending.get("input_file_id"):
            pending["input_file_id"] = self.api.upload(self.results_path.with_name(pending["input"]))
            self.store.save()
        if not pending.get("batch_id"):
            found = self.api.find(pending["input_file_id"])
            metadata = {"results_file": self.results_path.name[:500], "round": str(pending["round"])}
            batch = found or self.api.create(pending["input_file_id"], "/v1" + self.model.route, metadata)
            pending.update(batch_id=batch["id"], status=batch.get("status", "validating"))
            self.store.save()
            log.info(
                "batch %s: %s requests (round %d) submitted; run the same command again to collect it, "
                "or add --wait",
                batch["id"],
                f"{len(pending['requests']):,}",
                pending["round"],
            )

    def _tell_offline(self) -> None:
        """Log how to answer the pending input file with an offline engine and import the output."""
        pending = self.state["pending"]
        command = ENGINE_COMMAND.format(
            input=paths.shown(self.results_path.with_name(pending["input"])),
            output=paths.shown(self._output_path()),
            model=self.model.config.model,
        )
        log.warning(
            "%s has no Batch API (or did not answer): %s requests (round %d) written for an offline engine, "
            "e.g. `%s`; "
            "then run this command again (it imports the output%s)",
            self.api.base,
            f"{len(pending['requests']):,}",
            pending["round"],
            command,
            ", or give it with --batch-output FILE" if not self.options.output else "",
        )

    def _collect(self) -> bool:
        """Bring in the batch in hand when it is finished (waiting for it with ``wait``); return
        whether it was brought in (then the state has no batch in hand)."""
        pending = self.state["pending"]
        if pending["mode"] == "offline":
            return self._collect_offline()
        self._send()
        batch = self._poll(pending["batch_id"])
        if batch["status"] not in FINAL:
            log.warning(
                "batch %s is %s (%s of %s requests done); run the same command again to collect it, "
                "or add --wait",
                batch["id"],
                batch["status"],
                requests_done(batch),
                batch.get("request_counts", {}).get("total", "?"),
            )
            return False
        texts = [
            self.api.content(batch[name]) for name in ("output_file_id", "error_file_id") if batch.get(name)
        ]
        if batch["status"] == "failed":
            log.warning("batch %s failed: %s", batch["id"], json.dumps(batch.get("errors"))[:500])
        self._import(texts, batch["status"])
        return True

    def _poll(self, batch_id: str) -> dict[str, Any]:
        """Return the batch, looked at once, or with ``wait`` until it is final (a progress bar)."""
        batch = self.api.look(batch_id)
        self._note(batch)
        if not self.options.wait or batch["status"] in FINAL:
            return batch
        total = batch.get("request_counts", {}).get("total") or len(self.state["pending"]["requests"])
        bar = progress(None, total=total, desc=f"batch {batch_id}", unit="request")
        try:
            while batch["status"] not in FINAL:
                time.sleep(self.model.config.batch_poll_s)
                batch = self.api.look_patiently(batch_id, batch)
                self._note(batch)
                bar.n = requests_done(batch)
                bar.set_postfix_str(batch["status"], refresh=False)
        finally:
            bar.close()
        return batch

    def _note(self, batch: dict[str, Any]) -> None:
        """Save the batch's status in the state when it changed."""
        if batch["status"] != self.state["pending"].get("status"):
            self.state["pending"]["status"] = batch["status"]
            self.store.save()

    def _collect_offline(self) -> bool:
        """Import the offline engine's output file when it is there (waiting for it with ``wait``)."""
        output = self._output_path()
        while not output.is_file():
            if not self.options.wait:
                self._tell_offline()
                return False
            time.sleep(self.model.config.batch_poll_s)
        self._import([output.read_text(encoding="utf-8")], "completed")
        self.options = dataclasses.replace(self.options, output=None)  # --batch-output was this round's
        return True

    def _import(self, texts: list[str], status: str) -> None:
        """Put the answers of the batch in hand into the cache (and ``answered``), keep its
        refusals, note what failed; then mark the round done in the state. Raises ModelError for
        an error that concerns every request (e.g. an unknown model), after the import."""
        pending = self.state["pending"]
        counts, fatal = {"answered": 0, "refused": 0, "failed": 0}, None
        chat = self.model.config.api == "chat"
        replies: dict[str, Reply] = {}
        for line in output_lines(texts):
            key, outcome = read_output_line(line, pending["requests"], chat)
            if isinstance(outcome, Reply):
                replies[key] = outcome
                counts["answered"] += 1
            elif isinstance(outcome, RequestRefused):
                self.state["refused"][key] = [outcome.kind, outcome.message]
                counts["refused"] += 1
            elif key is not None:
                self.errors[key] = outcome.message
                fatal = fatal or (outcome.message if outcome.fatal else None)
        self._keep(replies)
        counts["failed"] = len(pending["requests"]) - counts["answered"] - counts["refused"]
        done = {k: pending.get(k) for k in ("round", "mode", "input", "input_file_id", "batch_id")}
        self.state["done"].append({**done, "status": status, "requests": len(pending["requests"]), **counts})
        self.state["pending"] = None
        self.store.save()
        log.info(
            "batch round %d (%s): %s",
            done["round"],
            status,
            ", ".join(f"{v:,} {k}" for k, v in counts.items()),
        )
        if fatal:
            raise ModelError(f"the batch's requests were refused: {fatal}")

    def _keep(self, replies: dict[str, Reply]) -> None:
        """Store the answers in the cache, note them as answered by a batch of this file (appended
        to ``answered_path``: a rerun gives them as live answers too), count their tokens."""
        for key, reply in replies.items():
            if worth_caching(reply):
                self.model.cache.put(key, cache_entry(reply))
            else:  # as a live run: given to the protocol, never cached
                self.empty[key] = reply
            self.model.counters.add(
                batch_requests=1,
                prompt_tokens=reply.prompt_tokens,
                completion_tokens=reply.completion_tokens,
                reasoning_tokens=reply.reasoning_tokens,
                cached_tokens=reply.cached_tokens,
            )
        self.model.cache.flush()
        self.store.add_answered(replies)

    # ---- files ---------------------------------------------------------------------------------
    def _output_path(self) -> Path:
        """Return where the offline engine's output of the pending input is read from."""
        pending = self.state["pending"]
        default = self.results_path.with_name(pending["input"].replace(".input.jsonl", ".output.jsonl"))
        return self.options.output or default
