"""The Already Said That section of the analysis: metrics tables, survival curves, log-rank and paired tests.

``detect(path)`` recognises a results directory of the suite (results/already_said_that/<set>,
or its parent holding several sets) or a set directory (data/already_said_that/<set>, whose
results are then read from results/already_said_that/<set>). ``section`` reads every run found
(results file + turn log) and assembles what common/already_said_that/analysis.py computes, in
the tables of ``tables.py`` and the survival plots.
"""

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from common import sampling
from common.already_said_that import analysis, tables
from common.already_said_that.run import PROMPTING, RESULTS_DIR, read_turns
from common.analysis import Section
from common.figures import pyplot, run_colour, save_png
from common.results import SUFFIX, find_results_files, parse_results_filename, read_results

VARIANT_ORDER = (
    "which_is_heavier",
    "first_letters",
    "reverse_sort",
    "ambiguous_sentences",
    "mixed",
    "distractorless",
)
MODEL_ORDER = ("oracle", "random", "human")
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


def detect(path: Path) -> bool:
    """Return whether ``path`` holds Already Said That results (a set's results directory or its
    parent) or is an Already Said That set directory."""
    return bool(_run_dirs(path)) or _is_set_dir(path)


def _is_set_dir(path: Path) -> bool:
    """Return whether ``path`` is a set directory (a manifest pinning samples.jsonl)."""
    try:
        manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and "samples.jsonl" in (manifest.get("sha256") or {})


def _run_dirs(path: Path) -> list[Path]:
    """Return the directories under ``path`` (itself, or its children) with runs of this suite:
    a results file with its turn log beside it."""

    def has_runs(directory: Path) -> bool:
        return any(
            f.with_name(f.name.removesuffix(SUFFIX) + "___turns.jsonl").is_file()
            for f in find_results_files(directory)
        )

    if not path.is_dir():
        return []
    if has_runs(path):
        return [path]
    return [d for d in sorted(path.iterdir()) if d.is_dir() and has_runs(d)]


def load_runs(path: Path) -> list[dict[str, Any]]:
    """Return every run under ``path``: dicts with set, variant, pairing (``_pairing``), model,
    results and turns paths, the conversations frame and the turn log, sorted by set (variant
    order) then model."""
    if _is_set_dir(path) and not _run_dirs(path):
        path = RESULTS_DIR / path.name
    runs = []
    for directory in _run_dirs(path):
        for results in find_results_files(directory):
            turns_path = results.with_name(results.name.removesuffix(SUFFIX) + "___turns.jsonl")
            if not turns_path.is_file():
                continue
            records = read_results(results)
            prompting, model = parse_results_filename(results)
            runs.append(
                {
                    "set": directory.name,
                    **_pairing(directory.name, records),
                    "model": model if prompting == PROMPTING else f"{model} ({prompting})",
                    "results": results,
                    "turns_path": turns_path,
                    "frame": analysis.conversation_frame(records),
                    "turns": read_turns(turns_path, {r["Key"] for r in records}),
                }
            )
    return sorted(runs, key=lambda run: (_rank(run["set"], VARIANT_ORDER), _rank(run["model"], MODEL_ORDER)))


def _pairing(set_name: str, records: list[dict[str, Any]]) -> dict[str, str]:
    """Return the ``variant`` and ``pairing`` of a run from its records (runs of the same pairing
    played the same word samples and random streams); records written before they held a
    pairing get one from the set's name (the shipped sets: original_* or not)."""
    first = records[0] if records else {}
    fallback = "original" if set_name.startswith("original_") else "wordnet"
    return {
        "variant": str(first.get("variant") or set_name),
        "pairing": str(first.get("pairing") or fallback),
    }


def _rank(name: str, order: tuple[str, ...]) -> tuple[int, str]:
    """Return a sort key putting ``order``'s names first, in that order, then the rest by name."""
    return (order.index(name) if name in order else len(order), name)


def plot_survival(
    curves: pd.DataFrame, panel: str, line: str, clock: str, directory: Path
) -> tuple[str, Path]:
    """Write ``already_said_that_survival_by_<panel>.png`` in ``directory``: the survival curves on
    ``clock`` ("turns" or "main_turns") with 95% bands, one panel per value of ``panel`` ("set" or
    "model"), one line per value of ``line`` (its colour the same in every panel). Return
    (caption, path)."""
    plt = pyplot()
    curves = curves[curves["clock"] == clock]
    panels = list(dict.fromkeys(curves[panel]))
    lines = list(dict.fromkeys(curves[line]))
    columns = min(3, len(panels))
    rows = math.ceil(len(panels) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.2 * rows), squeeze=False, sharey=True)
    for ax, name in zip(axes.flat, panels, strict=False):
        for label, curve in curves[curves[panel] == name].groupby(line, sort=False):
            colour = run_colour(lines.index(label), len(lines))
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
    return caption, path


def _tables(runs: list[dict[str, Any]]) -> tuple[list[tuple[str, pd.DataFrame]], dict[str, pd.DataFrame]]:
    """Return the section's titled display tables and its tidy data (``tables.py``) for ``runs``."""
    metrics, metrics_tidy = tables.metrics_table(runs)
    alive, curves = tables.survival_tables(runs)
    questions, questions_tidy, violations = tables.question_tables(runs)
    models, models_tidy = tables.model_tests(runs)
    variants, variants_tidy = tables.variant_tests(runs)
    shown = [
        ("Average turns per model and set (95% interval)", tables.turns_table(metrics_tidy)),
        (
            (
                "Metrics per set and model (the original's, 95% intervals; avg turns counts distractor "
                "turns, as the original does; a conversation that ended on a request the server refused "
                "counts as a violation there, as in the original)"
            ),
            metrics,
        ),
        ("Conversations still alive after turn t (%, Kaplan-Meier, 95% band)", alive),
        ("Error rates per question type (all turns asked)", questions),
        ("Format violations over all turns; requests refused by the server", violations),
    ]
    if not models.empty:
        shown.append((MODELS_TITLE, models))
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
        "survival": curves,
        "questions": questions_tidy,
        "logrank": models_tidy,
        "variants": variants_tidy,
    }
    return shown, data


def section(path: Path, figures_dir: Path | None = None, **_: Any) -> Section:
    """Return the Already Said That Section of the runs under ``path``: metrics, survival, error
    rates per question, violations over all turns, the tests between models and between
    variants, survival PNGs (with ``figures_dir``), and a summary line per model."""
    runs = load_runs(Path(path))
    heading = f"ALREADY SAID THAT: {path}"
    if not runs:
        notes = [f"no runs under {path}"]
        return Section(
            suite="already_said_that", title="Already Said That", about=ABOUT, heading=heading, notes=notes
        )
    shown, data = _tables(runs)
    label = lambda file: f"{file.parent.name} {parse_results_filename(file)[1]}"  # noqa: E731
    draws = sampling.run_frames([r["results"] for r in runs], analysis.draw_frame, label)
    repeated = sampling.sampling_tables(draws, None, "turns survived (avg_num_turns)", scale=1, unit="turns")
    shown += tables.with_original_se(repeated, draws)
    figures = []
    if figures_dir is not None:
        figures = [
            plot_survival(data["survival"], panel, line, clock, figures_dir)
            for panel, line, clock in (("set", "model", "turns"), ("model", "set", "main_turns"))
        ]
    notes = [
        f"{r['model']} on {r['set']}: {analysis.seed_metrics(r['frame'])['refused']} conversations "
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
        summary=summary_lines(data["metrics"]) + cut + sampling.sampling_summary(draws),
        notes=notes + cut,
        inputs=[p for r in runs for p in (r["results"], r["turns_path"])],
        headline_tables=1,
        paired_table=MODELS_TITLE,
    )


def summary_lines(tidy: pd.DataFrame) -> list[str]:
    """Return up to three lines: per model, the average turns on each set."""
    lines = []
    for model, group in tidy.groupby("model", sort=False):
        cells = ", ".join(f"{row.set} {row.avg_num_turns:.1f}" for row in group.itertuples())
        lines.append(f"{model}: avg turns {cells}")
    return lines[:3]
