"""The Already Said That section of the analysis: metrics tables, survival curves, log-rank and paired tests.

``detect(path)`` recognises a results directory of the suite (results/already_said_that/<set>,
or its parent holding several sets) or a set directory (data/already_said_that/<set>, whose
results are then read from results/already_said_that/<set>). ``section`` reads every run found
(results file + turn log) and assembles what common/already_said_that/analysis.py computes.
"""

import itertools
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from common.already_said_that import analysis
from common.already_said_that.run import RESULTS_DIR, read_turns
from common.analysis import Section
from common.figures import pyplot, run_colour, save_png
from common.report import interval_text, p_text, paired_cells
from common.results import SUFFIX, find_results_files, parse_results_filename, read_results
from common.stats import share_interval

VARIANT_ORDER = (
    "which_is_heavier",
    "first_letters",
    "reverse_sort",
    "ambiguous_sentences",
    "mixed",
    "distractorless",
)
MODEL_ORDER = ("oracle", "random", "human")
SURVIVAL_AT = (10, 25, 50, 75, 100)

ABOUT = """Already Said That (after OpenAI's evals suite of that name) measures memory over a long
conversation with distractions. The model sees up to 100 turns: either "MAIN TASK - <word>", where it
must say whether that word was already shown as a main-task word (half of the words repeat; with the
adversarial option half of the main-task words come from earlier distractor questions or the model's own
answers, and must be answered "no"), or, with probability 1/3, an unrelated question (which is heavier,
first letters, reverse sort, ambiguous sentences, or a mix) that it must also answer. Every reply must be
`[answer: ...]`; a wrong or malformed main-task answer ends the conversation. **Turns** is how many turns
a conversation lasted before its failing turn (100: it survived). Intervals are 95% (means +- 1.96
standard errors; shares: Wilson). Survival curves are Kaplan-Meier estimates (survivors censored at 100,
conversations refused by the server, context too long, censored where they stopped, and counted apart)."""


TESTS_TITLE = (
    "Survival tests: log-rank (z < 0: the first named survives longer; two-sided p; it takes the "
    "runs as independent samples) and the exact paired test on the samples both played (the same "
    "word schedule; a better: the samples where the first named lasted longer; two-sided p)"
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
    """Return every run under ``path``: dicts with set, model, results and turns paths, the
    conversations frame and the turn log, sorted by set (variant order) then model."""
    if _is_set_dir(path) and not _run_dirs(path):
        path = RESULTS_DIR / path.name
    runs = []
    for directory in _run_dirs(path):
        for results in find_results_files(directory):
            turns_path = results.with_name(results.name.removesuffix(SUFFIX) + "___turns.jsonl")
            if not turns_path.is_file():
                continue
            records = read_results(results)
            _, model = parse_results_filename(results)
            runs.append(
                {
                    "set": directory.name,
                    "model": model,
                    "results": results,
                    "turns_path": turns_path,
                    "frame": analysis.conversation_frame(records),
                    "turns": read_turns(turns_path, {r["Key"] for r in records}),
                }
            )
    return sorted(runs, key=lambda run: (_rank(run["set"], VARIANT_ORDER), _rank(run["model"], MODEL_ORDER)))


def _rank(name: str, order: tuple[str, ...]) -> tuple[int, str]:
    """Return a sort key putting ``order``'s names first, in that order, then the rest by name."""
    return (order.index(name) if name in order else len(order), name)


def _metric(metrics: dict[str, Any], name: str, scale: float = 1.0) -> str:
    """Return metric ``name`` of ``seed_metrics`` with its interval (``<name>_lo``/``_hi``) as
    "value [lo, hi]" (``common.report.interval_text``, one decimal), or "-"."""
    return interval_text(metrics[name], metrics[f"{name}_lo"], metrics[f"{name}_hi"], scale)


def metrics_table(runs: list[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the display table of the original's metrics per (set, model) and the tidy one."""
    rows, tidy = [], []
    for run in runs:
        m = analysis.seed_metrics(run["frame"])
        tidy.append({"set": run["set"], "model": run["model"], **m})
        rows.append(
            {
                "set": run["set"],
                "model": run["model"],
                "conversations": m["n"],
                "refused": m["refused"],
                "avg turns": _metric(m, "avg_num_turns"),
                "sd": f"{m['stddev_num_turns']:.1f}",
                "median": f"{m['median_num_turns']:g}",
                "min-max": f"{m['min_num_turns']:g}-{m['max_num_turns']:g}" if m["n"] else "-",
                "avg distractors": _metric(m, "avg_num_distractors"),
                "distractors sd / median / min-max": (
                    f"{m['stddev_num_distractors']:.1f} / {m['median_num_distractors']:g} / "
                    f"{m['min_num_distractors']:g}-{m['max_num_distractors']:g}"
                    if m["n"]
                    else "-"
                ),
                "distractor acc. %": _metric(m, "avg_distractor_accuracy", 100),
                "false pos. %": _metric(m, "false_positive_rate", 100),
                "false neg. %": _metric(m, "false_negative_rate", 100),
                "violation %": _metric(m, "violation_rate", 100),
            }
        )
    return pd.DataFrame(rows).set_index(["set", "model"]), pd.DataFrame(tidy)


def turns_table(tidy: pd.DataFrame) -> pd.DataFrame:
    """Return the headline: average turns "value [lo, hi]", a row per model, a column per set."""
    cells = tidy.assign(cell=[_metric(m, "avg_num_turns") for m in tidy.to_dict("records")])
    return cells.pivot_table(index="model", columns="set", values="cell", aggfunc="first", sort=False)


def survival_tables(runs: list[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the share alive after selected turns per (set, model) for display, and every curve (tidy)."""
    rows, curves = [], []
    for run in runs:
        curve = analysis.survival(run["frame"]).assign(set=run["set"], model=run["model"])
        curves.append(curve)
        at = curve.set_index("turn")
        rows.append(
            {
                "set": run["set"],
                "model": run["model"],
                **{
                    f"after {t}": interval_text(at.loc[t, "alive"], at.loc[t, "lo"], at.loc[t, "hi"], 100, 0)
                    for t in SURVIVAL_AT
                },
            }
        )
    return pd.DataFrame(rows).set_index(["set", "model"]), pd.concat(curves, ignore_index=True)


def question_tables(runs: list[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Return the error rates per question type (display and tidy) and the format violations over
    all turns per (set, model), with the refused conversations beside them."""
    tidy = []
    for run in runs:
        if run["turns"]:
            tidy.append(analysis.question_errors(run["turns"]).assign(set=run["set"], model=run["model"]))
    frame = (
        pd.concat(tidy, ignore_index=True)
        if tidy
        else pd.DataFrame(columns=["question", "asked", "errors", "error_rate", "lo", "hi", "set", "model"])
    )
    cells = zip(frame["error_rate"], frame["lo"], frame["hi"], strict=True)
    display = frame.assign(**{"error %": [interval_text(r, lo, hi, 100) for r, lo, hi in cells]})
    display = display.set_index(["set", "model", "question"])[["asked", "errors", "error %"]]
    rows = []
    for run in runs:
        m = analysis.seed_metrics(run["frame"])
        share, lo, hi = share_interval(m["violations_all_turns"], m["turns_asked"])
        rows.append(
            {
                "set": run["set"],
                "model": run["model"],
                "turns asked": m["turns_asked"],
                "format violations": m["violations_all_turns"],
                "violation % of turns": interval_text(share, lo, hi, 100, 2),
                "refused (context)": m["refused"],
            }
        )
    return display, frame, pd.DataFrame(rows).set_index(["set", "model"])


TEST_COLUMNS = ["comparison", "a", "b", "z", "logrank_p", "survives longer", "n", "a_better", "b_better", "p"]


def logrank_table(runs: list[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return survival tests for display and tidy: every pair of models on the same set, and on
    every set each model against itself on distractorless (the variants share their word
    schedules). Columns: ``comparison`` ("<set>: <a> vs <b>" or "<model>: <a> vs <b>"), ``a``,
    ``b``, ``z`` (the log-rank test, scipy's signed statistic, observed minus expected failures
    of a over their standard deviation: negative when a survives longer), ``logrank_p``
    (two-sided) and ``survives longer`` (the name of that one), NaN (shown "-") where neither run
    has a failure; then the exact paired test on the samples both played
    (``analysis.paired_survival``): ``n``, ``a_better``, ``b_better`` (samples where that run
    lasted longer) and ``p``."""
    rows = []
    by_set: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        by_set.setdefault(run["set"], []).append(run)
    for set_name, group in by_set.items():
        for a, b in itertools.combinations(group, 2):
            rows.append(_test_row(set_name, a, b, (a["model"], b["model"])))
    baseline = {run["model"]: run for run in by_set.get("distractorless", [])}
    for run in runs:
        if run["set"] != "distractorless" and run["model"] in baseline:
            rows.append(_test_row(run["model"], run, baseline[run["model"]], (run["set"], "distractorless")))
    tidy = pd.DataFrame(rows, columns=TEST_COLUMNS)
    display = pd.DataFrame(
        {
            "comparison": tidy["comparison"],
            "z": ["-" if math.isnan(z) else f"{z:.2f}" for z in tidy["z"]],
            "log-rank p": tidy["logrank_p"].map(p_text),
            "survives longer": tidy["survives longer"],
            "n": tidy["n"],
            **paired_cells(tidy),
        }
    )
    return display.set_index("comparison"), tidy


def _test_row(label: str, a: dict[str, Any], b: dict[str, Any], names: tuple[str, str]) -> dict[str, Any]:
    """Return one row of survival tests of run ``a`` against run ``b`` (named ``names``), the
    comparison named "<label>: <a> vs <b>"."""
    statistic, p = analysis.logrank(a["frame"], b["frame"])
    if math.isnan(statistic):
        longer = "-"
    elif statistic == 0:
        longer = "neither"
    else:
        longer = names[0] if statistic < 0 else names[1]
    paired = analysis.paired_survival(a["frame"], b["frame"])
    comparison = {"comparison": f"{label}: {names[0]} vs {names[1]}", "a": names[0], "b": names[1]}
    return {**comparison, "z": statistic, "logrank_p": p, "survives longer": longer, **paired}


def plot_survival(curves: pd.DataFrame, panel: str, line: str, directory: Path) -> tuple[str, Path]:
    """Write ``already_said_that_survival_by_<panel>.png`` in ``directory``: the survival curves with
    95% bands, one panel per value of ``panel`` ("set" or "model"), one line per value of ``line``
    (its colour the same in every panel). Return (caption, path)."""
    plt = pyplot()
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
        ax.set_xlabel("turn")
        ax.legend(fontsize="x-small")
    for ax in axes[:, 0]:
        ax.set_ylabel("% conversations alive")
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    fig.tight_layout()
    path = directory / f"already_said_that_survival_by_{panel}.png"
    save_png(fig, path, dpi=110)
    return f"Already Said That: share of conversations alive after each turn, one panel per {panel}", path


def section(path: Path, figures_dir: Path | None = None, **_: Any) -> Section:
    """Return the Already Said That Section of the runs under ``path``: metrics, survival, error
    rates per question, violations over all turns, log-rank and paired tests, survival PNGs (with
    ``figures_dir``), and a summary line per model."""
    runs = load_runs(Path(path))
    heading = f"ALREADY SAID THAT: {path}"
    if not runs:
        notes = [f"no runs under {path}"]
        return Section(
            suite="already_said_that", title="Already Said That", about=ABOUT, heading=heading, notes=notes
        )
    metrics, metrics_tidy = metrics_table(runs)
    alive, curves = survival_tables(runs)
    questions, questions_tidy, violations = question_tables(runs)
    tests, tests_tidy = logrank_table(runs)
    tables = [
        ("Average turns per model and set (95% interval)", turns_table(metrics_tidy)),
        ("Metrics per set and model (the original's, 95% intervals; refused conversations apart)", metrics),
        ("Conversations still alive after turn t (%, Kaplan-Meier, 95% band)", alive),
        ("Error rates per question type (all turns asked)", questions),
        ("Format violations over all turns; conversations refused by the server", violations),
    ]
    if not tests.empty:
        tables.append((TESTS_TITLE, tests))
    figures = []
    if figures_dir is not None:
        figures = [
            plot_survival(curves, panel, line, figures_dir)
            for panel, line in (("set", "model"), ("model", "set"))
        ]
    notes = [
        f"{r['model']} on {r['set']}: {analysis.seed_metrics(r['frame'])['refused']} conversations "
        "refused by the server (context too long), left out of the metrics, censored in the curves"
        for r in runs
        if r["frame"]["refused"].any()
    ]
    return Section(
        suite="already_said_that",
        title="Already Said That",
        about=ABOUT,
        heading=heading,
        tables=tables,
        figures=figures,
        data={
            "metrics": metrics_tidy,
            "survival": curves,
            "questions": questions_tidy,
            "logrank": tests_tidy,
        },
        summary=summary_lines(metrics_tidy),
        notes=notes,
        inputs=[p for r in runs for p in (r["results"], r["turns_path"])],
        headline_tables=1,
        paired_table=TESTS_TITLE,
    )


def summary_lines(tidy: pd.DataFrame) -> list[str]:
    """Return up to three lines: per model, the average turns on each set."""
    lines = []
    for model, group in tidy.groupby("model", sort=False):
        cells = ", ".join(f"{row.set} {row.avg_num_turns:.1f}" for row in group.itertuples())
        lines.append(f"{model}: avg turns {cells}")
    return lines[:3]
