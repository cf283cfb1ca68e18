"""Reading the results database: the scored rows of sets as frames (``read``: the input of every
analysis).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from common import suites
from common.dbfile import ANSWER_COLUMNS, LONG_TEXT_COLUMNS, TEXT_COLUMNS
from common.scored import Scored
from common.suite import SetRef


# ---- reading -----------------------------------------------------------------------------------
def read(conn: sqlite3.Connection, refs: Sequence[SetRef], texts: bool = False) -> Scored:
    """Return the scored rows of the sets ``refs`` (of one suite): runs, answers with the suite's
    rules as columns (and the reply, question and reasoning texts with ``texts``), items, units,
    pairs; runs in their order in the database (the order their files were first scored)."""
    suite = suites.get(refs[0].suite) if refs else None
    runs, items, pairs, where, params = read_runs(conn, refs, texts)
    order = {run_id: position for position, run_id in enumerate(runs["run_id"])}
    read = [c for c in TEXT_COLUMNS if texts or c not in LONG_TEXT_COLUMNS]  # the long ones when asked
    text_columns = ("" if texts else ", a.question AS question_id") + "".join(
        f", t_{c}.text AS {c}" for c in read
    )
    joins = "".join(f" LEFT JOIN texts t_{c} ON t_{c}.text_id = a.{c}" for c in read)
    plain = [c for c in ANSWER_COLUMNS if c not in TEXT_COLUMNS]
    answers = pd.read_sql_query(
        f"SELECT a.answer_id, a.run_id, {', '.join('a.' + c for c in plain)}{text_columns} FROM answers a "
        f"JOIN runs r USING (run_id) JOIN sets s USING (set_id){joins} WHERE {where} ORDER BY a.answer_id",
        conn,
        params=params,
    )
    answers = answers.iloc[
        np.lexsort((answers["answer_id"].to_numpy(), answers["run_id"].map(order).to_numpy()))
    ].reset_index(drop=True)
    if suite is not None and suite.rules:
        scores = pd.read_sql_query(
            f"SELECT c.answer_id, c.rule, c.value FROM scores c JOIN answers a USING (answer_id) "
            f"JOIN runs r USING (run_id) JOIN sets s USING (set_id) WHERE {where}",
            conn,
            params=params,
        )
        wide = scores.pivot(index="answer_id", columns="rule", values="value")
        for rule in suite.rules:
            answers[rule] = answers["answer_id"].map(wide[rule]) if rule in wide else float("nan")
    units = pd.read_sql_query(
        f"SELECT u.* FROM units u JOIN runs r USING (run_id) JOIN sets s USING (set_id) WHERE {where}",
        conn,
        params=params,
    )
    return Scored(runs=runs, answers=answers, items=items, units=units, pairs=pairs)


def read_runs(
    conn: sqlite3.Connection, refs: Sequence[SetRef], texts: bool = False
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, str, list[Any]]:
    """Return the runs, items (with their prompts when ``texts``) and pairs of the sets ``refs`` (of
    one suite) as ``read`` has them, and the SQL condition on ``s`` (sets) and ``r`` (runs) that
    selects their rows, with its parameters (for a reader of their other rows)."""
    names = [ref.name for ref in refs]
    marks = ", ".join("?" * len(names))
    where = f"s.suite = ? AND s.set_name IN ({marks})"
    params = [refs[0].suite if refs else "", *names]
    runs = pd.read_sql_query(
        f"SELECT r.*, s.suite, s.set_name FROM runs r JOIN sets s USING (set_id) WHERE {where} "
        "ORDER BY s.set_name, r.results_file",
        conn,
        params=params,
    )
    runs["notes"] = [json.loads(n) if isinstance(n, str) else [] for n in runs["notes"]]  # NULL: NaN or None
    runs["attributes"] = [json.loads(a) if isinstance(a, str) else {} for a in runs["attributes"]]
    items = pd.read_sql_query(
        f"SELECT s.set_name, i.Key, i.unit, i.task, i.size, i.variant, i.gold, i.fields, i.image"
        f"{', p.text AS prompt' if texts else ''} FROM items i JOIN sets s USING (set_id)"
        f"{' LEFT JOIN texts p ON p.text_id = i.prompt' if texts else ''} WHERE {where} "
        "ORDER BY s.set_name, i.position",
        conn,
        params=params,
    )
    pairs = pd.read_sql_query(
        f"SELECT s.set_name, p.run_a, p.run_b, p.rule FROM pairs p JOIN sets s USING (set_id) WHERE {where} "
        "ORDER BY p.pair_id",
        conn,
        params=params,
    )
    return runs, items, pairs, where, params
