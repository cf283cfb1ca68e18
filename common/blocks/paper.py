"""The paper's table beside the reproduced one, for the blocks section of the paper's sets.

configs/papers/blocks.yaml holds the published table (and the release's measured facts) and the
sets that show it. The release's raw outputs are runs of the set ``released`` (the paper's prompts
for the release's own problems: ``common.blocks.release_runs`` writes them), scored into the
results database by the score stage with the suite's one scorer, as any run; the reproduced table
is computed from those scored rows, read from the database: nothing is scored again at analysis
time, and no other file is read.
"""

import json
from pathlib import Path
from typing import Any

import pandas as pd

from common import dbfile, dbread, paths
from common.blocks.items import RELEASED
from common.blocks.reproduce import summary
from common.blocks.runs import RELEASE_MODELS as MODELS
from common.config import load_yaml
from common.scored import Scored
from common.suite import SetRef

PUBLISHED = paths.CONFIGS / "papers" / "blocks.yaml"
MISSING = (
    "the paper's table is shown beside this set's once the release's runs are scored into the results "
    "database (make writes and scores them: results/blocks/released/.scored)"
)


def paper_section(
    set_name: str, db: str | Path | None = None
) -> tuple[pd.DataFrame | None, list[str], list[str]]:
    """Return what the blocks section shows of the paper for one of the paper's sets
    (configs/papers/blocks.yaml): ``(paper table, summary lines, notes)``, the published table
    next to the one reproduced from the release's runs as the results database ``db`` (default
    ``dbfile.default_path()``) holds them (``released``); for another set (None, [], []); before
    those runs are scored, a note saying how. (The release's files are pinned external data, in
    the provenance as such; its runs are not the set's, so not among the section's inputs.)"""
    if set_name not in published().get("sets", []):
        return None, [], []
    scored = released_runs(db)
    rows = released(scored) if scored is not None else pd.DataFrame()
    if rows.empty:
        return None, [], [MISSING]
    comparison = paper_comparison(summary(rows))
    mine = comparison[comparison["source"] == "published"]
    line = (
        f"blocks paper table: {int(mine['same'].sum())} of {len(mine)} published cells reproduced "
        f"exactly ({int(comparison['same'].sum())} of {len(comparison)} with the measured facts)"
    )
    return paper_table(comparison), [line], []


def released_runs(db: str | Path | None = None) -> Scored | None:
    """Return the scored rows of the set ``released`` as the results database ``db`` holds them
    (None when there is no database)."""
    from common.blocks import SUITE

    ref: SetRef = SUITE.ref(RELEASED)
    try:
        with dbfile.connection(db, readonly=True) as conn:
            return dbread.read(conn, [ref])
    except FileNotFoundError:
        return None


def released(scored: Scored) -> pd.DataFrame:
    """Return the release's answers among scored rows as ``reproduce.rescore`` gives them: one row
    per (method, view, problem) with the release's own verdict (``recorded``), the re-scored
    ``lenient`` and ``strict`` verdicts and whether the goal held at the start (``trivial``);
    empty when the rows hold no run of the release (``runs.RELEASE_MODELS``)."""
    method_of = {model: method for method, model in MODELS.items()}
    runs = scored.runs[scored.runs["model"].isin(list(method_of))].set_index("run_id")
    answers = scored.answers
    answers = answers[answers["run_id"].isin(runs.index) & (answers["scored"] == 1) & (answers["draw"] == 0)]
    items = scored.items.set_index("Key")
    fields = [_json(items.at[key, "fields"]) for key in answers["Key"]]
    details = [_json(detail) for detail in answers["detail"]]
    frame = pd.DataFrame(
        {
            "method": [method_of[runs.at[run, "model"]] for run in answers["run_id"]],
            "view": [runs.at[run, "view"] for run in answers["run_id"]],
            "id": [items.at[key, "unit"] for key in answers["Key"]],
            "recorded": [bool(d.get("succeed")) for d in details],
            "lenient": (answers["correct"] == 1).to_numpy(),
            "strict": (answers["strict"] == 1).to_numpy(),
            "trivial": [bool(f.get("goal_held_initially")) for f in fields],
        }
    )
    return frame.sort_values(["method", "view", "id"], kind="stable").reset_index(drop=True)


def _json(text: Any) -> dict[str, Any]:
    """Return a JSON column's object ({} for NULL, which pandas reads as None or NaN)."""
    return json.loads(text) if isinstance(text, str) else {}


def paper_table(comparison: pd.DataFrame) -> pd.DataFrame:
    """Return ``paper_comparison`` as a display table: one row per (source, measure,
    method), one column per view, cells "<published> ✓" when reproduced exactly, else
    "<published> ≠ <reproduced>"."""
    pairs = zip(comparison["published"], comparison["reproduced"], comparison["same"], strict=True)
    cells = comparison.assign(cell=[f"{p} ✓" if same else f"{p} ≠ {r}" for p, r, same in pairs])
    index = ["source", "measure", "method"]
    rows = pd.MultiIndex.from_tuples(
        list(dict.fromkeys(zip(*(cells[c] for c in index), strict=True))), names=index
    )
    views = list(dict.fromkeys(cells["view"]))
    table = cells.pivot(index=index, columns="view", values="cell")
    return table.reindex(index=rows, columns=views).fillna("")


def published() -> dict[str, Any]:
    """Return configs/papers/blocks.yaml (the published table and the release's measured facts)."""
    return load_yaml(PUBLISHED)[0]


def paper_comparison(reproduced_summary: pd.DataFrame) -> pd.DataFrame:
    """Return every cell of the published table and of the measured facts next to the same cell
    of ``reproduced_summary`` (``reproduce.summary`` of the re-scored release): columns source
    (published | measured), measure, method, view, published, reproduced, same.

    A count cell reads "k" ("k/n" for "needs a move"); a cell missing from the summary is "-".
    """
    cells = reproduced_summary.set_index(["measure", "method", "view"])
    rows = []
    for source in ("published", "measured"):
        for measure, methods in published().get(source, {}).items():
            for method, views in methods.items():
                for view, cell in views.items():
                    key = (measure, method, view)
                    found = "-"
                    if key in cells.index:
                        hit = cells.loc[key]
                        count, n = int(hit["successes"]), int(hit["n"])
                        found = f"{count}/{n}" if measure == "needs a move" else str(count)
                    rows.append((source, measure, method, view, str(cell), found))
    frame = pd.DataFrame(rows, columns=["source", "measure", "method", "view", "published", "reproduced"])
    frame["same"] = frame["published"] == frame["reproduced"]
    return frame
