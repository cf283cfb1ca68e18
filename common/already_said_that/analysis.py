"""The metrics of Already Said That: the original's, with intervals, plus survival analysis.

A conversation's ``turns`` is the number of turns passed before the failing one (distractor
turns included; 100 when it survives), ``distractors`` the distractor turns among them. The
original's metrics (``seed_metrics``), over the conversations that ended on the model's own
account (a conversation the server refused, context too long, is counted apart in
``refused`` and left out, since it says nothing about the model's memory):

- ``avg_num_turns`` (+ stddev (population, as numpy's default), median, max, min), the same
  for ``num_distractors``;
- ``false_positive_rate`` / ``false_negative_rate``: share of conversations that ended with a
  false "yes" (a new word claimed seen) / a false "no";
- ``violation_rate``: share that ended on a main-task reply without ``[answer: yes|no]``;
- ``avg_distractor_accuracy``: mean over conversations (with at least one distractor) of the
  share of distractor questions answered correctly.

Every average has a 95% interval: means mean +- 1.96 standard errors (sample standard
deviation), shares the Wilson interval (common.stats). Survival: the share of conversations
still alive after turn t is a Kaplan-Meier estimate (scipy.stats.ecdf on CensoredData; a
conversation failing at turn t is an event at t = turns + 1, one reaching the last turn is
censored there, a refused one is censored at the turns it passed) with log-log 95% bands;
two curves are compared with the log-rank test (scipy.stats.logrank).
"""

import math
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from common.stats import wilson_interval

Z95 = 1.959964
FAILURES = ("false_positive", "false_negative", "violation")


def conversation_frame(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """Return one row per conversation record: Key, turns, distractors, distractor_accuracy,
    violations (format violations over all its turns), ended, refused (bool)."""
    rows = [
        {
            "Key": r["Key"],
            "turns": int(r["turns"]),
            "distractors": int(r["distractors"]),
            "distractor_accuracy": r.get("distractor_accuracy"),
            "violations": int(r.get("violations") or 0),
            "asked": int(r.get("asked") or 0),
            "ended": r["ended"],
            "refused": bool(r.get("refused")),
        }
        for r in records
    ]
    columns = [
        "Key",
        "turns",
        "distractors",
        "distractor_accuracy",
        "violations",
        "asked",
        "ended",
        "refused",
    ]
    frame = pd.DataFrame(rows, columns=columns)
    frame["distractor_accuracy"] = pd.to_numeric(frame["distractor_accuracy"], errors="coerce")
    return frame


def mean_interval(
    values: Iterable[float], bounds: tuple[float, float] = (-math.inf, math.inf)
) -> tuple[float, float, float]:
    """Return ``(mean, lo, hi)``: the mean with mean +- 1.96 standard errors, clipped to the values'
    possible range ``bounds`` (NaN values dropped; all NaN when there is none, the interval
    collapsed for a single value)."""
    data = np.array([v for v in values if not (isinstance(v, float) and math.isnan(v))], dtype=float)
    if data.size == 0:
        return math.nan, math.nan, math.nan
    mean = float(data.mean())
    half = Z95 * float(data.std(ddof=1)) / math.sqrt(data.size) if data.size > 1 else 0.0
    return mean, max(bounds[0], mean - half), min(bounds[1], mean + half)


def share_interval(hits: int, n: int) -> tuple[float, float, float]:
    """Return ``(share, lo, hi)`` of ``hits`` out of ``n``, Wilson 95% interval (NaN share if n is 0)."""
    lo, hi = wilson_interval(hits, n)
    return (hits / n if n else math.nan), lo, hi


def seed_metrics(frame: pd.DataFrame) -> dict[str, Any]:
    """Return the original's metrics (module docstring) over the non-refused conversations, each
    average with ``<name>_lo``/``<name>_hi`` (95%), plus ``n`` (those conversations), ``refused``
    and ``violations_all_turns`` (format violations over every turn, distractors included) out of
    ``turns_asked``."""
    kept = frame[~frame["refused"]]
    n = len(kept)
    out: dict[str, Any] = {"n": n, "refused": int(frame["refused"].sum())}
    for name, column in (("num_turns", "turns"), ("num_distractors", "distractors")):
        values = kept[column].to_numpy(dtype=float)
        mean, lo, hi = mean_interval(values, (0.0, math.inf))
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
    for ending in FAILURES:
        name = "violation_rate" if ending == "violation" else f"{ending}_rate"
        share, lo, hi = share_interval(int((kept["ended"] == ending).sum()), n)
        out.update({name: share, f"{name}_lo": lo, f"{name}_hi": hi})
    mean, lo, hi = mean_interval(kept["distractor_accuracy"].dropna(), (0.0, 1.0))
    out.update(
        {"avg_distractor_accuracy": mean, "avg_distractor_accuracy_lo": lo, "avg_distractor_accuracy_hi": hi}
    )
    out["survived"] = int((kept["ended"] == "survived").sum())
    out["violations_all_turns"] = int(frame["violations"].sum())
    out["turns_asked"] = int(frame["asked"].sum())
    return out


def _failed(frame: pd.DataFrame) -> pd.Series:
    """Return whether each conversation ended on the model's own failure (not survived, not
    refused by the server)."""
    return frame["ended"].isin(FAILURES) & ~frame["refused"]


def _times(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(failures, censored)`` times: a failure is an event at turns + 1 (the turn
    failed), survivors and refused conversations are right-censored at the turns they passed."""
    failed = _failed(frame)
    failures = (frame.loc[failed, "turns"] + 1).to_numpy(dtype=float)
    return failures, frame.loc[~failed, "turns"].to_numpy(dtype=float)


def censored(frame: pd.DataFrame) -> Any:
    """Return the conversations as scipy CensoredData (times as ``_times`` gives them)."""
    from scipy.stats import CensoredData

    failures, right = _times(frame)
    return CensoredData(uncensored=failures, right=right)


def survival(frame: pd.DataFrame, max_turns: int = 100) -> pd.DataFrame:
    """Return the Kaplan-Meier survival curve: for t = 0..max_turns, ``alive`` (share of
    conversations still going after turn t) and its 95% band ``lo``/``hi`` (log-log).

    Past the last time observed, when that time is a censoring (conversations refused by the
    server, or a set of fewer turns), nobody is followed any more and the estimate is undefined:
    NaN there, not the last value carried on (scipy's ``evaluate`` would carry it)."""
    from scipy.stats import ecdf

    turns = np.arange(max_turns + 1)
    if frame.empty:
        return pd.DataFrame({"turn": turns, "alive": math.nan, "lo": math.nan, "hi": math.nan})
    result = ecdf(censored(frame))
    alive = result.sf.evaluate(turns)
    with warnings.catch_warnings():  # undefined where no one is at risk any more: shown as the estimate
        warnings.simplefilter("ignore", RuntimeWarning)
        band = result.sf.confidence_interval(0.95, method="log-log")
    lo = np.where(np.isnan(low := band.low.evaluate(turns)), alive, low)
    hi = np.where(np.isnan(high := band.high.evaluate(turns)), alive, high)
    failures, right = _times(frame)
    last = max(failures.max(initial=0), right.max(initial=0))
    if right.size and right.max() == last:
        for values in (alive, lo, hi):
            values[turns > last] = math.nan
    return pd.DataFrame({"turn": turns, "alive": alive, "lo": lo, "hi": hi})


def logrank(a: pd.DataFrame, b: pd.DataFrame) -> tuple[float, float]:
    """Return the log-rank test's ``(statistic, p)`` of survival in ``a`` against ``b`` (two-sided;
    NaN when neither has a failure, since then there is nothing to compare)."""
    from scipy.stats import logrank as scipy_logrank

    x, y = censored(a), censored(b)
    if x.num_censored() == len(x) and y.num_censored() == len(y):
        return math.nan, math.nan
    result = scipy_logrank(x, y)
    return float(result.statistic), float(result.pvalue)


def paired_survival(a: pd.DataFrame, b: pd.DataFrame) -> dict[str, Any]:
    """Return the paired sign test of two runs over the samples both played (same ``Key``: the same
    word schedule): ``shared``, ``a_longer`` / ``b_longer`` (samples where that run lasted strictly
    longer, as far as censoring lets one tell) and ``p`` (exact two-sided binomial test of the
    decided samples, ``stats.mcnemar_exact``; NaN when none is decided).

    Unlike the log-rank test, which takes the two runs as independent samples, this uses the
    pairing: a sample counts for ``a`` when ``b`` failed at a turn ``a`` passed (``a`` failed later
    or was censored, reaching the end or refused, after it). Equal failure turns are ties; a
    censored run that stopped before the other failed leaves the sample undecided."""
    from common.stats import mcnemar_exact

    both = pd.merge(
        a.assign(failed=_failed(a))[["Key", "turns", "failed"]],
        b.assign(failed=_failed(b))[["Key", "turns", "failed"]],
        on="Key",
        suffixes=("_a", "_b"),
    )
    a_longer = both["failed_b"] & (both["turns_a"] > both["turns_b"])
    b_longer = both["failed_a"] & (both["turns_b"] > both["turns_a"])
    test = mcnemar_exact(a_longer.tolist(), b_longer.tolist())
    decided = test.only_a + test.only_b
    return {
        "shared": len(both),
        "a_longer": test.only_a,
        "b_longer": test.only_b,
        "p": test.p_value if decided else math.nan,
    }


def question_errors(turns: list[dict[str, Any]]) -> pd.DataFrame:
    """Return error rates per question type over every turn asked: distractor turns by source,
    main-task turns by what was asked (a new word, a repeated word, an adversarial word), with
    ``asked``, ``errors`` (wrong or malformed), ``error_rate`` and its Wilson ``lo``/``hi``."""
    rows = []
    for turn in turns:
        if "refused" in turn:
            continue
        if turn["kind"] == "distractor":
            question = f"distractor: {turn['source']}"
        elif turn["adversarial"]:
            question = "main: adversarial word"
        else:
            question = "main: repeated word" if turn["gold"] == "yes" else "main: new word"
        rows.append((question, not turn["correct"]))
    frame = pd.DataFrame(rows, columns=["question", "error"])
    table = frame.groupby("question", sort=True)["error"].agg(asked="size", errors="sum").reset_index()
    shares = [share_interval(int(e), int(a)) for e, a in zip(table["errors"], table["asked"], strict=True)]
    table["error_rate"] = [s[0] for s in shares]
    table["lo"] = [s[1] for s in shares]
    table["hi"] = [s[2] for s in shares]
    return table
