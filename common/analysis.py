"""One analysis entry point for every suite: a suite's results become a ``Section``.

``scripts/analyse_results.py`` and the report (``results/report.html`` / ``.md``) both go
through here. Each suite contributes one module (registered in ``SUITES``) with two functions:

- ``detect(path) -> bool``: whether ``path`` (a test set or a results directory) is the suite's;
- ``section(path, figures_dir=None, **options) -> Section``: its analysis, tables with 95%
  intervals, figures written under ``figures_dir`` (none when it is None), and summary lines.
  Options a suite does not know are ignored, so one command line serves every suite.

Computation stays in the suite's own modules; the section only assembles what they return, and
``common.report`` renders every section the same way (terminal text, Markdown, HTML).
"""

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd

from common.errors import UserError

# suite name -> module providing detect() and section(); order is the detection order
SUITES: dict[str, str] = {
    "blocks": "common.blocks.report",
    "canvas": "common.canvas.report",  # before worldsense: canvas sets share the trial format
    "already_said_that": "common.already_said_that.report",
    "worldsense": "common.worldsense.report",
}


@dataclass
class Section:
    """What one suite's analysis shows: in the terminal, in the report, and as CSV."""

    suite: str  # a key of SUITES
    title: str  # heading, e.g. "WorldSense"
    about: str  # what it measures and how it is scored (Markdown, a paragraph or two)
    heading: str = ""  # the terminal banner, e.g. "ANALYSING RESULTS OF TESTSET <path>" (default: title)
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)  # (title, display table)
    figures: list[tuple[str, Path]] = field(default_factory=list)  # (caption, PNG written by section())
    data: dict[str, pd.DataFrame] = field(default_factory=dict)  # tidy statistics by name, for CSV
    summary: list[str] = field(default_factory=list)  # short lines for the end of `make all`
    paper: pd.DataFrame | None = None  # published vs reproduced numbers, where a paper is reproduced
    notes: list[str] = field(default_factory=list)  # caveats: partial files, refused items, ...
    inputs: list[Path] = field(default_factory=list)  # files read (their SHA-256 go in the provenance)
    # the report opens with the first ``headline_tables`` tables (a compact comparison of the runs)
    # and the first figure, the rest folded; None: every table and figure shown open
    headline_tables: int | None = None
    paired_table: str | None = None  # the title of the table of paired tests (examples go under it)

    def __repr__(self) -> str:
        return f"<Section {self.suite}: {len(self.tables)} tables, {len(self.figures)} figures>"


def suite_module(name: str) -> ModuleType:
    """Return the module of suite ``name``; raise UserError listing the suites for an unknown one."""
    if name not in SUITES:
        raise UserError(f"unknown suite {name!r}: choose one of {', '.join(SUITES)}")
    return importlib.import_module(SUITES[name])


def detect_suite(path: str | Path) -> str:
    """Return the name of the suite whose results ``path`` holds (the first whose ``detect`` says
    so); raise UserError naming the path and the suites when none does."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(2, "No such test set or results directory", str(path))
    for name in SUITES:
        if suite_module(name).detect(path):
            return name
    raise UserError(
        f"{path}: not a test set or results directory of any suite ({', '.join(SUITES)}); "
        "give the directory a suite's scripts wrote, or name the suite with --suite"
    )


def analyse(
    path: str | Path, suite: str | None = None, figures_dir: str | Path | None = None, **options: Any
) -> Section:
    """Return the Section of the results under ``path`` (suite detected unless given).

    Raises UserError when ``suite`` is given but ``path`` is recognised as another suite's, naming
    that suite and the command that fits (instead of that suite's misleading complaints)."""
    if suite is not None:
        _check_suite(Path(path), suite)
    name = suite or detect_suite(path)
    return suite_module(name).section(Path(path), Path(figures_dir) if figures_dir else None, **options)


def _check_suite(path: Path, suite: str) -> None:
    """Raise UserError when ``path`` is not recognised as ``suite``'s but as another suite's."""
    if not path.exists() or suite_module(suite).detect(path):
        return
    other = next((name for name in SUITES if name != suite and suite_module(name).detect(path)), None)
    if other is not None:
        raise UserError(
            f"{path}: holds {other} data, not {suite} data; analyse it with "
            f"`scripts/analyse_results.py -t {path}` (without --suite {suite})"
        )


def tidy_data(section: Section) -> pd.DataFrame:
    """Return the section's statistics as one frame: the only table as it is, several ones stacked
    with a ``table`` column naming each."""
    if len(section.data) == 1:
        return next(iter(section.data.values()))
    return pd.concat([frame.assign(table=name) for name, frame in section.data.items()], ignore_index=True)
