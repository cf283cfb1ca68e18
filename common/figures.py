"""Figures of every suite: matplotlib on the Agg backend, one colour per run, deterministic PNGs.

A suite's plot function takes ``pyplot()``, draws, and ends with ``save_png(fig, path)``, which
writes the file atomically without the timestamp and software metadata that would make reruns
differ byte for byte. ``run_colours`` gives each run its colour from its name, so a run keeps
its colour in every figure, in every build, whatever other runs are added or removed.
"""

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common.jsonl import atomic_write


def pyplot() -> Any:
    """Return matplotlib.pyplot on the Agg backend (files only, no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


PALETTE = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#aec7e8",
    "#ffbb78",
    "#98df8a",
    "#ff9896",
    "#c5b0d5",
    "#c49c94",
    "#f7b6d2",
    "#dbdb8d",
    "#9edae5",
    "#393b79",
]  # fmt: skip  (tab10, then tab20's light shades and one dark blue: 20 distinct colours)


def run_colours(names: Sequence[str]) -> dict[str, str]:
    """Return a colour per run name, from the name alone: the palette entry its hash (SHA-256,
    the same on every machine) picks, or, when two names of ``names`` pick the same one, the next
    free entry for the name that sorts later. A run keeps its colour across builds; two runs of one
    figure share one only beyond twenty runs."""
    taken: dict[str, str] = {}
    for name in sorted(dict.fromkeys(names), key=lambda n: (_slot(n), n)):
        slot = _slot(name)
        used = set(taken.values())
        for step in range(len(PALETTE)):
            colour = PALETTE[(slot + step) % len(PALETTE)]
            if colour not in used or step == len(PALETTE) - 1:
                taken[name] = colour
                break
    return taken


def _slot(name: str) -> int:
    """Return the palette entry a run name picks (its SHA-256, modulo the palette's size)."""
    return int(hashlib.sha256(name.encode("utf-8")).hexdigest(), 16) % len(PALETTE)


def save_png(fig: Any, path: str | Path, dpi: int = 120) -> None:
    """Write ``fig`` to ``path`` as a PNG atomically (parent directories created), with no
    timestamp or software metadata so that reruns give the same bytes, and close it."""
    with atomic_write(Path(path), binary=True) as handle:
        fig.savefig(handle, format="png", dpi=dpi, metadata={"Software": None})
    pyplot().close(fig)
