"""What a suite's scorer returns for one results file, and what every analysis reads.

A suite's scorer (``Suite.score``) reads one results file and returns a ``ScoredRun``: its
answers scored under the suite's rules and its units; ``common.database`` stores it. The
analyses read ``Scored``: the scored rows of one or several sets (``database.read``). The
helpers here read the fields every suite's records share.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd


@dataclass
class ScoredRun:
    """One results file scored by its suite (``Suite.score``)."""

    prompting: str
    model: str
    label: str  # the run's name in the suite's tables
    records: int  # Keys answered (draw 0)
    answers: pd.DataFrame  # ANSWER_COLUMNS (texts as strings) plus one column per rule of Suite.rules
    units: pd.DataFrame  # UNIT_COLUMNS
    method: str | None = None
    view: str | None = None
    modality: str = "text"  # what the run was shown: text, image or text+image (common.pictures.modality)
    notes: list[str] = field(default_factory=list)  # what a reader of its figures must know
    attributes: dict[str, Any] = field(default_factory=dict)  # other facts of the run the suite keeps
    # items the file's records describe that the set's data does not have (answers as recorded,
    # their prompts not at hand): added to the set's items, so that every answer has its item
    items: pd.DataFrame | None = None

    def __repr__(self) -> str:
        return f"<ScoredRun {self.label}: {self.records} records>"


@dataclass
class Scored:
    """The scored rows of one or several sets: what every analysis reads (``read``)."""

    runs: pd.DataFrame  # one row per results file: run_id, suite, set_name, results_file, label, ...
    answers: pd.DataFrame  # one row per answer: run_id, Key, draw, turn, answer, correct, ..., rules
    items: pd.DataFrame  # one row per (set_name, Key): unit, task, size, variant, gold, fields, image
    units: pd.DataFrame  # run_id, unit, rule, score, censored, refused, task, size
    pairs: pd.DataFrame  # set_name, run_a, run_b, rule
    # what an analysis computed of one run, by (what, run_id): shared with the rows of each set
    # (``of_set``), so that a suite's section and each set's report compute a run's part once
    memo: dict[tuple[str, int], Any] = field(default_factory=dict, repr=False, compare=False)
    parts: Any = field(default=None, repr=False, compare=False)  # a runparts.Store: kept across analyses

    def __repr__(self) -> str:
        return f"<Scored {len(self.runs)} runs, {len(self.answers):,} answers>"

    def run_part(self, what: str, run_id: int, compute: Callable[[], Any]) -> Any:
        """Return ``compute()``, the part ``what`` ("<module>:<name>", the module whose code
        computes it) of run ``run_id`` alone: computed once for these rows and every set's rows
        taken from them (``of_set``), and, with a store of parts (``common.runparts``, as
        ``analysis.load`` gives), once per run content and code; a caller must not modify it."""
        key = (what, int(run_id))
        if key not in self.memo:
            self.memo[key] = self.parts.get(what, run_id, compute) if self.parts else compute()
        return self.memo[key]

    def of_set(self, set_name: str) -> Scored:
        """Return the rows of one set."""
        runs = self.runs[self.runs["set_name"] == set_name]
        ids = set(runs["run_id"])
        return Scored(
            runs=runs.reset_index(drop=True),
            answers=self.answers[self.answers["run_id"].isin(ids)].reset_index(drop=True),
            items=self.items[self.items["set_name"] == set_name].reset_index(drop=True),
            units=self.units[self.units["run_id"].isin(ids)].reset_index(drop=True),
            pairs=self.pairs[self.pairs["set_name"] == set_name].reset_index(drop=True),
            memo=self.memo,
            parts=self.parts,
        )


# ---- fields every suite's records share ---------------------------------------------------------
def joined_text(parts: Any) -> str | None:
    """Return the text of one or several replies or reasonings: a string as it is; a list's
    non-empty texts separated by blank lines; a mapping per part (a blocks translation's init and
    goal) as "[part] text" blocks; None when there is no text."""
    if parts is None:
        return None
    if isinstance(parts, str):
        return parts
    if isinstance(parts, dict):
        return "\n".join(f"[{name}] {text}" for name, text in parts.items()) or None
    texts = [joined_text(part) for part in parts]
    return "\n\n".join(t for t in texts if t) or None


def reply_fields(record: dict[str, Any]) -> dict[str, Any]:
    """Return the answers fields every suite reads the same way from a results record (or an
    Already Said That turn line): reasoning, refused and error, truncated (the replies cut at the
    token limit, ``common.results.finish_reasons``), tokens and the finish reasons."""
    from common.results import finish_reasons

    reasons = finish_reasons(record)
    return {
        "reasoning": joined_text(record.get("reasoning")),
        "refused": str(record["refused"]) if record.get("refused") else None,
        "error": record.get("error") or None,
        "truncated": reasons.count("length"),
        "prompt_tokens": record.get("prompt_tokens"),
        "completion_tokens": record.get("completion_tokens"),
        "reasoning_tokens": record.get("reasoning_tokens"),
        "finish_reason": ", ".join(reasons) if any(reasons) else None,
    }


def reply_columns(records: Sequence[dict[str, Any]]) -> dict[str, list[Any]]:
    """Return ``reply_fields`` of every record as columns (the same values), fast for the common
    case of finish reasons that are a string or a list of strings and no reasoning: a run's
    records at once, not one by one."""
    reasons = [_plain_reasons(r.get("finish_reason")) for r in records]
    if any(x is None for x in reasons) or any(r.get("reasoning") is not None for r in records):
        rows = [reply_fields(record) for record in records]
        return {name: [row[name] for row in rows] for name in REPLY_FIELDS}
    refused = [r.get("refused") for r in records]
    return {
        "reasoning": [None] * len(records),
        "refused": [str(x) if x else None for x in refused],
        "error": [r.get("error") or None for r in records],
        "truncated": [x.count("length") for x in reasons],
        "prompt_tokens": [r.get("prompt_tokens") for r in records],
        "completion_tokens": [r.get("completion_tokens") for r in records],
        "reasoning_tokens": [r.get("reasoning_tokens") for r in records],
        "finish_reason": [", ".join(x) if any(x) else None for x in reasons],
    }


def _plain_reasons(value: Any) -> list[str] | None:
    """Return a finish reason field as a list (as ``finish_reasons`` gives it) when it is none, a
    string or a list of strings; None for any other shape (mappings per part, nested lists)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    return None


REPLY_FIELDS = (
    "reasoning", "refused", "error", "truncated", "prompt_tokens", "completion_tokens", "reasoning_tokens",
    "finish_reason",
)  # fmt: skip


def json_fields(record: dict[str, Any], skip: Sequence[str]) -> str:
    """Return the fields of ``record`` not in ``skip`` as sorted JSON (an item's other fields)."""
    left_out = set(skip)
    return json.dumps({k: v for k, v in record.items() if k not in left_out}, sort_keys=True, default=str)
