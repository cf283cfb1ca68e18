"""The original eval's published protocol in the report: every metric over the seeds, and its plots.

A run of a set played with several seeds (the ``original_*`` sets: seeds 1, 2 and 3, each the
250 conversations it picks) gives each metric the original's ``make_plots.py`` gathers
(``analysis.SEED_METRICS``) once per seed; the original reported their mean with a standard
error. ``seeds_table`` shows, per run and metric, the value of each seed, the mean over the
seeds and two standard errors, each "mean +- SE" to three decimals in the original's units
(turns and distractors as counts, rates and accuracy as fractions): the original's (population
standard deviation over sqrt k) and the sample standard deviation's (larger by sqrt(k / (k - 1))).
``cell`` is a run's headline: that mean +- the original's SE, as published.

``plot_paper`` draws the figure of ``make_plots.py`` from the runs on the ``original_*`` sets
(``PAPER_SETS``, the original's five variants): one panel per metric, one group of horizontal
bars per model, one bar per variant (its mean over the seeds, its error bar the original's SE,
its value written beside it), the metric's maximum and the random baseline as vertical lines
(the baseline's mean on first-letters, as the original took it; none for distractor accuracy,
which has no distractorless bar either).
"""

import math
from pathlib import Path
from typing import Any

import pandas as pd

from common.already_said_that.analysis import SEED_METRICS, metrics_over_seeds
from common.figures import pyplot, save_png

ORIGINAL_SE = "mean +- SE as the original (population SD / sqrt k)"
SAMPLE_SE = "mean +- SE (sample SD / sqrt k)"
PAPER_SETS = {  # our set -> the original's variant, in the order of its plots
    "original_which_is_heavier": "which-is-heavier",
    "original_ambiguous_sentences": "ambiguous-sentences",
    "original_first_letters": "first-letters",
    "original_reverse_sort": "reverse-sort-words-eng",
    "original_distractorless": "distractorless",
}
BASELINE_SET = "original_first_letters"  # where the original read its random baseline's line
RANDOM = "random"
MAXIMA = {  # the best a metric can be (the x axis runs to 105% of it)
    "avg_num_turns": 100.0,
    "avg_num_distractors": 100 / 3,  # a third of the turns are distractors, on average
    "avg_distractor_accuracy": 1.0,
    "false_positive_rate": 1.0,
    "false_negative_rate": 1.0,
    "violation_rate": 1.0,
}
AXIS_LABELS = {
    "avg_num_turns": "avg_num_turns: turns passed before the failing one",
    "avg_num_distractors": "avg_num_distractors: distractor turns among them",
    "avg_distractor_accuracy": "avg_distractor_accuracy: share of distractors answered right",
    "false_positive_rate": "false_positive_rate: share ended on a false yes",
    "false_negative_rate": "false_negative_rate: share ended on a false no",
    "violation_rate": "violation_rate: share whose last reply broke the format",
}
TIDY_COLUMNS = ["set", "model", "metric", "k", "seeds", "values", "mean", "se_original", "se_sample"]


def seed_numbers(runs: list[dict[str, Any]]) -> pd.DataFrame:
    """Return the tidy numbers of every run played with several seeds (``runs`` as
    ``report.runs_of`` returns them): per run and metric ``k``, ``seeds`` (their numbers),
    ``values`` (per seed), ``mean``, ``se_original`` and ``se_sample``
    (``analysis.metrics_over_seeds``); empty when no run has more than one seed."""
    frames = []
    for run in runs:
        if run["seeds"]["draw"].nunique() < 2:
            continue
        draws = sorted(run["seeds"]["draw"].unique())
        over = metrics_over_seeds([run["metrics"][int(d)] for d in draws])
        seeds = ", ".join(seed_name(run.get("first_seed"), int(d)) for d in draws)
        frames.append(over.assign(set=run["set"], model=run["model"], seeds=seeds))
    if not frames:
        return pd.DataFrame(columns=TIDY_COLUMNS)
    return pd.concat(frames, ignore_index=True)[TIDY_COLUMNS]


def tidy(numbers: pd.DataFrame) -> pd.DataFrame:
    """Return ``seed_numbers`` for a CSV file: each seed's value joined into one cell ("a / b / c")."""
    return numbers.assign(values=[" / ".join(f"{v:.6g}" for v in values) for values in numbers["values"]])


def seed_name(first_seed: int | None, draw: int) -> str:
    """Return how the tables name a run's ``draw``-th seed: its number (``first_seed`` + draw),
    or "draw d" when the run does not say which seed it started from."""
    return str(first_seed + draw) if first_seed is not None else f"draw {draw}"


def mean_se(mean: float, se: float) -> str:
    """Return "mean +- SE" to three decimals ("-" without a mean, the mean alone without an SE)."""
    if mean is None or math.isnan(mean):
        return "-"
    return f"{mean:.3f}" if se is None or math.isnan(se) else f"{mean:.3f} +- {se:.3f}"


def seeds_table(numbers: pd.DataFrame) -> pd.DataFrame:
    """Return the display table of ``seed_numbers``: a row per (set, model, metric), each seed's
    value, then the mean +- each standard error (``mean_se``)."""
    rows = [
        {
            "set": row.set,
            "model": row.model,
            "metric": row.metric,
            "seeds": row.seeds,
            "per seed": " / ".join("-" if math.isnan(v) else f"{v:.3f}" for v in row.values),
            ORIGINAL_SE: mean_se(row.mean, row.se_original),
            SAMPLE_SE: mean_se(row.mean, row.se_sample),
        }
        for row in numbers.itertuples()
    ]
    return pd.DataFrame(rows).set_index(["set", "model", "metric"])


def over_seeds(numbers: pd.DataFrame, metric: str = "avg_num_turns") -> dict[tuple[str, str], pd.Series]:
    """Return the rows of ``seed_numbers`` of ``metric`` by the (set, model) of their run (the
    first where two share them): a run that did not play several seeds has none."""
    found: dict[tuple[str, str], pd.Series] = {}
    for _, row in numbers[numbers["metric"] == metric].iterrows():
        found.setdefault((row["set"], row["model"]), row)
    return found


def cell(row: pd.Series | None) -> str | None:
    """Return a run's headline over its seeds from its row of ``over_seeds``: "mean +- SE (k
    seeds)" with the original's SE (its average turns), or None when the run did not play
    several seeds (no row)."""
    return None if row is None else f"{mean_se(row['mean'], row['se_original'])} ({row['k']} seeds)"


def paper_rows(numbers: pd.DataFrame) -> pd.DataFrame:
    """Return the rows of ``seed_numbers`` on the ``PAPER_SETS`` with ``variant``, the original's
    name of the set's variant (what ``plot_paper`` draws and ``make asat-paper`` writes)."""
    rows = numbers[numbers["set"].isin(list(PAPER_SETS))]
    return rows.assign(variant=rows["set"].map(PAPER_SETS))


def plot_paper(rows: pd.DataFrame, path: Path, dpi: int = 110) -> tuple[str, Path]:
    """Write ``path``: the original's plots (module docstring) from ``paper_rows``, one panel per
    metric of ``SEED_METRICS``, the models in the order of ``rows``; return (caption, path)."""
    plt = pyplot()
    models = [m for m in dict.fromkeys(rows["model"]) if m != RANDOM]
    height = max(3.5, 1.0 + 0.75 * len(models))
    fig, axes = plt.subplots(2, 3, figsize=(21, 2 * height), squeeze=False)
    for ax, metric in zip(axes.flat, SEED_METRICS, strict=True):
        _panel(ax, rows[rows["metric"] == metric], metric, models)
    fig.tight_layout()
    save_png(fig, path, dpi=dpi)
    caption = (
        "Already Said That as the original plotted it (its make_plots.py): each metric by variant "
        "and model, the mean over the seeds with its standard error (population SD / sqrt k)"
    )
    return caption, path


def _panel(ax: Any, rows: pd.DataFrame, metric: str, models: list[str]) -> None:
    """Draw one metric's panel of ``plot_paper`` on ``ax``."""
    plt = pyplot()
    accuracy = metric == "avg_distractor_accuracy"  # no distractorless bar, no lines
    variants = [v for v in PAPER_SETS.values() if not (accuracy and v == "distractorless")]
    width = 0.15
    offsets = [width * (i - (len(variants) - 1) / 2) for i in range(len(variants))]
    lines = 0
    if not accuracy:
        ax.axvline(MAXIMA[metric], label="maximum", linestyle="--", color="grey")
        baseline = rows[(rows["model"] == RANDOM) & (rows["set"] == BASELINE_SET)]
        lines = 1
        if len(baseline):
            ax.axvline(baseline["mean"].iloc[0], label="random baseline", linestyle="-.", color="black")
            lines = 2
    colours = plt.get_cmap("Set3")
    for index, variant in enumerate(variants):
        mine = rows[rows["variant"] == variant].set_index("model")
        means = [float(mine["mean"].get(m, math.nan)) for m in models]
        errors = [float(mine["se_original"].get(m, math.nan)) for m in models]
        bars = ax.barh(
            [y + offsets[index] for y in range(len(models))],
            [0.0 if math.isnan(v) else v for v in means],
            width,
            xerr=[0.0 if math.isnan(e) else e for e in errors],
            label=variant,
            color="black" if variant == "distractorless" else colours(index),
        )
        ax.bar_label(bars, labels=["" if math.isnan(v) else f"{v:.2f}" for v in means], fontsize=7)
    ax.set_xlabel(AXIS_LABELS[metric])
    ax.set_xlim(0, 1.05 * MAXIMA[metric])
    ax.set_yticks(range(len(models)), models)
    ax.set_ylim(-0.5, len(models) - 0.5)  # a model's group of bars fills 0.75 of its row, however many
    ax.grid(axis="x", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    order = [*range(lines), *reversed(range(lines, len(handles)))]  # the legend in the bars' order
    ax.legend([handles[i] for i in order], [labels[i] for i in order], fontsize="x-small", loc="best")
