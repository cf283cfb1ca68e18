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
import json
import re
import sqlite3
from typing import Any

import numpy as np
import pandas as pd

from common import leaderboard, queries

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
    conn: sqlite3.Connection,
    files: list[str],
    per_cell: int = 3,
    shown: list[list[str]] | None = None,
    baselines: frozenset[str] = frozenset(),
) -> tuple[list[dict[str, Any]], bool]:
    """Return one block of examples per paired test between runs of ``files`` that the report
    prints (``shown``, else the rule's tests; ``baselines``: ``pair_examples``): its summary (the
    runs, the rule, how many units favour each) and a table per non-empty discordant cell; and
    whether printed tests were left out (``pair_examples``)."""
    found = []
    tests, left_out = pair_examples(conn, files, per_cell, shown, baselines)
    for test in tests:
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
        found.append({"summary": summary, "tables": tables or [_none_table()]})
    return found, left_out


def _none_table() -> dict[str, Any]:
    """Return the table shown for a test without discordant units: its title alone (no rows)."""
    return {"title": "no unit where one run did better", "columns": [], "rows": [], "untrusted": True}


def failure_block(
    conn: sqlite3.Connection, files: list[str], per_run: int = 2, baselines: frozenset[str] = frozenset()
) -> dict[str, Any] | None:
    """Return the block of the first ``per_run`` failures of each run of ``files`` a set shows
    open (``failure_examples``), or None when none failed."""
    found, left_out = failure_examples(conn, files, per_run, baselines)
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
    if left_out:
        summary += (
            f"; past {leaderboard.OPEN_RUNS} runs a set, of its {leaderboard.OPEN_RUNS} most accurate "
            f"and the baselines ({left_out} runs' failures in the explorer: make explore, query failures)"
        )
    return {
        "summary": summary,
        "tables": [{"title": "", "columns": columns, "rows": rows, "untrusted": True, **pictures(found)}],
    }


def attach(section: dict[str, Any], conn: sqlite3.Connection) -> dict[str, Any]:
    """Return the section record with ``examples`` from the database (its runs are the results
    files among its inputs; paired tests: those it prints, ``shown_pairs``, else the rule's); the record
    itself is not modified."""
    files = [
        entry["path"] for entry in section.get("inputs", []) if entry["path"].endswith("___results.jsonl")
    ]
    shown = section.get("shown_pairs")  # the tests the report prints (``common.leaderboard``)
    baselines = leaderboard.baseline_names(section.get("suite", ""))
    pairs, left_out = (
        pair_blocks(conn, files, 3, shown, baselines) if section.get("paired_table") else ([], False)
    )
    examples: dict[str, Any] = {"pairs": pairs}
    if section.get("shown_pairs_partial") or left_out:
        examples["pairs_note"] = leaderboard.EXAMPLES_NOTE
    if failures := failure_block(conn, files, baselines=baselines):
        examples["failures"] = failures
    return {**section, "examples": examples}


# ---- the rows behind the examples, from the database ----------------------------------------------
def pair_examples(
    conn: sqlite3.Connection,
    files: list[str],
    per_cell: int = 3,
    shown: list[list[str]] | None = None,
    baselines: frozenset[str] = frozenset(),
) -> tuple[list[dict[str, Any]], bool]:
    """Return the examples behind the paired tests between runs of ``files`` (results files as
    ``paths.shown`` names them): per test, its labels and counts and the first ``per_cell`` units
    of each discordant cell (the ``disagreements`` query's rows, as a DataFrame). With ``shown``
    (``common.leaderboard.choose_pairs``: per test printed, its view if any, then its two runs'
    labels) only those tests, else the tests of ``leaderboard.rule_pairs`` in each group of runs
    (a set, view and rule; runs ranked by their mean unit score, ``baselines`` the suite's
    built-in models): every test of a group of up to 8 runs, past OPEN_RUNS runs those between its
    open runs (``_rule_tests``). The counts of every test come from its runs' units, each read
    once (``_pair_counts``); the examples, one query per test returned, each of its cells stopped
    at its first units. Also returns whether the rule's tests of a group were left out so."""
    marks = ", ".join("?" * len(files))
    tests = pd.read_sql_query(
        "SELECT p.pair_id, p.set_id, p.run_a, p.run_b, p.rule, ra.label AS a, rb.label AS b, ra.view "
        "FROM pairs p JOIN runs ra ON ra.run_id = p.run_a JOIN runs rb ON rb.run_id = p.run_b "
        f"WHERE ra.results_file IN ({marks}) AND rb.results_file IN ({marks}) ORDER BY p.pair_id",
        conn,
        params=[*files, *files],
    ).to_dict("records")
    left_out = False
    if shown is not None:
        wanted = {(tuple(s[:-2]), frozenset(s[-2:])) for s in shown}
        with_view = any(group for group, _ in wanted)
        tests = [t for t in tests if (_group(t, with_view), frozenset((t["a"], t["b"]))) in wanted]
    else:
        tests, left_out = _rule_tests(conn, tests, baselines)
    counts = _pair_counts(conn, tests)
    found = []
    for test in tests:
        params = {"run_a": test["run_a"], "run_b": test["run_b"], "rule": test["rule"], "per_cell": per_cell}
        rows = pd.read_sql_query(queries.disagreements_sql(per_cell=True), conn, params=params)
        found.append({**test, **counts[int(test["pair_id"])], "rows": rows})
    return found, left_out


def _group(test: dict[str, Any], with_view: bool) -> tuple[str, ...]:
    """Return the group a test belongs to as ``shown`` names groups: its view when the groups
    have one (``with_view``), else none."""
    return (test["view"],) if with_view and test.get("view") else ()


def _rule_tests(
    conn: sqlite3.Connection, tests: list[dict[str, Any]], baselines: frozenset[str]
) -> tuple[list[dict[str, Any]], bool]:
    """Return the ``tests`` of ``leaderboard.rule_pairs`` in each group of runs (set, view, rule)
    between its open runs (``leaderboard.open_runs``: past OPEN_RUNS, the best and the baselines),
    the runs ranked by their mean unit score under the rule (one query for all), in their order;
    and whether a group had runs that are not open (its other printed tests left to the explorer)."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for test in tests:
        view = test["view"] if isinstance(test["view"], str) else None  # NULL: None or NaN
        groups.setdefault((test["set_id"], view, test["rule"]), []).append(test)
    if all(
        len({r for t in g for r in (t["run_a"], t["run_b"])}) <= leaderboard.ALL_PAIRS_UP_TO
        for g in groups.values()
    ):
        return tests, False
    runs = sorted({int(r) for t in tests for r in (t["run_a"], t["run_b"])})
    means = {
        (run, rule): mean
        for run, rule, mean in conn.execute(
            "SELECT run_id, rule, avg(score) FROM units WHERE run_id IN (SELECT value FROM json_each(?)) "
            "GROUP BY run_id, rule",
            (json.dumps(runs),),
        )
    }
    kept: set[int] = set()
    left_out = False
    for (_, _, rule), group in groups.items():
        label = {t[f"run_{s}"]: t[s] for t in group for s in "ab"}
        ranked = sorted(
            label, key=lambda run: (means.get((run, rule)) is None, -(means.get((run, rule)) or 0.0))
        )
        names = [label[run] for run in ranked]
        chosen, opened = (
            leaderboard.rule_pairs(names, baselines),
            set(leaderboard.open_runs(names, baselines)),
        )
        printed = [t for t in group if frozenset((t["a"], t["b"])) in chosen]
        kept |= {t["pair_id"] for t in printed if {t["a"], t["b"]} <= opened}
        left_out = left_out or len(opened) < len(names)
    return [t for t in tests if t["pair_id"] in kept], left_out


def _pair_counts(conn: sqlite3.Connection, tests: list[dict[str, Any]]) -> dict[int, dict[str, int]]:
    """Return ``n``, ``a_better``, ``b_better`` of each paired test of ``tests`` (by ``pair_id``):
    its two runs' shared units under its rule, those where a scored more and b was not censored,
    and the reverse (the ``paired`` view's counts). Each run's units are read once per rule (a run
    is in a few tests: one read each, not a join per test) and compared as arrays."""
    lists: dict[tuple[str, ...], int] = {}  # each distinct list of units once (a set's runs share one)
    scores: dict[tuple[int, str], tuple[int, np.ndarray, np.ndarray]] = {}
    for run, rule in sorted({(int(t[f"run_{s}"]), t["rule"]) for t in tests for s in "ab"}):
        rows = conn.execute(
            "SELECT unit, score, censored FROM units WHERE run_id = ? AND rule = ? ORDER BY unit", (run, rule)
        ).fetchall()
        units = lists.setdefault(tuple(r[0] for r in rows), len(lists))
        scores[run, rule] = (
            units,
            np.array([r[1] for r in rows], float),
            np.array([r[2] for r in rows], bool),
        )
    named = {i: units for units, i in lists.items()}
    found = {}
    for test in tests:
        (units_a, x, x_censored), (units_b, y, y_censored) = (
            scores[int(test[f"run_{s}"]), test["rule"]] for s in "ab"
        )
        if units_a != units_b:  # other units: the shared ones, matched by name
            at_b = {unit: i for i, unit in enumerate(named[units_b])}
            shared = [(i, at_b[unit]) for i, unit in enumerate(named[units_a]) if unit in at_b]
            in_a, in_b = [i for i, _ in shared], [j for _, j in shared]
            x, x_censored, y, y_censored = x[in_a], x_censored[in_a], y[in_b], y_censored[in_b]
        found[int(test["pair_id"])] = {
            "n": len(x),
            "a_better": int(((x > y) & ~y_censored).sum()),
            "b_better": int(((y > x) & ~x_censored).sum()),
        }
    return found


def failure_examples(
    conn: sqlite3.Connection, files: list[str], per_run: int = 3, baselines: frozenset[str] = frozenset()
) -> tuple[pd.DataFrame, int]:
    """Return the first ``per_run`` failures (``failures`` query, first by unit) of the runs of
    ``files`` each set shows open, with the run's label, in run order, and how many runs were
    left out: a set's every run up to OPEN_RUNS runs that are not ``baselines``, else its
    OPEN_RUNS most accurate (``run_counts``) and the baselines, as its headline opens its best
    (``leaderboard.open_runs``): a report of a hundred runs reads a few runs' failures, not all."""
    marks = ", ".join("?" * len(files))
    runs = conn.execute(
        "SELECT r.run_id, r.label, r.set_id, c.correct_pct FROM runs r LEFT JOIN run_counts c USING (run_id) "
        f"WHERE r.results_file IN ({marks}) ORDER BY r.run_id",
        files,
    ).fetchall()
    kept = set()
    for set_id in dict.fromkeys(run[2] for run in runs):
        mine = sorted((r for r in runs if r[2] == set_id), key=lambda r: (r[3] is None, -(r[3] or 0.0)))
        shown = set(leaderboard.open_runs([r[1] for r in mine], baselines))
        kept |= {r[0] for r in mine if r[1] in shown}
    frames = [
        _failures(conn, run_id, per_run).assign(run=label) for run_id, label, *_ in runs if run_id in kept
    ]
    found = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return found, len(runs) - len(kept)


def _failures(conn: sqlite3.Connection, run_id: int, limit: int) -> pd.DataFrame:
    """Return the first ``limit`` failures of ``run_id`` by unit (the ``failures`` query's first
    rows, with the columns the report shows), found by ``FIRST_FAILURES``."""
    return pd.read_sql_query(FIRST_FAILURES, conn, params={"run": run_id, "limit": int(limit)})


# the first :limit failures of run :run by unit, as the ``failures`` query orders them (unit, Key,
# turn; a draw's order among draws as its): the set's items walked in unit order (index
# ``items_unit``), each item's answers looked up (``answers_key``), stopped at :limit, so that a
# run's every wrong answer is neither sorted nor counted (``queries.FAILURES`` counts them, for its
# pages); every answer scored has its item (scoring writes the items its records describe)
FIRST_FAILURES = f"""
WITH wrong AS (
  SELECT a.answer_id, i.unit FROM runs r0 JOIN items i ON i.set_id = r0.set_id
  CROSS JOIN answers a ON a.run_id = r0.run_id AND a.Key = i.Key
  WHERE r0.run_id = CAST(:run AS INTEGER) AND a.scored AND a.correct = 0
  ORDER BY i.unit, i.Key, a.turn, a.draw LIMIT CAST(:limit AS INTEGER)
)
SELECT w.unit, a.Key, a.turn, coalesce(a.expected, i.gold) AS gold, a.answer, y.text AS reply,
  coalesce(q.text, p.text) AS prompt,
  (SELECT g.thumbnail FROM images g WHERE g.digest = i.image AND {queries.SHOWN_PICTURES.format(r="r0")})
    AS picture
FROM wrong w JOIN answers a ON a.answer_id = w.answer_id JOIN runs r0 ON r0.run_id = a.run_id
JOIN items i ON i.set_id = r0.set_id AND i.Key = a.Key
LEFT JOIN texts q ON q.text_id = a.question LEFT JOIN texts p ON p.text_id = i.prompt
LEFT JOIN texts y ON y.text_id = a.reply
ORDER BY w.unit, a.Key, a.turn, a.draw"""
