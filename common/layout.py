"""How the report lays its parts out, the same in Markdown (``common.render``) and in HTML
(``common.html_page``).

The page has one part per suite (``suite_parts``), whatever number of sets and models it holds:
first any failed validity check (``checks_failed``: which check, which task, what to do), then
what the suite measures (said once, folded), the notes, one headline table with a row per run
and a column per set (``suite_table``: the suite's main measure with its interval, from each
section's ``headline``), the suite's first figure with the runs that rest on few units named
under it, then each set's whole section folded. A suite whose sections carry no headline is
shown section by section as below.

Both formats lay a section out the same way (``layout``); the provenance's long tables (models,
inputs, configs) are folded under its first sentence. A section whose suite marks its
headline (``Section.headline_tables``) opens with that compact comparison of the runs and its
main figure; the paper's table, the detail tables and the other figures follow folded
(``<details>``: in the page, and in the Markdown, which GitHub renders the same way). Under the
table of paired tests (``Section.paired_table``) come a few examples of each test's discordant
units, and at the end of the section a few failures of each run (``section["examples"]``, from
the results database: ``common.examples``); their cells are model text, escaped in both formats.
A section that marks no headline is shown whole, as before: paper, tables, figures.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from common import leaderboard
from common.provenance import (
    BUDGET_FILES,
    no_token_runs,
    token_budget_lines,
    token_budget_table,
)
from common.report import FEW, PAPER_TITLE, summary_lines

TITLE = "Grounded reasoning benchmarks: report"
ABOUT_SUMMARY = "What it measures and how it is scored"
SUMMARY_FOLDED = "Every set's summary, as make all prints it (the numbers of the suites' tables below)"
SET_SUMMARY = "every table and figure, paired tests, examples"
OPEN_NOTES = 2  # a suite's notes are shown open up to this many, else folded


@dataclass
class Block:
    """One part of a section as shown: a table, a figure or a group of example tables."""

    kind: str  # "table" | "figure" | "examples"
    # a flat table with its title, a figure record, or examples: {"summary", "tables", "children"},
    # children being examples too (the paired tests' examples, one group under the paired table)
    content: dict[str, Any]
    folded: bool  # inside <details>


def layout(section: dict[str, Any]) -> list[Block]:
    """Return the parts of a section record in the order shown, each open or folded (module
    docstring). ``section`` is not modified."""
    tables, figures = section["tables"], section["figures"]
    headline = section.get("headline_tables")
    paper = [{"title": PAPER_TITLE, **section["paper"]}] if section["paper"] else []
    examples = section.get("examples") or {}
    if headline is None:
        parts = [Block("table", t, False) for t in [*paper, *tables]]
        parts += [Block("figure", f, False) for f in figures]
    else:
        parts = [Block("table", t, False) for t in tables[:headline]]
        parts += [Block("figure", f, False) for f in figures[:1]]
        parts += [Block("table", t, True) for t in [*paper, *tables[headline:]]]
        parts += [Block("figure", f, True) for f in figures[1:]]
    at = next(
        (i + 1 for i, b in enumerate(parts) if b.content.get("title") == section.get("paired_table")), None
    )
    pairs = examples.get("pairs", [])
    tests = "the paired test" if len(pairs) == 1 else f"the {len(pairs)} paired tests"
    which = f", {examples['pairs_note']}" if examples.get("pairs_note") else ""
    summary = f"Examples behind {tests}{which}: a few units where each run did better"
    group = [Block("examples", {"summary": summary, "tables": [], "children": pairs}, True)] if pairs else []
    parts = parts[:at] + group + parts[at:] if at is not None else parts + group
    return parts + ([Block("examples", examples["failures"], True)] if examples.get("failures") else [])


@dataclass
class SuitePart:
    """One suite as the page shows it: its sections (one per set, or one for all its sets), and
    the parts shown open at its top."""

    title: str  # "Canvas", "Blocks world": the sections' titles before ":"
    sections: list[dict[str, Any]]
    table: dict[str, Any] | None  # the headline table (``suite_table``); None: sections shown whole
    rest: dict[str, Any] | None  # its other runs, folded under it (``common.leaderboard``), or None
    figure: dict[str, Any] | None  # the suite's first figure
    few: str  # the runs resting on few units (under the figure), or ""


def suite_parts(sections: Sequence[dict[str, Any]]) -> list[SuitePart]:
    """Return the sections grouped by suite, in the order their suites first appear."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for section in sections:
        groups.setdefault(section["suite"], []).append(section)
    parts = []
    for group in groups.values():
        figures = [f for s in group for f in s["figures"]]
        table, rest = suite_tables(group)
        parts.append(
            SuitePart(
                title=group[0]["title"].split(":")[0],
                sections=group,
                table=table,
                rest=rest,
                figure=figures[0] if figures and table else None,
                few=few_line(group) if table else "",
            )
        )
    return parts


def suite_table(sections: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """Return a suite's headline table from its sections' ``headline`` cells: a row per run,
    sorted by the measure (``leaderboard.sort_rows``: the first set's value, best first), a
    column per set, "-" where a run has no results on a set; titled with the measure. None when
    no section has a headline."""
    heads = [s["headline"] for s in sections if s.get("headline")]
    if not heads:
        return None
    runs: dict[str, dict[str, str]] = {}
    sets: dict[str, None] = {}
    for head in heads:
        for run, set_name, cell, _ in head["cells"]:
            runs.setdefault(run, {})[set_name] = cell
            sets[set_name] = None
    rows = leaderboard.sort_rows(
        [[run, *(cells.get(name, "-") for name in sets)] for run, cells in runs.items()]
    )
    title = f"{heads[0]['measure']}: a row per run, best first, a column per set"
    return {"title": title, "columns": ["run", *sets], "rows": rows, "untrusted": True, "headline": True}


def suite_tables(
    sections: Sequence[dict[str, Any]],
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Return a suite's headline table (``suite_table``) as shown open, and the table of its other
    runs, folded under it (``leaderboard.split_rows``: the best runs and the baselines open), or
    None when every run is open."""
    table = suite_table(sections)
    if table is None:
        return None, None
    shown, rest = leaderboard.split_rows(table["rows"], leaderboard.baseline_names(sections[0]["suite"]))
    if not rest:
        return table, None
    best = leaderboard.OPEN_RUNS
    title = f"The other {len(rest)} runs, best first (open above: the best {best} and the baselines)"
    return {**table, "rows": shown}, {**table, "title": title, "rows": rest, "headline": False}


def few_line(sections: Sequence[dict[str, Any]]) -> str:
    """Return the line under a suite's figure saying which cells rest on fewer than FEW units
    (their intervals are wide or absent): per set and number of units, how many runs; or ""."""
    few: dict[tuple[str, int], int] = {}
    for s in sections:
        for _, set_name, _, n in (s.get("headline") or {}).get("cells", []):
            if n < FEW:
                few[(set_name, n)] = few.get((set_name, n), 0) + 1
    if not few:
        return ""
    unit = next(s["headline"]["unit"] for s in sections if s.get("headline"))
    parts = [
        f"{set_name}, {runs} run{'s' * (runs != 1)} on {n:,} {unit}{'s' * (n != 1)}"
        for (set_name, n), runs in few.items()
    ]
    return f"Cells resting on fewer than {FEW} {unit}s (wide intervals, or none): " + "; ".join(parts) + "."


def set_blocks(section: dict[str, Any], part: SuitePart) -> list[Block]:
    """Return a set's blocks as folded under its suite: its ``layout``, all folded, without the
    figure the suite shows open at its top (embedded once)."""
    return [
        Block(b.kind, b.content, True)
        for b in layout(section)
        if not (b.kind == "figure" and b.content == part.figure)
    ]


def about_parts(about: str) -> tuple[str, str]:
    """Return a suite's introduction as its first sentence (shown) and the rest (folded)."""
    text = " ".join(about.split())
    match = re.search(r"(?<=[.:])\s+(?=[A-Z*(])", text)
    return (text[: match.start()], text[match.end() :]) if match else (text, "")


def suite_checks(sections: Sequence[dict[str, Any]]) -> list[str]:
    """Return what a suite's sections say their validity checks ran on (``Section.checks``), each
    line once, prefixed by its set where the sets' lines differ."""
    lines: dict[str, None] = {}
    several = len({tuple(s.get("checks") or []) for s in sections}) > 1
    for s in sections:
        where = f"{s['title'].split(':', 1)[1].strip()}: " if several and ":" in s["title"] else ""
        lines.update({f"{where}{line}": None for line in s.get("checks") or []})
    return list(lines)


def suite_notes(sections: Sequence[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """Return a suite's failed validity checks (each section's ``failed`` and ``missed``: what opens
    the suite) and its other notes (folded), each said once and prefixed by its set when the suite
    has several sections."""
    failed: dict[str, None] = {}
    notes: dict[str, None] = {}
    for s in sections:
        where = f"{s['title'].split(':', 1)[1].strip()}: " if len(sections) > 1 and ":" in s["title"] else ""
        failed.update({f"{where}{line}": None for line in checks_failed(s)})
        notes.update({f"{where}{line}": None for line in s["notes"]})
    return list(failed), list(notes)


def checks_failed(section: dict[str, Any]) -> list[str]:
    """Return a section record's validity checks that failed: its gates (``failed``), then the
    checks not met that did not stop its analysis (``missed``)."""
    return [*(section.get("failed") or []), *(section.get("missed") or [])]


def budget_files(prov: dict[str, Any]) -> Block:
    """Return the token budget's table of every results file, folded under the table by suite."""
    files = token_budget_table(prov) or {"columns": [], "rows": []}
    return Block("table", {"title": BUDGET_FILES, **files, "untrusted": True}, True)


def top_lines(sections: Sequence[dict[str, Any]], prov: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Return the summary at the top of the report: the lines shown (validity checks that failed,
    replies cut at the token limit, the one line naming the runs that report no tokens) and the
    lines folded (every section's summary, as `make all` prints it: the suites' tables below
    show the same numbers)."""
    shown = [line for s in sections for line in checks_failed(s)] + token_budget_lines(prov)
    shown += [line] if (line := no_token_runs(prov)) else []
    return shown, summary_lines(sections, per_section=99)
