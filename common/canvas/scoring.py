"""Scoring canvas results with two scorers, and the accuracy table with Wilson intervals.

``contains`` is the original task's default: 1 when the expected answer occurs in the response
(compared case-insensitively here), so "10" scores as "0" and "not" as "no". ``extract`` is the
strict reading: the response must give exactly one answer of the trial's vocabulary. It
tolerates case, surrounding punctuation, "Answer:" / "The answer is" prefixes and hyphens
between words ("below-right"); an answer counts only as a whole word ("0" is not found in
"10", "No" not in "Not"), and an answer inside a longer one found in the same response
("Below" inside "Below Right") does not count separately. A response with no answer or with
several different ones is unparseable, reported apart (and scored 0).

The response scored is the model's last completion (``raw[-1]``: after the runner's re-prompt,
if one was needed), or ``resp`` when a results file has no ``raw``.
"""

import re
from collections.abc import Sequence
from typing import Any

import pandas as pd

from common.stats import wilson_interval

_PREFIX = re.compile(r"^\s*(?:(?:final\s+)?answer\s*[:\-]|the\s+answer\s+is\b:?)\s*", re.IGNORECASE)
_EDGES = " \t\r\n.,;:!?\"'`*()[]{}"


def contains(expected: str, response: str) -> int:
    """Return 1 if ``expected`` occurs in ``response`` ignoring case, else 0 (the original default scorer)."""
    return int(str(expected).casefold() in str(response).casefold())


def _pattern(option: str) -> re.Pattern[str]:
    """Return a regex finding ``option`` as whole words, its words separated by spaces or hyphens."""
    words = [re.escape(w) for w in str(option).split()]
    return re.compile(r"(?<![\w-])" + r"[\s-]+".join(words) + r"(?![\w-])", re.IGNORECASE)


def extract(response: str, vocabulary: Sequence[str]) -> str | None:
    """Return the one answer of ``vocabulary`` that ``response`` gives (spelled as in the vocabulary),
    or None."""
    text = _PREFIX.sub("", str(response)).strip(_EDGES)
    normal = " ".join(text.replace("-", " ").split()).casefold()
    for option in vocabulary:
        if normal == " ".join(str(option).split()).casefold():
            return option
    spans = {}
    for option in vocabulary:
        for match in _pattern(option).finditer(text):
            spans[(match.start(), match.end())] = option
    # drop a match lying inside a longer one ("Below" inside "Below Right")
    kept = {opt for (s, e), opt in spans.items()
            if not any(s2 <= s and e <= e2 and (s2, e2) != (s, e) for s2, e2 in spans)}
    return kept.pop() if len(kept) == 1 else None


def response_text(record: dict[str, Any]) -> str:
    """Return the response a results record is scored on: the last raw completion, else ``resp``."""
    raw = record.get("raw")
    if isinstance(raw, list) and raw:
        return str(raw[-1])
    return str(record.get("resp") or "")


def score_rows(trials: pd.DataFrame, results: list[dict[str, Any]]) -> pd.DataFrame:
    """Return one row per answered trial with ``contains``, ``strict`` (0/1) and ``unparseable`` (bool).

    ``trials`` needs Key, goldresp, expectedresp, task, description, fewshot, num_shapes. Results
    whose Key is not a trial are ignored. Neither input is modified.
    """
    by_key = trials.set_index("Key")
    rows = []
    for record in results:
        if record["Key"] not in by_key.index:
            continue
        trial = by_key.loc[record["Key"]]
        response = response_text(record)
        found = extract(response, list(trial["expectedresp"]))
        rows.append({"Key": record["Key"], "task": trial["task"], "description": trial["description"],
                     "fewshot": trial["fewshot"], "num_shapes": trial["num_shapes"],
                     "contains": contains(trial["goldresp"], response),
                     "strict": int(found == trial["goldresp"]), "unparseable": found is None})
    return pd.DataFrame(rows, columns=["Key", "task", "description", "fewshot", "num_shapes",
                                       "contains", "strict", "unparseable"])


def accuracy_table(scored: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Return per group of ``by``: n, both accuracies with 95% Wilson intervals, and the unparseable count.

    Columns: n, contains_acc, contains_lo, contains_hi, strict_acc, strict_lo, strict_hi,
    unparseable. ``scored`` (from ``score_rows``) is not modified.
    """
    rows = []
    for key, group in scored.groupby(by, sort=True):
        n = len(group)
        row = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)) | {"n": n}
        for scorer in ("contains", "strict"):
            hits = int(group[scorer].sum())
            lo, hi = wilson_interval(hits, n)
            row |= {f"{scorer}_acc": hits / n, f"{scorer}_lo": lo, f"{scorer}_hi": hi}
        rows.append(row | {"unparseable": int(group["unparseable"].sum())})
    return pd.DataFrame(rows)


def format_table(table: pd.DataFrame, by: list[str]) -> str:
    """Return the table as text: accuracies in percent with their intervals, ``acc [lo, hi]``."""
    def cell(row: pd.Series, scorer: str) -> str:
        return (f"{100 * row[f'{scorer}_acc']:5.1f} [{100 * row[f'{scorer}_lo']:5.1f}, "
                f"{100 * row[f'{scorer}_hi']:5.1f}]")

    shown = table[[*by, "n"]].copy()
    shown["contains % [95% CI]"] = [cell(row, "contains") for _, row in table.iterrows()]
    shown["strict % [95% CI]"] = [cell(row, "strict") for _, row in table.iterrows()]
    shown["unparseable"] = table["unparseable"]
    return shown.to_string(index=False)
