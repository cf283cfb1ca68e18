"""The display tables of the Already Said That section (and their tidy twins, for CSV).

Each function takes the runs ``report.runs_of`` returns (set, model, seeds: the conversations
of every draw, frame: those of the first, turns, ...) and returns ``(display, tidy)``: strings
for the terminal and the report, numbers for the CSV. The numbers come from ``analysis``; only
formatting happens here. The tables of the metrics over seeds are ``paper.py``'s.
"""

import itertools
import math
from typing import Any

import pandas as pd

from common import leaderboard
from common.already_said_that import analysis
from common.already_said_that.paper import seed_name
from common.report import interval_text, p_text, paired_cells
from common.stats import share_interval

SUITE_NAME = "already_said_that"  # its built-in models are the baselines of its paired tests

CUT_WARN = 0.02  # a run with more of its replies cut at the token limit says so (summary, notes)

SURVIVAL_AT = (10, 25, 50, 75, 100)
BASELINE_VARIANT = "distractorless"  # the variant every other one is compared with, per model and pairing


def _metric(metrics: dict[str, Any], name: str, scale: float = 1.0) -> str:
    """Return metric ``name`` of ``seed_metrics`` with its interval (``<name>_lo``/``_hi``) as
    "value [lo, hi]" (``common.report.interval_text``, one decimal), or "-"."""
    return interval_text(metrics[name], metrics[f"{name}_lo"], metrics[f"{name}_hi"], scale)


def metrics_table(runs: list[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the display table of the original's metrics per (set, model, seed) and the tidy
    one: a row per seed a run played (a set played with several seeds: one per seed, each over its
    own conversations), the wording the model read first, the conversations that ended on a
    refused request (counted as violations, as the original counts them) beside the average
    turns, and the main-task turns (what variants are compared on) beside both."""
    rows, tidy = [], []
    seeds = [(run, int(d)) for run in runs for d in sorted(run["seeds"]["draw"].unique())]
    for run, draw in seeds:
        m = run["metrics"][draw]
        wording = wording_of_run(run)
        seed = seed_name(run.get("first_seed"), draw)
        tidy.append({"set": run["set"], "model": run["model"], "seed": seed, "wording": wording, **m})
        rows.append(
            {
                "set": run["set"],
                "model": run["model"],
                "seed": seed,
                "wording": wording,
                "conversations": m["n"],
                "avg turns (all turns)": _metric(m, "avg_num_turns"),
                "ended refused (as violations)": m["refused"],
                "sd": f"{m['stddev_num_turns']:.1f}",
                "median": f"{m['median_num_turns']:g}",
                "min-max": f"{m['min_num_turns']:g}-{m['max_num_turns']:g}" if m["n"] else "-",
                "avg main-task turns": _metric(m, "avg_main_turns"),
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
    return pd.DataFrame(rows).set_index(["set", "model", "seed"]), pd.DataFrame(tidy)


def wording_of_run(run: dict[str, Any]) -> str:
    """Return the wording a run's conversations were played in (one, or several joined by "+"
    when a results file mixes them)."""
    return "+".join(sorted(set(run["frame"]["wording"]))) or "-"


def turns_table(cells: list[tuple[str, str, str, int]]) -> pd.DataFrame:
    """Return the headline table: each run's average turns (all turns, as the original counts
    them; ``report.headline_cells``), a row per model, a column per set."""
    frame = pd.DataFrame(cells, columns=["model", "set", "cell", "n"])
    return frame.pivot_table(index="model", columns="set", values="cell", aggfunc="first", sort=False)


def survival_tables(runs: list[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the share alive after selected turns per (set, model) for display, and every curve
    (tidy: ``clock`` "turns" and "main_turns", both)."""
    rows, curves = [], []
    for run in runs:
        for clock in analysis.CLOCKS:
            curve = run["curves"][clock]
            curves.append(curve.assign(set=run["set"], model=run["model"], clock=clock))
        at = curves[-2].set_index("turn")
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
        if len(run["turns"]):
            tidy.append(run["question_errors"].assign(set=run["set"], model=run["model"]))
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
        m = run["metrics"][0]
        share, lo, hi = share_interval(m["violations_all_turns"], m["turns_asked"])
        rows.append(
            {
                "set": run["set"],
                "model": run["model"],
                "turns asked": m["turns_asked"],
                "format violations": m["violations_all_turns"],
                "violation % of turns": interval_text(share, lo, hi, 100, 2),
                "requests refused": m["refused_turns"],
                "conversations ended by one": m["refused"],
            }
        )
    return display, frame, pd.DataFrame(rows).set_index(["set", "model"])


MODEL_TEST_COLUMNS = [
    "comparison",
    "a",
    "b",
    "z",
    "logrank_p",
    "survives longer",
    "n",
    "a_better",
    "b_better",
    "p",
]
VARIANT_TEST_COLUMNS = ["comparison", "a", "b", "n", "a_better", "b_better", "p", "lasts longer"]


def _printed_pairs(group: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Return the pairs of a set's runs the report tests (``leaderboard.rule_pairs``: every pair up
    to ALL_PAIRS_UP_TO runs, else each run against the next ranked by average turns survived, the
    headline's measure, and against the best baseline), in the order of the runs: 2(N - 1) tests
    of N runs, not N(N - 1)/2, each pair still a click away in the explorer."""
    if len(group) <= leaderboard.ALL_PAIRS_UP_TO:
        return list(itertools.combinations(group, 2))
    ranked = sorted(group, key=lambda run: -float(run["frame"]["turns"].mean()))
    kept = leaderboard.rule_pairs([run["model"] for run in ranked], leaderboard.baseline_names(SUITE_NAME))
    return [
        (a, b) for a, b in itertools.combinations(group, 2) if frozenset((a["model"], b["model"])) in kept
    ]


def model_tests(runs: list[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the survival tests between every two models of a set, for display and tidy, on
    turns: ``comparison`` ("<set>: <a> vs <b>"), ``a``, ``b``, ``z`` (the log-rank test,
    scipy's signed statistic, observed minus expected failures of a over their standard
    deviation: negative when a survives longer), ``logrank_p`` (two-sided) and ``survives
    longer`` (the name of that one), NaN (shown "-") where neither run has a failure or the test
    has no variance (every conversation still going failed at each failure turn); then the
    exact paired test on the samples both played (``analysis.paired_survival``, every pair of a
    set at once: ``analysis.paired_survival_all``): ``n``, ``a_better``, ``b_better`` (samples
    where that run lasted longer) and ``p``. The log-rank test, of independent samples, is
    computed for the pairs printed only (``_printed_pairs``)."""
    by_set: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        by_set.setdefault(run["set"], []).append(run)
    rows = []
    for set_name, group in by_set.items():
        paired = analysis.paired_survival_all([run["frame"] for run in group])  # every pair at once
        position = {id(run): i for i, run in enumerate(group)}
        for a, b in _printed_pairs(group):
            statistic, p = analysis.logrank(a["times"], b["times"])
            longer = _longer(-statistic, (a["model"], b["model"]))
            rows.append(
                {
                    "comparison": f"{set_name}: {a['model']} vs {b['model']}",
                    "a": a["model"],
                    "b": b["model"],
                    "z": statistic,
                    "logrank_p": p,
                    "survives longer": longer,
                    **(
                        paired.get((position[id(a)], position[id(b)]))
                        or analysis.paired_survival(a["frame"], b["frame"])
                    ),
                }
            )
    tidy = pd.DataFrame(rows, columns=MODEL_TEST_COLUMNS)
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


def variant_tests(runs: list[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return, for each model, each set against the same model's ``distractorless`` run of the
    same pairing (the same word samples and random streams; ``report._pairing``), for display and
    tidy: the exact paired test on main-task turns over the samples both played
    (``analysis.paired_survival``): ``comparison`` ("<model>: <set> vs <distractorless set>"),
    ``a``, ``b``, ``n``, ``a_better``, ``b_better``, ``p`` and ``lasts longer`` (the set that
    lasted longer on more samples, "neither" on a tie, "-" when no sample is decided)."""
    baseline = {(run["model"], run["pairing"]): run for run in runs if run["variant"] == BASELINE_VARIANT}
    rows = []
    for run in runs:
        other = baseline.get((run["model"], run["pairing"]))
        if other is None or run["variant"] == BASELINE_VARIANT:
            continue
        paired = analysis.paired_survival(run["frame"], other["frame"], "main_turns")
        decided = paired["a_better"] + paired["b_better"]
        names = (run["set"], other["set"])
        rows.append(
            {
                "comparison": f"{run['model']}: {names[0]} vs {names[1]}",
                "a": names[0],
                "b": names[1],
                **paired,
                "lasts longer": _longer(paired["a_better"] - paired["b_better"], names) if decided else "-",
            }
        )
    tidy = pd.DataFrame(rows, columns=VARIANT_TEST_COLUMNS)
    display = pd.DataFrame(
        {
            "comparison": tidy["comparison"],
            "n": tidy["n"],
            **paired_cells(tidy),
            "lasts longer": tidy["lasts longer"],
        }
    )
    return display.set_index("comparison"), tidy


def _longer(lead: float, names: tuple[str, str]) -> str:
    """Return which of ``names`` did better by ``lead`` (> 0: the first), "neither" at 0, "-" for NaN."""
    if math.isnan(lead):
        return "-"
    return "neither" if lead == 0 else names[0] if lead > 0 else names[1]


def wrong_gold_notes(runs: list[dict[str, Any]]) -> list[str]:
    """Return a note per run that was asked distractor questions whose gold answer is wrong (the
    original's, kept as it kept them: ``wrong_golds: keep``): which, how often, and how often the
    reply matched that wrong gold (a right answer there is scored wrong)."""
    notes = []
    for run in runs:
        turns = run["turns"]
        asked = turns[turns["wrong_gold"] & ~turns["refused"]]
        count = asked["count"] if "count" in asked else pd.Series(1, index=asked.index)
        if len(asked):
            ids = ", ".join(sorted({str(i) for i in asked["question_id"]}))
            matched, times = int(count[asked["correct"] == 1].sum()), int(count.sum())
            notes.append(
                f"{run['model']} on {run['set']}: asked {times} times a question kept with its wrong "
                f"gold answer, as the original kept it ({ids}; see the set's manifest.json); its reply "
                f"matched that gold {matched} times (a correct answer there is scored wrong)"
            )
    return notes


def cut_lines(runs: list[dict[str, Any]]) -> list[str]:
    """Return a line per run with more than ``CUT_WARN`` of its replies cut at the token limit
    (their answers are judged as they came: usually no [answer: ...], a violation)."""
    lines = []
    for run in runs:
        replies, cut = int(run["frame"]["replies"].sum()), int(run["frame"]["cut"].sum())
        if replies and cut / replies > CUT_WARN:
            limit = "?" if run.get("settings") is None else run["settings"].get("max_tokens")
            lines.append(
                f"{run['model']} on {run['set']}: {cut:,} of {replies:,} replies ({cut / replies:.1%}) "
                f"cut at the token limit (max_tokens={limit}): raise it and rerun with --retry-truncated"
            )
    return lines


def draw_frames(runs: list[dict[str, Any]]) -> tuple[dict[str, pd.DataFrame], dict[str, str]]:
    """Return, when a run played its conversations several times (``samples: k``), every run's
    conversations as the frames of ``common.sampling`` (score: the turns survived, what
    ``avg_num_turns`` averages, a conversation ended by a refused request at the turns it passed),
    by "<set> <model>", and each one's set (its runs are paired with those of its set only); else
    empty."""
    if not any((run["seeds"]["draw"] > 0).any() for run in runs):
        return {}, {}
    frames, groups = {}, {}
    for run in runs:  # refused ones at the turns they passed, as the original
        seeds = run["seeds"]
        frames[run["draw_label"]] = pd.DataFrame(
            {
                "Key": seeds["Key"].to_numpy(),
                "draw": seeds["draw"].to_numpy(),
                "score": seeds["turns"].to_numpy(dtype=float),
                "answer": None,
            }
        )
        groups[run["draw_label"]] = run["set"]
    return frames, groups
