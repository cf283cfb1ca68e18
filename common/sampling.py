"""Repeated sampling: what k answers per item tell beyond one.

A model asked ``samples: k`` times (its config, or ``--set samples=k``) answers every item k
times, each its own request (``seed + draw``, cached apart), recorded with ``draw`` 1 .. k-1
(the first answer has none, so one answer per item writes what it always did). Every suite's
main tables read the first answer of each item (``read_results`` without ``all_draws``); for a
set where some run has k > 1, ``sampling_tables`` adds what the draws tell, from one frame per
run with one row per answer (``DRAW_COLUMNS``: the question's ``Key``, ``draw``, ``score`` from
the suite's own scorer, ``answer`` as parsed, or None; and ``item`` where questions come in
dependent groups, e.g. a WorldSense tuple or a canvas item, which intervals and tests then
cluster by):

- k and the per-item mean score, with its 95% interval clustered by item (the items are the
  independent units; an item's k answers are not),
- the mean of the per-draw rates and its standard error across draws (what the original Already
  Said That eval reports across its seeds),
- the suite's aggregate of the k answers: majority vote (the most frequent answer, ties to the
  one drawn first) or pass@k (the unbiased estimator), and
- the between-draw spread: the share of items whose answers (or scores) differ between draws;
  then exact sign tests between runs on their per-item mean scores, not on the draws as if
  they were independent (with k = 1 these are the exact tests the suites print).
"""

import math
from collections.abc import Callable, Collection
from typing import Any

import pandas as pd

from common import leaderboard
from common.report import interval_text, paired_cells
from common.scored import Scored
from common.stats import mean_interval, pairwise_exact_tests, pass_at_k

DRAW_COLUMNS = ["Key", "draw", "score", "answer"]  # and "item" where questions are grouped
AGGREGATES = ("majority vote", "pass@k", None)


def draws(frame: pd.DataFrame) -> int:
    """Return k: the most answers any item of the run has (1 for a run without repeats)."""
    return int(frame.groupby("Key")["draw"].nunique().max()) if len(frame) else 0


def draw_frames(
    scored: Scored, score: str = "correct", label: Callable[[Any], str] = lambda run: run.label
) -> dict[str, pd.DataFrame]:
    """Return, when some run of ``scored`` (the scored rows of a set) holds repeated answers
    (``draw`` > 0), every run's frame of answers by ``label(run)`` (default the run's label, its
    name in the suite's tables): the scored answers with
    ``score`` taken from the column ``score`` and ``item`` the unit of their item (its Key's
    ``unit``: a WorldSense tuple, a canvas item); else {} (a set without repeats is unchanged)."""
    answers = scored.answers[scored.answers["scored"] == 1]
    if not (answers["draw"] > 0).any():
        return {}
    sets = scored.runs.set_index("run_id")["set_name"]
    units = scored.items.set_index(["set_name", "Key"])["unit"]
    frames = {}
    for run in scored.runs.itertuples():
        mine = answers[answers["run_id"] == run.run_id]
        where = pd.MultiIndex.from_arrays([[sets[run.run_id]] * len(mine), mine["Key"]])
        frames[label(run)] = pd.DataFrame(
            {
                "Key": mine["Key"].to_numpy(),
                "draw": mine["draw"].to_numpy(),
                "score": mine[score].to_numpy(dtype=float),
                "answer": mine["answer"].to_numpy(),
                "item": units.reindex(where).to_numpy(),
            }
        )
    return frames


def item_means(frame: pd.DataFrame) -> pd.Series:
    """Return each item's mean score over its answers (index: ``item`` where the frame groups
    questions, else Key; sorted): the unit of the clustered interval and the paired tests."""
    return frame.groupby("item" if "item" in frame.columns else "Key", sort=True)["score"].mean()


def draw_rates(frame: pd.DataFrame) -> tuple[float, float]:
    """Return the mean over draws of the run's rate (mean score of the items answered in that draw)
    and its standard error across draws (sample standard deviation over sqrt(k); NaN for k = 1)."""
    rates = frame.groupby("draw", sort=True)["score"].mean()
    spread = float(rates.std(ddof=1)) / math.sqrt(len(rates)) if len(rates) > 1 else math.nan
    return float(rates.mean()), spread


def majority_vote(frame: pd.DataFrame) -> float:
    """Return the share of items whose most frequent answer (ties: the one drawn first) scores 1.
    Items without a parsed answer in any draw vote with their scores."""
    right = []
    for _, answers in frame.sort_values(["Key", "draw"]).groupby("Key", sort=True):
        votes = answers["answer"].fillna("").tolist()
        counts = {vote: votes.count(vote) for vote in votes}  # insertion order: first drawn first
        winner = max(counts, key=counts.get)
        right.append(float(answers["score"].iloc[votes.index(winner)]) >= 1)
    return sum(right) / len(right) if right else math.nan


def mean_pass_at_k(frame: pd.DataFrame, k: int) -> float:
    """Return pass@k averaged over items (``stats.pass_at_k`` of each item's answers, a score of
    1 counting as right); items with fewer than k answers are left out."""
    values = [
        pass_at_k(len(scores), int((scores >= 1).sum()), k)
        for _, scores in frame.groupby("Key", sort=True)["score"]
        if len(scores) >= k
    ]
    return sum(values) / len(values) if values else math.nan


def disagreement(frame: pd.DataFrame) -> float:
    """Return the share of items with more than one answer whose answers (scores where no answer
    was parsed) are not all the same."""
    repeated = frame[frame.groupby("Key")["Key"].transform("size").to_numpy() > 1]
    if repeated.empty:
        return math.nan
    said = repeated["answer"].where(repeated["answer"].notna(), repeated["score"].astype(str))
    return float((said.groupby(repeated["Key"]).nunique() > 1).mean())


def sampling_tables(
    runs: dict[str, pd.DataFrame],
    aggregate: str | None,
    score: str,
    scale: float = 100.0,
    unit: str = "%",
    groups: dict[str, str] | None = None,
    baselines: Collection[str] = (),
) -> list[tuple[str, pd.DataFrame]]:
    """Return the repeated-sampling tables of a set's runs (label -> frame of ``DRAW_COLUMNS``):
    none when no run has k > 1 (a report without repeats is unchanged). ``score`` names what a
    score is (in the title); scores are shown multiplied by ``scale`` with ``unit``;
    ``aggregate`` is one of AGGREGATES. Runs of several sets give ``groups`` (label -> its set):
    the paired tests then pair runs of the same set only (the same items), chosen by the
    report's rule past ``leaderboard.ALL_PAIRS_UP_TO`` runs a set (``paired_on_item_means``;
    ``baselines``: the labels of built-in models); without, every pair sharing items."""
    runs = {label: frame for label, frame in runs.items() if len(frame)}
    if not runs or max(map(draws, runs.values())) <= 1:
        return []
    rows = []
    for label, frame in runs.items():
        k = draws(frame)
        mean, lo, hi = mean_interval(item_means(frame).tolist())
        across, se = draw_rates(frame)
        row = {
            "run": label,
            "k": k,
            "questions": frame["Key"].nunique(),
            "mean [95%, clustered by item]": interval_text(mean, lo, hi, scale),
            "mean of draws +- SE": f"{scale * across:.1f} +- {scale * se:.1f}" if k > 1 else "-",
        }
        if aggregate == "majority vote":
            row["majority vote"] = f"{scale * majority_vote(frame):.1f}"
        elif aggregate == "pass@k":
            row["pass@k"] = f"{scale * mean_pass_at_k(frame, k):.1f}" if k > 1 else "-"
        row["items whose draws disagree"] = f"{disagreement(frame):.1%}" if k > 1 else "-"
        rows.append(row)
    title = f"REPEATED SAMPLES: k answers per item (score: {score}, {unit})"
    tables = [(title, pd.DataFrame(rows).set_index("run"))]
    tests, largest = paired_on_item_means(runs, groups or {}, baselines)
    if not tests.empty:
        title = "PAIRED on item means (exact sign test over the items where one run's mean is higher)"
        if len(set((groups or {}).values())) > 1:  # several sets: said (one set's report: as it was)
            title += ", runs of the same set"
        if largest > leaderboard.ALL_PAIRS_UP_TO:
            title += ". " + leaderboard.printed_rule(largest, len(tests), "its mean score over the items")
        tables.append((title, tests[["a", "b", "n"]].assign(**paired_cells(tests)).set_index(["a", "b"])))
    return tables


def paired_on_item_means(
    runs: dict[str, pd.DataFrame], groups: dict[str, str], baselines: Collection[str]
) -> tuple[pd.DataFrame, int]:
    """Return the exact sign tests between runs on their per-item mean scores, and how many runs
    its largest group has (0 without ``groups``): runs of the same group only (``groups``: label
    -> group), in the order of ``runs``, and past ``leaderboard.ALL_PAIRS_UP_TO`` runs a group
    only the pairs of ``leaderboard.rule_pairs`` (runs ranked by their mean score; ``baselines``
    the labels of built-in models), as every paired table of the report prints them; without
    ``groups``, every pair. Every pair of a group is counted in one array operation
    (``pairwise_exact_tests``)."""
    members: dict[str, list[str]] = {}
    for label in runs:
        members.setdefault(groups.get(label, ""), []).append(label)
    names = frozenset(label.split(" (", 1)[0] for label in baselines)
    found, largest = [], 0
    for labels in members.values():
        means = pd.DataFrame({label: item_means(runs[label]) for label in labels})
        tests = pairwise_exact_tests(means)
        largest = max(largest, len(labels) if groups else 0)
        if groups and len(labels) > leaderboard.ALL_PAIRS_UP_TO and not tests.empty:
            mean = {label: float(means[label].mean()) for label in labels}
            ranked = sorted(labels, key=lambda label: (math.isnan(mean[label]), -mean[label]))
            kept = leaderboard.rule_pairs(ranked, names)
            tests = tests[[frozenset(pair) in kept for pair in zip(tests["a"], tests["b"], strict=True)]]
        found.append(tests)
    tests = pd.concat(found, ignore_index=True) if found else pd.DataFrame()
    return tests, largest


def sampling_summary(runs: dict[str, pd.DataFrame]) -> list[str]:
    """Return the summary line naming the runs with k > 1 (none when there are none)."""
    repeated = [f"{label} k={draws(frame)}" for label, frame in runs.items() if draws(frame) > 1]
    return [f"repeated samples: {', '.join(repeated)}"] if repeated else []
