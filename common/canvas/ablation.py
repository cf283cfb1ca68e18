"""The ablation check: does anything but the asked fact predict the gold answer?

For each task, each trial is read from its prompt text (``reading``, as a model would) with the
facts the question depends on removed, and what remains is turned into structured features
(``VIEWS``); a classifier fitted on those (``learners.best``: the best of many table rules and two
logits, chosen on the training items alone) predicts the gold answer. It is trained on half the
items and tested on the other half, then the halves swap, so every trial is predicted once by a
model that never saw its item (the variants of an item stay together). Its accuracy, with a 95%
interval clustered by item, should hold the task's chance rate: if it does not, something other
than the asked fact carries the answer.

What is removed, per task:

- existence tracking: every sentence and every event naming the asked shape;
- transitivity: every chain sentence naming the subject or the reference (the two words of the
  chain's axis stay the candidates: the axis is no secret, chance is 1/2);
- coordinate: the subject's and the reference's centres, and the examples naming either;
- shuffle tracking: the decisive swap (the last swap naming the answer: it brings it to the
  asked position); and, as a second check, the position asked, leaving how the swap sentences
  name each shape;
- existence and count: every shape sentence (each bears on the answer: a shape that does not
  match counts too, against the stated number of shapes), leaving the question's wording, the
  stated number of shapes and the examples.

The few-shot examples stay (their answers are features), as do the description type and the
few-shot style. A view function returns the candidates' features, one dict per candidate;
``label`` is the candidate answer itself where answers mean something (not shuffle tracking,
whose candidates are the canvas's shapes).
"""

import re
from collections import Counter
from collections.abc import Callable

import pandas as pd

from common.canvas import learners, reading
from common.canvas.shortcuts import chance, count_range
from common.stats import clustered_wilson_interval

Features = dict[str, object]
Choice = list[Features]  # one dict per candidate answer, its "answer" key the answer itself
View = Callable[[dict], list[Choice]]
WORDS = r"small|large|red|blue|yellow|green|square|circle|triangle"


def _common(trial: dict, labels: list[str]) -> list[Features]:
    """Return per candidate the features every view shares: its label, the stated number of
    shapes, description type, few-shot style, and how many example answers (same canvas, other
    canvases) equal it."""
    prompt = trial["text"]
    same = Counter(reading.example_answers(prompt))
    other = Counter(reading.other_canvas_answers(prompt))
    base = {
        "shapes": reading.stated_count(reading.description(prompt)),
        "description": trial["description"],
        "fewshot": trial["fewshot"],
    }
    return [
        base | {"answer": label, "label": label, "same_shots": same[label], "other_shots": other[label]}
        for label in labels
    ]


def _query_view(trial: dict) -> list[Choice]:
    """Existence and count without the description: the query's wording and the examples."""
    words = re.findall(WORDS, reading.question(trial["text"]))
    query = {"words": " ".join(words), "attributes": len(words)}
    labels = list(trial["expectedresp"])
    rows = _common(trial, labels)
    if trial["task"] == "count":
        allowed = count_range(trial["text"])
        for row, label in zip(rows, labels, strict=True):
            k = int(label)
            row |= {"from_low": k - allowed[0], "from_high": allowed[-1] - k, "allowed": k in allowed}
    return [[row | query for row in rows]]


def _tracking_view(trial: dict) -> list[Choice]:
    """Existence tracking without any sentence or event naming the asked shape."""
    prompt = trial["text"]
    asked = re.fullmatch(rf"Is there a ({reading.SHAPE}) in the canvas\?", reading.question(prompt)).group(1)
    kept = [s for s in reading.sentences(reading.description(prompt)) if asked not in s]
    text = " ".join(kept)
    kinds = "".join(kind[0] for _, kind in reading.events(text))
    remaining = {
        "named": len(reading.shapes_named(reading.without_events(text))),
        "events": len(kinds),
        "kinds": kinds,
        "adds": kinds.count("a"),
        "first_event": kinds[:1],
        "last_event": kinds[-1:],
    }
    return [[row | remaining for row in _common(trial, ["Yes", "No"])]]


def _chain(trial: dict) -> tuple[str, str, list[tuple[str, str, str]], list[str]]:
    """Return the subject, the reference, the chain sentences as ``reading.chain_step`` facts, in
    order, and the two words of the chain's axis."""
    prompt = trial["text"]
    subject, reference = reading.relative_pair(reading.question(prompt))
    steps = [s for s in map(reading.chain_step, reading.sentences(reading.description(prompt))) if s]
    axis = ["Left", "Right"] if steps[0][1] in ("Left", "Right") else ["Below", "Above"]
    return subject, reference, steps, axis


def _transitivity_view(trial: dict) -> list[Choice]:
    """Transitivity without the chain sentences naming the subject or the reference; what the
    others mean (the direction of the shape each introduces), as counts and in order."""
    subject, reference, steps, axis = _chain(trial)
    kept = [s for s in steps if subject not in (s[0], s[2]) and reference not in (s[0], s[2])]
    meanings = [direction for _, direction, _ in kept]
    named = len(reading.shapes_named(reading.description(trial["text"])))
    rows = _common(trial, axis)
    for row in rows:
        label = row["label"]
        row |= {
            "kept": len(kept),
            "same_meaning": meanings.count(label),
            "first_meaning": bool(meanings) and meanings[0] == label,
            "last_meaning": bool(meanings) and meanings[-1] == label,
            "off_chain": named - len(steps) - 1,
        }
    return [rows]


def _one_sentence_view(trial: dict) -> list[Choice]:
    """Transitivity from one sentence at a time: for each chain sentence naming the subject or the
    reference, a choice seeing only that sentence: which asked shape it names, in which role
    (introduced by it, or the shape it starts from), and whether the direction it gives that shape
    is the candidate answer. No single sentence should tell the answer."""
    subject, reference, steps, axis = _chain(trial)
    choices = []
    for previous, direction, new in steps:
        for name, shape in (("subject", subject), ("reference", reference)):
            if shape in (previous, new):
                says = direction if shape == new else reading.OPPOSITE[direction]
                role = f"{name} {'introduced' if shape == new else 'before'}"
                choices.append([{"answer": a, "label": a, "role": role, "says": says == a} for a in axis])
    return choices


def _coordinate_view(trial: dict) -> list[Choice]:
    """Coordinate without the subject's and the reference's centres (and examples naming them)."""
    prompt = trial["text"]
    asked = reading.relative_pair(reading.question(prompt))
    centres = re.findall(
        rf"There is a ({reading.SHAPE}) at \((-?\d+), (-?\d+)\)", reading.description(prompt)
    )
    others = [(int(x), int(y)) for shape, x, y in centres if shape not in asked]
    sign = {True: "+", False: "-"}
    layout = {
        "others_x": sign[sum(x for x, _ in others) >= 0] if others else "",
        "others_y": sign[sum(y for _, y in others) >= 0] if others else "",
    }
    shots = Counter(a for q, a in reading.examples(prompt) if not any(s in q for s in asked))
    rows = _common(trial, list(trial["expectedresp"]))
    return [[row | layout | {"same_shots": shots[row["label"]]} for row in rows]]


def _shuffle_view(trial: dict) -> list[Choice]:
    """Shuffle tracking without the decisive swap (the last swap naming the answer: it brings it
    to the asked position); the candidates are the shapes of the line-up, each with its place
    relative to the asked one. Not how often or when the remaining swaps name it: the decisive
    swap names the answer, so without it the answer is named once less, and never after the
    others (a swap after it would move the answer away): traces of the removal, not of the set.
    (The shape the decisive swap moved away, which tracking the other swaps finds, is never the
    answer either: a classifier that tracks would score 1/(N-1), not 1/N.)"""
    prompt = trial["text"]
    start = reading.line_up(reading.description(prompt))
    asked = reading.position(reading.question(prompt), len(start))
    item = {"shapes": len(start), "asked": asked, "from_top": asked - len(start) + 1}
    return [[item | {"answer": s.title(), "offset": i - asked} for i, s in enumerate(start)]]


def _names_view(trial: dict) -> list[Choice]:
    """Shuffle tracking without the position asked: how the swap sentences name each shape (how
    often, first or last, in the first or the last swap, most often). The answer is the shape that
    ends at a position drawn apart from the swaps, so none of this should point at it."""
    prompt = trial["text"]
    text = reading.description(prompt)
    start, swaps = reading.line_up(text), reading.swaps(text)
    named = [shape for pair in swaps for shape in pair]
    most = max(dict.fromkeys(named), key=named.count) if named else None
    rows = []
    for shape in start:
        rows.append(
            {
                "answer": shape.title(),
                "shapes": len(start),
                "mentions": named.count(shape),
                "first_named": named[:1] == [shape],
                "last_named": named[-1:] == [shape],
                "in_first": bool(swaps) and shape in swaps[0],
                "in_last": bool(swaps) and shape in swaps[-1],
                "most_named": shape == most,
            }
        )
    return [rows]


# check name -> (task, view); a task may have several checks
CHECKS: dict[str, tuple[str, View]] = {
    "existence": ("existence", _query_view),
    "count": ("count", _query_view),
    "coordinate": ("coordinate", _coordinate_view),
    "transitivity": ("transitivity", _transitivity_view),
    "transitivity, one sentence": ("transitivity", _one_sentence_view),
    "existence_tracking": ("existence_tracking", _tracking_view),
    "shuffle_tracking": ("shuffle_tracking", _shuffle_view),
    "shuffle_tracking, swap names": ("shuffle_tracking", _names_view),
}


def candidate_rows(trials: pd.DataFrame, view: View) -> tuple[learners.Rows, pd.DataFrame]:
    """Return the candidate rows ``view`` makes of ``trials`` (``learners.Rows``; every choice a
    trial of its own) and one row per choice: its ``item`` and ``chance`` rate."""
    frames, choice_ids, items, strata, gold, choices = [], [], [], [], [], []
    for trial in trials.to_dict("records"):
        rate = chance(trial["task"], len(trial["expectedresp"]), trial["text"])
        for candidates in view(trial):
            number = len(choices)
            choices.append({"item": trial["item"], "chance": rate})
            for features in candidates:
                frames.append({k: v for k, v in features.items() if k != "answer"})
                gold.append(features["answer"] == trial["goldresp"])
            choice_ids += [number] * len(candidates)
            items += [trial["item"]] * len(candidates)
            strata += [f"{trial['num_shapes']}|{trial['stratum']}"] * len(candidates)
    rows = learners.Rows.build(pd.DataFrame(frames), choice_ids, items, strata, gold)
    return rows, pd.DataFrame(choices)


MIN_ITEMS = 8  # fewer items than this are not split: the check gives no verdict


def check_view(trials: pd.DataFrame, view: View) -> dict[str, object]:
    """Return the ablation check of ``view`` on one task's ``trials``: trials, items, the accuracy
    of the cross-fitted classifier with its 95% interval clustered by item, the mean chance rate,
    whether the interval holds it (None, with no accuracy, below ``MIN_ITEMS`` items), and the
    models chosen on each half."""
    rows, choices = candidate_rows(trials, view)
    out = {
        "trials": len(trials),
        "items": trials["item"].nunique(),
        "chance": float(choices["chance"].mean()),
    }
    if out["items"] < MIN_ITEMS:
        nothing = {"score": float("nan"), "lo": float("nan"), "hi": float("nan"), "at_chance": None}
        return out | nothing | {"models": f"fewer than {MIN_ITEMS} items: not checked"}
    right, chosen = learners.cross_fit(rows)
    sums = choices.assign(right=right).groupby("item", sort=True)["right"].agg(["sum", "count"])
    p, lo, hi = clustered_wilson_interval(sums["sum"].tolist(), sums["count"].tolist())
    at_chance = bool(lo <= out["chance"] <= hi)
    return out | {
        "score": p,
        "lo": lo,
        "hi": hi,
        "at_chance": at_chance,
        "models": " / ".join(dict.fromkeys(chosen)),
    }


def check(trials: pd.DataFrame) -> pd.DataFrame:
    """Return one row per check (``CHECKS``) of the tasks in ``trials`` (``check_view``): the
    columns ``check``, ``task``, then those of ``check_view``."""
    out = []
    for name, (task, view) in CHECKS.items():
        of_task = trials[trials["task"] == task]
        if not of_task.empty:
            out.append({"check": name, "task": task} | check_view(of_task, view))
    return pd.DataFrame(out)
