"""The questions a reader asks the results database (``common.database``), in SQL: the canned
queries of the explorer (``make explore``: Datasette) and the examples of the report.

- ``disagreements`` (``:run_a``, ``:run_b``, ``:rule``): the units two runs disagree on, the
  discordant pairs of the exact paired test the report prints for them, each with one answer of
  each run side by side: the losing run's first answer that is wrong under the rule (preferring
  one the other run got right) and the winning run's answer to the same item and turn. Every
  row carries the counts (``discordant``, ``a_better``, ``b_better``);
- ``runs``: every run with its counts and the share right, one aggregate over the answers (where
  the explorer starts: each run's failures one click away);
- ``failures_by_group`` and ``failures`` (``:run``): a run's wrong answers by task, size and
  variant, and one by one, each with why it failed (``error``, ``detail``) and the reply;
- ``truncated_or_refused``: every answer cut at the token limit or refused by the server;
- ``paired_tests``: the report's paired tests recounted, with the run ids to pass on;
- and each suite's own (``Suite.queries``, in its report module): its headline recomputed from
  the rows.

``datasette_metadata`` writes them for Datasette; ``common.examples`` draws the report's few
examples with the ``disagreements`` and ``failures`` queries (first by unit, so the same every
time).
"""

import re
import sqlite3
from typing import Any

import pandas as pd

from common import suites

# an answer's score under a units rule: its value in ``scores`` when the suite keeps the rule there,
# else the headline rule ``correct``
RULE_SCORE = (
    "coalesce((SELECT value FROM scores c WHERE c.answer_id = {t}.answer_id AND c.rule = {rule}), "
    "{t}.correct)"
)


# an example shows its item's thumbnail when a run it shows was shown the picture (not beside
# the answers of text runs only, which never saw it); {r}: an alias of ``runs``
SHOWN_PICTURES = "coalesce({r}.modality, 'text') <> 'text'"
PAGE = 20  # rows per page of the queries that list answers (``:page``, blank: the first)
# a run as every query names it: model, prompting, set (and blocks' method and view, a picture
# run's modality), then its id to give the next query; {r}: an alias of ``runs``, {s}: of ``sets``
RUN_NAME = (
    "{r}.model || ' (' || {r}.prompting || coalesce(', ' || {r}.method, '') || ') on ' || {s}.set_name"
    " || coalesce(', view ' || {r}.view, '') || coalesce(', ' || nullif({r}.modality, 'text'), '')"
    " || ' [run ' || {r}.run_id || ']'"
)


def counted(suite: suites.Suite) -> str:
    """Return what one answer row of ``suite`` is (``Suite.answer_row``, else its unit), with the
    unit the report's statistics count when that is another (e.g. "trial (report: tuple)")."""
    unit = suite.unit.split()[0]
    row = suite.answer_row or unit
    return row if row.split()[0] == unit else f"{row} (report: {unit})"


def _counted_case() -> str:
    """Return the SQL naming what an answer row of each suite is (``counted``), by the suite's name
    (``{suite}``: the column holding it), from the suites' declarations."""
    cases = " ".join(f"WHEN {_quoted(s.name)} THEN {_quoted(counted(s))}" for s in suites.all_suites())
    return f"CASE {{suite}} {cases} ELSE {{suite}} END"


def _quoted(text: str) -> str:
    """Return ``text`` as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


COUNTED = _counted_case()  # what an answer row of each suite is, beside the unit the report counts


def run_name(runs: str = "r", sets: str = "s") -> str:
    """Return SQL naming a run (``RUN_NAME``) from the aliases of its ``runs`` and ``sets`` rows."""
    return RUN_NAME.format(r=runs, s=sets)


def _paged(order: str) -> str:
    """Return the ORDER BY ... LIMIT ... OFFSET of a paged query: ``:page`` (blank: 1) of PAGE rows."""
    return (
        f"ORDER BY {order} LIMIT {PAGE} "
        f"OFFSET {PAGE} * (max(coalesce(CAST(nullif(:page, '') AS INTEGER), 1), 1) - 1)"
    )


def disagreements_sql(per_cell: bool = False) -> str:
    """Return the SQL of the ``disagreements`` query: a page (``:page``, PAGE units) of the
    discordant units, first by cell and unit, each with the item, the gold answer and the two
    runs' answers side by side, the runs named (``RUN_NAME``), every row with the counts of every
    unit (``discordant``, ``a_better``, ``b_better``). With ``per_cell`` instead the first
    ``:per_cell`` units of each cell (a better, b better), without the counts: each cell walks the
    units in order and stops at :per_cell (the report's examples; their counts come from one query
    for every test). The discordant units come from ``units`` alone (its key: run, rule, unit);
    the answers shown are looked up by subqueries in the outer SELECT, run only for the rows
    fetched (a page)."""
    rule = "(SELECT rule FROM settings)"
    loser_score, winner_score = RULE_SCORE.format(rule=rule, t="l"), RULE_SCORE.format(rule=rule, t="w")
    cells = (
        "SELECT * FROM (SELECT * FROM discordant WHERE better = 'a' ORDER BY unit "
        "LIMIT CAST(:per_cell AS INTEGER)) "
        "UNION ALL SELECT * FROM (SELECT * FROM discordant WHERE better = 'b' ORDER BY unit "
        "LIMIT CAST(:per_cell AS INTEGER))"
        if per_cell
        else f"SELECT * FROM discordant {_paged('better, unit')}"
    )
    # CROSS JOIN: from the unit's few items, not from every answer of the run
    lost = f"""(SELECT l.answer_id FROM items i
      CROSS JOIN answers l ON l.run_id = c.loser AND l.Key = i.Key AND l.draw = 0
      LEFT JOIN answers w ON w.run_id = c.winner AND w.Key = l.Key AND w.draw = 0 AND w.turn = l.turn
      WHERE i.set_id = c.set_id AND i.unit = c.unit AND l.scored AND {loser_score} = 0
      ORDER BY {winner_score} DESC NULLS LAST, l.Key, l.turn LIMIT 1)"""
    # per cell: not materialized (each cell's LIMIT stops the walk), no counts
    materialized = "NOT MATERIALIZED " if per_cell else ""
    totals = (
        "SELECT NULL AS discordant, NULL AS a_better, NULL AS b_better"
        if per_cell
        else "SELECT count(*) AS discordant, coalesce(sum(better = 'a'), 0) AS a_better, "
        "coalesce(sum(better = 'b'), 0) AS b_better FROM discordant"
    )
    return f"""
WITH settings AS (
  SELECT CAST(:run_a AS INTEGER) AS run_a, CAST(:run_b AS INTEGER) AS run_b,
    coalesce(nullif(:rule, ''), (SELECT min(rule) FROM units WHERE run_id = CAST(:run_a AS INTEGER))) AS rule
), discordant AS {materialized}(
  SELECT x.unit, x.task, x.size, x.score AS score_a, y.score AS score_b,
    CASE WHEN x.score > y.score AND NOT y.censored THEN 'a' ELSE 'b' END AS better
  FROM units x JOIN units y ON y.run_id = CAST(:run_b AS INTEGER) AND y.rule = x.rule AND y.unit = x.unit
  WHERE x.run_id = CAST(:run_a AS INTEGER) AND x.rule = (SELECT rule FROM settings)
    AND ((x.score > y.score AND NOT y.censored) OR (y.score > x.score AND NOT x.censored))
), totals AS ({totals}
), cells AS ({cells}
), shown AS (
  SELECT c.*, s.run_a, s.run_b, (SELECT set_id FROM runs WHERE run_id = s.run_a) AS set_id,
    CASE c.better WHEN 'a' THEN s.run_b ELSE s.run_a END AS loser,
    CASE c.better WHEN 'a' THEN s.run_a ELSE s.run_b END AS winner
  FROM cells c, settings s
), picked AS (
  SELECT c.*, {lost} AS lost_row FROM shown c
)
SELECT p.unit, coalesce(q.text, pt.text) AS prompt,
  coalesce(l.expected, i.gold) AS gold, a.answer AS answer_a, ya.text AS reply_a,
  b.answer AS answer_b, yb.text AS reply_b,
  p.better, p.task || coalesce(' / ' || p.size, '') AS task_size, l.Key, l.turn,
  (SELECT g.thumbnail FROM images g WHERE g.digest = i.image AND EXISTS (
    SELECT 1 FROM runs r WHERE r.run_id IN (p.run_a, p.run_b) AND {SHOWN_PICTURES.format(r="r")})) AS picture,
  (SELECT 'a: ' || {run_name("x", "xs")} || '; b: ' || {run_name("y", "ys")}
   FROM runs x JOIN sets xs ON xs.set_id = x.set_id, runs y JOIN sets ys ON ys.set_id = y.set_id
   WHERE x.run_id = p.run_a AND y.run_id = p.run_b) AS runs,
  t.discordant, t.a_better, t.b_better
FROM picked p, totals t JOIN answers l ON l.answer_id = p.lost_row
JOIN items i ON i.set_id = p.set_id AND i.Key = l.Key
LEFT JOIN answers w ON w.answer_id = coalesce(
  (SELECT w.answer_id FROM answers w
   WHERE w.run_id = p.winner AND w.Key = l.Key AND w.draw = 0 AND w.turn = l.turn),
  (SELECT w.answer_id FROM items j
   CROSS JOIN answers w ON w.run_id = p.winner AND w.Key = j.Key AND w.draw = 0
   WHERE j.set_id = p.set_id AND j.unit = p.unit AND w.scored ORDER BY w.Key, w.turn LIMIT 1))
LEFT JOIN answers a ON a.answer_id = CASE p.better WHEN 'a' THEN w.answer_id ELSE l.answer_id END
LEFT JOIN answers b ON b.answer_id = CASE p.better WHEN 'b' THEN w.answer_id ELSE l.answer_id END
LEFT JOIN texts q ON q.text_id = l.question LEFT JOIN texts pt ON pt.text_id = i.prompt
LEFT JOIN texts ya ON ya.text_id = a.reply LEFT JOIN texts yb ON yb.text_id = b.reply
ORDER BY p.better, p.unit"""


RUNS = f"""
SELECT r.run_id, r.model, r.prompting || coalesce(', ' || r.method, '') AS prompting,
  s.suite || '/' || s.set_name || coalesce(', view ' || r.view, '')
    || coalesce(', ' || nullif(r.modality, 'text'), '') AS "set",
  coalesce(a.answers, 0) AS answers, coalesce(a.failures, 0) AS failures, coalesce(a.refused, 0) AS refused,
  coalesce(a.truncated, 0) AS truncated, a.correct_pct, {COUNTED.format(suite="s.suite")} AS counted
FROM runs r JOIN sets s USING (set_id)
LEFT JOIN run_counts a USING (run_id)  -- counted when the run was scored: no answer is read here
ORDER BY s.suite, s.set_name, r.model, r.run_id"""

FAILURES_BY_GROUP = f"""
SELECT a.run_id AS run, (SELECT {run_name("r", "s")} FROM runs r JOIN sets s USING (set_id)
  WHERE r.run_id = a.run_id) AS run_name, i.task, i.size, i.variant,
  (SELECT {COUNTED.format(suite="s.suite")} FROM runs r JOIN sets s USING (set_id) WHERE r.run_id = a.run_id)
    AS counted, count(*) AS answers, sum(a.correct = 0) AS failures,
  round(100.0 * avg(a.correct), 1) AS correct_pct
FROM answers a JOIN runs r0 ON r0.run_id = a.run_id
LEFT JOIN items i ON i.set_id = r0.set_id AND i.Key = a.Key
WHERE a.run_id = CAST(:run AS INTEGER) AND a.scored
GROUP BY i.task, i.size, i.variant ORDER BY i.task, i.size, i.variant"""

FAILURES = f"""
WITH wrong AS (  -- keys only: the page is picked before any text is read
  SELECT a.answer_id, i.unit, a.Key, a.turn, count(*) OVER () AS failures
  FROM answers a JOIN runs r0 ON r0.run_id = a.run_id
  LEFT JOIN items i ON i.set_id = r0.set_id AND i.Key = a.Key
  WHERE a.run_id = CAST(:run AS INTEGER) AND a.scored AND a.correct = 0
  {_paged("i.unit, a.Key, a.turn")}
)
SELECT w.unit, a.Key, a.turn, i.task, i.size, i.variant, coalesce(a.expected, i.gold) AS gold, a.answer,
  a.error, d.text AS detail, y.text AS reply, coalesce(q.text, p.text) AS prompt, a.refused, a.truncated,
  (SELECT g.thumbnail FROM images g WHERE g.digest = i.image AND {SHOWN_PICTURES.format(r="r0")}) AS picture,
  (SELECT {run_name("r", "s")} FROM runs r JOIN sets s USING (set_id) WHERE r.run_id = a.run_id) AS run_name,
  w.failures
FROM wrong w JOIN answers a ON a.answer_id = w.answer_id JOIN runs r0 ON r0.run_id = a.run_id
LEFT JOIN items i ON i.set_id = r0.set_id AND i.Key = a.Key
LEFT JOIN texts q ON q.text_id = a.question LEFT JOIN texts p ON p.text_id = i.prompt
LEFT JOIN texts y ON y.text_id = a.reply LEFT JOIN texts d ON d.text_id = a.detail
ORDER BY w.unit, a.Key, a.turn"""

TRUNCATED_OR_REFUSED = f"""
SELECT count(*) OVER () AS flagged, sum(a.truncated) OVER () AS all_cut,
  sum(a.refused IS NOT NULL) OVER () AS all_refused, s.suite, a.run_id, {run_name("r", "s")} AS run_name,
  a.Key, a.turn, a.truncated, a.finish_reason, a.refused, a.error,
  a.completion_tokens || coalesce(' (' || a.reasoning_tokens || ' reasoning)', '') AS tokens, y.text AS reply
FROM answers a JOIN runs r USING (run_id) JOIN sets s USING (set_id) LEFT JOIN texts y ON y.text_id = a.reply
WHERE a.truncated > 0 OR a.refused IS NOT NULL  -- as the partial index answers_flagged has it
{_paged("a.run_id, a.Key, a.turn")}"""

PAIRED_TESTS = f"""
SELECT p.run_a, p.run_b, p.rule, s.suite, s.set_name,
  (SELECT u.unit FROM suites u WHERE u.suite = s.suite) AS counted, count(*) AS n,
  sum(x.score > y.score AND NOT y.censored) AS a_better,
  sum(y.score > x.score AND NOT x.censored) AS b_better,
  {run_name("ra", "s")} AS a, {run_name("rb", "s")} AS b, (SELECT count(*) FROM pairs) AS tests
FROM pairs p JOIN sets s USING (set_id)
JOIN runs ra ON ra.run_id = p.run_a JOIN runs rb ON rb.run_id = p.run_b
JOIN units x ON x.run_id = p.run_a AND x.rule = p.rule
JOIN units y ON y.run_id = p.run_b AND y.rule = p.rule AND y.unit = x.unit
WHERE p.pair_id IN (SELECT pair_id FROM pairs {_paged("pair_id")})  -- the page's tests only are counted
GROUP BY p.pair_id ORDER BY p.pair_id"""

PICTURED_ANSWERS = f"""
WITH shown AS (  -- keys only, from the items that have a picture: the page before any text
  SELECT a.answer_id, i.unit, i.set_id
  FROM items i JOIN runs x ON x.set_id = i.set_id
  JOIN answers a ON a.run_id = x.run_id AND a.Key = i.Key AND a.draw = 0
  WHERE i.set_id IN (SELECT set_id FROM runs WHERE modality <> 'text') AND i.image IS NOT NULL
    AND a.scored AND (:run = '' OR x.run_id = CAST(:run AS INTEGER))
  {_paged("i.unit, a.Key, a.run_id")}
)
SELECT a.run_id, {run_name("x", "s")} AS run_name, x.modality, a.Key, i.unit, i.task, g.thumbnail AS picture,
  a.answer, coalesce(a.expected, i.gold) AS gold, a.correct, y.text AS reply
FROM shown w JOIN answers a ON a.answer_id = w.answer_id JOIN runs x USING (run_id)
JOIN sets s ON s.set_id = x.set_id
JOIN items i ON i.set_id = x.set_id AND i.Key = a.Key JOIN images g ON g.digest = i.image
LEFT JOIN texts y ON y.text_id = a.reply
ORDER BY i.unit, a.Key, a.run_id"""


# what the descriptions say a unit and an answer are in each suite, from the suites' declarations
UNITS = "; ".join(f"{s.title}: {s.unit}" for s in suites.all_suites())
ANSWERS = "; ".join(f"{s.title}: {counted(s).partition(' (')[0]}" for s in suites.all_suites())
# name -> (title, description, SQL): the explorer's canned queries
PAGED = f"{PAGE} rows a page: give page (blank: 1) for the next ones; a long text opens on a click."
QUERIES: dict[str, tuple[str, str, str]] = {
    "runs": (
        "Every run: start here",
        (
            "A row per run (a results file): its model, prompting (and method, where a suite has "
            "them), set (and view, modality), its answers (counted: a trial, a problem of a view, a "
            "turn), how many are wrong (failures: a click lists them, each with its reason and "
            "reply), refused by the server or cut at the token limit, and the share right "
            "(correct_pct, per answer: the report's tables count units, so a rate here can differ). "
            "run_id is what the other queries take as run."
        ),
        RUNS,
    ),
    "disagreements": (
        "Items two runs disagree on",
        (
            f"Unit: the report's ({UNITS}). The units where run_a and run_b differ: the discordant "
            "pairs of the report's exact paired test, a's wins first. Give two run ids (see "
            "paired_tests) and a rule (blank: the suite's first; paired_tests names each test's). Each row: "
            "the item, its gold answer, then each run's answer and reply side by side; the runs are "
            f"named in the runs column; every row carries the counts. {PAGED}"
        ),
        disagreements_sql(),
    ),
    "paired_tests": (
        "The report's paired tests",
        (
            "Every exact paired test the report prints, recounted from the units (counted: what a "
            "unit is): n shared units, a_better, b_better. run_a and run_b, first, are the ids to "
            f"give the disagreements query; a and b name the runs; tests: how many in all. {PAGED}"
        ),
        PAIRED_TESTS,
    ),
    "failures_by_group": (
        "A run's failures by task, size and variant",
        (
            f"Counted per answer (counted: {ANSWERS}), not per unit as the report's tables ({UNITS}), "
            "so a rate here can differ from the report's. Scored answers "
            "and wrong ones of one run (run: its id, see paired_tests or runs), by task, size "
            "(problem size, number of shapes, optimal plan length) and variant."
        ),
        FAILURES_BY_GROUP,
    ),
    "failures": (
        "A run's failures",
        (
            "Every wrong scored answer (a trial, a problem of a view, a turn) of one run (run: its "
            "run_id, see runs), by unit: the gold answer, the answer read, why it failed (error: the "
            "server's or the scorer's message; detail: what the suite's scorer found, e.g. a plan's "
            f"first error), the reply, the prompt. {PAGED}"
        ),
        FAILURES,
    ),
    "pictured_answers": (
        "Answers beside their item's picture",
        (
            "The answers (trials, problems of a view) to items of sets shown as pictures (a set "
            "config's modality), each beside its item's thumbnail, every modality's run of an item "
            f"together; give a run id (blank: all). {PAGED}"
        ),
        PICTURED_ANSWERS,
    ),
    "truncated_or_refused": (
        "Truncated or refused answers",
        (
            "Answers (trials, problems of a view, turns) with a reply cut at the token limit "
            "(finish_reason length) or refused by the server, with the server's error and the "
            "completion's tokens (reasoning ones among them); flagged, all_cut and all_refused count "
            f"every one. {PAGED}"
        ),
        TRUNCATED_OR_REFUSED,
    ),
}


def all_queries() -> dict[str, tuple[str, str, str]]:
    """Return every canned query: the shared ones (``QUERIES``), then each suite's."""
    found = dict(QUERIES)
    for suite in suites.all_suites():
        if suite.queries:
            found.update(suite.part("queries"))
    return found


def run_query(conn: sqlite3.Connection, name: str, **params: Any) -> pd.DataFrame:
    """Return the result of the canned query ``name`` with ``params`` (as Datasette passes them: a
    parameter not given is blank, e.g. ``page``, the first page)."""
    sql = all_queries()[name][2]
    names = dict.fromkeys(re.findall(r"(?<![:\w]):(\w+)", sql))
    return pd.read_sql_query(sql, conn, params={n: params.get(n, "") for n in names})


def datasette_metadata(conn: sqlite3.Connection, database: str = "results") -> dict[str, Any]:
    """Return Datasette's metadata for the results database: its title, a link to the runs query
    (where the explorer starts) on its first page and the database's, the canned queries, and in
    the description of the disagreements query the first paired test's run ids as an example."""
    first = conn.execute("SELECT run_a, run_b, rule, a, b FROM paired LIMIT 1").fetchone()
    queries = {
        name: {"title": title, "description": about, "sql": sql.strip(), "hide_sql": True}
        for name, (title, about, sql) in all_queries().items()
    }
    if first:
        queries["disagreements"]["description"] += (
            f" Example: run_a={first[0]}, run_b={first[1]}, rule={first[2]} ({first[3]} vs {first[4]})."
        )
    start = (
        f'<a href="/{database}/runs">Start from the runs</a>: every run with its counts, a click from its '
        "failures, each with why it failed and the reply. Derived from the JSON-lines results files "
        "(the source of truth): docs/database.md."
    )
    return {
        "title": "Grounded reasoning benchmarks: every answer",
        "description_html": start,
        "databases": {database: {"description_html": start, "queries": queries}},
    }
