"""Figures of every suite: matplotlib on the Agg backend, one colour per run, deterministic PNGs.

A suite's plot function takes ``pyplot()``, draws, and ends with ``save_png(fig, path)``, which
writes the file atomically without the timestamp and software metadata that would make reruns
differ byte for byte. ``run_colour`` gives run i of n its colour (tab10, tab20 beyond ten runs),
the same in every figure of a report.
"""

from pathlib import Path
from typing import Any

from common.jsonl import atomic_write


def pyplot() -> Any:
    """Return matplotlib.pyplot on the Agg backend (files only, no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def run_colour(index: int, count: int) -> Any:
    """Return the colour of run ``index`` of ``count``: tab10 (matplotlib's default colour cycle),
    or tab20 beyond ten runs, so that no two runs share a colour up to twenty."""
    return pyplot().get_cmap("tab10" if count <= 10 else "tab20")(index % 20)


def save_png(fig: Any, path: str | Path, dpi: int = 120) -> None:
    """Write ``fig`` to ``path`` as a PNG atomically (parent directories created), with no
    timestamp or software metadata so that reruns give the same bytes, and close it."""
    with atomic_write(Path(path), binary=True) as handle:
        fig.savefig(handle, format="png", dpi=dpi, metadata={"Software": None})
    pyplot().close(fig)
