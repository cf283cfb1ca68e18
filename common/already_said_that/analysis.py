"""The metrics of Already Said That: the original's, with intervals, plus survival analysis.

A conversation's ``turns`` is the number of turns passed before the failing one (distractor
turns included; 100 when it survives), ``distractors`` the distractor turns among them and
``main_turns`` the main-task turns (``turns - distractors``). The original's metrics
(``seed_metrics``), over every conversation, under the original's rules: a request the server
refused (the context is too long, a content filter) gave the original the error message as the
reply, so a conversation that ended on a refused main-task turn ended on a violation there
(counted in ``violation_rate`` and averaged at the turns it passed; ``refused`` says how many
ended that way, beside the metrics), and a refused distractor turn was a violation the game went
on after (the runner plays on: ``run.py``). The survival curves censor the refused ones instead:
the model did not fail there, its context ran out.

- ``avg_num_turns`` (+ stddev (population, as numpy's default), median, max, min), the same
  for ``num_distractors``;
- ``false_positive_rate`` / ``false_negative_rate``: share of conversations that ended with a
  false "yes" (a new word claimed seen) / a false "no";
- ``violation_rate``: share whose last reply had no valid answer (the original's flag, set at
  every turn: a malformed main-task reply, which ends the conversation, or a malformed reply to
  a distractor on the last turn);
- ``avg_distractor_accuracy``: mean over conversations (with at least one distractor) of the
  share of distractor questions answered correctly.

Beside them ``avg_main_turns``: a distractor turn cannot end a conversation, so it adds to
``turns`` for free, and variants with distractors (a third of their turns) are compared with
``distractorless`` on main-task turns, the turns where a conversation can end.

Every average has a 95% interval: means mean +- 1.96 standard errors (sample standard
deviation, ``stats.mean_interval``), shares the Wilson interval (``stats.share_interval``).
Survival, on a clock of ``turns`` or of ``main_turns``: a conversation failing after t turns of
the clock is an event at t + 1, one reaching the last turn is censored there, a refused one is
censored at the turns it passed (``event_times``); the share still alive is the Kaplan-Meier estimate
with its log-log 95% band (``stats.kaplan_meier``). Two models on one set are compared with the
log-rank test (``stats.logrank``, on turns) and, paired by sample, with the exact paired test
(``stats.paired_survival_test``); two variants of one model with the paired test only, on
main-task turns: they share samples, schedules and a seeded solver's draws, so they are not
the independent samples the log-rank test assumes.
"""

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from common import stats
from common.already_said_that.wording import DEFAULT as DEFAULT_WORDING
from common.results import finish_reasons

FAILURES = ("false_positive", "false_negative", "violation")


def conversation_frame(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """Return one row per conversation record: Key, draw (0 unless a run played it again with
    another seed), turns, distractors, main_turns,
    distractor_accuracy, violations (format violations over all its turns), violation_occurred
    (the original's flag, set too when a refused main-task turn ended it; records written before
    the flag existed: whether it ended on a violation), asked, ended, refused (bool: it ended on a
    refused request), refused_turns (requests refused, distractor turns the game went on after
    included; older records: 1 when it ended so), wording (older records: the suite's), replies
    (requests answered: with cot two a turn) and cut (of them, cut at the token limit)."""
    rows = [_conversation_row(r) for r in records]
    columns = [
        "Key",
        "draw",
        "turns",
        "distractors",
        "main_turns",
        "distractor_accuracy",
        "violations",
        "violation_occurred",
        "asked",
        "ended",
        "refused",
        "refused_turns",
        "wording",
        "replies",
        "cut",
    ]
    frame = pd.DataFrame(rows, columns=columns)
    frame["distractor_accuracy"] = pd.to_numeric(frame["distractor_accuracy"], errors="coerce")
    return frame


def _conversation_row(r: dict[str, Any]) -> dict[str, Any]:
    """Return ``conversation_frame``'s row of one conversation record."""
    reasons = finish_reasons(r)
    return {
        "Key": r["Key"],
        "draw": int(r.get("draw") or 0),
        "turns": int(r["turns"]),
        "distractors": int(r["distractors"]),
        "main_turns": int(r["turns"]) - int(r["distractors"]),
        "distractor_accuracy": r.get("distractor_accuracy"),
        "violations": int(r.get("violations") or 0),
        "violation_occurred": bool(r.get("violation_occurred", r["ended"] == "violation"))
        or bool(r.get("refused")),
        "asked": int(r.get("asked") or 0),
        "ended": r["ended"],
        "refused": bool(r.get("refused")),
        "refused_turns": int(r.get("refused_turns", bool(r.get("refused")))),
        "wording": str(r.get("wording") or DEFAULT_WORDING),
        "replies": len(reasons),
        "cut": reasons.count("length"),
    }


def seed_metrics(frame: pd.DataFrame) -> dict[str, Any]:
    """Return the original's metrics (module docstring) over every conversation, each average
    with ``<name>_lo``/``<name>_hi`` (95%), plus ``avg_main_turns`` (with its interval), ``n``
    (the conversations), ``refused`` (of them, those that ended on a refused request: violations
    in the metrics), ``refused_turns`` (requests refused), ``survived`` and
    ``violations_all_turns`` (format violations over every turn answered, distractors included)
    out of ``turns_asked``, and ``replies_cut`` of ``replies`` (cut at the token limit)."""
    kept, n = frame, len(frame)  # none left out: a refused conversation ended on a violation
    out: dict[str, Any] = {
        "n": n,
        "refused": int(frame["refused"].sum()),
        "refused_turns": int(frame["refused_turns"].sum()),
    }
    for name, column in (("num_turns", "turns"), ("num_distractors", "distractors")):
        values = kept[column].to_numpy(dtype=float)
        mean, lo, hi = stats.mean_interval(values, (0.0, math.inf))
        out.update(
            {
                f"avg_{name}": mean,
                f"avg_{name}_lo": lo,
                f"avg_{name}_hi": hi,
                f"stddev_{name}": float(values.std()) if n else math.nan,
                f"median_{name}": float(np.median(values)) if n else math.nan,
                f"max_{name}": float(values.max()) if n else math.nan,
                f"min_{name}": float(values.min()) if n else math.nan,
            }
        )
    for name, hits in (
        ("false_positive_rate", kept["ended"] == "false_positive"),
        ("false_negative_rate", kept["ended"] == "false_negative"),
        ("violation_rate", kept["violation_occurred"]),
    ):
        share, lo, hi = stats.share_interval(int(hits.sum()), n)
        out.update({name: share, f"{name}_lo": lo, f"{name}_hi": hi})
    for name, column, bounds in (
        ("avg_distractor_accuracy", kept["distractor_accuracy"].dropna(), (0.0, 1.0)),
        ("avg_main_turns", kept["main_turns"], (0.0, math.inf)),
    ):
        mean, lo, hi = stats.mean_interval(column, bounds)
        out.update({name: mean, f"{name}_lo": lo, f"{name}_hi": hi})
    out["survived"] = int((kept["ended"] == "survived").sum())
    out["replies"], out["replies_cut"] = int(frame["replies"].sum()), int(frame["cut"].sum())
    out["violations_all_turns"] = int(frame["violations"].sum())
    out["turns_asked"] = int(frame["asked"].sum())
    return out


# the metrics the original's make_plots.py gathers per variant and model over its seeds (its plots
# and JSON files), in its order
SEED_METRICS = (
    "avg_num_turns",
    "avg_num_distractors",
    "avg_distractor_accuracy",
    "false_positive_rate",
    "false_negative_rate",
    "violation_rate",
)


def metrics_over_seeds(per_seed: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Return each of ``SEED_METRICS`` over the seeds a run played, given ``seed_metrics`` of each
    seed's conversations in draw order (draw d is seed ``first_seed`` + d): one row per metric
    with ``k`` (seeds), ``values`` (the metric of each seed), ``mean`` and its standard errors
    ``se_original`` (population standard deviation over sqrt k, as the original's plots) and
    ``se_sample`` (sample standard deviation over sqrt k): ``stats.mean_over_runs``."""
    rows = []
    for name in SEED_METRICS:
        values = [float(m[name]) for m in per_seed]
        mean, se_original, se_sample = stats.mean_over_runs(values)
        rows.append(
            {
                "metric": name,
                "k": len(values),
                "values": values,
                "mean": mean,
                "se_original": se_original,
                "se_sample": se_sample,
            }
        )
    return pd.DataFrame(rows, columns=["metric", "k", "values", "mean", "se_original", "se_sample"])


CLOCKS = ("turns", "main_turns")  # survival measured in all turns (the original's) or main-task turns


def _failed(frame: pd.DataFrame) -> pd.Series:
    """Return whether each conversation ended on the model's own failure (not survived, not
    refused by the server)."""
    return frame["ended"].isin(FAILURES) & ~frame["refused"]


def event_times(frame: pd.DataFrame, clock: str = "turns") -> tuple[np.ndarray, np.ndarray]:
    """Return ``(failures, censored)`` times on ``clock`` (a column of ``CLOCKS``): a failure is
    an event at the clock's count + 1 (the turn failed), survivors and refused conversations are
    right-censored at the count they passed."""
    failed = _failed(frame)
    failures = (frame.loc[failed, clock] + 1).to_numpy(dtype=float)
    return failures, frame.loc[~failed, clock].to_numpy(dtype=float)


def survival(frame: pd.DataFrame, max_turns: int = 100, clock: str = "turns") -> pd.DataFrame:
    """Return the Kaplan-Meier survival curve of the conversations on ``clock`` (``stats.kaplan_meier``
    of ``event_times``): for t = 0..max_turns, ``alive`` (share of conversations still going after t
    turns of the clock) and its 95% band ``lo``/``hi``; NaN past the last turn observed when that
    is a censoring (conversations refused by the server, or a set of fewer turns)."""
    curve = stats.kaplan_meier(*event_times(frame, clock), np.arange(max_turns + 1))
    return curve.rename(columns={"time": "turn", "survival": "alive"}).astype({"turn": int})


def logrank(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> tuple[float, float]:
    """Return the log-rank test's ``(statistic, p)`` of survival in one run against another on
    turns, given each one's ``event_times`` (``stats.logrank``: two-sided; z < 0 when ``a``
    survives longer; NaN when neither has a failure). It takes the runs as independent samples."""
    return stats.logrank(*a, *b)


def paired_survival(a: pd.DataFrame, b: pd.DataFrame, clock: str = "turns") -> dict[str, Any]:
    """Return the exact paired test of two runs over the samples both played (same ``Key``: the
    same words and random streams), on ``clock``: ``n`` (those samples), ``a_better`` /
    ``b_better`` (samples where that run lasted strictly longer, as far as censoring lets one
    tell) and ``p`` (``stats.paired_survival_test``: exact two-sided binomial p; 1.0 when no
    sample is decided)."""
    both = pd.merge(
        a.assign(failed=_failed(a))[["Key", clock, "failed"]],
        b.assign(failed=_failed(b))[["Key", clock, "failed"]],
        on="Key",
        suffixes=("_a", "_b"),
    )
    test = stats.paired_survival_test(
        both[f"{clock}_a"].tolist(),
        both["failed_a"].tolist(),
        both[f"{clock}_b"].tolist(),
        both["failed_b"].tolist(),
    )
    return {"n": len(both), "a_better": test.a_better, "b_better": test.b_better, "p": test.p}


def paired_survival_all(frames: Sequence[pd.DataFrame], clock: str = "turns") -> dict[tuple[int, int], dict]:
    """Return ``paired_survival`` of every two of ``frames`` (by their positions i < j: run i as
    a, run j as b), all at once (``stats.pairwise_survival_counts`` over a samples x runs table
    of each run's ``clock`` and failures, by ``Key``); {} when a frame has a Key twice (then
    ``paired_survival`` of each pair, which pairs every draw of a Key)."""
    if any(frame["Key"].duplicated().any() for frame in frames):
        return {}
    keys = pd.Index(sorted({key for frame in frames for key in frame["Key"]}))
    survived = np.full((len(keys), len(frames)), np.nan)
    failed = np.zeros((len(keys), len(frames)), dtype=bool)
    for i, frame in enumerate(frames):
        rows = keys.get_indexer(frame["Key"])
        survived[rows, i] = frame[clock].to_numpy(dtype=float)
        failed[rows, i] = _failed(frame)
    n, better, worse = stats.pairwise_survival_counts(survived, failed)
    first, second = np.triu_indices(len(frames), k=1)
    p = stats.binomial_p(better[first, second], worse[first, second])
    return {
        (int(i), int(j)): {
            "n": int(n[i, j]),
            "a_better": int(better[i, j]),
            "b_better": int(worse[i, j]),
            "p": float(q),
        }
        for i, j, q in zip(first, second, p, strict=True)
    }


def question_errors(turns: pd.DataFrame) -> pd.DataFrame:
    """Return error rates per question type over every turn asked and answered (``turns``: one row
    per turn with its ``question`` type, ``scoring.question_type``, whether it was ``correct`` and
    ``refused``; or one row per group of turns alike, ``count`` of them): ``asked``, ``errors``
    (wrong or malformed), ``error_rate`` and its Wilson ``lo``/``hi``, one row per question type,
    sorted. ``turns`` is not modified."""
    frame = turns[~turns["refused"]]
    count = (
        frame["count"].to_numpy(dtype=np.int64) if "count" in frame else np.ones(len(frame), dtype=np.int64)
    )
    frame = pd.DataFrame(
        {"question": frame["question"], "asked": count, "errors": (frame["correct"] != 1).to_numpy() * count}
    )
    table = frame.groupby("question", sort=True)[["asked", "errors"]].sum().reset_index()
    shares = [
        stats.share_interval(int(e), int(a)) for e, a in zip(table["errors"], table["asked"], strict=True)
    ]
    table["error_rate"] = [s[0] for s in shares]
    table["lo"] = [s[1] for s in shares]
    table["hi"] = [s[2] for s in shares]
    return table
