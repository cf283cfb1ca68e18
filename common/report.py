"""The one renderer of every suite's analysis: table cells, terminal text, the saved section.

A suite's analysis is a ``common.analysis.Section``; this module turns it into text, the same
for every suite:

- terminal text (``section_text``; what ``scripts/analyse_results.py`` prints): a banner with the
  section's heading, its notes, the paper's table if any, then every table under its title
  between 74-wide rules (the layout of the WorldSense release's script);
- the section's record (``section_record``: tables as rows of display strings), which
  ``scripts/analyse_results.py --section`` saves as JSON (with the SHA-256 of every input file)
  and ``scripts/build_report.py`` assembles into the report's Markdown and HTML
  (``common.render``) with the provenance (``common.provenance``).

Table cells are written by the suites with the helpers here, so that every suite shows an
interval as ``x [lo, hi]`` (``interval_text``), a p-value with two significant digits
(``p_text``) and an exact paired test as the same three columns (``paired_cells``).
"""

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from common import paths
from common.analysis import Section
from common.errors import DataError
from common.jsonl import sha256_file, write_json

# version of the saved section format (2: headline_tables, paired_table; 3: headline, failed; 4: missed)
SCHEMA = 4
WIDTH = 74  # of the banner and the rules, as in the WorldSense release's report
RULE = "-" * WIDTH
PAPER_TITLE = "Paper vs reproduced"


# ---- table cells --------------------------------------------------------------------------------
def interval_text(
    value: float, lo: float, hi: float, scale: float = 1.0, digits: int = 1, width: int = 0
) -> str:
    """Return ``"value [lo, hi]"``, each multiplied by ``scale`` with ``digits`` decimals (and
    right-aligned in ``width`` characters), or ``"-"`` for a missing value."""
    if value is None or pd.isna(value):
        return "-"

    def number(x: float) -> str:
        return f"{scale * x:{width}.{digits}f}"

    return f"{number(value)} [{number(lo)}, {number(hi)}]"


def p_text(p: float) -> str:
    """Return a p-value for display: two significant digits, "< 1e-300" when it underflowed to
    0, "-" when there is none (NaN)."""
    return "-" if pd.isna(p) else "< 1e-300" if p == 0 else f"{p:.2g}"


def paired_cells(tests: pd.DataFrame, prefix: str = "", label: str = "") -> dict[str, list[Any]]:
    """Return the display columns of exact paired tests (``common.stats.pairwise_exact_tests``
    columns, read as ``<prefix>a_better`` etc.): ``<label>a better``, ``<label>b better`` and
    ``<label>p`` (``p_text``)."""
    return {
        f"{label}a better": tests[f"{prefix}a_better"].tolist(),
        f"{label}b better": tests[f"{prefix}b_better"].tolist(),
        f"{label}p": [p_text(p) for p in tests[f"{prefix}p"]],
    }


FEW = 30  # units under which a headline cell says how few it rests on


def headline_cell(
    value: float,
    lo: float,
    hi: float,
    n: int,
    unit: str,
    scale: float = 100,
    digits: int = 1,
    bounds: tuple[float, float] | None = (0.0, 1.0),
) -> str:
    """Return one cell of a suite's headline table: ``"57.1 [45.0, 68.4]"``; with fewer than FEW
    units the count too (``"50.0 [9.5, 90.5], 2 tuples"``); without an interval where none can be
    computed (a single unit, none given, an empty one from few units, or one outside ``bounds``,
    the values a rate can take: a normal approximation on a handful of units)
    ``"50.0, 1 tuple: no interval"``; ``"-"`` without a value. A run resting on a handful of
    items is shown as such, never as a precise number."""
    if value is None or pd.isna(value):
        return "-"
    number = f"{scale * value:.{digits}f}"
    units = f"{n:,} {unit if n != 1 else unit.removesuffix('s')}"
    missing = n < 2 or lo is None or hi is None or pd.isna(lo) or pd.isna(hi) or (lo == hi and n < FEW)
    if missing or (bounds is not None and (lo < bounds[0] - 1e-9 or hi > bounds[1] + 1e-9)):
        return f"{number}, {units}: no interval"
    shown = f"{number} [{scale * lo:.{digits}f}, {scale * hi:.{digits}f}]"
    return f"{shown}, {units}" if n < FEW else shown


def headline(measure: str, unit: str, cells: Sequence[tuple[str, str, str, int]]) -> dict[str, Any]:
    """Return a section's part of its suite's headline table (``Section.headline``): what the
    cells measure, the unit they count, and one ``(run, set, cell, n)`` per run and set (the
    ``headline_cell`` and the units it rests on). ``common.render`` puts the sets of a suite side
    by side, a row per run."""
    return {"measure": measure, "unit": unit, "cells": [list(c) for c in cells]}


# ---- terminal text --------------------------------------------------------------------------------
def section_text(section: Section) -> str:
    """Return the terminal text of ``section``: a banner with its heading (default: the title in
    capitals), its notes, the paper's table if any, then every table under its title."""
    tables = [(PAPER_TITLE, section.paper)] if section.paper is not None else []
    return render_text(section.heading or section.title.upper(), [*tables, *section.tables], section.notes)


def render_text(heading: str, tables: Sequence[tuple[str, pd.DataFrame]], notes: Sequence[str] = ()) -> str:
    """Return a banner naming ``heading``, then a NOTES block when there are ``notes``, then each
    (title, table) between rules, the table as pandas prints it (trailing spaces removed)."""
    stars = "*" * WIDTH
    parts = [f"{stars}\n*\n*  {heading}\n*\n{stars}\n"]
    if notes:
        parts.append(f"{RULE}\n    NOTES\n{RULE}\n" + "".join(f"  {note}\n" for note in notes))
    for title, table in tables:
        rows = "\n".join(line.rstrip() for line in table.to_string().splitlines())
        parts.append(f"{RULE}\n    {title}\n{RULE}\n{rows}\n")
    return "\n".join(parts)


# ---- the section record: what is saved, and what Markdown and HTML are made of ---------------------
def section_record(section: Section) -> dict[str, Any]:
    """Return ``section`` as plain data: its texts, display tables as rows of strings (``_flat``),
    figure paths relative to the project root, and the terminal text. Its inputs are left to
    ``save_section`` (hashing them takes a while)."""
    return {
        "schema": SCHEMA,
        "suite": section.suite,
        "title": section.title,
        "about": section.about,
        "text": section_text(section),
        "summary": section.summary,
        "notes": section.notes,
        "tables": [{"title": title, **_flat(table)} for title, table in section.tables],
        "paper": _flat(section.paper) if section.paper is not None else None,
        "figures": [{"caption": caption, "path": paths.shown(figure)} for caption, figure in section.figures],
        "headline_tables": section.headline_tables,
        "paired_table": section.paired_table,
        "headline": section.headline,
        "failed": section.failed,
        "checks": section.checks,
        "missed": section.missed,
    }


def save_section(section: Section, path: str | Path, digests: dict[str, str] | None = None) -> None:
    """Write ``section_record(section)`` as JSON to ``path`` (atomically), with the SHA-256 and
    size of every input file: from ``digests`` (by ``paths.shown`` name: ``filehashes.digests``,
    which hashes a file once per content) where it has them, else hashed here."""
    known = digests or {}
    inputs = []
    for p in section.inputs:
        name = paths.shown(p)
        digest = known[name] if name in known else sha256_file(p)
        inputs.append({"path": name, "sha256": digest, "bytes": Path(p).stat().st_size})
    write_json(path, {**section_record(section), "inputs": inputs})


def load_section(path: str | Path) -> dict[str, Any]:
    """Return a saved section; raise DataError naming the file when it is not one."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise DataError(f"{path}: not a saved section ({exc})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise DataError(
            f"{path}: not a section saved by this version (schema {SCHEMA}); "
            "rebuild it with scripts/analyse_results.py --section"
        )
    return data


def _flat(table: pd.DataFrame) -> dict[str, Any]:
    """Return a display table as ``{"columns": [...], "rows": [[str, ...], ...]}``: named index
    levels become the first columns, multi-level column names are joined with " / ", empty
    cells (None, NaN) are ""."""
    flat = table.reset_index() if any(name is not None for name in table.index.names) else table
    columns = [" / ".join(map(str, c)).strip(" /") if isinstance(c, tuple) else str(c) for c in flat.columns]
    rows = [
        ["" if value is None or value != value else str(value) for value in row]
        for row in flat.itertuples(index=False)
    ]
    return {"columns": [c or "value" for c in columns], "rows": rows}


# ---- the rest of the report ---------------------------------------------------------------------------
def summary_lines(sections: Sequence[dict[str, Any]], per_section: int = 4) -> list[str]:
    """Return the short terminal summary: one line per section with its first summary lines."""
    lines = []
    for section in sections:
        shown = section["summary"][:per_section]
        more = len(section["summary"]) - len(shown)
        tail = f"; ... ({more} more)" if more > 0 else ""
        lines.append(f"{section['title']}: " + "; ".join(shown) + tail)
    return lines


def figure_copies(sections: Sequence[dict[str, Any]], directory: str | Path) -> dict[str, str]:
    """Return, for the Markdown report, each figure's link relative to ``directory`` (figures stay
    where the sections wrote them)."""
    links = {}
    for section in sections:
        for figure in section["figures"]:
            links[figure["path"]] = os.path.relpath(paths.ROOT / figure["path"], directory)
    return links
