"""The WorldSense section: the release's tables, the paper's table, paired tests, a bar plot.

The release's tables (``release_tables``) are pandas tables of "mean (95% half-width)" cells,
as the release's script prints them (``format_report``, through the one renderer of
``common.report``); accuracy is in %, one decimal; bias in [-1, 1], two decimals.
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from common import dbarrays, leaderboard, paths, sampling
from common.analysis import Section
from common.config import load_yaml
from common.errors import DataError
from common.figures import pyplot, run_colours, save_png
from common.report import headline, headline_cell, interval_text, p_text, paired_cells, render_text
from common.scored import Scored
from common.suite import SetRef
from common.trials.data import trials_path
from common.worldsense.analysis import (
    Analysis,
    analyse_scored,
    display_order,
    paired_tests,
    pivot_pretty,
)

MODEL_ROWS = ["prompting", "modelname"]
SUITE = "worldsense"  # its name in the registry (the baselines of the figure)
PAIRED_TITLE = (
    "PAIRED: models on the tuples both answered (accuracy %, tuples weighted equally): "
    "t-test of the mean difference; exact test of the tuples where one is better"
)
PUBLISHED = paths.CONFIGS / "papers" / "worldsense.yaml"


ABOUT = """WorldSense (Benchekroun et al. 2023) tests grounded reasoning about simple orderings
("Alice takes history before economics..."). Three problem families, each trivial and normal:
**Infer** (is a relation TRUE or FALSE?), **Consist** (is a description POSSIBLE or IMPOSSIBLE?),
**Compl** (is the information enough to decide?). The trials of a tuple share a description with
the answers swapped, so the tuple is the unit of statistics and chance is 50% on every problem;
problem sizes and problems are weighted equally; intervals are 1.96 standard errors. **Bias**
is the leaning towards the affirmative answer (+1 always, -1 never)."""


def section(
    refs: Sequence[SetRef],
    scored: Scored,
    figures_dir: Path | None = None,
    by: Sequence[str] = ("problemname",),
    require_complete: bool = False,
    **_: Any,
) -> Section:
    """Return the WorldSense Section of a test set's scored rows (``refs``: the one set): the
    release's tables (accuracy and bias with 95% intervals) plus the answers table, the tidy
    statistics, one summary line per model, and with ``figures_dir`` the accuracy bar plot
    ``worldsense_accuracy.png``."""
    (ref,) = refs
    if scored.runs.empty:
        raise DataError(
            f"{paths.shown(ref.results)}: no <prompting>___<modelname>___results.jsonl file to analyse "
            "(write one with scripts/test_random_model.py)"
        )
    result = analyse_scored(scored, by, require_complete)  # one run at a time
    figures = [plot_accuracy(result, figures_dir)] if figures_dir is not None else []
    comparison = paper_comparison(result) if ref.name == load_yaml(PUBLISHED)[0]["testset"] else None
    tables = [*release_tables(result), *coverage_table(result)]
    paired = paired_tests(result.tuples)
    if not paired.empty:
        tables.append((PAIRED_TITLE, paired_display(paired)))
    repeated = (scored.answers["draw"] > 0).any()  # every answer a row only then (the sampling tables)
    draws = sampling.draw_frames(dbarrays.rows(scored) if repeated else scored)
    tables += sampling.sampling_tables(draws, "majority vote", "answer in the gold answer's class")
    return Section(
        suite=SUITE,
        title="WorldSense",
        about=ABOUT,
        heading=f"ANALYSING RESULTS OF TESTSET {paths.shown(ref.data)}",
        tables=tables,
        figures=figures,
        data={"stats": tidy_stats(result)},
        summary=summary_lines(result, comparison) + sampling.sampling_summary(draws),
        notes=coverage_notes(result),
        paper=paper_table(comparison) if comparison is not None else None,
        inputs=[trials_path(ref.data), *(paths.ROOT / f for f in scored.runs["results_file"])],
        headline_tables=1 if result.average is not None else 0,  # the average accuracy, then the figure
        paired_table=PAIRED_TITLE,
        headline=headline_cells(result, ref.name),
    )


def run_cells(result: Analysis) -> list[tuple[str, str, int]]:
    """Return ``(run, cell, tuples)`` per run in display order: the average accuracy (%, problem sizes and
    problems weighted equally) with its 95% interval, the tuples it rests on when few
    (``common.report.headline_cell``; no interval from a single tuple), and how much of the test
    set a partial results file answered."""
    if result.average is None:
        return []
    partial = partial_files(result)
    tuples = result.tuples.groupby(MODEL_ROWS).size()
    average = _in_display_order(result.average.reset_index(), MODEL_ROWS).set_index(MODEL_ROWS)
    cells = []
    for (prompting, model), row in average.iterrows():
        mean, half, n = row["mean"], row["conf95"], int(tuples.get((prompting, model), 0))
        cell = headline_cell(mean, mean - half, mean + half, n, "tuples")
        share = f" (partial: {partial[(prompting, model)]})" if (prompting, model) in partial else ""
        cells.append((f"{model} ({prompting})", cell + share, n))
    for (prompting, model), share in partial.items():  # a run too short for one whole tuple: said
        if (prompting, model) not in average.index:
            cells.append((f"{model} ({prompting})", f"no complete tuple yet (partial: {share})", 0))
    return cells


def headline_cells(result: Analysis, set_name: str) -> dict[str, Any] | None:
    """Return the test set's cells of the WorldSense headline table (``run_cells``)."""
    cells = [(run, set_name, cell, n) for run, cell, n in run_cells(result)]
    return headline("average accuracy % [95% interval], tuples as units", "tuple", cells) if cells else None


def summary_lines(result: Analysis, comparison: pd.DataFrame | None) -> list[str]:
    """Return the section's summary: which results files are partial (first, so that the few
    lines `make all` prints always show it), how much of the published table was reproduced,
    then each model's average accuracy with its 95% half-width."""
    partial = partial_files(result)
    summary = []
    if partial:
        shares = "; ".join(f"{model} ({prompting}) {share}" for (prompting, model), share in partial.items())
        summary.append(f"PARTIAL results in the test set: {shares}")
    if comparison is not None:
        same = int(comparison["same"].sum())
        summary.append(f"published table: {same} of {len(comparison)} cells reproduced exactly")
    summary += [f"{run}: {cell}" for run, cell, _ in run_cells(result)]
    return summary


def paired_display(paired: pd.DataFrame) -> pd.DataFrame:
    """Return ``paired_tests`` as a display table: accuracies and the difference in % with its
    interval, the t-test's p, then the exact test's columns (``common.report.paired_cells``)."""

    def pct(x: float) -> str:
        return f"{100 * x:.1f}"

    return pd.DataFrame(
        {
            "a": paired["a"],
            "b": paired["b"],
            "n": paired["n"].map(lambda n: f"{n:,}"),
            "acc a": paired["acc_a"].map(pct),
            "acc b": paired["acc_b"].map(pct),
            "a - b [95% CI]": [
                interval_text(d, lo, hi, scale=100)
                for d, lo, hi in zip(paired["diff"], paired["diff_low"], paired["diff_high"], strict=True)
            ],
            "t-test p": paired["t_p"].map(p_text),
            **paired_cells(paired),
        }
    ).set_index(["a", "b"])


def paper_table(comparison: pd.DataFrame) -> pd.DataFrame:
    """Return ``paper_comparison`` as a display table: one row per (metric, model), one column per
    problem, cells "<published> ✓" when reproduced exactly, else "<published> ≠ <reproduced>"."""
    pairs = zip(comparison["published"], comparison["reproduced"], comparison["same"], strict=True)
    cells = comparison.assign(cell=[f"{p} ✓" if same else f"{p} ≠ {r}" for p, r, same in pairs])
    order = list(dict.fromkeys(cells["problem"]))
    table = cells.pivot(index=["metric", "model"], columns="problem", values="cell")
    rows = pd.MultiIndex.from_tuples(
        list(dict.fromkeys(zip(cells["metric"], cells["model"], strict=True))), names=["metric", "model"]
    )
    return table.reindex(index=rows, columns=order).fillna("")


def paper_comparison(analysis: Analysis) -> pd.DataFrame | None:
    """Return every cell of the published table (configs/papers/worldsense.yaml) next to the
    same cell of ``analysis``: columns metric, model, problem, published, reproduced, same.

    None when ``analysis`` is not grouped by problem. A model of the paper missing from the
    results gives "-" as reproduced (and same False).
    """
    if analysis.by != ["problemname"]:
        return None
    published = load_yaml(PUBLISHED)[0]
    prompting = published["prompting"]
    average = (
        pivot_pretty(analysis.average, index=["modelname"], columns=["prompting"])
        if analysis.average is not None
        else None
    )
    accuracy = pivot_pretty(analysis.accuracy, index=MODEL_ROWS, columns=analysis.by, scale=100.0)
    bias = pivot_pretty(analysis.bias, index=MODEL_ROWS, columns=analysis.by, scale=1.0)
    rows = []
    for model, cell in published["average_accuracy"].items():
        found = average.loc[model, prompting] if average is not None and model in average.index else "-"
        rows.append(("average accuracy", model, "all", cell, found))
    for metric, table in (("accuracy", accuracy), ("bias", bias)):
        for model, cells in published[metric].items():
            for problem, cell in cells.items():
                key = (prompting, model)
                found = table.loc[key, problem] if key in table.index and problem in table.columns else "-"
                rows.append((metric, model, problem, cell, found))
    frame = pd.DataFrame(rows, columns=["metric", "model", "problem", "published", "reproduced"])
    frame["same"] = frame["published"] == frame["reproduced"]
    return frame


def release_tables(analysis: Analysis) -> list[tuple[str, pd.DataFrame]]:
    """Return the release's (title, display table) pairs: average accuracy (if any), accuracy, bias."""
    by_what = "for each of the problems" if analysis.by == ["problemname"] else "by " + ", ".join(analysis.by)
    tables = []
    if analysis.average is not None:
        tables.append(
            (
                "AVERAGE ACCURACY ACROSS ALL PROBLEMS (with 95% confidence interval)",
                pivot_pretty(analysis.average, index=["modelname"], columns=["prompting"]),
            )
        )
    tables.append(
        (
            f"ACCURACY {by_what}  (with 95% confidence interval)",
            pivot_pretty(analysis.accuracy, index=MODEL_ROWS, columns=analysis.by, scale=100.0),
        )
    )
    tables.append(
        (
            f"BIAS {by_what} (with 95% confidence interval)",
            pivot_pretty(analysis.bias, index=MODEL_ROWS, columns=analysis.by, scale=1.0),
        )
    )
    return tables


def coverage_table(analysis: Analysis) -> list[tuple[str, pd.DataFrame]]:
    """Return the answers per model, titled, as a list of one pair (none without coverage)."""
    if analysis.coverage is None:
        return []
    title = "ANSWERS per model (invalid: no valid option; refused: by the server; both scored wrong)"
    return [(title, analysis.coverage.map(lambda n: f"{n:,}"))]


def partial_files(analysis: Analysis) -> dict[tuple[str, str], str]:
    """Return ``{(prompting, modelname): "1,000 of 87,048 trials"}`` for each results file that
    answered fewer trials than the test set has (empty when every file is complete)."""
    if analysis.coverage is None:
        return {}
    return {
        (prompting, model): f"{row['answered']:,} of {row['trials']:,} trials"
        for (prompting, model), row in analysis.coverage.iterrows()
        if row["answered"] < row["trials"]
    }


def coverage_notes(analysis: Analysis) -> list[str]:
    """Return one line per results file that is partial (answered fewer trials than the test
    set has) or has refused trials, e.g. "x (basic): PARTIAL results, 1,000 of 87,048 trials
    answered ...": what a reader of the tables must know, since a partial file's rows rest on
    its complete tuples only."""
    notes = []
    partial = partial_files(analysis)
    if analysis.coverage is not None:
        for (prompting, model), row in analysis.coverage.iterrows():
            if (prompting, model) in partial:
                notes.append(
                    f"{model} ({prompting}): PARTIAL results, {partial[(prompting, model)]} "
                    "answered (its rows use only its complete tuples)"
                )
            if row["refused"]:
                notes.append(
                    f"{model} ({prompting}): {row['refused']:,} trials refused by the server (scored wrong)"
                )
    return notes


def format_report(analysis: Analysis, testset: str | Path) -> str:
    """Return the release's report of ``analysis``: a banner naming ``testset``, then the
    release's tables (``release_tables``) with their titles, as ``common.report`` renders every
    section (scripts/bench_worldsense.py compares it line by line with the release's output)."""
    return render_text(f"ANALYSING RESULTS OF TESTSET {testset}", release_tables(analysis))


def tidy_stats(analysis: Analysis) -> pd.DataFrame:
    """Return every statistic as a tidy table.

    One row per (metric, prompting, modelname, group): columns ``metric`` (average_accuracy,
    accuracy, bias), the grouping fields, ``mean``, ``conf95``, ``sem``, ``count`` (effective
    number of tuples), unscaled (accuracy in [0, 1]).
    """
    frames = []
    named = [("average_accuracy", analysis.average), ("accuracy", analysis.accuracy), ("bias", analysis.bias)]
    for metric, table in named:
        if table is not None:
            flat = table[["mean", "conf95", "sem", "count"]].reset_index()
            flat = flat.astype({name: object for name in table.index.names})  # keep 3, not 3.0, beside blanks
            frames.append(flat.assign(metric=metric))
    tidy = pd.concat(frames, ignore_index=True)
    return tidy[["metric", *MODEL_ROWS, *analysis.by, "mean", "conf95", "sem", "count"]]


def plot_accuracy(analysis: Analysis, directory: Path) -> tuple[str, Path]:
    """Write ``worldsense_accuracy.png`` in ``directory``: bars of accuracy (%) per group and model
    with 95% interval error bars; past OPEN_RUNS runs, the best of them by their mean over the
    groups and the baselines (``leaderboard.open_runs``; the caption says so). Return (caption, path)."""
    plt = pyplot()
    st = analysis.accuracy.reset_index()
    st["group"] = st[analysis.by].astype(str).agg(" / ".join, axis=1)
    st["model"] = st["modelname"].astype(str)
    if st["prompting"].nunique() > 1:
        st["model"] = st["prompting"].astype(str) + " / " + st["model"]
    groups = list(pd.unique(_in_display_order(st, analysis.by)["group"]))
    models = list(pd.unique(_in_display_order(st, MODEL_ROWS)["model"]))
    named = st["modelname"].astype(str) + " (" + st["prompting"].astype(str) + ")"  # as the tables name runs
    run_of = dict(zip(st["model"], named, strict=True))
    ranked = st.groupby("model", sort=False)["mean"].mean().sort_values(ascending=False, kind="stable")
    drawn = set(leaderboard.open_runs([run_of[m] for m in ranked.index], leaderboard.baseline_names(SUITE)))
    caption = "WorldSense accuracy per problem and model (95% intervals; chance 50%)"
    if len(drawn) < len(models):
        models = [m for m in models if run_of[m] in drawn]
        caption += ": " + leaderboard.drawn_note(len(ranked), "runs", "their mean over the groups")
    width = 0.8 / len(models)
    width_inches = min(40.0, max(6.0, 1.2 * len(groups) * max(1.0, len(models) / 3)))
    fig, ax = plt.subplots(figsize=(width_inches, 4.5))
    colours = run_colours(models)
    for i, model in enumerate(models):
        rows = st[st["model"] == model].set_index("group").reindex(groups)
        xs = [g + (i - (len(models) - 1) / 2) * width for g in range(len(groups))]
        colour = colours[model]
        ax.bar(xs, 100 * rows["mean"], width, yerr=100 * rows["conf95"], capsize=2, label=model, color=colour)
    ax.axhline(50, color="grey", linestyle="--", linewidth=1, label="chance")
    ax.set_xticks(range(len(groups)), groups, rotation=20, ha="right")
    ax.set_ylabel("accuracy (%), 95% interval")
    ax.set_ylim(0, 100)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    path = directory / "worldsense_accuracy.png"
    save_png(fig, path)
    return caption, path


def _in_display_order(df: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """Return ``df`` sorted by the display order (``display_order``) of the columns ``names``."""
    codes = pd.DataFrame({n: display_order(df[n], n).codes for n in names}, index=df.index)
    return df.loc[codes.sort_values(names, kind="stable").index]


# ---- the explorer's canned queries of this suite (``common.queries``, ``make explore``) -----------
WORLDSENSE_AVERAGE = """
WITH by_size AS (  -- the units' sums by task and size, summed when the run was scored
  SELECT run_id, task, size, sum(score_sum) / sum(units) AS acc FROM unit_groups JOIN run_rows USING (run_id)
  WHERE suite = 'worldsense' GROUP BY run_id, task, size
), by_problem AS (SELECT run_id, task, avg(acc) AS acc FROM by_size GROUP BY run_id, task)
SELECT r.run_id, r.model, r.prompting, round(100 * avg(acc), 1) AS accuracy_pct, count(*) AS problems
FROM by_problem JOIN runs r USING (run_id) GROUP BY r.run_id ORDER BY r.run_id"""
QUERIES = {
    "worldsense_average_accuracy": (
        "WorldSense: average accuracy",
        (
            "Tuples' weighted accuracy, averaged over tuples, then problem sizes, then problems "
            "(equal weights): the report's AVERAGE ACCURACY table."
        ),
        WORLDSENSE_AVERAGE,
    ),
}
