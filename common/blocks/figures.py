"""The blocks section's figures: success by view, and against the optimal plan length.

Both take ``analysis.success`` tables and the runs in the order of the section's tables, so a
run has the same colour (``common.figures.run_colours``, from its name) in every figure.
"""

from pathlib import Path

import pandas as pd

from common.blocks.analysis import run_label
from common.figures import pyplot, run_colours, save_png

MARKERS = "osD^vP*Xhp"  # per run in the length figure, so runs with equal rates stay apart


def _rows_of(stats: pd.DataFrame, run: tuple[str, str, str]) -> pd.DataFrame:
    """Return the rows of ``stats`` of one run (method, prompting, model)."""
    return stats[(stats["method"] == run[0]) & (stats["prompting"] == run[1]) & (stats["model"] == run[2])]


def _bars(part: pd.DataFrame, rule: str) -> tuple[pd.Series, list[pd.Series]]:
    """Return the success rate of ``rule`` and its error bars (distances to the Wilson bounds)."""
    rate = part[f"{rule}_rate"]
    return rate, [(rate - part[f"{rule}_lo"]).clip(lower=0), (part[f"{rule}_hi"] - rate).clip(lower=0)]


def plot_by_view(
    stats: pd.DataFrame, views: list[str], runs: list[tuple[str, str, str]], directory: Path, set_name: str
) -> tuple[str, Path]:
    """Write ``blocks_<set>_success_by_view.png`` in ``directory``: bars of success (%) by view, one
    bar per run of ``runs`` (their order and colours), lenient and strict side by side, with the
    Wilson intervals as error bars. Return (caption, path)."""
    plt = pyplot()
    views = [v for v in views if v in set(stats["view"])]
    width = 0.8 / max(1, len(runs))
    width_inches = min(24.0, max(8.0, 1.6 * len(views) * max(1, len(runs) / 3)))
    fig, axes = plt.subplots(1, 2, figsize=(width_inches, 4.5), sharey=True)
    colours = run_colours([run_label(*run) for run in runs])
    for ax, rule in zip(axes, ("lenient", "strict"), strict=True):
        for i, run in enumerate(runs):
            part = _rows_of(stats, run).set_index("view").reindex(views)
            xs = [v + (i - (len(runs) - 1) / 2) * width for v in range(len(views))]
            rate, errors = _bars(part, rule)
            style = {"capsize": 2, "label": run_label(*run), "color": colours[run_label(*run)]}
            ax.bar(xs, rate.fillna(0), width, yerr=[e.fillna(0) for e in errors], **style)
        ax.set_xticks(range(len(views)), views)
        ax.set_title(rule)
        ax.set_ylim(0, 105)
        ax.set_xlabel("view")
    axes[0].set_ylabel("success (%), 95% interval")
    axes[1].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    path = directory / f"blocks_{set_name}_success_by_view.png"
    save_png(fig, path)
    return f"Blocks world ({set_name}): success by view and run, lenient and strict (95% intervals)", path


def plot_by_length(
    stats: pd.DataFrame, runs: list[tuple[str, str, str]], directory: Path, set_name: str
) -> tuple[str, Path]:
    """Write ``blocks_<set>_success_by_length.png`` in ``directory``: lines of success (%) against
    the optimal plan length, lenient and strict side by side, one line per run of ``runs`` (the
    colours of ``plot_by_view``, a marker each, shifted apart so that equal rates stay visible),
    with the Wilson intervals as error bars; below each, bars of the number of problems of each
    length (the most of any run), which says how wide an interval must be. Return (caption, path)."""
    plt = pyplot()
    fig, axes = plt.subplots(
        2, 2, figsize=(13.0, 5.5), sharex=True, sharey="row", gridspec_kw={"height_ratios": [4, 1]}
    )
    spread = min(0.4, 0.08 * len(runs))  # the runs of one length share this much of the x axis
    colours = run_colours([run_label(*run) for run in runs])
    sizes = stats.groupby("optimal_length")["problems"].max()
    for column, rule in enumerate(("lenient", "strict")):
        ax, counts = axes[0][column], axes[1][column]
        for i, run in enumerate(runs):
            part = _rows_of(stats, run)
            if part.empty:
                continue
            rate, errors = _bars(part, rule)
            shift = (i / (len(runs) - 1) - 0.5) * spread if len(runs) > 1 else 0.0
            style = {
                "color": colours[run_label(*run)],
                "marker": MARKERS[i % len(MARKERS)],
                "label": run_label(*run),
            }
            lines = {"markersize": 5, "capsize": 2, "linewidth": 1.2, "elinewidth": 0.8}
            ax.errorbar(part["optimal_length"] + shift, rate, yerr=errors, **style, **lines)
        ax.set_title(rule)
        ax.set_ylim(-2, 105)
        counts.bar(sizes.index, sizes.to_numpy(), width=0.6, color="0.6")
        counts.set_xlabel("optimal plan length (moves)")
        counts.xaxis.get_major_locator().set_params(integer=True)  # lengths are whole moves
    axes[0][0].set_ylabel("success (%), 95% interval")
    axes[1][0].set_ylabel("problems")
    axes[0][1].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    path = directory / f"blocks_{set_name}_success_by_length.png"
    save_png(fig, path)
    caption = (
        f"Blocks world ({set_name}): success against the optimal plan length, lenient and "
        "strict, all views pooled (95% Wilson intervals; problems per length below)"
    )
    return caption, path
