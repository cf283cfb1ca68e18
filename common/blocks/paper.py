"""The paper's table beside the reproduced one, for the blocks section of the paper's sets.

configs/papers/blocks.yaml holds the published table (and the release's measured facts) and the
sets that show it; the reproduction (``make reproduce-blocks``: ``scripts/reproduce_blocks.py``,
the release's raw outputs scored by the suite's one scorer) writes its summary CSV
(``REPRODUCED``), which the section reads: nothing is scored again at analysis time.
"""

from pathlib import Path
from typing import Any

import pandas as pd

from common import paths
from common.config import load_yaml

PUBLISHED = paths.CONFIGS / "papers" / "blocks.yaml"
REPRODUCED = paths.RESULTS / "blocks" / "cogsci22_reproduced.csv"  # reproduce.summary, as make writes it
MISSING = (
    "the paper's table is shown beside this set's once the release is re-scored (make reproduce-blocks "
    "writes {})"
)


def paper_section(
    set_name: str, reproduced: str | Path | None = None
) -> tuple[pd.DataFrame | None, list[str], list[Path], list[str]]:
    """Return what the blocks section shows of the paper for one of the paper's sets
    (configs/papers/blocks.yaml): ``(paper table, summary lines, inputs, notes)``, the published
    table next to the reproduced one (``reproduced``: the reproduction's summary CSV, default
    ``REPRODUCED``); for another set (None, [], [], []); for a paper set before the reproduction,
    a note saying how to make it."""
    path = Path(reproduced) if reproduced else REPRODUCED
    if set_name not in published().get("sets", []):
        return None, [], [], []
    if not path.is_file():
        return None, [], [], [MISSING.format(paths.shown(path))]
    comparison = paper_comparison(pd.read_csv(path))
    mine = comparison[comparison["source"] == "published"]
    line = (
        f"blocks paper table: {int(mine['same'].sum())} of {len(mine)} published cells reproduced "
        f"exactly ({int(comparison['same'].sum())} of {len(comparison)} with the measured facts)"
    )
    return paper_table(comparison), [line], [path], []


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
