"""The suite's named rules (the shortcuts of ``shortcuts`` and the partial skills of ``partial``)
scored on fresh trials of a generator, the numbers the report lists beside the audit.

A shortcut reads none of what the skill needs and should score chance; a partial skill reads part
of it and is right where what it skips does not matter. Each is scored on the audit's fresh test
trials (one member of a new item's tuple each, so the trials are independent): its accuracy with
a Wilson interval (where its rule reads nothing, a random answer's chance counts: the share it
reads is beside), the chance rate, and the share of trials on which it differs from the skill
(gives another answer than the gold one, or none). On the set itself, where twins stand together,
the report adds how many whole tuples each gets right (``common.canvas.analysis``).
"""

import numpy as np
import pandas as pd

from common.canvas.partial import PARTIAL_SKILLS
from common.canvas.shortcuts import SHORTCUTS, chance
from common.stats import wilson_interval

COLUMNS = ["kind", "rule", "task", "about", "trials", "reads", "score", "lo", "hi", "chance", "differs"]


def named_rules(task: str) -> list[tuple[str, str, str, object]]:
    """Return the (kind, name, about, rule) of every shortcut and partial skill of ``task``."""
    out = [("shortcut", s.name, s.about, s.rule) for s in SHORTCUTS if s.task == task]
    return out + [("partial skill", p.name, p.about, p.rule) for p in PARTIAL_SKILLS if p.task == task]


def rule_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Return one row per named rule of the tasks of ``trials`` (fresh trials): its accuracy with a
    95% Wilson interval, the mean chance rate, the share it reads and the share it differs from the
    skill on. ``trials`` is not modified."""
    rows = []
    for task, part in trials.groupby("task", sort=False):
        rates = [chance(task, len(o), t) for o, t in zip(part["expectedresp"], part["text"], strict=True)]
        for kind, name, about, rule in named_rules(str(task)):
            answers = [rule(str(text)) for text in part["text"]]
            read = np.array([a is not None for a in answers])
            # right where it reads the prompt, a random answer's chance where it does not
            right = np.array(
                [
                    a == g if a is not None else r
                    for a, g, r in zip(answers, part["goldresp"], rates, strict=True)
                ]
            )
            lo, hi = wilson_interval(round(right.sum()), len(right))
            rows.append(
                {
                    "kind": kind,
                    "rule": name,
                    "task": task,
                    "about": about,
                    "trials": len(part),
                    "reads": float(read.mean()),
                    "score": float(right.mean()),
                    "lo": lo,
                    "hi": hi,
                    "chance": float(np.mean(rates)),
                    "differs": 1
                    - float(np.mean([a == g for a, g in zip(answers, part["goldresp"], strict=True)])),
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS)
