"""What one run of the runner did (``RunSummary``), and the exit code a script gives after its runs."""

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import paths

log = logging.getLogger("common.models.runner")

BATCH_PENDING_EXIT = 75  # a batch is still out (EX_TEMPFAIL): run the same command again later


@dataclass
class RunSummary:
    """What one run did."""

    total: int = 0  # items asked for (after --limit)
    already_done: int = 0  # skipped: their Key was in the results file
    answered: int = 0  # records written by this run (refused ones included)
    invalid: int = 0  # of those, answers with an error (WorldSense: resp "", no valid option)
    refused: int = 0  # of those, requests the server refused for that item (context length, filter)
    failed: int = 0  # not answered after retries (not written; a later run asks them again)
    retried: int = 0  # refused or truncated records dropped at the start to be asked again
    status: str = "running"  # running | complete | incomplete (some failed) | stopped: <why> | killed
    elapsed_s: float = 0.0
    failures: list[dict[str, Any]] = field(default_factory=list)  # first few {Key, error}
    failed_in_a_row: int = 0  # items failed since the last answer; too many stop the run
    counts: dict[str, int] = field(default_factory=dict)  # this run's requests, retries, tokens, ...
    deferred: int = 0  # batch mode: items waiting for a batch's answers (not written; the next run goes on)
    batch: dict[str, Any] = field(default_factory=dict)  # batch mode: rounds, the batch ids, where it stands

    def describe(self, results_path: str | Path) -> str:
        """Return the one-line account of the run that scripts log: what was written and how
        (answers, invalid answers, refused items kept apart), what was skipped or failed, and
        the requests it took."""
        counts = self.counts
        answers = self.answered - self.invalid - self.refused
        return (
            f"{paths.shown(results_path)}: {self.answered:,} written ({answers:,} answers, "
            f"{self.invalid:,} invalid, {self.refused:,} refused by the server), "
            f"{self.already_done:,} already there, {self.failed:,} failed after retries; "
            f"{counts.get('requests', 0):,} requests, {counts.get('retries', 0):,} retries, "
            f"{counts.get('cache_hits', 0):,} cache hits, "
            f"{counts.get('prompt_tokens', 0) + counts.get('completion_tokens', 0):,} tokens"
        )


def exit_code(summaries: Iterable[RunSummary], unit: str = "items") -> int:
    """Return a script's exit code after its runs: BATCH_PENDING_EXIT (75) when some ``unit`` wait
    for a batch that is still out, 1 when some failed after their retries (logging how many and
    that the same command asks them again), else 0."""
    summaries = list(summaries)
    waiting = sum(summary.deferred for summary in summaries)
    if waiting:
        log.warning(
            "%s %s wait for a batch; run the same command again to collect it (or add --wait)",
            f"{waiting:,}",
            unit,
        )
        return BATCH_PENDING_EXIT
    failed = sum(summary.failed for summary in summaries)
    if failed:
        log.error("%s %s failed after retries; run the same command again to ask them", f"{failed:,}", unit)
        return 1
    return 0
