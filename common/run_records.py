"""What the results database records of each run, read for the report's provenance: the model's
settings of its last run (``runs.settings``: never a key), how many runs wrote the file and the
tokens and cost they spent (``runs.run_count``, ``tokens``, ``cost_usd``: the score stage read
them from the file's run records, ``common.run_identity``) and what its replies spent
(``answers``), so nothing downstream reads a results file or its run metadata again.

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
_TOKEN_USE = """
SELECT r.results_file, r.settings, r.run_count, r.tokens, r.cost_usd,
  coalesce(sum(CASE WHEN a.finish_reason IS NULL THEN 0
      ELSE length(a.finish_reason) - length(replace(a.finish_reason, ',', '')) + 1 END), 0),
  coalesce(sum(a.truncated), 0), coalesce(sum(a.completion_tokens), 0), coalesce(sum(a.reasoning_tokens), 0)
FROM runs r LEFT JOIN answers a ON a.run_id = r.run_id AND a.turn = 0
WHERE r.results_file IN ({marks}) GROUP BY r.run_id
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
