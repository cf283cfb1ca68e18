"""Model-vs-model analysis of a blocks results set, from its scored rows (the results database).

A set's results are one directory per method and view (``nl___<view>``: the model plans;
``pddl___<view>``: the model translates, our planner plans) of results files
``<prompting>___<modelname>___results.jsonl``; a *run* is one (method, prompting, model). Each
file is scored once into the results database (``common.blocks.scoring``); ``results_frame``
turns a set's scored rows into one row per run and problem, and the other functions are pure
functions of that frame:

- ``success``: lenient and strict success by view and run, Wilson 95% intervals, over every
  problem of the run, with ``invalid`` (an answer with no usable plan or facts) and
  ``refused`` (the server refused the request, e.g. longer than the model's context) counted in
  columns of their own. A refused problem is a failure under both rules: as in WorldSense,
  every model of a set keeps the same denominator (leaving refused problems out would flatter
  a small-context model, whose refusals are the longest, hardest problems);
- the same on the problems that need at least one move, and by optimal plan length;
- ``feedback_rounds``: success after each feedback round, for runs with ``--feedback``;
- ``paired_tests``: the exact paired (McNemar) test between every two runs of a view, on
  the problems both results files hold (a refused problem is a failure);
- ``draw_frames``: every answer of the runs asked ``samples: k`` times, for ``common.sampling``.
The published table next to the re-scored release is ``reproduce.paper_comparison``.
"""

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from common.blocks.runs import AS_RECORDED, FACT_FIELDS, METHODS, RUN, file_name, run_label, view_order
from common.scored import Scored
from common.stats import PAIRED_COLUMNS, pairwise_exact_tests, wilson_interval

COLUMNS = [
    "method", "view", "prompting", "model", "file", "id", "refused", "lenient", "strict",
    "goal_held_initially", "optimal_length", "invalid",
]  # fmt: skip


def results_frame(scored: Scored) -> tuple[pd.DataFrame, list[str]]:
    """Return ``(rows, notes)``: one row per run and problem of a set's scored rows (its first
    answer, draw 0, as scored after its last round), runs in their files' order, and the caveats
    of how its files were scored (``run_notes``).

    Columns: ``COLUMNS`` (``refused`` the refusal's kind, or "" when answered; ``lenient``,
    ``strict`` and ``invalid`` as scored; ``id``, ``optimal_length`` and ``goal_held_initially``
    from the item, or for an answer scored as recorded from its ``detail``), and where some
    answer has them the facts' precision and recall (``FACT_FIELDS``) and, for runs with
    feedback rounds, ``lenient_by_round`` / ``strict_by_round`` (success after round 0 .. N).
    """
    runs = ordered_runs(scored.runs)
    answers = scored.answers
    first = answers[(answers["draw"] == 0) & (answers["scored"] == 1)]
    items = scored.items.set_index(["set_name", "Key"])
    frames = [_run_rows(run, first[first["run_id"] == run.run_id], items) for run in runs.itertuples()]
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
    facts = [field for field in FACT_FIELDS if field in df and df[field].notna().any()]
    df = df.drop(columns=[field for field in FACT_FIELDS if field not in facts and field in df])
    rounds = _by_round(answers[answers["draw"] == 0], df)
    if rounds is not None:
        df["lenient_by_round"], df["strict_by_round"] = rounds
    return df, run_notes(runs, answers, scored.items)


def ordered_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """Return the runs in their results files' order: by directory, then file name."""
    keys = [Path(file).parts for file in runs["results_file"]]
    return runs.iloc[sorted(range(len(keys)), key=keys.__getitem__)].reset_index(drop=True)


def _run_rows(run: Any, first: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Return the rows of one run (``results_frame``) from its first answers and the set's items."""
    where = pd.MultiIndex.from_arrays([[run.set_name] * len(first), first["Key"]])
    found = items.reindex(where)
    known = found["fields"].notna().to_numpy()  # an item of the set's prompts (not one a record describes)
    fields = [json.loads(f) if isinstance(f, str) else {} for f in found["fields"]]
    details = [json.loads(d) if isinstance(d, str) else {} for d in first["detail"]]
    rows = pd.DataFrame(
        {
            "method": run.method,
            "view": run.view,
            "prompting": run.prompting,
            "model": run.model,
            "file": Path(run.results_file).name,
            "id": [u if k else d.get("id") for u, k, d in zip(found["unit"], known, details, strict=True)],
            "refused": first["refused"].fillna("").astype(str).to_numpy(),
            "lenient": first["correct"].astype(bool).to_numpy(),
            "strict": first["strict"].astype(bool).to_numpy(),
            "goal_held_initially": [
                f.get("goal_held_initially") if k else d.get("goal_held_initially")
                for f, k, d in zip(fields, known, details, strict=True)
            ],
            "optimal_length": [
                _length(s) if k else d.get("optimal_length")
                for s, k, d in zip(found["size"], known, details, strict=True)
            ],
            "invalid": first["invalid"].astype(bool).to_numpy(),
        }
    )
    for field in FACT_FIELDS:
        rows[field] = first[field].to_numpy(dtype=float) if field in first else np.nan
    rows["_answer"] = first["answer_id"].to_numpy()
    rows["_feedback"] = [d.get("feedback") for d in details]
    return rows


def _length(size: Any) -> int | None:
    """Return an item's optimal plan length as an int (None when unknown)."""
    return None if size is None or pd.isna(size) else int(size)


def _by_round(answers: pd.DataFrame, df: pd.DataFrame) -> tuple[list[Any], list[Any]] | None:
    """Return the ``lenient_by_round`` and ``strict_by_round`` of each row of ``df`` (None for a
    row without feedback rounds), rebuilt from its answer's rows per round asked (the verdict
    after round k; the rounds not needed or not asked keep the last); None when no row had any."""
    feedback = df.pop("_feedback")
    answer_ids = df.pop("_answer")
    if feedback.isna().all():
        return None
    scored = answers.set_index("answer_id")
    turns = answers.sort_values(["run_id", "Key", "turn"]).groupby(["run_id", "Key"], sort=False)
    verdicts = {key: (list(group["correct"]), list(group["strict"])) for key, group in turns}
    lenient, strict = [], []
    for answer, rounds in zip(answer_ids, feedback, strict=True):
        if rounds is None or pd.isna(rounds):
            lenient.append(np.nan)
            strict.append(np.nan)
            continue
        row = scored.loc[answer]
        asked = verdicts[(row["run_id"], row["Key"])]
        lenient.append(_padded(asked[0], int(rounds)))
        strict.append(_padded(asked[1], int(rounds)))
    return lenient, strict


def _padded(verdicts: list[float], rounds: int) -> list[bool]:
    """Return the verdicts after rounds 0 .. ``rounds``: those of the rounds asked, the last one
    kept for the rounds not needed."""
    done = [bool(v) for v in verdicts]
    return (done + [done[-1]] * (rounds + 1 - len(done)))[: rounds + 1]


def run_notes(runs: pd.DataFrame, answers: pd.DataFrame, items: pd.DataFrame) -> list[str]:
    """Return the caveats of a set's scored runs: the runs whose files hold fewer problems than
    their prompts (``partial_notes``), the files scored as recorded (their prompts were not at
    hand), then each run's other notes (e.g. rows answering prompts that changed since)."""
    prompts = {
        key: json.loads(fields).get("prompts") if isinstance(fields, str) else None
        for key, fields in zip(items["Key"], items["fields"], strict=True)
    }
    sizes = pd.Series(list(prompts.values()), dtype=object).value_counts().to_dict()
    coverage, recorded, others = [], [], []
    first = answers[(answers["draw"] == 0) & (answers["scored"] == 1)]
    for run in runs.itertuples():
        if AS_RECORDED in run.notes:
            recorded.append(file_name(run.results_file))
        mine = first.loc[first["run_id"] == run.run_id, "Key"]
        asked = prompts.get(mine.iloc[0]) if len(mine) else None
        if AS_RECORDED not in run.notes and asked is not None:
            coverage.append(
                (run.model, run.prompting, Path(run.results_file).parent.name, run.records, sizes[asked])
            )
        others += [note for note in run.notes if note != AS_RECORDED]
    as_recorded = [f"{AS_RECORDED}: " + ", ".join(recorded)] if recorded else []
    return partial_notes(coverage) + as_recorded + others


def partial_notes(coverage: list[tuple[str, str, str, int, int]]) -> list[str]:
    """Return one caveat per (model, prompting) whose results files hold fewer problems than
    their prompts files (``coverage``: model, prompting, directory, problems answered, problems
    in the prompts file), e.g. "x (paper): PARTIAL results, 3 of 100 problems in 6 files"."""
    partial: dict[tuple[str, str], list[tuple[str, int, int]]] = {}
    for model, prompting, directory, answered, total in coverage:
        if answered < total:
            partial.setdefault((model, prompting), []).append((directory, answered, total))
    notes = []
    for (model, prompting), files in partial.items():
        counts = sorted({f"{answered:,} of {total:,}" for _, answered, total in files})
        notes.append(
            f"{model} ({prompting}): PARTIAL results, {' / '.join(counts)} problems in "
            f"{', '.join(d for d, _, _ in files)} (--limit, or a run that stopped): its rates "
            "rest on those problems only; the paired tests compare runs on the same ones"
        )
    return notes


def set_views(df: pd.DataFrame, items: pd.DataFrame) -> list[str]:
    """Return the views of ``df`` in display order (``runs.view_order``): those the set's
    manifest lists in its order (their rank is in the items' ``fields``), then the rest."""
    ranks: dict[str, int] = {}
    for view, fields in zip(items["variant"], items["fields"], strict=True):
        rank = json.loads(fields).get("view_rank") if isinstance(fields, str) else None
        if rank is not None:
            ranks.setdefault(view, rank)
    listed = sorted(ranks, key=ranks.__getitem__)
    return view_order(list(df["view"]), listed)


def draw_frames(scored: Scored) -> dict[str, pd.DataFrame]:
    """Return, when some run of a set holds repeated answers (``draw`` > 0), every run's answers
    (all draws, as scored after their last round) as the frames of ``common.sampling`` by
    "model (prompting), <nl|pddl>___<view>" (score: lenient success; one question per
    problem); else {} (a set without repeats is unchanged)."""
    answers = scored.answers[scored.answers["scored"] == 1]
    if not (answers["draw"] > 0).any():
        return {}
    frames = {}
    for run in ordered_runs(scored.runs).itertuples():
        mine = answers[answers["run_id"] == run.run_id]
        label = f"{run.model} ({run.prompting}), {Path(run.results_file).parent.name}"
        frames[label] = pd.DataFrame(
            {
                "Key": mine["Key"].to_numpy(),
                "draw": mine["draw"].to_numpy(),
                "score": mine["correct"].to_numpy(dtype=float),
                "answer": None,
            }
        )
    return frames


def rate_cells(successes: int, n: int) -> dict[str, float]:
    """Return ``rate``, ``lo`` and ``hi`` in percent (Wilson 95%; NaN rate for n = 0)."""
    lo, hi = wilson_interval(successes, n)
    return {"rate": 100 * successes / n if n else float("nan"), "lo": 100 * lo, "hi": 100 * hi}


def success(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Return per group of ``by``: ``problems`` (the denominator: refused ones included),
    lenient and strict successes with rate / lo / hi (percent, Wilson 95%), ``invalid`` and
    ``refused`` counts (refused ones are failures). Groups keep their first-appearance order."""
    rows = []
    for key, group in df.groupby(by, sort=False, dropna=False):
        row = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
        row["problems"] = len(group)
        for rule in ("lenient", "strict"):
            wins = int(group[rule].sum())
            cells = rate_cells(wins, len(group))
            row.update({rule: wins, **{f"{rule}_{name}": value for name, value in cells.items()}})
        row["invalid"] = int(group["invalid"].sum())
        row["refused"] = int((group["refused"] != "").sum())
        rows.append(row)
    return pd.DataFrame(rows)


def needs_a_move(df: pd.DataFrame) -> pd.DataFrame:
    """Return the rows of problems whose goal did not already hold (a plan needs a move)."""
    return df[df["goal_held_initially"].eq(False)]


def feedback_rounds(df: pd.DataFrame) -> pd.DataFrame:
    """Return, for runs with feedback rounds, the lenient and strict success after round k
    (k = 0 .. N) by view and run: ``round``, ``problems``, ``lenient``/``strict`` with rate,
    lo, hi (a refused problem fails every round). Empty when no run had feedback."""
    if "lenient_by_round" not in df:
        return pd.DataFrame()
    rows = []
    for key, group in df.groupby(["view", *RUN], sort=False):
        recorded = group["lenient_by_round"].dropna()
        if recorded.empty:
            continue
        rounds = len(recorded.iloc[0])
        for k in range(rounds):
            row = dict(zip(["view", *RUN], key, strict=True))
            row.update({"round": k, "problems": len(group)})
            for rule in ("lenient", "strict"):
                wins = sum(bool(r[k]) for r in group[f"{rule}_by_round"] if isinstance(r, list))
                cells = rate_cells(wins, len(group))
                row.update({rule: wins, **{f"{rule}_{n}": v for n, v in cells.items()}})
            rows.append(row)
    return pd.DataFrame(rows)


def fact_accuracy(df: pd.DataFrame) -> pd.DataFrame:
    """Return the mean fact precision and recall (initial state, goal) by view and translation run."""
    if "init_precision" not in df:
        return pd.DataFrame()
    part = df[(df["method"] == METHODS["pddl"]) & (df["refused"] == "")]
    fields = ["init_precision", "init_recall", "goal_precision", "goal_recall"]
    return part.groupby(["view", *RUN], sort=False)[fields].mean().reset_index()


def paired_tests(df: pd.DataFrame) -> pd.DataFrame:
    """Return the exact paired test (McNemar's, ``stats.pairwise_exact_tests``) between every two
    runs of each view, paired by problem id on the problems both results files hold (a refused
    problem counts as a failure, as in the success rates): ``view, a, b, n, a_better, b_better,
    p`` for the lenient rule and ``strict_a_better, strict_b_better, strict_p`` for the strict
    one. Runs are named by ``run_label``, in their order of appearance; a run's first row of a
    problem counts."""
    tables = []
    for view, part in df[df["id"].notna()].groupby("view", sort=False):
        part = part.drop_duplicates([*RUN, "id"])
        part = part.assign(run=[run_label(*run) for run in zip(*(part[c] for c in RUN), strict=True)])
        runs = list(dict.fromkeys(part["run"]))
        lenient, strict = (
            pairwise_exact_tests(part.pivot(index="id", columns="run", values=rule)[runs])
            for rule in ("lenient", "strict")
        )
        strict = strict[["a_better", "b_better", "p"]].add_prefix("strict_")
        tables.append(pd.concat([lenient, strict], axis=1).assign(view=view))
    columns = ["view", *PAIRED_COLUMNS, "strict_a_better", "strict_b_better", "strict_p"]
    return pd.concat(tables, ignore_index=True)[columns] if tables else pd.DataFrame(columns=columns)
