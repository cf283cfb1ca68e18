"""One analysis entry point for every suite: a set's scored rows become a ``Section``.

``scripts/analyse_results.py`` and the report (``results/report.html`` / ``.md``) both go
through ``analyse``: it names the sets (``common.suites.resolve_set``: ``-t`` means the same in
every script), reads their scored rows from the results database (``database.read``, the file
opened read-only: only the score stage, ``common.scoring``, writes them; an analysis keeps there
only each run's part it computed, ``common.runparts``) and hands them to the
suite's ``section(refs, scored, figures_dir, **options)``: tables with 95% intervals,
figures written under ``figures_dir`` (none when it is None), summary lines. Options a suite
does not know are ignored, so one command line serves every suite.

Computation stays in the suite's own modules, as pure functions of the scored rows; the section
only assembles what they return, and ``common.report`` renders every section the same way
(terminal text, Markdown, HTML).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from common import database, dbarrays, runparts, suites
from common.errors import UserError
from common.scored import Scored
from common.suite import SetRef


@dataclass
class Section:
    """What one suite's analysis shows: in the terminal, in the report, and as CSV."""

    suite: str  # the suite's name
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
    failed: list[str] = field(default_factory=list)  # validity gates that failed: the analysis exits 1
    checks: list[str] = field(default_factory=list)  # what its validity checks ran on (the suite's top)
    # validity checks not met that do not stop the analysis (one that misses now and then by chance,
    # as a shortcut baseline outside its 95% interval); each line, as each of ``failed``, names the
    # check, the task and what to do; the report opens the suite with both
    missed: list[str] = field(default_factory=list)
    # the set's cells of its suite's headline table (``common.report.headline``): the main measure
    # of each run, with its interval and the units it rests on; None: the suite shows none
    headline: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return f"<Section {self.suite}: {len(self.tables)} tables, {len(self.figures)} figures>"


def resolve(spec: str | Path, suite: str | None = None, results_root: Path | None = None) -> list[SetRef]:
    """Return the sets ``-t spec`` names for an analysis: one set (``suites.resolve_set``); for a
    suite's name every set of that suite with results (a suite whose report section covers its
    sets together, such as Already Said That); for a directory of several sets' results (a run's
    ``--results-dir``) each set there that a suite recognises by its results."""
    if str(spec) in suites.names() and (suite is None or suite == str(spec)):
        found = suites.get(str(spec))
        refs = [ref for ref in found.refs() if found.part("results_files")(ref)]
        if not refs:
            raise UserError(f"no results of any {spec} set yet: run its baselines or a model first")
        return refs
    path = Path(spec)
    if path.is_dir():  # a directory holding several sets' results (a run's --results-dir)
        for candidate in [suites.get(suite)] if suite else suites.all_suites():
            children = [d for d in sorted(path.iterdir()) if d.is_dir() and suites.claimant(d) is candidate]
            if children and not candidate.claims(path):
                return [candidate.ref(d.name, results_root=path) for d in children]
    return [suites.resolve_set(spec, suite, results_root)]


def load(
    spec: str | Path | list[SetRef],
    suite: str | None = None,
    db: str | Path | None = None,
    results_root: Path | None = None,
):
    """Return ``(refs, scored)``: the sets ``spec`` names (``resolve``, their results under
    ``results_root`` when given; or SetRefs of one suite) and their scored rows from the results
    database ``db`` (default: ``database.default_path()``), as the score stage left it (the
    database is only read here: ``common.scoring.score`` scores what changed). Raises UserError
    when there is no database yet."""
    refs = spec if isinstance(spec, list) else resolve(spec, suite, results_root)
    path = Path(db) if db else database.default_path()
    if not path.is_file():
        raise UserError(
            f"no results database {path}: score the sets first (`scripts/score_results.py -t "
            f"{refs[0].key}`, or make)"
        )
    suite_of = suites.get(refs[0].suite)
    with database.connection(path, readonly=True) as conn:
        if "answer_arrays" in suite_of.extra:  # its analysis reads the first answers' arrays
            counted = "count_turns" in suite_of.extra and bool(suite_of.part("count_turns"))
            scored = dbarrays.read(conn, refs, suite_of.part("answer_arrays"), counted=counted)
        else:
            scored = database.read(conn, refs, texts=suite_of.item_texts)
    scored.parts = runparts.Store(path, scored.runs)  # each run's part of the analysis, kept
    return refs, scored


def section(
    refs: list[SetRef], scored: Scored, figures_dir: str | Path | None = None, **options: Any
) -> Section:
    """Return the Section of the sets ``refs`` from their scored rows: the suite's ``section``."""
    figures = Path(figures_dir) if figures_dir else None
    found = suites.get(refs[0].suite).part("section")(refs, scored, figures, **options)
    if scored.parts is not None:
        scored.parts.save()  # the runs' parts computed for it, for the next analysis
    return found


def analyse(
    spec: str | Path | list[SetRef],
    suite: str | None = None,
    figures_dir: str | Path | None = None,
    db: str | Path | None = None,
    **options: Any,
) -> Section:
    """Return the Section of the sets ``spec`` names as scored in the database ``db`` (``load``,
    then ``section``; the suite's section is given ``db`` too, for what it reads beside the set's
    rows, as blocks' paper table the release's runs)."""
    refs, scored = load(spec, suite, db)
    return section(refs, scored, figures_dir, db=db, **options)


def tidy_data(section: Section) -> pd.DataFrame:
    """Return the section's statistics as one frame: the only table as it is, several ones stacked
    with a ``table`` column naming each."""
    if len(section.data) == 1:
        return next(iter(section.data.values()))
    return pd.concat([frame.assign(table=name) for name, frame in section.data.items()], ignore_index=True)
