"""What the report's numbers are made of: a few answers behind each section, from the results database.

``attach`` adds to a saved section's record, from ``results/results.sqlite`` (``common.database``):

- under each exact paired test between two of the section's runs that the report prints, a
  few units of each discordant cell (where a did better, where b did) with one answer of each
  run side by side: the
  ``disagreements`` query of the explorer (``common.queries``), first by unit;
- a few failures of each of its runs (the ``failures`` query, first by unit).

Cells hold model text, so the tables are marked ``untrusted``: ``common.render`` escapes them in
HTML and Markdown alike; here whitespace runs become one space and control characters are shown
as ``\\xNN``, so that a reply can neither break a table nor hide text. An item shown as a picture
(a set with picture modalities) brings its thumbnail from the database's ``images``: a table's
``pictures`` (base64 PNG per row, "" for none), which the HTML shows beside the answers.
"""

import base64
import re
import sqlite3
from typing import Any

import pandas as pd

from common import queries

PROMPT_CHARS = 400  # of a prompt's end (the question comes last; a WorldSense prompt whole)
REPLY_CHARS = 160  # of a reply's start
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def excerpt(text: Any, chars: int, end: bool = False) -> str:
    """Return ``text`` on one line, at most ``chars`` characters (its end with ``end``, marked
    "…"), control characters shown as ``\\xNN``; "" for a missing value."""
    if text is None or (isinstance(text, float) and pd.isna(text)):
        return ""
    text = " ".join(_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text)).split())
    if len(text) <= chars:
        return text
    return "…" + text[-chars:] if end else text[:chars] + "…"


def _said(answer: Any, reply: Any) -> str:
    """Return a run's answer as shown: the start of its reply, and what was read from it when
    that differs ("(no answer read)" when nothing was)."""
    shown = excerpt(reply, REPLY_CHARS) or "(empty reply)"
    if answer is None or (isinstance(answer, float) and pd.isna(answer)):
        return f"{shown} → (no answer read)"
    return shown if excerpt(answer, REPLY_CHARS) == shown else f"{shown} → read as: {excerpt(answer, 60)}"


def pictures(rows: pd.DataFrame) -> dict[str, list[str]]:
    """Return ``{"pictures": [base64 PNG or "" per row]}`` from the rows' ``picture`` thumbnails,
    or {} when no row has one (only PNG bytes are taken)."""
    thumbnails = rows.get("picture", [])
    found = [p if isinstance(p, bytes) and p.startswith(b"\x89PNG") else None for p in thumbnails]
    if not any(found):
        return {}
    return {"pictures": [base64.b64encode(p).decode("ascii") if p else "" for p in found]}


def _cell_table(rows: pd.DataFrame, title: str, a: str, b: str) -> dict[str, Any]:
    """Return the example rows of one discordant cell as a flat table of model text (with the
    items' thumbnails, ``pictures``)."""
    columns = ["unit", "item (Key, turn)", "prompt (end)", "gold", f"a: {a}", f"b: {b}"]
    body = [
        [
            excerpt(r.unit, 60),
            f"{r.Key}, {r.turn}",
            excerpt(r.prompt, PROMPT_CHARS, end=True),
            excerpt(r.gold, 80),
            _said(r.answer_a, r.reply_a),
            _said(r.answer_b, r.reply_b),
        ]
        for r in rows.itertuples()
    ]
    return {"title": title, "columns": columns, "rows": body, "untrusted": True, **pictures(rows)}


def pair_blocks(
    conn: sqlite3.Connection, files: list[str], per_cell: int = 3, shown: list[list[str]] | None = None
) -> list[dict[str, Any]]:
    """Return one block of examples per paired test between runs of ``files`` (with ``shown``:
    per test the report prints, ``queries.pair_examples``): its summary (the runs, the rule, how
    many units favour each) and a table per non-empty discordant cell."""
    blocks = []
    for test in queries.pair_examples(conn, files, per_cell, shown):
        a, b, rows = test["a"], test["b"], test["rows"]
        where = f", view {test['view']}" if test.get("view") else ""
        summary = (
            f"Examples: {a} vs {b}{where} ({test['rule']}): a better on {test['a_better']:,}, "
            f"b better on {test['b_better']:,} of {test['n']:,} units"
        )
        tables = []
        for cell, count in (("a", test["a_better"]), ("b", test["b_better"])):
            shown = rows[rows["better"] == cell]
            if len(shown):
                title = f"{cell} better: the first {len(shown)} of {count:,} units"
                tables.append(_cell_table(shown, title, a, b))
        blocks.append({"summary": summary, "tables": tables or [_none_table()]})
    return blocks


def _none_table() -> dict[str, Any]:
    """Return the table shown for a test without discordant units: its title alone (no rows)."""
    return {"title": "no unit where one run did better", "columns": [], "rows": [], "untrusted": True}


def failure_block(conn: sqlite3.Connection, files: list[str], per_run: int = 2) -> dict[str, Any] | None:
    """Return the block of the first ``per_run`` failures of each run of ``files``, or None when
    no run failed."""
    found = queries.failure_examples(conn, files, per_run)
    if found.empty:
        return None
    columns = ["run", "unit", "item (Key, turn)", "prompt (end)", "gold", "answer"]
    rows = [
        [
            r.run,
            excerpt(r.unit, 60),
            f"{r.Key}, {r.turn}",
            excerpt(r.prompt, PROMPT_CHARS, end=True),
            excerpt(r.gold, 80),
            _said(r.answer, r.reply),
        ]
        for r in found.itertuples()
    ]
    summary = f"Failures: the first {per_run} wrong answers of each run (first by unit)"
    return {
        "summary": summary,
        "tables": [{"title": "", "columns": columns, "rows": rows, "untrusted": True, **pictures(found)}],
    }


def attach(section: dict[str, Any], conn: sqlite3.Connection) -> dict[str, Any]:
    """Return the section record with ``examples`` from the database (its runs are the results
    files among its inputs; paired tests: those it prints, ``shown_pairs``, else all); the record
    itself is not modified."""
    files = [
        entry["path"] for entry in section.get("inputs", []) if entry["path"].endswith("___results.jsonl")
    ]
    shown = section.get("shown_pairs")  # the tests the report prints (``common.leaderboard``)
    examples: dict[str, Any] = {
        "pairs": pair_blocks(conn, files, shown=shown) if section.get("paired_table") else []
    }
    if failures := failure_block(conn, files):
        examples["failures"] = failures
    return {**section, "examples": examples}
