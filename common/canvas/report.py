"""The canvas section of the one analysis (``common.analysis``): display tables, a figure, summary.

``section`` assembles what ``common.canvas.analysis`` computes from a canvas set and its results
files (``make canvas/standard`` builds one under ``results/canvas/standard``): accuracy per task
and per number of shapes with intervals clustered by item, invalid and refused answers apart,
the shortcut baselines against chance, the audit (the gate: strong learners with one piece of the
asked information blinded at a time) and the partial skills, exact paired tests between models,
and the accuracy figure.
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from common import leaderboard, modalities, paths, sampling
from common.analysis import Section
from common.canvas.analysis import (
    POWER,
    SHORTCUT_TASKS,
    accuracy,
    audit_of,
    chance_by_size,
    chance_lines,
    interval,
    paired_tests,
    power_of,
    rules_on_tuples,
    scored_frame,
    shortcut_table,
    trials_of,
    tuple_table,
    uniform_by_size,
)
from common.canvas.audit import COLUMNS, POWER_COLUMNS, failures
from common.canvas.scoring import RULE, run_order
from common.canvas.validity import (
    AUDIT_TITLE,
    POWER_TITLE,
    RULES_TITLE,
    audit_display,
    check_lines,
    power_display,
    rules_display,
    shortcut_display,
    shortcut_misses,
    validity_lines,
)
from common.errors import DataError
from common.figures import pyplot, run_colours, save_png
from common.report import headline, headline_cell, interval_text, paired_cells
from common.scored import Scored
from common.suite import SetRef
from common.trials.data import trials_path

ABOUT = """Questions about shapes on a 64 x 64 canvas (24 identities: small/large, red/blue/yellow/green,
square/circle/triangle). **Relation rule**: B is right of A when B's centre x exceeds A's by more
than half the larger of the two shapes' widths (likewise left; above/below with y and heights);
closer than that on an axis, no relation on it. Every description sentence and gold answer
follows this rule; the `coordinates` description states the sizes and the rule, so every answer
is derivable from the prompt. **Tasks**: *existence* ("Is there a shape that is red?": reading a
scene), *count* ("How many large green triangles are there?": 0..N), *coordinate* ("Where is A
relative to B?" from the centres and the stated rule: one of eight directions), *transitivity*
(a line of shapes told as links between neighbours in a random order, a question about two
non-adjacent ones: composing relations; the line fixes the axis, chance 1/2), *existence
tracking* (additions and removals, then "Is there X?": state tracking) and *shuffle tracking*
(a column of shapes, swaps, "What shape is second from the top?": tracking positions). Accuracy
is the strict reader's; 95% intervals are Wilson-type with the effective size of the clustering by
item (the variants of one item count as one cluster); refused requests (too long for the
model's context) and invalid answers count as wrong, each counted in its own column, so every
model has the same denominator. Shortcut baselines answer by a rule needing no skill:
each should score at its task's chance rate. The audit, the set's gate, searches for any such
rule instead of listing them: for each task it blinds one piece of what the skill needs at a
time (the question's subject, the direction words, which mentions are the same shape, the
events' kinds, the swaps, ...) with placeholders that keep every sentence's place, order and
count, fits a logit and boosted trees on position-aware features of fresh-seed sets five times
the set's size, and tests the better one once on the set: its interval must hold chance (at
1 - 0.05/k for the set's k views, so that a clean set passes 95% of the time), or the analysis
fails. Partial skills read part of the asked facts: they are reported with the
share of trials on which they differ from the skill."""


PAIRED_TITLE = "Paired exact tests on shared items (a better: the items where a answered more variants right)"


def section(refs: Sequence[SetRef], scored: Scored, figures_dir: Path | None = None, **_: Any) -> Section:
    """Return the canvas Section of a set's scored rows (``refs``: the one set): accuracy tables
    per task and per number of shapes with clustered 95% intervals (models other than the
    shortcuts), the shortcut table, the audit (the set's gate: ``failed`` lists the views that
    beat chance) and the partial skills, exact paired tests, summary lines, and with
    ``figures_dir`` the figure ``canvas_accuracy.png``. The audit and the gate's power are stages
    of their own (``data/canvas/<set>/audit.json``, ``data/canvas/power.json``: scripts/audit_canvas.py);
    the section only reads them."""
    (ref,) = refs
    if scored.runs.empty:
        raise DataError(
            f"no results files in {paths.shown(ref.results)}: run scripts/ask_model.py -t {ref.key} "
            "--model ... first (or `make canvas/<set>`)"
        )
    trials = trials_of(scored)
    frame, notes = scored_frame(scored)
    shortcuts = shortcut_table(frame, trials)
    audited, fresh_rules, meta = audit_of(ref.data) or (pd.DataFrame(columns=COLUMNS), pd.DataFrame(), {})
    power = (power_of() or (pd.DataFrame(columns=POWER_COLUMNS), {}))[0]
    if not meta:
        notes.append(
            f"no audit of this set's generator: run `scripts/audit_canvas.py -t {paths.shown(ref.data)}` "
            "(make does for every set of configs/canvas/), then analyse the set again"
        )
    models = frame[~frame["model"].isin(list(SHORTCUT_TASKS))]  # shortcuts: in their own table
    if models.empty:
        models = frame
    by_task = accuracy(models, ["model", "task"])
    by_size = accuracy(models, ["model", "task", "num_shapes"])
    whole = tuple_table(models, trials, ["model"])
    whole_by_task = tuple_table(models, trials, ["model", "task"])
    tests = paired_tests(models)
    tables = [
        ("Strict accuracy per model (%, 95% interval clustered by item)", overall_display(models, whole)),
        ("Accuracy per task (strict; 95% interval clustered by item)", task_display(by_task, whole_by_task)),
        ("Accuracy per task and number of shapes (strict, %)", size_display(by_size)),
    ]
    if not shortcuts.empty:
        tables.append(("Shortcut baselines on their task vs chance", shortcut_display(shortcuts)))
    if meta:
        tables.append((AUDIT_TITLE, audit_display(audited)))
    if not fresh_rules.empty:
        tables.append((RULES_TITLE, rules_display(fresh_rules, rules_on_tuples(trials))))
    if not power.empty:
        tables.append((POWER_TITLE, power_display(power)))
    if not tests.empty:
        tables.append((PAIRED_TITLE, tests_display(tests)))
    shown = modalities.modality_tests(scored, RULE, run_name)
    if not shown.empty:
        tables.append((modalities.TITLE, modalities.modality_display(shown)))
    draws = sampling.draw_frames(scored, label=lambda run: f"{run.model} ({run.prompting})")
    tables += sampling.sampling_tables(draws, "majority vote", "strict")
    heads = headline_cells(models, ref.name)
    figures = []
    if figures_dir is not None:  # past OPEN_RUNS runs, the figures draw the best and the baselines
        drawn, note = leaderboard.drawn_runs(heads, "canvas", "strict accuracy")
        drawn_size = by_size if drawn is None else by_size[by_size["model"].isin(drawn)]
        figure = figures_dir / "canvas_accuracy.png"
        lines = chance_lines(
            list(dict.fromkeys(drawn_size["model"])), chance_by_size(trials), uniform_by_size(trials)
        )
        plot_accuracy(drawn_size, lines, figure)
        caption = "Canvas accuracy (strict) by task and number of shapes; 95% intervals clustered by item"
        own = "; dotted: a uniformly guessing run's own chance, where lower" if len(lines) > 1 else ""
        figures.append((f"{caption}; dashed: chance when the answer's form is read{own}{note}", figure))
        if not shown.empty:
            scores = modalities.modality_scores(scored, RULE, run_name)
            if drawn is not None:
                scores = scores[scores["run"].isin(drawn)]
            path = modalities.plot_modalities(
                scores, figures_dir / "canvas_modalities.png", "strict accuracy"
            )
            figures.append((MODALITY_CAPTION + note, path))
    data = {"accuracy_by_task": by_task, "accuracy_by_size": by_size, "tuples_by_task": whole_by_task}
    data |= {"audit": audited, "rules_on_fresh_trials": fresh_rules, "power": power}
    if not shortcuts.empty:
        data["shortcuts"] = shortcuts
    if not tests.empty:
        data["paired"] = tests
    if not shown.empty:
        data["modalities"] = shown
    files = [paths.ROOT / f for f in run_order(scored.runs)["results_file"]]
    return Section(
        suite="canvas",
        title=f"Canvas: {ref.name}",
        about=ABOUT,
        heading=f"CANVAS RESULTS OF {paths.shown(ref.data)}",
        tables=tables,
        figures=figures,
        data=data,
        summary=summary_lines(frame, shortcuts, audited)
        + modalities.summary_lines(shown, "canvas")
        + sampling.sampling_summary(draws),
        notes=notes,
        inputs=[trials_path(ref.data), *[p for p in (ref.data / "audit.json", POWER) if p.is_file()], *files],
        headline_tables=1,
        paired_table=PAIRED_TITLE,
        failed=failures(audited, ref.name),
        checks=validity_lines(audited, meta, power, int(trials["tuple_ID"].nunique()), len(trials))
        if meta
        else [],
        missed=shortcut_misses(shortcuts),
        headline=heads,
    )


MODALITY_CAPTION = (
    "Canvas in words and in pictures: strict accuracy (mean over items of the share of their variants "
    "right) of each run in each modality, per task; 95% intervals"
)


def run_name(run: pd.Series) -> str:
    """Return how the modality table names a run's modalities together: the model, with its
    prompting when that is not the default (as the other tables name a run)."""
    return run["model"] if run["base"] == "basic" else f"{run['model']} ({run['base']})"


def _cell(p: float, lo: float, hi: float) -> str:
    """Return ``"57.1 [45.0, 68.4]"`` (percent), or ``"-"`` without answers."""
    return interval_text(p, lo, hi, scale=100)


def overall_display(scored: pd.DataFrame, tuples: pd.DataFrame) -> pd.DataFrame:
    """Return the compact comparison of the models: trials, items, strict accuracy with its
    clustered 95% interval, the measures over contrast tuples (``tuple_cells``), invalid and
    refused answers, one row per model."""
    found = tuple_rows(tuples, ["model"]) if not tuples.empty else {}
    rows = {
        model: {
            "trials": len(part),
            "items": part["item"].nunique(),
            "strict % [95% CI]": _cell(*interval(part)),
            **tuple_cells(found.get((model,))),
            "invalid": int(part["invalid"].sum()),
            "refused": int(part["refused"].sum()),
        }
        for model, part in scored.groupby("model", sort=False)
    }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("model")


def tuple_rows(tuples: pd.DataFrame, by: list[str]) -> dict[tuple, dict[str, Any]]:
    """Return the rows of ``tuples`` (``analysis.tuple_table``) by their values of ``by``, the
    first where two share them: looked up once per table, not searched per row."""
    found: dict[tuple, dict[str, Any]] = {}
    for row in tuples.to_dict("records"):
        found.setdefault(tuple(row[b] for b in by), row)
    return found


def tuple_cells(r: dict[str, Any] | None) -> dict[str, str]:
    """Return the cells of the tuple measures of a row of ``tuple_rows``: tuples answered whole,
    the share right whole and the bias-corrected accuracy with their intervals and chance ("-"
    without such a row)."""
    if r is None:
        return {
            "tuples": "-",
            "whole tuples right % [95% CI] (chance)": "-",
            "bias-corrected % [95% CI] (chance)": "-",
        }
    right = _cell(r["right"], r["right_lo"], r["right_hi"])
    balanced = _cell(r["balanced"], r["balanced_lo"], r["balanced_hi"])
    return {
        "tuples": f"{int(r['tuples']):,}",
        "whole tuples right % [95% CI] (chance)": f"{right} ({100 * r['right_chance']:.1f})",
        "bias-corrected % [95% CI] (chance)": f"{balanced} ({100 * r['balanced_chance']:.1f})",
    }


def headline_cells(scored: pd.DataFrame, set_name: str) -> dict[str, Any]:
    """Return the set's cells of the canvas headline table: each model's strict accuracy with its
    interval clustered by item (``common.report.headline_cell``: the items it rests on when few)."""
    cells = [
        (model, set_name, headline_cell(*interval(part), n=n, unit="items"), n)
        for model, part in scored.groupby("model", sort=False)
        for n in [part["item"].nunique()]
    ]
    return headline("strict accuracy % [95% interval clustered by item]", "item", cells)


def task_display(table: pd.DataFrame, tuples: pd.DataFrame) -> pd.DataFrame:
    """Return the per-task accuracy as a display table indexed by (model, task), with the measures
    over contrast tuples (``tuple_cells``)."""
    shown = table[["model", "task", "trials", "items"]].copy()
    shown["strict % [95% CI]"] = [_cell(r.strict, r.lo, r.hi) for r in table.itertuples()]
    found = tuple_rows(tuples, ["model", "task"]) if not tuples.empty else {}
    cells = [tuple_cells(found.get((r.model, r.task))) for r in table.itertuples()]
    for name in cells[0] if cells else []:
        shown[name] = [c[name] for c in cells]
    shown["contains %"] = [f"{100 * c:.1f}" for c in table["contains"]]
    shown["invalid"] = table["invalid"]
    shown["refused"] = table["refused"]
    return shown.set_index(["model", "task"])


def size_display(table: pd.DataFrame) -> pd.DataFrame:
    """Return accuracy cells pivoted to one column per number of shapes, indexed by (model, task)."""
    cells = table.assign(cell=[_cell(r.strict, r.lo, r.hi) for r in table.itertuples()])
    order = list(dict.fromkeys(zip(table["model"], table["task"], strict=True)))
    pivot = cells.pivot(index=["model", "task"], columns="num_shapes", values="cell")
    pivot = pivot.reindex(pd.MultiIndex.from_tuples(order, names=["model", "task"])).fillna("-")
    pivot.columns = [f"{n} shapes" for n in pivot.columns]
    return pivot


def tests_display(table: pd.DataFrame) -> pd.DataFrame:
    """Return the paired tests for display: items compared, then ``common.report.paired_cells``."""
    return table[["a", "b", "n"]].assign(**paired_cells(table)).set_index(["a", "b"])


def summary_lines(scored: pd.DataFrame, shortcuts: pd.DataFrame, audited: pd.DataFrame) -> list[str]:
    """Return the summary: overall strict accuracy per model (other than shortcuts), then how many
    shortcuts and audit views stay at chance, and for each that does not, which check on which
    task and what to do (``check_lines``)."""
    cells = [
        f"{model} {headline_cell(*interval(part), n=part['item'].nunique(), unit='items')}"
        for model, part in scored.groupby("model", sort=False)
        if model not in SHORTCUT_TASKS
    ]
    lines = ["canvas strict accuracy %: " + "; ".join(cells)] if cells else []
    return lines + check_lines(shortcuts, audited)


def plot_accuracy(by_size: pd.DataFrame, chances: dict[str, pd.Series], path: Path) -> None:
    """Write a PNG: one panel per task, strict accuracy (%) against the number of shapes, one line
    per model with clustered 95% interval bars, and the chance lines (``analysis.chance_lines``, by
    task and number of shapes): ``"chance"`` dashed black, a run's own chance dotted in its colour."""
    plt = pyplot()
    table = by_size
    tasks = list(dict.fromkeys(table["task"]))
    models = list(dict.fromkeys(table["model"]))
    colours = run_colours(models)
    cols = min(3, len(tasks))
    rows_ = -(-len(tasks) // cols)
    fig, axes = plt.subplots(rows_, cols, figsize=(3.0 * cols + 1.6, 3.0 * rows_), sharey=True, squeeze=False)
    for ax in axes.flat[len(tasks) :]:
        ax.set_visible(False)
    for ax, task in zip(axes.flat[: len(tasks)], tasks, strict=True):
        rows = table[table["task"] == task]
        for model in dict.fromkeys(rows["model"]):
            line = rows[rows["model"] == model].sort_values("num_shapes")
            # an interval's end can miss the estimate by a rounding error at 0 or 100%
            errors = [
                100 * (line["strict"] - line["lo"]).clip(lower=0),
                100 * (line["hi"] - line["strict"]).clip(lower=0),
            ]
            colour = colours[model]
            ax.errorbar(
                line["num_shapes"],
                100 * line["strict"],
                yerr=errors,
                marker="o",
                capsize=2,
                label=model,
                color=colour,
            )
        sizes = sorted(set(rows["num_shapes"]))
        for label, line in chances.items():
            run = label.removeprefix("chance of ")
            style = (
                {"color": "k", "linestyle": "--"}
                if label == "chance"
                else {"color": colours[run], "linestyle": ":"}
            )
            ax.plot(sizes, [100 * line[(task, n)] for n in sizes], linewidth=1, label=label, **style)
        ax.set_title(task.replace("_", " "), fontsize="medium")
        ax.set_xticks(sizes)
        ax.set_xlabel("shapes")
        ax.set_ylim(-2, 102)
    for row in axes:
        row[0].set_ylabel("strict accuracy (%)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize="small", loc="center right")
    fig.tight_layout(rect=(0, 0, 1 - 1.5 / (3.0 * cols + 1.6), 1))
    save_png(fig, path, dpi=110)


# ---- the explorer's canned queries of this suite (``common.queries``, ``make explore``) -----------
CANVAS_ACCURACY = """
SELECT r.run_id, r.set_name, r.label, count(*) AS trials, round(100.0 * avg(a.correct), 1) AS strict_pct,
  round(100.0 * avg((SELECT value FROM scores c WHERE c.answer_id = a.answer_id AND c.rule = 'contains')), 1)
    AS contains_pct, sum(a.invalid) AS invalid, sum(a.refused IS NOT NULL) AS refused
FROM answers a JOIN run_rows r USING (run_id) WHERE r.suite = 'canvas' AND a.scored AND a.draw = 0
GROUP BY r.run_id ORDER BY r.run_id"""
QUERIES = {
    "canvas_strict_accuracy": (
        "Canvas: strict accuracy",
        "Every trial of a run, as the report's summary.",
        CANVAS_ACCURACY,
    ),
}
