"""Model-vs-model analysis of a blocks results set, from the results files alone.

A set is ``results/blocks/<set>/``, holding one directory per method and view
(``nl___<view>``: the model plans; ``pddl___<view>``: the model translates, our planner plans)
and in each the files ``<prompting>___<modelname>___results.jsonl`` that ``lm_plan.py`` and
``codex_translate.py`` wrote. A *run* is one (method, prompting, model). ``load_set`` reads
every row; the other functions are pure functions of that frame:

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
- ``draw_frame``: every answer of a run asked ``samples: k`` times, for ``common.sampling``.
The published table next to the re-scored release is ``reproduce.paper_comparison``.
"""

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from common import paths
from common.errors import DataError
from common.results import (
    draw_of,
    find_results_files,
    metadata_path,
    parse_results_filename,
    read_results,
    record_id,
)
from common.stats import PAIRED_COLUMNS, pairwise_exact_tests, wilson_interval

METHODS = {"nl": "plan", "pddl": "LLM+planner"}  # results directory prefix -> method shown
RUN = ["method", "prompting", "model"]
FACT_FIELDS = ("init_precision", "init_recall", "goal_precision", "goal_recall")
_DIRECTORY = re.compile(r"^(nl|pddl)___(.+)$")


def run_directories(path: str | Path) -> list[Path]:
    """Return the ``<nl|pddl>___<view>`` directories under ``path`` that hold results files, sorted."""
    path = Path(path)
    if not path.is_dir():
        return []
    return [
        d for d in sorted(path.iterdir()) if d.is_dir() and _DIRECTORY.match(d.name) and find_results_files(d)
    ]


def load_set(path: str | Path) -> tuple[pd.DataFrame, list[Path], list[str]]:
    """Return ``(rows, files, notes)``: one row per results record under ``path`` (see the module
    docstring), the files read, and caveats.

    Each file is re-scored with the current scorer from its raw answers (``scoring.rescore``) when
    its run metadata names a prompts file and problems directory that are still at hand, so a
    fixed scorer never needs a new request; otherwise its recorded scores are used, with a note.
    A re-scored file that answers fewer problems than its prompts file has (``--limit``, or a
    run that stopped), or holds answers to prompts no longer in it, gets a note too.

    Columns: ``method, view, prompting, model, file, id, lenient, strict, goal_held_initially,
    optimal_length, invalid, refused`` (the refusal's kind, or "" when answered), and for
    translation ``init_precision``, ``init_recall``, ``goal_precision``, ``goal_recall``,
    ``lenient_by_round`` / ``strict_by_round`` (feedback runs). Raises DataError when ``path``
    holds no results files.
    """
    rows, files, as_recorded, notes, coverage = [], [], [], [], []
    for directory in run_directories(path):
        prefix, view = _DIRECTORY.match(directory.name).groups()
        for file in find_results_files(directory):
            prompting, model = parse_results_filename(file)
            files.append(file)
            name = file.parent.name + "/" + file.name
            found = rescored(file, prefix)
            if found is None:
                records = read_results(file)
                as_recorded.append(name)
            else:
                records, total, stale = found
                coverage.append((model, prompting, directory.name, len(records), total))
                if stale:
                    notes.append(
                        f"{name}: {stale} row(s) answer prompts that are no longer in its prompts "
                        "file (regenerated since): left out; a rerun asks them again"
                    )
            for record in records:
                rows.append(record_row(record, METHODS[prefix], view, prompting, model, file))
    if not rows:
        raise DataError(
            f"{path}: no blocks results files (expected <nl|pddl>___<view>/"
            "<prompting>___<model>___results.jsonl, written by lm_plan.py or codex_translate.py)"
        )
    if as_recorded:
        notes.insert(
            0, "scores as recorded (prompts or problems not at hand to re-score): " + ", ".join(as_recorded)
        )
    return pd.DataFrame(rows), files, partial_notes(coverage) + notes


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


def rescored(
    file: Path, prompt_type: str, all_draws: bool = False
) -> tuple[list[dict[str, Any]], int, int] | None:
    """Return ``(records, items, stale)``: the records of a results file re-scored from their raw
    answers (``scoring.rescore``) with the inputs of its last run (``rescore_inputs``); the
    number of problems of that prompts file; the number of rows left out because their prompt is
    no longer in it. None when the prompts or problems are not at hand. Only the first answer to
    each prompt unless ``all_draws`` (a model asked ``samples: k`` times)."""
    from common.blocks import scoring

    found = rescore_inputs(file, prompt_type)
    if found is None:
        return None
    items, objects = found
    raw = read_results(file, all_draws)
    records = scoring.rescore(raw, items, prompt_type, objects)
    return records, len(items), len({record_id(record) for record in raw}) - len(records)


def rescore_inputs(file: Path, prompt_type: str) -> tuple[list[dict[str, Any]], str] | None:
    """Return ``(items, objects)`` to re-score a results file with: the items of the prompts file
    and problems (default: beside the prompts) its last run recorded in the metadata (paths
    relative to the project root), and its ``objects`` protocol. None when they are not at hand."""
    from common.blocks import run  # run imports this module's callers' items

    meta = metadata_path(file)
    try:
        last = json.loads(meta.read_text(encoding="utf-8"))["runs"][-1]
        prompts = paths.ROOT / last["prompts"]
        problems = paths.ROOT / run.problems_path(last["prompts"], last.get("problems"))
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None
    if not prompts.is_file() or not problems.is_dir():
        return None
    try:
        return run.load_items(prompts, problems, prompt_type), last.get("objects", "true")
    except (DataError, OSError):
        return None


def draw_frame(file: Path) -> pd.DataFrame:
    """Return every answer of a blocks results file, all draws, re-scored as ``load_set`` does,
    as the frame of ``common.sampling`` (score: lenient success; one question per problem)."""
    prompt_type = _DIRECTORY.match(file.parent.name).group(1)
    found = rescored(file, prompt_type, all_draws=True)
    records = found[0] if found is not None else read_results(file, all_draws=True)
    rows = [
        {
            "Key": record["Key"],
            "draw": draw_of(record),
            "score": float(bool(record.get("lenient")) and not record.get("refused")),
            "answer": None,
        }
        for record in records
    ]
    return pd.DataFrame(rows, columns=["Key", "draw", "score", "answer"])


def record_row(
    record: dict[str, Any], method: str, view: str, prompting: str, model: str, file: Path
) -> dict[str, Any]:
    """Return the analysed fields of one results record of ``file`` (``method``, ``view``,
    ``prompting``, ``model``): a refused problem fails both rules and is not invalid."""
    refused = str(record.get("refused") or "")
    row = {
        "method": method,
        "view": record.get("view", view),
        "prompting": prompting,
        "model": model,
        "file": file.name,
        "id": record.get("id"),
        "refused": refused,
        "lenient": bool(record.get("lenient")) and not refused,
        "strict": bool(record.get("strict")) and not refused,
        "goal_held_initially": record.get("goal_held_initially"),
        "optimal_length": record.get("optimal_length"),
        "invalid": bool(record.get("error")) and not refused,
    }
    for field in (
        "init_precision",
        "init_recall",
        "goal_precision",
        "goal_recall",
        "lenient_by_round",
        "strict_by_round",
    ):
        if field in record:
            row[field] = record[field]
    return row


def run_summary(records: Sequence[dict[str, Any]], prompt_type: str) -> pd.DataFrame:
    """Return one row per view of one run's re-scored records (what ``lm_plan.py`` and
    ``codex_translate.py`` print): the columns of ``success`` (every problem the denominator, a
    refused one a failure), the goals that already held, and over the answered problems the mean
    parse rate and gap to optimal (planning) or fact precision and recall (translation); with
    feedback rounds, ``by_round``: the lenient success after round 0, 1, ... (a refused problem
    fails every round)."""
    frame = pd.DataFrame(records)
    rows = pd.DataFrame([record_row(r, METHODS[prompt_type], r["view"], "", "", Path()) for r in records])
    table = success(rows, ["view"]).set_index("view")
    held = rows["goal_held_initially"].fillna(False).astype(bool)
    table["goal_held_initially"] = held.groupby(rows["view"], sort=False).sum().astype(int)
    answered = frame[rows["refused"] == ""]
    means = ["parse_rate", "optimality_gap"] if prompt_type == "nl" else list(FACT_FIELDS)
    for field in means:
        if field in answered:
            table[field] = answered.groupby("view", sort=False)[field].mean()
    rounds = feedback_rounds(rows.assign(prompting="", model=""))
    if not rounds.empty:
        lenient = rounds.pivot_table(index="view", columns="round", values="lenient_rate", sort=False)
        table["by_round"] = lenient.apply(lambda rates: " / ".join(f"{r:.1f}" for r in rates), axis=1)
    return table.reset_index()


def view_order(df: pd.DataFrame, set_name: str | None = None) -> list[str]:
    """Return the views in display order: the set's manifest order when its problems are in
    data/blocks/<set>/problems, else the paper's one / two / all first, then by name."""
    manifest = paths.DATA / "blocks" / (set_name or "") / "problems" / "manifest.json"
    found = list(dict.fromkeys(df["view"]))
    if set_name and manifest.is_file():
        listed = [v for v in json.loads(manifest.read_text(encoding="utf-8")).get("views", []) if v in found]
        return listed + sorted(v for v in found if v not in listed)
    paper = [v for v in ("one", "two", "all") if v in found]
    return paper + sorted(v for v in found if v not in paper)


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


def run_label(method: str, prompting: str, model: str) -> str:
    """Return the display name of a run: ``<model> (<method>, <prompting>)``."""
    return f"{model} ({method}, {prompting})"
