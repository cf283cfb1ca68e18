"""Re-score the released raw outputs of the CogSci 2022 paper and summarise them honestly.

``rescore`` never trusts the recorded flags: GPT-Neo completions are parsed and checked under
both rules; Codex facts are read, planned with our optimal planner and the plan checked on
the true problem. The recorded flag and (for Codex) the recorded plan are kept beside for
comparison. ``summary`` adds 95% Wilson intervals, ``paired_tests`` the exact paired (McNemar) test,
``format_report`` the printed report.
"""

from pathlib import Path
from typing import Any

import pandas as pd

from common import paths
from common.blocks.check import check_plan
from common.blocks.nlplan import parse_plan
from common.blocks.problems import load_problems
from common.blocks.release import RELEASE, VIEWS, load_records, planner_steps, problems_dir
from common.blocks.translate import solve_from_facts
from common.config import load_yaml
from common.errors import DataError
from common.report import p_text
from common.stats import PAIRED_COLUMNS, pairwise_exact_tests, wilson_interval

METHODS = ("codex", "gpt")
COLUMNS = ["method", "view", "id", "recorded", "lenient", "strict", "trivial", "reason", "recorded_plan_ok"]


def rescore(root: str | Path = RELEASE) -> pd.DataFrame:
    """Return one row per (method, view, test problem): ``COLUMNS``.

    ``trivial`` says the goal already held initially; ``reason`` why a plan failed (first strict
    error for GPT, why the planner had no plan for Codex); ``recorded_plan_ok`` whether the plan
    recorded in the release reaches the goal (lenient rule; Codex only).
    """
    problems = {p.id: p for p in load_problems(problems_dir(root))}
    rows = []
    for view_name in VIEWS:
        for method in METHODS:
            for record in load_records(method, view_name, root):
                if record["id"] not in problems:
                    raise DataError(f"{method}/{view_name}: record for unknown problem {record['id']}")
                view = problems[record["id"]].view(view_name)
                rows.append(
                    {
                        "method": method,
                        "view": view_name,
                        "id": record["id"],
                        "recorded": bool(record["succeed"]),
                        **_score(method, view, record),
                    }
                )
    return pd.DataFrame(rows, columns=COLUMNS)


def _score(method: str, view, record: dict) -> dict:
    """Return the re-scored fields of one record."""
    if method == "gpt":
        check = check_plan(parse_plan(record["lm_plan"], view.items), view.init_board, view.goal)
        return {
            "lenient": check.lenient,
            "strict": check.strict,
            "trivial": check.goal_held_initially,
            "reason": check.first_error,
            "recorded_plan_ok": None,
        }
    outcome = solve_from_facts(view, record["init_res"], record["goal_res"])
    recorded_ok = None
    if record["plan"] is not None:
        steps = planner_steps(record["plan"], view.items)
        recorded_ok = check_plan(steps, view.init_board, view.goal).lenient
    trivial = check_plan([], view.init_board, view.goal).lenient
    reason = outcome.reason or (outcome.check.first_error if outcome.check else None)
    return {
        "lenient": outcome.lenient,
        "strict": outcome.strict,
        "trivial": trivial,
        "reason": reason,
        "recorded_plan_ok": recorded_ok,
    }


def _cell(successes: int, n: int) -> dict:
    """Return the count, rate and Wilson 95% interval of ``successes`` out of ``n``."""
    lo, hi = wilson_interval(successes, n)
    return {
        "successes": successes,
        "n": n,
        "rate": successes / n if n else float("nan"),
        "ci95_lo": lo,
        "ci95_hi": hi,
    }


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Return rows ``measure, method, view, successes, n, rate, ci95_lo, ci95_hi`` (Wilson 95%).

    Measures: ``published`` (recorded flags), ``lenient``, ``strict``, ``empty plan`` (the goal
    already holds) and ``needs a move`` (lenient, on problems whose goal does not hold yet).
    ``df`` is not modified.
    """
    rows = []
    for view in VIEWS:
        for method in METHODS:
            part = df[(df.method == method) & (df.view == view)]
            hard = part[~part.trivial]
            for measure, successes, n in (
                ("published", part.recorded.sum(), len(part)),
                ("lenient", part.lenient.sum(), len(part)),
                ("strict", part.strict.sum(), len(part)),
                ("needs a move", hard.lenient.sum(), len(hard)),
            ):
                rows.append(
                    {"measure": measure, "method": method, "view": view, **_cell(int(successes), int(n))}
                )
        part = df[(df.method == METHODS[0]) & (df.view == view)]
        rows.append(
            {
                "measure": "empty plan",
                "method": "-",
                "view": view,
                **_cell(int(part.trivial.sum()), len(part)),
            }
        )
    return pd.DataFrame(rows)


def paired_tests(df: pd.DataFrame, a: str = "codex", b: str = "gpt") -> pd.DataFrame:
    """Return per view the exact paired (McNemar) test of method ``a`` against method ``b`` on the
    lenient verdicts, paired by problem: ``view`` and the columns of ``stats.pairwise_exact_tests``
    (``a, b, n, a_better, b_better, p``). ``df`` is not modified."""
    tables = []
    for view in VIEWS:
        part = df[df.view == view]
        wide = part.pivot(index="id", columns="method", values="lenient").reindex(columns=[a, b])
        tables.append(pairwise_exact_tests(wide).assign(view=view))
    return pd.concat(tables, ignore_index=True)[["view", *PAIRED_COLUMNS]]


def disagreements(df: pd.DataFrame) -> pd.DataFrame:
    """Return the rows whose re-scored lenient verdict differs from the recorded flag."""
    return df[df.lenient != df.recorded]


def format_report(df: pd.DataFrame) -> str:
    """Return the printed report: the published table, the intervals, the paired tests, checks."""
    table = summary(df)
    lines = [
        "Published table (successes of 100 test problems), re-scored from the raw outputs:",
        "constraints" + "".join(f"{v:>5}" for v in VIEWS),
    ]
    for method in METHODS:
        cells = table[(table.measure == "lenient") & (table.method == method)].set_index("view")
        lines.append(f"{method:<11}" + "".join(f"{cells.successes[v]:>5}" for v in VIEWS))
    lines += [
        "",
        "With 95% Wilson intervals (percent):",
        (f"{'measure':<14}{'method':<7}" + "".join(f"{v:<22}" for v in VIEWS)).rstrip(),
    ]
    order = (
        [("published", m) for m in METHODS]
        + [("lenient", m) for m in METHODS]
        + [("strict", m) for m in METHODS]
        + [("empty plan", "-")]
        + [("needs a move", m) for m in METHODS]
    )
    for measure, method in order:
        cells = table[(table.measure == measure) & (table.method == method)].set_index("view")
        row = "".join(_format_cell(cells.loc[v], measure) for v in VIEWS)
        lines.append(f"{measure:<14}{method:<7}{row}".rstrip())
    lines += ["", "Exact McNemar test, codex vs gpt (lenient, paired by problem):"]
    for row in paired_tests(df).itertuples(index=False):
        counts = f"{row.a} only {row.a_better:>3}, {row.b} only {row.b_better:>3}"
        lines.append(f"  {row.view:<4} {counts}, p = {p_text(row.p)}")
    bad = disagreements(df)
    lines += ["", f"Re-scored verdicts equal to the recorded flags: {len(df) - len(bad)}/{len(df)}"]
    lines.extend(_known_failure(df))
    return "\n".join(lines) + "\n"


def _format_cell(cell: pd.Series, measure: str) -> str:
    """Return ``count [lo, hi]`` (``k/n [lo, hi]`` for subsets), padded to a column."""
    count = f"{cell.successes}/{cell.n}" if measure == "needs a move" else f"{cell.successes}"
    return f"{count} [{100 * cell.ci95_lo:.1f}, {100 * cell.ci95_hi:.1f}]".ljust(22)


def _known_failure(df: pd.DataFrame) -> list[str]:
    """Return the lines about codex, view all, problem 026 (goal held, yet recorded as a failure)."""
    row = df[(df.method == "codex") & (df.view == "all") & (df.id == "026")]
    if row.empty:
        return []
    row = row.iloc[0]
    return [
        (
            f"codex, view all, problem 026: goal held initially: {bool(row.trivial)}; "
            f"success: {bool(row.lenient)} (recorded {bool(row.recorded)}); reason: {row.reason}"
        )
    ]


# ---- the paper next to the re-scored release, for the blocks section -----------------------------
def paper_section(
    set_name: str, release: str | Path | None
) -> tuple[pd.DataFrame | None, list[str], list[Path]]:
    """Return what the blocks section shows of the paper for one of the paper's sets
    (configs/papers/blocks.yaml) once the release is fetched: ``(paper table, summary lines,
    inputs)``, the published table next to the re-scored release; else (None, [], [])."""
    from common.blocks.release import collated_files

    root = Path(release) if release else RELEASE
    if set_name not in published().get("sets", []) or not (root / ".fetched").is_file():
        return None, [], []
    comparison = paper_comparison(summary(rescore(root)))
    mine = comparison[comparison["source"] == "published"]
    line = (
        f"blocks paper table: {int(mine['same'].sum())} of {len(mine)} published cells reproduced "
        f"exactly ({int(comparison['same'].sum())} of {len(comparison)} with the measured facts)"
    )
    return paper_table(comparison), [line], collated_files(root)


def paper_table(comparison: pd.DataFrame) -> pd.DataFrame:
    """Return ``paper_comparison`` as a display table: one row per (source, measure,
    method), one column per view, cells "<published> ✓" when reproduced exactly, else
    "<published> ≠ <reproduced>"."""
    pairs = zip(comparison["published"], comparison["reproduced"], comparison["same"], strict=True)
    cells = comparison.assign(cell=[f"{p} ✓" if same else f"{p} ≠ {r}" for p, r, same in pairs])
    index = ["source", "measure", "method"]
    rows = pd.MultiIndex.from_tuples(
        list(dict.fromkeys(zip(*(cells[c] for c in index), strict=True))), names=index
    )
    views = list(dict.fromkeys(cells["view"]))
    table = cells.pivot(index=index, columns="view", values="cell")
    return table.reindex(index=rows, columns=views).fillna("")


# ---- the paper ------------------------------------------------------------------------------------
PUBLISHED = paths.CONFIGS / "papers" / "blocks.yaml"


def published() -> dict[str, Any]:
    """Return configs/papers/blocks.yaml (the published table and the release's measured facts)."""
    return load_yaml(PUBLISHED)[0]


def paper_comparison(reproduced_summary: pd.DataFrame) -> pd.DataFrame:
    """Return every cell of the published table and of the measured facts next to the same cell
    of ``reproduced_summary`` (``reproduce.summary`` of the re-scored release): columns source
    (published | measured), measure, method, view, published, reproduced, same.

    A count cell reads "k" ("k/n" for "needs a move"); a cell missing from the summary is "-".
    """
    cells = reproduced_summary.set_index(["measure", "method", "view"])
    rows = []
    for source in ("published", "measured"):
        for measure, methods in published().get(source, {}).items():
            for method, views in methods.items():
                for view, cell in views.items():
                    key = (measure, method, view)
                    found = "-"
                    if key in cells.index:
                        hit = cells.loc[key]
                        count, n = int(hit["successes"]), int(hit["n"])
                        found = f"{count}/{n}" if measure == "needs a move" else str(count)
                    rows.append((source, measure, method, view, str(cell), found))
    frame = pd.DataFrame(rows, columns=["source", "measure", "method", "view", "published", "reproduced"])
    frame["same"] = frame["published"] == frame["reproduced"]
    return frame
