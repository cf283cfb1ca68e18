"""How the report shows a leaderboard's worth of runs: headlines sorted and folded, paired tests chosen.

- Each suite's headline table (``common.layout.suite_table``) is sorted by its main measure, best
  first (``sort_rows``): by the first set's cell, then the next set's; a run without a value on a
  set comes after those with one. With more than OPEN_RUNS runs, the best OPEN_RUNS and every
  baseline (a built-in model of the suite: ``baseline_names``) stay open, the rest is folded
  under them (``split_rows``).
- The paired tests the report prints (``choose_pairs``): every pair while a group of runs (a set,
  or a set's view) has at most ALL_PAIRS_UP_TO runs; past that, each run against the run ranked
  next below it and against the best baseline (the top-ranked run when the group has none),
  ranked by the section's headline measure: at most 2(N - 1) tests of N runs instead of
  N(N - 1)/2. Every pair stays a click away in the explorer (its ``disagreements`` query takes
  any two runs). The table's title states the rule and the correction: Bonferroni over the
  tests printed (p < 0.05 / k for a family-wise 5%); the p printed are unadjusted. The examples
  under the table are drawn for the tests printed only (``shown_pairs``, ``common.examples``).
"""

import functools
import itertools
import re
from collections.abc import Sequence
from typing import Any

from common import suites

OPEN_RUNS = 10  # runs of a headline shown open (besides the baselines); the rest folded
ALL_PAIRS_UP_TO = 8  # runs of a group up to which every pair is tested in the report
ALPHA = 0.05
_NUMBER = re.compile(r"\s*(-?\d+(?:\.\d+)?)")


def measure_of(cell: str) -> float | None:
    """Return the value a headline cell shows first (``"57.1 [45.0, 68.4]"``: 57.1), or None
    when it shows none (``"-"``, "no complete tuple yet")."""
    match = _NUMBER.match(str(cell))
    return float(match.group(1)) if match else None


@functools.cache
def baseline_names(suite: str) -> frozenset[str]:
    """Return the names of ``suite``'s built-in models (its ``BASELINES`` registry); empty for a
    suite that is not registered or has none."""
    try:
        found = suites.get(suite)
    except Exception:  # a saved section of a suite this checkout does not know: no baselines
        return frozenset()
    return frozenset(found.part("baselines")) if found.baselines else frozenset()


def is_baseline(run: str, names: frozenset[str]) -> bool:
    """Return whether a run named ``run`` in a table ("random", "random (basic)", "oracle (plan,
    paper)") is one of the built-in models ``names``."""
    return run.split(" (", 1)[0] in names


def sort_rows(rows: Sequence[list[str]]) -> list[list[str]]:
    """Return headline rows (run, then a cell per set) sorted by their first set's value, best
    first, then by the next set's; missing values last; ties in their order."""

    def key(row: list[str]) -> tuple[tuple[bool, float], ...]:
        values = [measure_of(cell) for cell in row[1:]]
        return tuple((v is None, -(v or 0.0)) for v in values)

    return sorted(rows, key=key)


def split_rows(rows: Sequence[list[str]], names: frozenset[str]) -> tuple[list[list[str]], list[list[str]]]:
    """Return sorted headline rows as (open, folded): the best OPEN_RUNS runs that are not
    baselines and every baseline, in their order, then the rest; nothing folded when the rest
    would be empty."""
    shown = _open([row[0] for row in rows], names)
    return [r for r, o in zip(rows, shown, strict=True) if o], [
        r for r, o in zip(rows, shown, strict=True) if not o
    ]


def open_runs(ranked: Sequence[str], names: frozenset[str]) -> list[str]:
    """Return the runs of ``ranked`` (best first) that a report shows open, as ``split_rows`` opens
    a headline's rows: the best OPEN_RUNS that are not baselines and every baseline, in their
    order (a figure of a hundred runs draws these; its tables keep every run)."""
    return [run for run, shown in zip(ranked, _open(ranked, names), strict=True) if shown]


def open_headline_runs(headline: dict[str, Any], suite: str) -> list[str] | None:
    """Return the runs a figure of ``suite`` draws, given its headline (``common.report.headline``):
    its open runs (``open_runs``: the best by the headline's first cell of each, and the
    baselines), best first; None when every run is open (a figure draws them all, as it would)."""
    ranking = _ranking({"headline": headline})
    drawn = open_runs(_ranked(list(ranking), ranking), baseline_names(suite))
    return drawn if len(drawn) < len(ranking) else None


def drawn_note(total: int, noun: str, measure: str) -> str:
    """Return what a figure that draws the open runs of ``total`` says of them: "the 10 best of
    <total> <noun> by <measure>, and the baselines"."""
    return f"the {OPEN_RUNS} best of {total} {noun} by {measure}, and the baselines"


def drawn_runs(headline: dict[str, Any], suite: str, measure: str) -> tuple[list[str] | None, str]:
    """Return the runs a figure of a set draws (``open_headline_runs``: None, every run) and what
    its caption adds to say so ("" when it draws every run, else "; the 10 best of ... by
    ``measure``, and the baselines"): for the figures whose caption names runs, not models."""
    drawn = open_headline_runs(headline, suite)
    note = "" if drawn is None else "; " + drawn_note(len(headline["cells"]), "runs", measure)
    return drawn, note


def _open(ranked: Sequence[str], names: frozenset[str]) -> list[bool]:
    """Return whether each run of ``ranked`` (best first) is shown open (``split_rows``)."""
    shown, models = [], 0
    for run in ranked:
        baseline = is_baseline(run, names)
        shown.append(baseline or models < OPEN_RUNS)
        models += not baseline and shown[-1]
    return shown


def _ranking(section: dict[str, Any]) -> dict[str, float | None]:
    """Return each run of a section's headline with its value (its first cell), in headline order."""
    found: dict[str, float | None] = {}
    for run, _, cell, _ in (section.get("headline") or {}).get("cells", []):
        found.setdefault(run, measure_of(cell))
    return found


def _ranked(runs: Sequence[str], ranking: dict[str, float | None]) -> list[str]:
    """Return ``runs`` best first by ``ranking`` (runs it lacks or without a value last, in order)."""
    value = {run: ranking.get(run) for run in runs}
    return sorted(runs, key=lambda run: (value[run] is None, -(value[run] or 0.0)))


def rule_pairs(ranked: Sequence[str], names: frozenset[str]) -> set[frozenset[str]]:
    """Return the pairs printed of a group of runs ranked best first: every pair up to
    ALL_PAIRS_UP_TO runs, else each run with the next ranked and with the best baseline (the
    first run when none is a baseline)."""
    if len(ranked) <= ALL_PAIRS_UP_TO:
        return {frozenset((a, b)) for i, a in enumerate(ranked) for b in ranked[i + 1 :]}
    anchor = next((run for run in ranked if is_baseline(run, names)), ranked[0])
    pairs = {frozenset(pair) for pair in itertools.pairwise(ranked)}
    return pairs | {frozenset((run, anchor)) for run in ranked if run != anchor}


def printed_rule(largest: int, tests: int, measure: str = "the headline measure") -> str:
    """Return what a paired table's title says of the tests it prints (``rule_pairs`` over groups
    of at most ``largest`` runs, ranked by ``measure``) and of their correction (Bonferroni over
    the ``tests`` printed)."""
    rule = (
        f"every pair (groups of at most {ALL_PAIRS_UP_TO} runs)"
        if largest <= ALL_PAIRS_UP_TO
        else f"every pair where a group has at most {ALL_PAIRS_UP_TO} runs, else each run against the "
        f"one ranked next by {measure} and against the best baseline (the explorer has every pair)"
    )
    correction = (
        f"p unadjusted; Bonferroni over the {tests} tests printed: p < {ALPHA / tests:.2g} is significant "
        f"at {ALPHA:.0%} family-wise"
        if tests
        else "no test"
    )
    return f"Printed: {rule}; {correction}"


def _p_columns(columns: Sequence[str]) -> int:
    """Return how many tests a row of a paired table holds (its p columns)."""
    return sum(1 for c in columns if c == "p" or c.endswith(" p"))


def choose_pairs(section: dict[str, Any]) -> dict[str, Any]:
    """Return a section record whose paired table (``paired_table``: rows with ``a`` and ``b``
    columns; the columns before ``a``, e.g. a view, make the groups) keeps the rows of
    ``rule_pairs`` and says so in its title, with ``shown_pairs`` for the examples (per row kept
    whose two runs are open in their group, ``open_runs``: the group's values, a, b; None when
    every pair is kept) and ``shown_pairs_partial`` (whether the examples leave printed tests out:
    EXAMPLES_NOTE says so); the record is not modified. A section without such a table is
    returned as it is."""
    title = section.get("paired_table")
    at = next((i for i, t in enumerate(section["tables"]) if t["title"] == title), None)
    if at is None or not {"a", "b"} <= set(section["tables"][at]["columns"]):
        return section
    table = section["tables"][at]
    columns = table["columns"]
    a, b = columns.index("a"), columns.index("b")
    groups: dict[tuple[str, ...], list[str]] = {}
    for row in table["rows"]:
        runs = groups.setdefault(tuple(row[:a]), [])
        runs += [run for run in (row[a], row[b]) if run not in runs]
    ranking, names = _ranking(section), baseline_names(section.get("suite", ""))
    chosen = {group: rule_pairs(_ranked(runs, ranking), names) for group, runs in groups.items()}
    rows = [row for row in table["rows"] if frozenset((row[a], row[b])) in chosen[tuple(row[:a])]]
    largest = max((len(runs) for runs in groups.values()), default=0)
    new_title = f"{title}. {printed_rule(largest, len(rows) * max(1, _p_columns(columns)))}"
    tables = list(section["tables"])
    tables[at] = {**table, "title": new_title, "rows": rows}
    shown = None
    if largest > ALL_PAIRS_UP_TO:  # examples: the printed tests between a group's open runs
        opened = {group: set(open_runs(_ranked(runs, ranking), names)) for group, runs in groups.items()}
        shown = [[*row[:a], row[a], row[b]] for row in rows if {row[a], row[b]} <= opened[tuple(row[:a])]]
    return {
        **section,
        "tables": tables,
        "paired_table": new_title,
        "shown_pairs": shown,
        "shown_pairs_partial": shown is not None and len(shown) < len(rows),
    }


# what the report's examples of the paired tests say when they are those of the open runs only
EXAMPLES_NOTE = (
    f"those printed between the best {OPEN_RUNS} runs and the baselines of each group (any other "
    "pair's units: the explorer's disagreements query)"
)
