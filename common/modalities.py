"""Text against pictures: the same items asked in each modality, compared item by item.

A suite whose sets show their scenes as pictures (``common.pictures.modality``: ``text``,
``image``, ``text+image``) asks the same items, under the same Keys, in each modality, one run
(results file) per modality, its ``modality`` a column of the scored rows (``runs.modality``).
The runs that differ in their modality alone (same set, model, prompting without the modality,
method and view) are one *run* here; per run and task, each two of its modalities are compared
by the exact paired test of ``common.stats.paired_exact_test`` on the units both answered
(McNemar's exact test for a problem solved or not, the sign test for the share of an item's
variants right). Every function is a pure function of the scored rows; a suite's section shows
``modality_display`` and ``plot_modalities``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from common.pictures.modality import MODALITIES, TEXT
from common.report import interval_text, p_text, paired_cells
from common.scored import Scored
from common.stats import mean_interval, paired_exact_test

TITLE = "TEXT vs PICTURES: the same items in each modality, exact paired tests per run and task"
KEYS = ["set_name", "model", "base", "method", "view"]  # what a run's modalities share
ALL = "(all)"  # the task row over every task of a run


def modality_runs(scored: Scored, name: Callable[[pd.Series], str]) -> pd.DataFrame:
    """Return the runs of ``scored`` that have another modality of themselves: ``run_id``,
    ``modality``, ``base`` (the prompting without ``-<modality>``) and ``run`` (``name(row)``,
    the row having ``base``: how tables name the run's modalities together); empty when no run
    has two modalities."""
    runs = scored.runs.copy()
    if runs.empty or "modality" not in runs:
        return runs.iloc[:0].assign(base=[], run=[])
    runs["modality"] = runs["modality"].fillna(TEXT)
    runs["base"] = [
        p if m == TEXT else str(p).replace(f"-{m}", "", 1)
        for p, m in zip(runs["prompting"], runs["modality"], strict=True)
    ]
    for column in ("method", "view"):
        runs[column] = runs[column].fillna("") if column in runs else ""
    counts = runs.groupby(KEYS, sort=False)["modality"].transform("nunique")
    runs = runs[counts > 1].copy()
    runs["run"] = [name(row) for _, row in runs.iterrows()]
    return runs


def modality_scores(scored: Scored, rule: str, name: Callable[[pd.Series], str]) -> pd.DataFrame:
    """Return per run, view, task (and ALL) and modality: ``units`` and the mean unit score under
    ``rule`` with its 95% interval (``stats.mean_interval``, bounded to [0, 1]), for the runs of
    ``modality_runs``; tidy, proportions in [0, 1]."""
    runs = modality_runs(scored, name)
    units_of = _units_of(scored, rule)
    rows = []
    for run in runs.itertuples():
        units = units_of(run.run_id)
        for task, part in _by_task(units):
            score, lo, hi = mean_interval(part["score"], (0.0, 1.0))
            rows.append((run.run, run.view, task, run.modality, len(part), score, lo, hi))
    columns = ["run", "view", "task", "modality", "units", "score", "lo", "hi"]
    return _ordered(pd.DataFrame(rows, columns=columns))


def modality_tests(scored: Scored, rule: str, name: Callable[[pd.Series], str]) -> pd.DataFrame:
    """Return per run, view, task (and ALL) and pair of modalities ``a``, ``b`` (in MODALITIES
    order: text before image before text+image): ``n`` units both answered, each one's mean score
    on them, and the exact paired test (``a_better``, ``b_better``, ``p``)."""
    runs = modality_runs(scored, name)
    units_of = _units_of(scored, rule)
    rows = []
    for _, group in runs.groupby(KEYS, sort=False):
        by_modality = {r.modality: r for r in group.itertuples()}
        present = [m for m in MODALITIES if m in by_modality]
        for a, b in itertools.combinations(present, 2):
            run_a, run_b = by_modality[a], by_modality[b]
            both = units_of(run_a.run_id).merge(
                units_of(run_b.run_id)[["unit", "score"]], on="unit", suffixes=("_a", "_b")
            )
            for task, part in _by_task(both):
                test = paired_exact_test(part["score_a"].tolist(), part["score_b"].tolist())
                rows.append(
                    (run_a.run, run_a.view, task, a, b, len(part), part["score_a"].mean(),
                     part["score_b"].mean(), test.a_better, test.b_better, test.p)
                )  # fmt: skip
    columns = ["run", "view", "task", "a", "b", "n", "score_a", "score_b", "a_better", "b_better", "p"]
    return pd.DataFrame(rows, columns=columns)


def _by_task(units: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """Return ``units`` by task, then all of them as ALL when they span several tasks."""
    groups = list(units.groupby("task", sort=False))
    return [*groups, (ALL, units)] if len(groups) > 1 else groups


def _units_of(scored: Scored, rule: str) -> Callable[[int], pd.DataFrame]:
    """Return ``_units`` of one run under ``rule``, by run id: the units under ``rule`` found once
    (a scan of every unit per run grows as the runs squared)."""
    units = scored.units[scored.units["rule"] == rule]
    positions = units.groupby("run_id", sort=False).indices
    return lambda run_id: _units(units.iloc[positions.get(run_id, [])])


def _units(mine: pd.DataFrame) -> pd.DataFrame:
    """Return the units ``mine`` (of one run, under one rule): unit, task (a unit without one:
    "-"), score."""
    return pd.DataFrame(
        {"unit": mine["unit"].to_numpy(), "task": mine["task"].fillna("-").to_numpy(), "score": mine["score"]}
    ).reset_index(drop=True)


def _ordered(scores: pd.DataFrame) -> pd.DataFrame:
    """Return ``scores`` with the modalities in MODALITIES order within each run, view and task."""
    rank = {m: i for i, m in enumerate(MODALITIES)}
    return (
        scores.assign(_rank=scores["modality"].map(rank))
        .sort_values(["run", "view", "_rank"], kind="stable")
        .drop(columns="_rank")
        .reset_index(drop=True)
    )


def modality_display(tests: pd.DataFrame, views: bool = False) -> pd.DataFrame:
    """Return the paired tests for display (percent): indexed by run, (view,) task, a and b; the
    units compared, each modality's score on them, then ``common.report.paired_cells``."""
    shown = tests[["run", "view", "task", "a", "b", "n"]].copy()
    shown["a %"] = [f"{100 * x:.1f}" for x in tests["score_a"]]
    shown["b %"] = [f"{100 * x:.1f}" for x in tests["score_b"]]
    shown = shown.assign(**paired_cells(tests))
    index = ["run", "view", "task", "a", "b"] if views else ["run", "task", "a", "b"]
    return shown.drop(columns=[] if views else ["view"]).set_index(index)


def scores_cell(row: pd.Series) -> str:
    """Return one modality's score as ``"57.1 [45.0, 68.4]"`` (percent)."""
    return interval_text(row["score"], row["lo"], row["hi"], scale=100)


def plot_modalities(scores: pd.DataFrame, path: Path, measure: str) -> Path:
    """Write a PNG to ``path``: one panel per task (and view), the mean score (%, ``measure``) of
    each run in each modality side by side with its 95% interval; return ``path``."""
    from common.figures import pyplot, run_colours, save_png

    plt = pyplot()
    scores = scores[scores["task"] != ALL]
    panels = list(dict.fromkeys(zip(scores["task"], scores["view"], strict=True)))
    runs = list(dict.fromkeys(scores["run"]))
    present = [m for m in MODALITIES if m in set(scores["modality"])]
    cols = min(3, len(panels))
    rows_ = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows_, cols, figsize=(3.2 * cols + 2.2, 3.0 * rows_), sharey=True, squeeze=False)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    colours = run_colours(runs)
    markers = dict(zip(MODALITIES, ["o", "s", "^"], strict=True))
    for ax, (task, view) in zip(axes.flat, panels, strict=False):
        part = scores[(scores["task"] == task) & (scores["view"] == view)]
        for offset, run in enumerate(runs):
            line = part[part["run"] == run].set_index("modality").reindex(present).dropna(subset=["score"])
            x = [present.index(m) + (offset - (len(runs) - 1) / 2) * 0.08 for m in line.index]
            ax.plot(x, 100 * line["score"], color=colours[run], linewidth=1, alpha=0.6)
            for xi, (modality, r) in zip(x, line.iterrows(), strict=True):
                bar = [[100 * (r["score"] - r["lo"])], [100 * (r["hi"] - r["score"])]]
                ax.errorbar(
                    xi, 100 * r["score"], yerr=bar,
                    marker=markers[modality], color=colours[run], capsize=2,
                    label=run if modality == line.index[0] else None,
                )  # fmt: skip
        ax.set_title(f"{task}, {view}" if view else str(task).replace("_", " "), fontsize="medium")
        ax.set_xticks(range(len(present)), present)
        ax.set_ylim(-2, 102)
    for row in axes:
        row[0].set_ylabel(f"{measure} (%)")
    legend: dict[str, object] = {}  # every run once, whichever panel shows it (methods differ by panel)
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            legend.setdefault(label, handle)
    fig.legend(list(legend.values()), list(legend), fontsize="small", loc="center right")
    fig.tight_layout(rect=(0, 0, 1 - 2.0 / (3.2 * cols + 2.2), 1))
    save_png(fig, path, dpi=110)
    return path


def summary_lines(tests: pd.DataFrame, suite: str) -> list[str]:
    """Return one summary line of the modality tests (none without them): per run, each picture
    modality against text over every task, as ``a% -> b% (p)``."""
    if tests.empty:
        return []
    several = tests.groupby(["run", "view"])["task"].transform("nunique") > 1
    overall = tests[(tests["task"] == ALL) | ~several]
    overall = overall[overall["a"] == TEXT]
    if overall.empty:
        return []
    cells = [
        f"{r.run}{f' [{r.view}]' if r.view else ''} {r.b} {100 * r.score_b:.1f} vs text {100 * r.score_a:.1f}"
        f" (p {p_text(r.p)})"
        for r in overall.itertuples()
    ]
    return [f"{suite} text vs pictures: " + "; ".join(cells)]
