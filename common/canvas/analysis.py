"""The numbers of the canvas suite: scored results files, accuracy with intervals clustered by
item, the shortcut baselines against chance, the audit and the partial skills (both read the
trials alone), exact paired tests between models.

A canvas set directory holds ``manifest.json`` and ``trials.jsonl.bz2``; its answers (one
results file per model, written by ``scripts/ask_model.py``) are scored once into the results
database (``scoring.score_file``), whose rows ``scored_frame`` reads. Accuracy is the strict
reader's (``reader.extract``); the seed's ``contains`` rule is kept beside it for comparison. The
variants of one item (descriptions, few-shot styles) share a canvas and a question, so the item
is the cluster of every interval (``stats.clustered_wilson_interval``) and the unit of the
paired tests. Refused requests (the server refused the item, e.g. too long for the context) and
invalid answers (no single answer found) both count as wrong, each in a column of its own, so
every model is scored over the same trials (as WorldSense scores them). Everything here is a
pure function of the trials and the scored rows; ``common.canvas.report`` displays it.
"""

import io
import itertools
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from common import paths
from common.canvas import audit, rules
from common.canvas.scoring import CANVAS_FIELDS, run_order
from common.canvas.shortcuts import SHORTCUTS, chance
from common.errors import DataError, UserError
from common.scored import Scored
from common.stats import clustered_wilson_interval, pairwise_exact_tests
from common.trials.data import load_testset

TASK_ORDER = ["existence", "count", "coordinate", "transitivity", "existence_tracking", "shuffle_tracking"]
SHORTCUT_TASKS = {s.name: s for s in SHORTCUTS}


def load_trials(path: Path) -> pd.DataFrame:
    """Return the trials of a canvas set; raise UserError when ``path`` is not one (its trials
    lack the canvas fields ``task`` and ``item``), saying which analysis fits it."""
    trials = load_testset(path)
    if any(field not in trials.columns for field in CANVAS_FIELDS):
        raise UserError(
            f"{path}: not a canvas set (its trials lack the fields 'task' and 'item'); another suite's "
            f"set is analysed with `scripts/analyse_results.py -t {path}`"
        )
    return trials


def trials_of(scored: Scored) -> pd.DataFrame:
    """Return the trials of a set as its items in the results database hold them (the prompt,
    the gold answer, every other field from ``fields``), in the trials file's order."""
    items = scored.items
    fields = pd.read_json(io.StringIO("\n".join(items["fields"])), lines=True, dtype=False)
    trials = pd.concat(
        [items[["Key"]].reset_index(drop=True), fields, items[["prompt", "gold"]].reset_index(drop=True)],
        axis=1,
    )
    return trials.rename(columns={"prompt": "text", "gold": "goldresp"})


def scored_frame(scored: Scored) -> tuple[pd.DataFrame, list[str]]:
    """Return the first answers (draw 0) of every run of a set as the analysis reads them (one row
    per answered trial: Key, item, task, description, fewshot, num_shapes, contains, strict,
    invalid, refused, answer, model: the run's label), runs in the report's order
    (``scoring.run_order``), and notes on partial files, refused items and files left out."""
    items = scored.items.set_index("Key")
    fields = pd.read_json(io.StringIO("\n".join(items["fields"])), lines=True, dtype=False)
    fields.index = items.index
    frames, notes = [], []
    for run in run_order(scored.runs).itertuples():
        notes += run.notes
        mine = scored.answers[(scored.answers["run_id"] == run.run_id) & (scored.answers["draw"] == 0)]
        if not run.records and run.notes:
            continue  # not answers to this set (a note says what)
        keys = mine["Key"].to_numpy()
        frame = pd.DataFrame(
            {
                "Key": keys,
                "item": fields["item"].reindex(keys).to_numpy(),
                "tuple": fields["tuple_ID"].reindex(keys).to_numpy() if "tuple_ID" in fields else keys,
                "gold": items["gold"].reindex(keys).to_numpy(),
                "task": fields["task"].reindex(keys).to_numpy(),
                "description": fields["description"].reindex(keys).to_numpy(),
                "fewshot": fields["fewshot"].reindex(keys).to_numpy(),
                "num_shapes": fields["num_shapes"].reindex(keys).to_numpy(),
                "contains": mine["contains"].astype(int).to_numpy(),
                "strict": mine["correct"].astype(int).to_numpy(),
                "invalid": mine["invalid"].astype(bool).to_numpy(),
                "refused": mine["refused"].notna().to_numpy(),
                "draw": 0,
                "answer": mine["answer"].to_numpy(),
                "model": run.label,
            }
        )
        missing = len(items) - len(frame)
        if missing:
            notes.append(f"{run.label}: partial results, {len(frame):,} of {len(items):,} trials answered")
        refused = int(frame["refused"].sum())
        if refused:
            notes.append(
                f"{run.label}: {refused:,} trials refused by the server "
                "(scored wrong, counted in the refused column)"
            )
        frames.append(frame)
    if not frames:
        raise DataError("no answers to canvas trials among the results files: " + "; ".join(notes))
    return pd.concat(frames, ignore_index=True), notes


def interval(
    rows: pd.DataFrame, field: str = "strict", confidence: float = 0.95
) -> tuple[float, float, float]:
    """Return ``(p, lo, hi)`` of ``field`` over ``rows`` (refused ones score 0), clustered by item,
    at ``confidence``."""
    per_item = rows.groupby("item", sort=True)[field].agg(["sum", "count"])
    return clustered_wilson_interval(per_item["sum"].tolist(), per_item["count"].tolist(), confidence)


def accuracy(scored: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Return per group of ``by``: trials, items, strict accuracy with its clustered 95% interval,
    the ``contains`` accuracy, and the invalid and refused counts (tidy, proportions in [0, 1]).
    Each group's ``interval``, from one grouping of every row by group and item (``_by_item``)."""
    per_item = _by_item(scored, by, ["strict", "contains"])
    counts = scored.groupby(by, sort=False).agg(
        trials=("item", "size"),
        items=("item", "nunique"),
        invalid=("invalid", "sum"),
        refused=("refused", "sum"),
    )
    rows = []
    for key, count in zip(counts.index, counts.itertuples(index=False), strict=True):
        key = key if isinstance(key, tuple) else (key,)
        found = per_item.get(key)
        p, lo, hi = _interval_of(found, "strict")
        rows.append(
            dict(zip(by, key, strict=True))
            | {
                "trials": int(count.trials),
                "items": int(count.items),
                "strict": p,
                "lo": lo,
                "hi": hi,
                "contains": _interval_of(found, "contains")[0],
                "invalid": int(count.invalid),
                "refused": int(count.refused),
            }
        )
    table = pd.DataFrame(rows)
    table["task"] = pd.Categorical(
        table["task"],
        [t for t in TASK_ORDER if t in set(table["task"])] + sorted(set(table["task"]) - set(TASK_ORDER)),
    )
    return table.sort_values(by, kind="stable").reset_index(drop=True).astype({"task": str})


def _by_item(
    rows: pd.DataFrame, by: list[str], fields: Sequence[str], cluster: str = "item"
) -> dict[tuple, dict[str, tuple[list, list]]]:
    """Return, per group of ``by`` (its key as a tuple), the sums and counts of each of ``fields``
    per ``cluster`` (sorted), by field: what ``interval`` reads of the group, from one grouping
    of every row instead of one per group."""
    per = rows.groupby([*by, cluster], sort=True)[list(fields)].agg(["sum", "count"])
    columns = {f: (per[(f, "sum")].tolist(), per[(f, "count")].tolist()) for f in fields}
    return {
        key: {f: (sums[part], counts[part]) for f, (sums, counts) in columns.items()}
        for key, part in _groups(per.index.droplevel(cluster)).items()
    }


def _groups(keys: pd.Index) -> dict[tuple, slice]:
    """Return where each group of sorted ``keys`` (an index of one or several levels) lies: its
    key as a tuple, and its slice of the rows."""
    if not len(keys):
        return {}
    starts = [0, *(np.flatnonzero(keys[1:] != keys[:-1]) + 1), len(keys)]
    return {
        (keys[a] if isinstance(keys[a], tuple) else (keys[a],)): slice(a, b)
        for a, b in itertools.pairwise(starts)
    }


def _interval_of(
    per_item: dict[str, tuple[list, list]] | None, field: str, confidence: float = 0.95
) -> tuple[float, float, float]:
    """Return ``interval`` of ``field`` from a group's sums and counts per item (``_by_item``)."""
    sums, counts = per_item[field] if per_item is not None else ([], [])
    return clustered_wilson_interval(sums, counts, confidence)


def shortcut_table(scored: pd.DataFrame, trials: pd.DataFrame) -> pd.DataFrame:
    """Return, for each shortcut model in the results, its strict score on its own task with the
    clustered 95% interval, the share of those trials its rule reads (``reads``; the others it
    answers at random), the task's chance rate (mean over the trials of ``baselines.chance``) and
    whether the interval holds chance, one-sided (None for a rule that reads none of them: its
    score is the ``random`` built-in's). The intervals of the shortcuts that read the set are held
    together (Bonferroni: 1 - 0.05 / k each), so a set whose every shortcut is at chance passes
    95% of the time; with a 95% interval each, a clean set of 20 would miss one most of the time."""
    rates = trial_chance(trials)
    texts = trials.set_index("Key")["text"]
    found = []
    for shortcut in SHORTCUTS:
        rows_of = scored[(scored["model"] == shortcut.name) & (scored["task"] == shortcut.task)]
        if rows_of.empty:
            continue
        shown = texts.loc[rows_of["Key"]]
        reads = sum(shortcut.rule(str(text)) is not None for text in shown) / len(shown)
        found.append((shortcut, rows_of, reads))
    level = 1 - 0.05 / max(sum(reads > 0 for _, _, reads in found), 1)
    rows = []
    for shortcut, rows_of, reads in found:
        p, lo, hi = interval(rows_of, confidence=level)
        rate = float(rates.loc[rows_of["Key"]].mean())
        rows.append(
            {
                "shortcut": shortcut.name,
                "task": shortcut.task,
                "rule": shortcut.about,
                "items": rows_of["item"].nunique(),
                "reads": reads,
                "score": p,
                "lo": lo,
                "hi": hi,
                "chance": rate,
                "at_chance": bool(lo <= rate)
                if reads
                else None,  # one-sided; reading nothing: random's score
            }
        )
    return pd.DataFrame(rows)


def audit_of(data: Path) -> tuple[pd.DataFrame, pd.DataFrame, dict] | None:
    """Return the audit of a set's generator (``audit.read_audit`` of its ``audit.json``, the
    audit stage's output): the views, the named rules on fresh trials, and the sizes and level;
    None when the set has none (a set generated by hand and not audited)."""
    path = data / "audit.json"
    return audit.read_audit(path) if path.is_file() else None


def power_of() -> tuple[pd.DataFrame, dict] | None:
    """Return the gate's power table (``audit.read_power`` of ``data/canvas/power.json``), or None
    when it was not measured."""
    return audit.read_power(POWER) if POWER.is_file() else None


POWER = paths.DATA / "canvas" / "power.json"


def tuple_table(scored: pd.DataFrame, trials: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Return, per group of ``by``, the measures over contrast tuples (the members of one item's
    tuple in one variant, answered whole): how many tuples, the share answered right whole
    (``tuple``; a rule blind to an input a twin varies gets none), and the bias-corrected accuracy
    (``balanced``: per tuple the mean over its gold answers of the share right with that answer,
    as WorldSense weighs a tuple), each with a 95% interval clustered by item, and each one's chance
    (a guess at each member's form chance: the product over the tuple; the mean). Tuples a run left
    partial are left out. ``scored`` and ``trials`` are not modified."""
    sizes = trials.groupby("tuple_ID")["Key"].size() if "tuple_ID" in trials else pd.Series(dtype=int)
    frame = scored.assign(chance=trial_chance(trials).reindex(scored["Key"]).to_numpy())
    counted = frame.groupby([*by, "tuple"], sort=False)["Key"].transform("size").to_numpy()
    whole = frame[counted == sizes.reindex(frame["tuple"]).to_numpy()]  # tuples answered whole
    if whole.empty:
        return pd.DataFrame()
    keys = [*by, "tuple"]  # every group at once: one grouping of the rows, not one per group
    per = whole.groupby(keys, sort=True).agg(
        item=("item", "first"), right=("strict", "min"), chance=("chance", "prod")
    )
    per["balanced"] = whole.groupby([*keys, "gold"])["strict"].mean().groupby(level=keys).mean()
    per["balanced_chance"] = whole.groupby(keys)["chance"].mean()
    clusters = _by_item(per.reset_index(), by, ["right", "balanced"])
    rows = []
    for key, part in _groups(per.index.droplevel("tuple")).items():
        row = dict(zip(by, key, strict=True)) | {"tuples": part.stop - part.start}
        for name in ("right", "balanced"):
            p, lo, hi = _interval_of(clusters[key], name)
            row |= {name: p, f"{name}_lo": lo, f"{name}_hi": hi}
        row |= {
            "right_chance": float(per["chance"].iloc[part].mean()),
            "balanced_chance": float(per["balanced_chance"].iloc[part].mean()),
        }
        rows.append(row)
    first = {key: n for n, key in enumerate(dict.fromkeys(scored[by].itertuples(index=False, name=None)))}
    return pd.DataFrame(sorted(rows, key=lambda row: first[tuple(row[b] for b in by)]))  # as the rows came


def rules_on_tuples(trials: pd.DataFrame) -> pd.DataFrame:
    """Return, for each named rule (``rules.named_rules``) of the set's tasks, the share of the set's
    contrast tuples it answers right whole (``tuples_right``): a rule blind to an input a twin
    varies gets none. ``trials`` is not modified."""
    rows = []
    for task, part in trials.groupby("task", sort=False):
        if "tuple_ID" not in part:
            continue
        for _, name, _, rule in rules.named_rules(str(task)):
            right = [rule(str(t)) == g for t, g in zip(part["text"], part["goldresp"], strict=True)]
            whole = pd.Series(right, index=part.index).groupby(part["tuple_ID"]).all()
            rows.append({"rule": name, "task": task, "tuples_right": float(whole.mean())})
    return pd.DataFrame(rows, columns=["rule", "task", "tuples_right"])


def trial_chance(trials: pd.DataFrame) -> pd.Series:
    """Return each trial's chance rate (``baselines.chance``), indexed by Key."""
    values = [
        chance(task, len(options), text)
        for task, options, text in zip(trials["task"], trials["expectedresp"], trials["text"], strict=True)
    ]
    return pd.Series(values, index=trials["Key"])


def chance_by_size(trials: pd.DataFrame) -> pd.Series:
    """Return the mean chance rate (``trial_chance``) per (task, num_shapes)."""
    rates = trial_chance(trials).rename("chance").reset_index()
    return (
        rates.merge(trials[["Key", "task", "num_shapes"]], on="Key")
        .groupby(["task", "num_shapes"])["chance"]
        .mean()
    )


def uniform_by_size(trials: pd.DataFrame) -> pd.Series:
    """Return the mean chance rate of a run answering uniformly among all of a trial's options
    (``expectedresp``; the ``random`` built-in) per (task, num_shapes). It differs from
    ``chance_by_size`` where a trial's form leaves fewer answers open (transitivity: 1/4 against
    1/2), so each run is compared with its own chance."""
    rates = pd.Series([1.0 / len(options) for options in trials["expectedresp"]], index=trials.index)
    return rates.groupby([trials["task"], trials["num_shapes"]]).mean().rename("chance")


UNIFORM_RUNS = ("random",)  # runs that answer uniformly among all options: their chance is uniform_by_size


def chance_lines(models: Sequence[str], chances: pd.Series, uniform: pd.Series) -> dict[str, pd.Series]:
    """Return the chance lines a figure draws: ``"chance"`` (a model that reads the answer's form)
    and, for each run of ``models`` that answers uniformly (``UNIFORM_RUNS``) where its chance
    differs from that one by more than half a point somewhere, ``"chance of <run>"``."""
    lines = {"chance": chances}
    for model in models:
        if model in UNIFORM_RUNS:
            own = uniform.reindex(chances.index)
            if ((own - chances).abs() > 0.005).any():
                lines[f"chance of {model}"] = own
    return lines


def paired_tests(scored: pd.DataFrame) -> pd.DataFrame:
    """Return the exact paired test (``stats.pairwise_exact_tests``, here a sign test) between every
    two models other than the shortcuts, on the items both answered: an item favours a model when
    it answered more of the item's variants correctly (strict; a refused variant scores 0); ties
    carry no information. Columns ``a, b, n`` (items), ``a_better, b_better, p``."""
    models = [m for m in dict.fromkeys(scored["model"]) if m not in SHORTCUT_TASKS]
    rates = scored[scored["model"].isin(models)].groupby(["item", "model"])["strict"].mean()
    return pairwise_exact_tests(rates.unstack("model").reindex(columns=models))
