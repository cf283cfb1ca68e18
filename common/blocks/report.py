"""The blocks section of the one analysis (``common.analysis``): tables, figures, the paper's table.

``section(refs, scored)`` assembles what ``common.blocks.analysis`` computes from a set's scored
rows (the results database; nothing here reads a results file): success by view and run
(lenient and strict side by side, 95% Wilson intervals, invalid and refused counts), the same on
the problems that need a move and by optimal plan length, success after each feedback round,
fact accuracy, the exact paired (McNemar) test between every two runs of a view, two PNG
figures, and for the paper's sets the published table next to the reproduced one
(``common.blocks.paper``).
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from common import leaderboard, modalities, paths, sampling
from common.analysis import Section
from common.blocks import analysis
from common.blocks.figures import plot_by_length, plot_by_view
from common.blocks.paper import paper_section
from common.blocks.runs import METHODS, RUN, run_label
from common.errors import UserError
from common.report import headline, headline_cell, interval_text, paired_cells
from common.scored import Scored
from common.suite import SetRef

ABOUT = """Blocks world (Collins et al., CogSci 2022): from an initial board of stacked household items,
reach goal constraints by moving top items. A model either **plans** in English from a few-shot
prompt, or translates the description into PDDL facts that our optimal planner solves
(**LLM+planner**). Plans are checked on the true problem under the paper's **lenient** rule
(unparseable lines and impossible moves skipped) and a **strict**, VAL-like rule (the first bad
line fails the plan). Rates are over every problem of a run, with 95% Wilson intervals.
**refused** requests (e.g. longer than the model's context) are failures under both rules, so
every model has the same denominator (as in WorldSense; leaving refusals out would flatter a
small-context model, since the longest problems are the ones refused). **invalid** answers (no
move of the problem's items, or facts that give no plan) fail the strict rule, and the lenient
one except where the goal already held (a plan of no moves). Both are also counted in columns
of their own. An empty plan already succeeds where the goal holds at the start, so the
*needs a move* table is the fairer comparison."""


HEADLINE_TITLE = "SUCCESS (lenient %, 95% Wilson interval) by run and view"
PAIRED_TITLE = (
    "PAIRED: exact McNemar test between runs, paired by problem (refused = failed; "
    "a better: the problems only a solved), lenient and strict rules"
)


def section(
    refs: Sequence[SetRef],
    scored: Scored,
    figures_dir: Path | None = None,
    db: str | Path | None = None,
    **_: Any,
) -> Section:
    """Return the blocks Section of a set's scored rows (``refs``: the one set; see the module
    docstring); with ``figures_dir`` the PNGs ``blocks_<set>_success_by_view.png`` and, when the
    problems have more than one optimal plan length, ``blocks_<set>_success_by_length.png``. The
    paper's table is added when the set is one of the paper's (configs/papers/blocks.yaml), from
    the release's runs as the results database ``db`` (default: the default database) holds them
    (``paper.paper_section``)."""
    (ref,) = refs
    df, notes = analysis.results_frame(scored)
    if df.empty:
        raise UserError(
            f"{paths.shown(ref.results)}: no blocks results (expected <nl|pddl>___<view>/"
            "<prompting>___<model>___results.jsonl, written by lm_plan.py or codex_translate.py)"
        )
    views = analysis.set_views(df, scored.items)
    df["view"] = pd.Categorical(df["view"], views, ordered=True)
    df["method"] = pd.Categorical(df["method"], list(METHODS.values()), ordered=True)
    df = df.sort_values(["view", *RUN], kind="stable")
    df[["view", "method"]] = df[["view", "method"]].astype(str)
    by_view = analysis.success(df, ["view", *RUN])
    runs = run_order(by_view)  # one order (and colour) per run in every table and figure
    hard = analysis.success(analysis.needs_a_move(df), ["view", *RUN])
    lengths = df[df["optimal_length"].notna()].astype({"optimal_length": int})
    by_length = analysis.success(
        sort_by_run(lengths, runs, ["_run", "optimal_length"]), [*RUN, "optimal_length"]
    )
    rounds = analysis.feedback_rounds(df)
    tests = analysis.paired_tests(df)
    hard_shown = hard if len(analysis.needs_a_move(df)) < len(df) else None  # else the same table again
    tables = [
        (HEADLINE_TITLE, headline_table(by_view, runs)),
        *_tables(by_view, hard_shown, by_length, rounds, analysis.fact_accuracy(df), tests),
    ]
    shown = modalities.modality_tests(scored, "lenient", run_name)
    if not shown.empty:
        tables.append((modalities.TITLE, modalities.modality_display(shown, views=True)))
    draws = analysis.draw_frames(scored)
    tables += sampling.sampling_tables(draws, "pass@k", "lenient success")
    heads = headline_cells(analysis.success(df, RUN), ref.name)
    figures = []
    if figures_dir is not None:  # past OPEN_RUNS runs, the figures draw the best and the baselines
        drawn, note = leaderboard.drawn_runs(heads, "blocks", "lenient success")
        shown_runs = runs if drawn is None else [run for run in runs if run_label(*run) in drawn]
        caption, path = plot_by_view(by_view, views, shown_runs, figures_dir, ref.name)
        figures.append((caption + note, path))
        if lengths["optimal_length"].nunique() > 1:
            caption, path = plot_by_length(by_length, shown_runs, figures_dir, ref.name)
            figures.append((caption + note, path))
        if not shown.empty:
            scores = modalities.modality_scores(scored, "lenient", run_name)
            if drawn is not None:
                scores = scores[scores["run"].isin(drawn)]
            path = figures_dir / f"blocks_{ref.name}_modalities.png"
            figures.append(
                (MODALITY_CAPTION + note, modalities.plot_modalities(scores, path, "lenient success"))
            )
    paper, paper_lines, paper_notes = paper_section(ref.name, db)
    notes += paper_notes + _notes(by_view)
    summary = (
        paper_lines
        + _summary(by_view, ref.name)
        + modalities.summary_lines(
            shown[shown["view"] == shown["view"].iloc[-1]] if len(shown) else shown, "blocks"
        )
        + sampling.sampling_summary(draws)
    )
    data = {"success": by_view, "needs_a_move": hard, "by_length": by_length, "paired": tests}
    if not rounds.empty:
        data["feedback"] = rounds
    if not shown.empty:
        data["modalities"] = shown
    files = [paths.ROOT / file for file in analysis.ordered_runs(scored.runs)["results_file"]]
    return Section(
        suite="blocks",
        title=f"Blocks world: {ref.name}",
        about=ABOUT,
        heading=f"BLOCKS WORLD RESULTS IN {paths.shown(ref.results)}",
        tables=tables,
        figures=figures,
        data=data,
        summary=summary[:3],
        paper=paper,
        notes=notes,
        inputs=files,
        headline_tables=1,
        paired_table=PAIRED_TITLE,
        headline=heads,
    )


MODALITY_CAPTION = (
    "Blocks world in words and in pictures: lenient success of each run in each modality, per "
    "method and view; 95% intervals"
)


def run_name(run: pd.Series) -> str:
    """Return how the modality table names a run's modalities together: ``<model> (<method>,
    <prompting without the modality>)``, as ``runs.run_label``."""
    return run_label(run["method"], run["base"], run["model"])


def _tables(
    by_view: pd.DataFrame,
    hard: pd.DataFrame | None,
    by_length: pd.DataFrame,
    rounds: pd.DataFrame,
    accuracy: pd.DataFrame,
    tests: pd.DataFrame,
) -> list[tuple[str, pd.DataFrame]]:
    """Return the section's (title, display table) pairs; the needs-a-move table unless ``hard``
    is None, the feedback, translation and paired tables when they have rows."""
    tables = [
        (
            "SUCCESS by view and run (%, 95% Wilson interval; a refused problem is a failure)",
            success_table(by_view, ["view", *RUN]),
        )
    ]
    if hard is not None:
        title = "SUCCESS on the problems that NEED A MOVE (the goal did not hold at the start)"
        tables.append((title, success_table(hard, ["view", *RUN])))
    title = "SUCCESS by OPTIMAL PLAN LENGTH (%, 95% Wilson interval; all views pooled)"
    tables.append((title, length_table(by_length)))
    if not rounds.empty:
        title = "FEEDBACK: success after round k (lenient | strict, %, 95% interval)"
        tables.append((title, rounds_table(rounds)))
    if not accuracy.empty:
        title = "TRANSLATION ACCURACY (mean precision and recall of the facts)"
        tables.append((title, accuracy.set_index(["view", *RUN]).map(lambda v: f"{v:.2f}")))
    if not tests.empty:
        tables.append((PAIRED_TITLE, tests_table(tests)))
    return tables


# ---- display tables -------------------------------------------------------------------------------
def cell(rate: float, lo: float, hi: float) -> str:
    """Return "rate [lo, hi]" (percent, one decimal, aligned in 5 characters), or "-" for a group
    without problems."""
    return interval_text(rate, lo, hi, width=5)


def headline_cells(pooled: pd.DataFrame, set_name: str) -> dict[str, Any]:
    """Return the set's cells of the blocks headline table: each run's lenient success over every
    problem of every view (``analysis.success`` by run), Wilson 95%, the answers it rests on when
    few (``common.report.headline_cell``)."""
    cells = [
        (
            run_label(*(getattr(row, c) for c in RUN)),
            set_name,
            headline_cell(
                row.lenient_rate, row.lenient_lo, row.lenient_hi, row.problems, "problems", 1, bounds=(0, 100)
            ),
            row.problems,
        )
        for row in pooled.itertuples()
    ]
    return headline("lenient success % [95% Wilson], problems of every view pooled", "problem", cells)


def headline_table(by_view: pd.DataFrame, runs: list[tuple[str, str, str]]) -> pd.DataFrame:
    """Return the compact comparison of the runs: one row per run (in ``runs`` order), one column
    per view (in ``by_view``'s order), lenient success "rate [lo, hi]"; "-" where a run has no view."""
    bounds = zip(by_view["lenient_rate"], by_view["lenient_lo"], by_view["lenient_hi"], strict=True)
    cells = by_view.assign(
        run=[run_label(*r) for r in zip(*(by_view[c] for c in RUN), strict=True)],
        cell=[interval_text(*values) for values in bounds],
    )
    table = cells.pivot(index="run", columns="view", values="cell")
    views = list(dict.fromkeys(by_view["view"]))
    table = table.reindex(index=[run_label(*r) for r in runs], columns=views).fillna("-")
    table.columns.name = None
    return table


def success_table(stats: pd.DataFrame, index: list[str]) -> pd.DataFrame:
    """Return ``analysis.success`` for display: problems, lenient, strict, invalid, refused."""
    shown = stats[index].copy()
    shown["problems"] = stats["problems"]
    for rule in ("lenient", "strict"):
        shown[rule] = [
            cell(*values)
            for values in zip(stats[f"{rule}_rate"], stats[f"{rule}_lo"], stats[f"{rule}_hi"], strict=True)
        ]
    shown["invalid"], shown["refused"] = stats["invalid"], stats["refused"]
    return shown.set_index(index)


def run_order(stats: pd.DataFrame) -> list[tuple[str, str, str]]:
    """Return the runs (method, prompting, model) of ``stats`` in their first-appearance order."""
    return list(dict.fromkeys(zip(*(stats[c] for c in RUN), strict=True)))


def sort_by_run(frame: pd.DataFrame, runs: list[tuple[str, str, str]], keys: list[str]) -> pd.DataFrame:
    """Return ``frame`` sorted (stably) by ``keys``, where ``"_run"`` stands for a row's run's
    place in ``runs``; ``frame`` is not modified (the returned copy has the ``_run`` column)."""
    rank = {run: i for i, run in enumerate(runs)}
    ranked = frame.assign(_run=[rank[r] for r in zip(*(frame[c] for c in RUN), strict=True)])
    return ranked.sort_values(keys, kind="stable")


def length_table(stats: pd.DataFrame) -> pd.DataFrame:
    """Return success by optimal plan length for display as the view table is (``success_table``:
    lenient and strict side by side, invalid and refused): one row per length and run, lengths
    in order, runs in their order within a length."""
    order = sort_by_run(stats, run_order(stats), ["optimal_length", "_run"])
    return success_table(order, ["optimal_length", *RUN])


def rounds_table(rounds: pd.DataFrame) -> pd.DataFrame:
    """Return success after each feedback round: one row per view and run, one column per round."""
    values = [
        f"{cell(a, b, c).strip()} | {cell(d, e, f).strip()}"
        for a, b, c, d, e, f in zip(
            rounds["lenient_rate"],
            rounds["lenient_lo"],
            rounds["lenient_hi"],
            rounds["strict_rate"],
            rounds["strict_lo"],
            rounds["strict_hi"],
            strict=True,
        )
    ]
    table = rounds.assign(value=values).pivot(index=["view", *RUN], columns="round", values="value")
    return table.rename(columns=lambda k: f"after round {k}")


def tests_table(tests: pd.DataFrame) -> pd.DataFrame:
    """Return the paired tests for display: problems compared, then the exact test's three
    columns for the lenient rule and for the strict one (``common.report.paired_cells``)."""
    shown = tests[["view", "a", "b", "n"]].assign(
        **paired_cells(tests, label="lenient: "), **paired_cells(tests, "strict_", "strict: ")
    )
    return shown.set_index(["view", "a", "b"])


# ---- notes, summary ------------------------------------------------------------------------
def _notes(by_view: pd.DataFrame) -> list[str]:
    """Return a caveat per run and view with refused requests."""
    return [
        f"{run_label(row.method, row.prompting, row.model)}, view {row.view}: {row.refused} problem(s) "
        "refused by the server (counted as failures, and in the refused column)"
        for row in by_view.itertuples()
        if row.refused
    ]


def _summary(by_view: pd.DataFrame, set_name: str, most: int = 6) -> list[str]:
    """Return one line: every run's lenient success (mean over the views), best first (the first
    ``most``, then how many more)."""
    runs = by_view.groupby(RUN, sort=False)["lenient_rate"].mean().dropna()
    runs = runs.sort_values(ascending=False, kind="stable")
    if runs.empty:
        return [f"blocks {set_name}: no problems"]
    shown = [f"{run_label(*run)} {rate:.1f}" for run, rate in runs.iloc[:most].items()]
    more = f"; ... ({len(runs) - most} more)" if len(runs) > most else ""
    return [f"blocks {set_name}, lenient success % (mean over views): " + ", ".join(shown) + more]


# ---- the explorer's canned queries of this suite (``common.queries``, ``make explore``) -----------
BLOCKS_SUCCESS = """
SELECT r.run_id, r.set_name, r.view, r.label, count(*) AS problems,
  round(100.0 * avg(a.correct), 1) AS lenient_pct,
  round(100.0 * avg((SELECT value FROM scores c WHERE c.answer_id = a.answer_id AND c.rule = 'strict')), 1)
    AS strict_pct, sum(a.invalid) AS invalid, sum(a.refused IS NOT NULL) AS refused
FROM answers a JOIN run_rows r USING (run_id) WHERE r.suite = 'blocks' AND a.scored AND a.draw = 0
GROUP BY r.run_id ORDER BY r.run_id"""
QUERIES = {
    "blocks_success_by_view": (
        "Blocks: success by view",
        "Each results file is one view of a run: the report's SUCCESS by view and run table.",
        BLOCKS_SUCCESS,
    ),
}
