"""The score stage, the one writer of the results database: a set's results files scored into it.

``score(refs, db)`` reads each results file of the sets ``refs`` whose content or suite scoring
code changed since it was scored, scores it with its suite's scorer and writes its rows
(``database.update``); a file already scored as it is costs a ``stat``. ``scripts/score_results.py``
is this stage in the Makefile; a script that analyses a set by hand (``analyse_results.py``) runs
it first, then reads. Every reader (``common.analysis.load``, the report, the provenance, the
explorer) opens the database read-only.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from common import database
from common.suite import SetRef


def score(refs: Sequence[SetRef], db: str | Path | None = None) -> database.Counts:
    """Return what scoring the sets ``refs`` into the results database ``db`` (default:
    ``database.default_path()``) did: results files scored, unchanged, removed."""
    with database.connection(db) as conn:
        return database.update(conn, refs)


def score_and_load(
    spec: str | Path | list[SetRef],
    suite: str | None = None,
    db: str | Path | None = None,
    results_root: Path | None = None,
):
    """Return ``(refs, scored)`` of the sets ``spec`` names (``common.analysis.load``), their
    results scored first: the two stages an analysis run by hand is (``analyse_results.py``)."""
    from common import analysis  # the reader, which imports nothing of this writer

    refs = spec if isinstance(spec, list) else analysis.resolve(spec, suite, results_root)
    score(refs, db)
    return analysis.load(refs, db=db)


def score_and_analyse(
    spec: str | Path | list[SetRef], suite: str | None = None, db: str | Path | None = None, **options
):
    """Return the Section of the sets ``spec`` names, their results scored first
    (``score_and_load``, then the suite's section, ``common.analysis.section``)."""
    from common import analysis

    figures_dir = options.pop("figures_dir", None)
    refs, scored = score_and_load(spec, suite, db)
    return analysis.section(refs, scored, figures_dir, db=db, **options)
