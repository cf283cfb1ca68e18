"""What the results database records of each run, read for the report's provenance: the model's
settings of its last run (``runs.settings``: never a key), how many runs wrote the file and the
tokens and cost they spent (``runs.run_count``, ``tokens``, ``cost_usd``: the score stage read
them from the file's run records, ``common.run_identity``) and what its replies spent
(``run_counts``: summed from its answers when it was scored), so nothing downstream reads a
results file or its run metadata again.

A new read of the database kept beside ``common.database`` (which writes it and reads the scored
rows of a set's analysis); like every reader it only selects.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

# one row per results record: its first turn (a blocks record's feedback rounds and an Already Said
# That conversation's turns repeat or split the record's tokens on later turns), every draw
# (summed when the run was scored: ``run_counts``; a run without answers has none)
_TOKEN_USE = """
SELECT r.results_file, r.settings, r.run_count, r.tokens, r.cost_usd, coalesce(c.replies, 0),
  coalesce(c.cut, 0), coalesce(c.completion_tokens, 0), coalesce(c.reasoning_tokens, 0)
FROM runs r LEFT JOIN run_counts c ON c.run_id = r.run_id
WHERE r.results_file IN ({marks}) ORDER BY r.run_id
"""


def recorded_runs(conn: sqlite3.Connection, files: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Return, for each of the results ``files`` (as ``paths.shown`` names them) the database
    holds a run of, ``settings`` (the model's settings of its last run; None when it had no run
    metadata: released results, a template script), ``runs`` (how many runs wrote it), ``tokens``
    and ``cost_usd`` (what they spent, as the runner counts it) and ``use`` (``replies``, ``cut`` at
    the token limit, ``reasoning_tokens``, ``answer_tokens``: the same counts as
    ``common.results.token_use`` of its records, over every draw)."""
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(files), 500):  # SQLite's limit on parameters
        chunk = list(files[start : start + 500])
        query = _TOKEN_USE.format(marks=", ".join("?" * len(chunk)))
        for row in conn.execute(query, chunk):
            name, settings, runs, tokens, cost, replies, cut, completion, reasoning = row
            found[name] = {
                "settings": json.loads(settings) if settings else None,
                "runs": int(runs),
                "tokens": int(tokens),
                "cost_usd": float(cost),
                "use": {
                    "replies": int(replies),
                    "cut": int(cut),
                    "reasoning_tokens": int(reasoning),
                    "answer_tokens": int(completion) - int(reasoning),
                },
            }
    return found
