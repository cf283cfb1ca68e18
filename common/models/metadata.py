"""The run metadata beside a results file (``<name>.meta.json``): one entry per run.

An entry holds the labels, the model's settings (never a key), the run's counts, requests,
tokens and cost when the model has a price. It is written when the run starts and brought up
to date as it goes, so even a run killed with SIGKILL leaves one; the next run marks such an
entry ``killed`` and sets its ``answered`` from the file (only one run writes at a time: the
caller holds the results file's lock).
"""

import json
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from common.jsonl import write_json
from common.models.base import Counters, Model
from common.models.config import cost_usd
from common.models.endpoints import stats_since
from common.provenance import git_commit
from common.results import metadata_path, read_results

TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cached_tokens")

if TYPE_CHECKING:
    from common.models.summary import RunSummary

log = logging.getLogger(__name__)


class RunMetadata:
    """This run's entry in the metadata JSON beside the results file (rewritten atomically).

    Created when the run starts (the caller holds the results file's lock, so no other run
    writes it meanwhile). An earlier entry still marked ``running`` belongs to a run that was
    killed: it becomes ``killed`` with ``answered`` set from the records that appeared in the
    file since it started, and its requests, tokens and cost counted from those records (its
    last save, up to METADATA_EVERY_S old, missed the latest ones; requests whose answer was
    still in flight when it was killed are not counted).
    """

    def __init__(
        self,
        model: Model,
        results_path: str | Path,
        labels: dict[str, Any],
        started: float,
        keys_at_start: int,
        counters: Counters,
    ):
        self.model, self.results_path, self.labels = model, Path(results_path), labels
        self.path = metadata_path(results_path)
        self.started, self.keys_at_start, self.last_saved = started, keys_at_start, 0.0
        self.start = counters.as_dict()  # the model's counters may serve several runs: count this one's
        self.commit = git_commit()  # the project's commit, recorded with the run (the database shows it)
        self.endpoints_start = self._transport().get("endpoints", {})
        self.runs: list[dict[str, Any]] = []
        if self.path.is_file():
            try:
                self.runs = json.loads(self.path.read_text(encoding="utf-8"))["runs"]
            except (ValueError, KeyError, TypeError):
                log.warning("%s: not a run metadata file; starting it afresh", self.path)
        killed = [run for run in self.runs if run.get("status") == "running"]
        if killed:
            records = read_results(results_path, all_draws=True) if Path(results_path).is_file() else []
            for run in killed:
                run["status"] = "killed"
                if isinstance(run.get("keys_at_start"), int):
                    run["answered"] = keys_at_start - run["keys_at_start"]
                    _account(run, records[run["keys_at_start"] : keys_at_start])

    def stamp(self) -> dict[str, Any]:
        """Return this run's identity as its first record in the results file carries it
        (``common.results.RUN_FIELD``): its labels, the project's commit and the model's settings
        (never a key; None values left out), as its metadata entry has them. Not when it started:
        the same run asked again writes the same bytes (results files stay deterministic); the
        metadata entry keeps the time."""
        settings = {name: value for name, value in self.model.settings().items() if value is not None}
        return {**self.labels, "commit": self.commit, "model": settings}

    def save(self, summary: "RunSummary", counters: Counters, every: float = 0.0) -> None:
        """Write the entry with the current counts (unless saved less than ``every`` seconds ago)."""
        now = time.time()
        if every and now - self.last_saved < every:
            return
        self.last_saved = now
        totals = counters.since(self.start)
        settings = self.model.settings()
        elapsed = summary.elapsed_s or round(now - self.started, 3)
        entry = {
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
            **self.labels,
            "commit": self.commit,
            "model": settings,
            **{name: value for name, value in vars(summary).items() if name != "failed_in_a_row"},
            "elapsed_s": elapsed,
            "keys_at_start": self.keys_at_start,
            **totals,
            "items_per_s": round(summary.answered / elapsed, 2) if elapsed else None,
        }
        transport = self._transport()
        if transport:  # an HTTP model: requests per endpoint, the concurrency reached
            entry["endpoints"] = stats_since(transport["endpoints"], self.endpoints_start)
            entry["concurrency"] = transport["concurrency"]
        cost = cost_usd(  # tokens of cached answers cost nothing and are not in the counters
            settings.get("price_per_1k_tokens"),
            totals["prompt_tokens"],
            totals["completion_tokens"],
            totals["cached_tokens"],
            batch=bool(summary.batch),
        )
        if cost is not None:
            entry["cost_usd"] = cost
        write_json(self.path, {"results_file": self.results_path.name, "runs": [*self.runs, entry]})

    def _transport(self) -> dict[str, Any]:
        """Return the model's ``run_stats`` (HTTP models: endpoints, concurrency), else {}."""
        stats = getattr(self.model, "run_stats", None)
        return stats() if stats else {}


def _account(run: dict[str, Any], records: list[dict[str, Any]]) -> None:
    """Set a killed run's requests, tokens and cost from the records it wrote (answers from the
    cache cost nothing), where they exceed what its last save recorded."""
    paid = [record for record in records if not record.get("cached")]
    totals = {
        "requests": sum(int(record.get("attempts") or 0) for record in records),
        **{name: sum(int(record.get(name) or 0) for record in paid) for name in TOKEN_FIELDS},
    }
    if all(totals[name] <= int(run.get(name) or 0) for name in totals):
        return
    run.update({name: max(value, int(run.get(name) or 0)) for name, value in totals.items()})
    cost = cost_usd(
        (run.get("model") or {}).get("price_per_1k_tokens"),
        run["prompt_tokens"],
        run["completion_tokens"],
        run.get("cached_tokens", 0),
    )
    if cost is not None:
        run["cost_usd"] = cost
    run["counted_from_results"] = True
