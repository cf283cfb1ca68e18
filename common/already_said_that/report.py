"""The Already Said That section of the analysis: metrics tables, survival curves, log-rank and paired tests.

``section`` assembles what common/already_said_that/analysis.py computes from the sets' scored
rows, in the tables of ``tables.py`` and the survival plots.
"""

import json
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from common import dbarrays, leaderboard, paths, sampling
from common.already_said_that import analysis, paper, tables
from common.already_said_that.scoring import PROMPTING, run_order, turns_path
from common.analysis import Section
from common.figures import pyplot, run_colours, save_png
from common.report import headline, headline_cell
from common.scored import Scored
from common.suite import SetRef

CLOCK_NAMES = {"turns": "turn", "main_turns": "main-task turn"}

ABOUT = """Already Said That (after OpenAI's evals suite of that name) measures memory over a long
conversation with distractions. The model sees up to 100 turns: either "MAIN TASK - <word>", where it
must say whether that word was already shown as a main-task word (half of the words repeat; with the
adversarial option half of the main-task words come from earlier distractor questions or the model's own
answers, and must be answered "no"), or, with probability 1/3, an unrelated question (which is heavier,
first letters, reverse sort, ambiguous sentences, or a mix) that it must also answer. Every reply must be
`[answer: ...]`; a wrong or malformed main-task answer ends the conversation. **Turns** is how many turns
a conversation lasted before its failing turn (100: it survived), distractor turns included, as the
original counts them. A distractor turn cannot end a conversation, so variants are compared with
`distractorless` on **main-task turns** (the paired test over the samples both played: the variants share
their samples and random streams, so the log-rank test's independent samples would be wrong there).
Intervals are 95% (means +- 1.96 standard errors; shares: Wilson). A request the server refused (context
too long) counts as the original counted it: the error was the reply, a violation; on a main-task turn the
conversation ends there (the metrics count it, and say how many ended so), on a distractor turn the game goes
on. Survival curves are Kaplan-Meier estimates (survivors censored at 100, conversations ended by a refusal
censored where they stopped). **Wording**: the texts the model read, the original eval's (`original`, read
from its pinned release) or the suite's own (`suite`)."""


MODELS_TITLE = (
    "Models on one set, in turns: log-rank (z < 0: the first named survives longer; two-sided p; it "
    "takes the runs as independent samples) and the exact paired test on the samples both played (a "
    'better: the samples where the first named lasted longer; two-sided p). z and p are "-" where '
    "neither run failed, or every conversation still going failed at each failure turn"
)


def runs_of(scored: Scored) -> list[dict[str, Any]]:
    """Return every run of the scored rows as the tables read them: dicts with set, variant,
    pairing, first_seed (the seed of its first draw, from the pairing; None if unknown), model
    (its name in the tables), draw_label (in the repeated samples' tables), results (the file),
    settings (the model's, as the database recorded them; None without run metadata), seeds (one
    row per conversation of every draw, ``analysis.conversation_frame``: a run of a set played
    with several seeds plays each seed's conversations as a draw), frame (those of the first
    draw), metrics (``analysis.seed_metrics`` of each draw's conversations, by draw;
    ``metrics[0]`` the frame's), curves (the frame's ``analysis.survival`` on each clock), times
    (its failure and censoring times in turns, ``analysis.event_times``), turns
    (one row per turn asked in the first draw, or per group of turns alike, ``count`` of them: its
    question type, whether it was right, whether it was refused) and question_errors (theirs,
    ``analysis.question_errors``; None without turns), in the report's order
    (``scoring.run_order``); one run's rows at a time (``dbarrays.run_answers``), each run's
    computed once per content and code (``Scored.run_part``: kept in the database,
    ``common.runparts``)."""
    parsed: dict[str, Any] = {}  # each distinct detail read once (the runs of a set ask the same turns)
    return [
        scored.run_part(
            "common.already_said_that.report:runs_of",
            run.run_id,
            lambda run=run: _run_of(scored, run, parsed),
        )
        for run in run_order(scored.runs).itertuples()
    ]


def _run_of(scored: Scored, run: Any, parsed: dict[str, Any]) -> dict[str, Any]:
    """Return ``runs_of``'s dict of one run (a row of ``scored.runs``)."""
    mine = dbarrays.run_answers(scored, run.run_id)
    played = mine[mine["turn"] == 0]
    records = [
        {"Key": key, "draw": draw, **json.loads(detail)}
        for key, draw, detail in zip(played["Key"], played["draw"], played["detail"], strict=True)
    ]
    seeds = analysis.conversation_frame(records)
    frame = seeds[seeds["draw"] == 0].reset_index(drop=True)
    later = {int(d): analysis.seed_metrics(f) for d, f in seeds[seeds["draw"] > 0].groupby("draw", sort=True)}
    turns = mine[(mine["turn"] > 0) & (mine["draw"] == 0)]
    details = [parsed.get(d) or parsed.setdefault(d, json.loads(d)) for d in turns["detail"]]
    turn_rows = pd.DataFrame(
        {
            "question": [d["type"] for d in details],
            "question_id": [d.get("question_id") for d in details],
            "wrong_gold": [bool(d.get("wrong_gold")) for d in details],
            "correct": turns["correct"].to_numpy(),
            "refused": turns["refused"].notna().to_numpy(),
            # how many turns the row stands for (``dbarrays.read`` counts a run's turns)
            "count": turns["count"].to_numpy() if "count" in turns else 1,
        },
        columns=["question", "question_id", "wrong_gold", "correct", "refused", "count"],
    )
    return {
        "set": run.set_name,
        **run.attributes,
        "model": run.model if run.prompting == PROMPTING else f"{run.model} ({run.prompting})",
        "first_seed": _first_seed(run.attributes.get("pairing", "")),
        "draw_label": f"{run.set_name} {run.model}",  # its name in the repeated samples' tables
        "results": paths.ROOT / run.results_file,
        # the model's settings of its last run, as the database recorded them (None: none)
        "settings": json.loads(run.settings) if isinstance(run.settings, str) else None,
        "seeds": seeds,
        "frame": frame,
        "metrics": {0: analysis.seed_metrics(frame), **later},
        "curves": {clock: analysis.survival(frame, clock=clock) for clock in analysis.CLOCKS},
        "times": analysis.event_times(frame),  # what its log-rank tests read
        "turns": turn_rows,
        "question_errors": analysis.question_errors(turn_rows) if len(turn_rows) else None,
    }


def _first_seed(pairing: str) -> int | None:
    """Return the seed of a run's first draw from its pairing ("<samples>:<first seed>"), or None
    for records written before they said it."""
    seed = pairing.rpartition(":")[2]
    return int(seed) if ":" in pairing and seed.isdigit() else None


def plot_survival(
    curves: pd.DataFrame,
    panel: str,
    line: str,
    clock: str,
    directory: Path,
    drawn: Sequence[str] | None = None,
) -> tuple[str, Path]:
    """Write ``already_said_that_survival_by_<panel>.png`` in ``directory``: the survival curves on
    ``clock`` ("turns" or "main_turns") with 95% bands, one panel per value of ``panel`` ("set" or
    "model"), one line per value of ``line`` (its colour the same in every panel); with ``drawn``
    (``leaderboard.open_headline_runs``), only those models, which the caption says. Return
    (caption, path)."""
    plt = pyplot()
    models = curves["model"].nunique()
    curves = curves[curves["clock"] == clock]
    if drawn is not None:
        curves = curves[curves["model"].isin(list(drawn))]
    panels = list(dict.fromkeys(curves[panel]))
    lines = list(dict.fromkeys(curves[line]))
    colours = run_colours([str(label) for label in lines])
    columns = min(3, len(panels))
    rows = math.ceil(len(panels) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.2 * rows), squeeze=False, sharey=True)
    for ax, name in zip(axes.flat, panels, strict=False):
        for label, curve in curves[curves[panel] == name].groupby(line, sort=False):
            colour = colours[str(label)]
            ax.step(curve["turn"], 100 * curve["alive"], where="post", label=str(label), color=colour)
            ax.fill_between(
                curve["turn"], 100 * curve["lo"], 100 * curve["hi"], step="post", alpha=0.2, color=colour
            )
        ax.set_title(str(name), fontsize="medium")
        ax.set_xlim(0, 100)
        ax.set_ylim(0, 102)
        ax.set_xlabel(CLOCK_NAMES[clock])
        ax.legend(fontsize="x-small")
    for ax in axes[:, 0]:
        ax.set_ylabel("% conversations alive")
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    fig.tight_layout()
    path = directory / f"already_said_that_survival_by_{panel}.png"
    save_png(fig, path, dpi=110)
    caption = (
        f"Already Said That: share of conversations alive after each {CLOCK_NAMES[clock]}, "
        f"one panel per {panel}"
    )
    if drawn is not None:
        caption += f"; {_drawn_note(models)}"
    return caption, path


def _drawn_note(models: int) -> str:
    """Return what a figure drawing the open models of ``models`` says of them."""
    return leaderboard.drawn_note(models, "models", "average turns") + " (every model in the tables)"


TURNS_TITLE = (
    "Average turns per model and set (95% interval; a set played with several seeds, as the original's "
    "published runs: the mean over the seeds +- its standard error as the original (population SD / sqrt k))"
)
SEEDS_TITLE = (
    "The original's protocol: each metric its plots show, per seed, and the mean over the seeds +- its "
    "standard error, as the original (population SD / sqrt k) and with the sample SD; turns and "
    "distractors as counts, rates and accuracy as fractions, as the original reports them"
)
FIRST_SEED = " (a set played with several seeds: its first)"


def _tables(
    runs: list[dict[str, Any]], numbers: pd.DataFrame, heads: dict[str, Any]
) -> tuple[list[tuple[str, pd.DataFrame]], dict[str, pd.DataFrame]]:
    """Return the section's titled display tables and its tidy data (``tables.py``, ``paper.py``)
    for ``runs``, their metrics over seeds ``numbers`` (``paper.seed_numbers``) and their
    headline cells ``heads`` (``headline_cells``)."""
    metrics, metrics_tidy = tables.metrics_table(runs)
    alive, curves = tables.survival_tables(runs)
    questions, questions_tidy, violations = tables.question_tables(runs)
    models, models_tidy = tables.model_tests(runs)
    largest = max(Counter(run["set"] for run in runs).values(), default=0)  # runs of its largest set
    models_title = MODELS_TITLE  # past ALL_PAIRS_UP_TO runs a set, it states the rule of the printed pairs
    if largest > leaderboard.ALL_PAIRS_UP_TO:
        models_title += ". " + leaderboard.printed_rule(largest, 2 * len(models_tidy))
    variants, variants_tidy = tables.variant_tests(runs)
    several = not numbers.empty
    shown = [
        (TURNS_TITLE, tables.turns_table(heads["cells"])),
        (
            (
                "Metrics per set, model and seed (the original's, 95% intervals; avg turns counts "
                "distractor turns, as the original does; a conversation that ended on a request the server "
                "refused counts as a violation there, as in the original)"
            ),
            metrics,
        ),
        *([(SEEDS_TITLE, paper.seeds_table(numbers))] if several else []),
        ("Conversations still alive after turn t (%, Kaplan-Meier, 95% band)" + FIRST_SEED * several, alive),
        ("Error rates per question type (all turns asked)", questions),
        ("Format violations over all turns; requests refused by the server", violations),
    ]
    if not models.empty:
        shown.append((models_title, models))
    if not variants.empty:
        title = (
            "Each set against distractorless, per model (the distractorless set of the same word samples "
            "and seed), in main-task turns (a distractor turn cannot end a conversation): the exact paired "
            "test on the samples both played (a better: the samples where the set named first lasted "
            "longer; two-sided p). No log-rank test: the variants share samples, random streams and a "
            "seeded solver's draws, so they are not independent samples"
        )
        shown.append((title, variants))
    data = {
        "metrics": metrics_tidy,
        "seeds": paper.tidy(numbers),
        "survival": curves,
        "questions": questions_tidy,
        "logrank": models_tidy,
        "variants": variants_tidy,
    }
    return shown, data


def section(refs: Sequence[SetRef], scored: Scored, figures_dir: Path | None = None, **_: Any) -> Section:
    """Return the Already Said That Section of the scored rows of the sets ``refs`` (one, or
    every set of the suite with runs): metrics, survival, error rates per question, violations
    over all turns, the tests between models and between variants, survival PNGs (with
    ``figures_dir``), and a summary line per model."""
    runs = runs_of(scored)
    where = refs[0].results if len(refs) == 1 else refs[0].results.parent
    heading = f"ALREADY SAID THAT: {paths.shown(where)}"
    if not runs:
        notes = [f"no runs under {paths.shown(where)}"]
        return Section(
            suite="already_said_that", title="Already Said That", about=ABOUT, heading=heading, notes=notes
        )
    numbers = paper.seed_numbers(runs)
    heads = headline_cells(headline_frame(runs, numbers))
    shown, data = _tables(runs, numbers, heads)
    draws, groups = tables.draw_frames(runs)
    names = leaderboard.baseline_names(tables.SUITE_NAME)
    baselines = [run["draw_label"] for run in runs if leaderboard.is_baseline(run["model"], names)]
    shown += sampling.sampling_tables(
        draws,
        None,
        "turns survived (avg_num_turns)",
        scale=1,
        unit="turns",
        groups=groups,
        baselines=baselines,
    )
    figures = []
    if figures_dir is not None:
        drawn = leaderboard.open_headline_runs(heads, tables.SUITE_NAME)  # past OPEN_RUNS models: the best
        figures = [
            plot_survival(data["survival"], panel, line, clock, figures_dir, drawn)
            for panel, line, clock in (("set", "model", "turns"), ("model", "set", "main_turns"))
        ]
        rows = paper.paper_rows(numbers)
        models = rows["model"].nunique()
        if drawn is not None:
            rows = rows[rows["model"].isin([*drawn, paper.RANDOM])]
        if len(rows):
            caption, path = paper.plot_paper(rows, figures_dir / "already_said_that_paper.png")
            figures.append((f"{caption}; {_drawn_note(models)}" if drawn is not None else caption, path))
    notes = [
        f"{r['model']} on {r['set']}: {r['metrics'][0]['refused']} conversations "
        "ended on a request the server refused (context too long): violations in the metrics, as the "
        "original counted them, censored in the curves"
        for r in runs
        if r["frame"]["refused"].any()
    ]
    notes += tables.wrong_gold_notes(runs)
    cut = tables.cut_lines(runs)
    return Section(
        suite="already_said_that",
        title="Already Said That",
        about=ABOUT,
        heading=heading,
        tables=shown,
        figures=figures,
        data=data,
        summary=summary_lines(runs, numbers) + cut + sampling.sampling_summary(draws),
        notes=notes + cut,
        inputs=[p for r in runs for p in (r["results"], turns_path(r["results"]))],
        headline_tables=1,
        paired_table=next((t for t, _ in shown if t.startswith(MODELS_TITLE)), MODELS_TITLE),
        headline=heads,
    )


HEADLINE = (
    "average turns survived [95% interval], conversations as units; a set played with several "
    "seeds: the mean over the seeds +- SE as the original (population SD / sqrt k)"
)


def headline_frame(runs: list[dict[str, Any]], numbers: pd.DataFrame) -> pd.DataFrame:
    """Return a row per run for ``headline_cells``: its model and set, the average turns of its
    first seed with the 95% interval, ``n`` (its conversations, every seed's) and ``over_seeds``
    (its mean over several seeds +- the original's standard error, ``paper.cell``; None for a
    run of one seed)."""
    rows, over = [], paper.over_seeds(numbers)
    for run in runs:
        m = run["metrics"][0]
        rows.append(
            {
                "model": run["model"],
                "set": run["set"],
                **{name: m[name] for name in ("avg_num_turns", "avg_num_turns_lo", "avg_num_turns_hi")},
                "n": len(run["seeds"]),
                "over_seeds": paper.cell(over.get((run["set"], run["model"]))),
            }
        )
    return pd.DataFrame(rows)


def headline_cells(tidy: pd.DataFrame) -> dict[str, Any]:
    """Return the suite's headline cells from ``headline_frame``: each model's average turns on
    each set (all turns, as the original counts them); over several seeds the mean +- the
    original's standard error, as it published them, else with the 95% interval and the
    conversations it rests on when few (``common.report.headline_cell``)."""
    cells = [
        (
            m["model"],
            m["set"],
            m["over_seeds"]
            if isinstance(m.get("over_seeds"), str)
            else headline_cell(
                m["avg_num_turns"],
                m["avg_num_turns_lo"],
                m["avg_num_turns_hi"],
                m["n"],
                "conversations",
                scale=1,
                bounds=None,  # turns, not a rate
            ),
            m["n"],
        )
        for m in tidy.to_dict("records")
    ]
    return headline(HEADLINE, "conversation", cells)


def summary_lines(runs: list[dict[str, Any]], numbers: pd.DataFrame) -> list[str]:
    """Return up to three lines: per model, the average turns on each set (over several seeds,
    the mean +- the original's standard error)."""
    cells: dict[str, list[str]] = {}
    seeds = paper.over_seeds(numbers)
    for run in runs:
        over = seeds.get((run["set"], run["model"]))
        if over is not None:
            value = paper.mean_se(over["mean"], over["se_original"])
        else:
            value = f"{run['metrics'][0]['avg_num_turns']:.1f}"
        cells.setdefault(run["model"], []).append(f"{run['set']} {value}")
    return [f"{model}: avg turns {', '.join(said)}" for model, said in cells.items()][:3]


# ---- the explorer's canned queries of this suite (``common.queries``, ``make explore``) -----------
ASAT_TURNS = """
SELECT r.run_id, r.set_name, r.model, count(*) AS conversations, round(avg(u.score), 1) AS avg_turns,
  sum(NOT u.censored) AS failed
FROM units u JOIN run_rows r USING (run_id)
WHERE r.suite = 'already_said_that' AND u.rule = 'turns' AND NOT u.refused
GROUP BY r.run_id ORDER BY r.run_id"""
QUERIES = {
    "already_said_that_average_turns": (
        "Already Said That: average turns",
        "Turns passed before the failing one, over the conversations not refused by the server.",
        ASAT_TURNS,
    ),
}
