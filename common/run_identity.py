"""What the score stage records of the runs behind a results file: their identity, the model's
settings and what they spent, for the ``runs`` table (``common.database``), so that nothing
downstream (analyses, the report's provenance) reads a run metadata file or a results file again.

A results file written by the shared runner says itself which runs wrote it: the first record of
each run carries its identity (``common.results.RUN_FIELD``: start, commit, labels, settings).
``recorded`` reads those records, and the token counts of the others, from the file's bytes:
the runs (how many), the last run's settings and commit, its labels, and the tokens and
cost counted as the runner counts a run's (``common.models.metadata``: prompt and completion
tokens of the records not answered from the cache, priced at each run's price, batches at the
batch share). A file written before runs recorded themselves falls back to the run metadata beside
it (``<name>.meta.json``), as the score stage read it before; released results have neither.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from common.pricing import cost_usd
from common.results import RUN_FIELD, metadata_path

NO_RUN = {"settings": None, "date": None, "git_commit": None, "labels": None, "run_count": 0, "tokens": 0}
KEY_WORDS = ("key", "secret", "password", "token", "authorization")  # a setting named so is never stored


def recorded(results_file: str | Path) -> dict[str, Any]:
    """Return the ``runs`` columns a results file gives of the runs that wrote it: ``settings``
    (JSON of the last run's model settings, never a key), ``date`` and ``git_commit`` of the last
    run, ``labels`` (JSON: the last run's labels, e.g. prompting, model name, view, modality),
    ``run_count``, ``tokens`` (prompt + completion) and ``cost_usd`` (0 without a price; settings
    None for a run that records none: results released with a paper, ``blocks.release_runs``): from
    the file's run records when it has them (all but ``date``: a run record holds no time, so that
    results files stay deterministic; the date is the run metadata's, when there is one), else from
    its run metadata (labels None), else ``NO_RUN`` (released results, a script that does not use
    the shared runner)."""
    data = Path(results_file).read_bytes()
    found = _from_records(data) if f'"{RUN_FIELD}"'.encode() in data else None
    if found is None:
        return _from_metadata(results_file)
    return {**found, "date": _from_metadata(results_file)["date"]}  # the time is not in the file


def _from_records(data: bytes) -> dict[str, Any] | None:
    """Return ``recorded`` from the run records of a results file's bytes (None when it has none).
    Only the lines that can hold a run record or a token count are parsed."""
    runs: list[dict[str, Any]] = []  # each run's identity and its records' token counts
    earlier = {"prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0}  # before any run record
    for line in data.split(b"\n"):
        if b'"run"' not in line and b'_tokens"' not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:  # a torn last line: the next run cuts it off
            continue
        if not isinstance(record, dict) or "Key" not in record:
            continue
        if isinstance(record.get(RUN_FIELD), dict):
            runs.append({"run": record[RUN_FIELD], **dict.fromkeys(earlier, 0)})
        if not record.get("cached"):  # answers from the cache cost nothing
            spent = runs[-1] if runs else earlier
            for name in earlier:
                spent[name] += int(record.get(name) or 0)
    if not runs:
        return None
    costs = [_cost(run) for run in runs]
    last = runs[-1]["run"]
    labels = {k: v for k, v in last.items() if k not in ("commit", "model")}
    tokens = sum(run["prompt_tokens"] + run["completion_tokens"] for run in [earlier, *runs])
    return {
        "settings": json.dumps(_no_keys(last["model"]), sort_keys=True) if "model" in last else None,
        "date": None,
        "git_commit": last.get("commit"),
        "labels": json.dumps(labels, sort_keys=True, default=str),
        "run_count": len(runs) + (1 if any(earlier.values()) else 0),  # an older run without a record
        "tokens": tokens,
        "cost_usd": round(sum(c or 0.0 for c in costs), 6),
    }


def _cost(run: dict[str, Any]) -> float | None:
    """Return the dollars of one run's tokens at its model's price (None without a price)."""
    price = (run["run"].get("model") or {}).get("price_per_1k_tokens")
    spent = (run["prompt_tokens"], run["completion_tokens"], run["cached_tokens"])
    return cost_usd(price, *spent, batch=bool(run["run"].get("batch")))


def _from_metadata(results_file: str | Path) -> dict[str, Any]:
    """Return ``recorded`` from the run metadata beside a results file (a file written before
    runs recorded themselves in it): its last run's settings, date and commit; the runs, tokens and
    cost of every entry, as the runner accounted them; ``NO_RUN`` without metadata."""
    try:
        runs = json.loads(metadata_path(results_file).read_text(encoding="utf-8"))["runs"]
        last = runs[-1]
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return {**NO_RUN, "cost_usd": 0.0}
    settings = {k: v for k, v in (last.get("model") or {}).items() if v is not None}
    return {
        "settings": json.dumps(_no_keys(settings), sort_keys=True),
        "date": last.get("started"),
        "git_commit": last.get("commit"),
        "labels": None,
        "run_count": len(runs),
        "tokens": sum(int(r.get("prompt_tokens") or 0) + int(r.get("completion_tokens") or 0) for r in runs),
        "cost_usd": round(sum(float(r.get("cost_usd") or 0) for r in runs), 6),
    }


def _no_keys(settings: dict[str, Any]) -> dict[str, Any]:
    """Return ``settings`` without any whose name says it could hold a key (``api_key``, a
    ``*_token``, a secret; ``max_tokens`` is a count): the name of the variable that holds the key
    (``api_key_env``) is kept, never a key itself. The runner records no key; this makes sure."""
    return {
        name: value
        for name, value in settings.items()
        if name.endswith("_env") or not any(name.lower().split("_")[-1] == word for word in KEY_WORDS)
    }
