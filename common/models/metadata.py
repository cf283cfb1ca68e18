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
from common.results import metadata_path

if TYPE_CHECKING:
    from common.models.summary import RunSummary

log = logging.getLogger(__name__)


class RunMetadata:
    """This run's entry in the metadata JSON beside the results file (rewritten atomically).

    Created when the run starts (the caller holds the results file's lock, so no other run
    writes it meanwhile). An earlier entry still marked ``running`` belongs to a run that was
    killed: it becomes ``killed`` with ``answered`` set from the Keys that appeared in the file
    since it started.
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
        self.endpoints_start = self._transport().get("endpoints", {})
        self.runs: list[dict[str, Any]] = []
        if self.path.is_file():
            try:
                self.runs = json.loads(self.path.read_text(encoding="utf-8"))["runs"]
            except (ValueError, KeyError, TypeError):
                log.warning("%s: not a run metadata file; starting it afresh", self.path)
        for run in self.runs:
            if run.get("status") == "running":
                run["status"] = "killed"
                if isinstance(run.get("keys_at_start"), int):
                    run["answered"] = keys_at_start - run["keys_at_start"]

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
