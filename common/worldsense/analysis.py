"""WorldSense numbers: per-tuple accuracy and bias, grouped means with 95% intervals, paired tests.

The steps follow the release (Benchekroun et al. 2023), which this reproduces exactly:

1. ``compute_acc_table`` (``common.worldsense.scoring``): drop incomplete tuples, score each
   answer, and reduce each (prompting, model, tuple) to one row with weighted means ``acc``
   and ``bias``. The trials of a tuple are not independent, so the tuple is the unit of statistics.
2. ``accuracy_by_group`` / ``bias_by_group``: means per group with equal re-weighting of
   problem sizes, then of problems (``common.stats.collapse_equal_weight``).
3. ``pivot_pretty`` / ``format_cell``: a display table of "mean (95% interval)" cells.

``analyse_results_df`` runs the three steps for the three standard tables, on the release's
joined results table that ``results_frame`` makes of a test set's scored rows (the results
database); nothing here prints (see ``common.worldsense.report``).
"""

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from common import dbarrays, stats
from common.errors import DataError, UserError
from common.scored import Scored
from common.worldsense.scoring import ANSWER_CLASS, complete_rows, compute_acc_table, incomplete_said

MODEL_KEYS = ("prompting", "modelname")
REBALANCED = ("problemsize", "problemname")  # collapsed in this order when not grouped by
Z95 = 1.96  # two-sided 95% normal quantile: conf95 = 1.96 * sem

# Display order of known values; unknown ones follow, sorted.
ORDER_PREFS: dict[str, list[Any]] = {
    "problemname": [
        "Infer.trivial",
        "Infer.normal",
        "Consist.trivial",
        "Consist.normal",
        "Compl.trivial",
        "Compl.normal",
        "Infer.extrema",
        "Infer.parallel",
    ],
    "modelname": ["GPT3.5", "GPT4", "Llama2-chat", "Llama2-FT+0", "Llama2-FT+100k", "Llama2-FT+1M"],
    "prompting": ["basic"],
}
CELL_STYLES = ("mean", "conf", "tuple", "str", "latex")


@dataclass
class Analysis:
    """The standard tables of one analysis; each stats table has mean, sem, count, var, std, conf95."""

    tuples: pd.DataFrame  # compute_acc_table: one row per (prompting, modelname, tuple_ID)
    accuracy: pd.DataFrame  # accuracy_by_group over (prompting, modelname, *by)
    bias: pd.DataFrame  # bias_by_group over (prompting, modelname, *by)
    average: pd.DataFrame | None  # accuracy per (prompting, modelname); None with a single problem
    by: list[str] = field(default_factory=lambda: ["problemname"])
    coverage: pd.DataFrame | None = None  # per (prompting, modelname): trials, answered, invalid, refused

    def __repr__(self) -> str:
        return f"<Analysis {len(self.tuples):,} tuples, by {self.by}>"


def accuracy_by_group(
    df: pd.DataFrame,
    by: Sequence[str] = ("prompting", "modelname", "problemname"),
    rebalance: bool = True,
    accfield: str = "acc",
) -> pd.DataFrame:
    """Return per group of ``by`` the mean, sem, count, var, std and conf95 of ``accfield``.

    ``df`` is a ``compute_acc_table`` result (one row per tuple). With ``rebalance``, the
    statistics are first taken per group of ``by`` plus ``problemsize`` and ``problemname``
    (those not in ``by`` that exist), then problem sizes and then problems are collapsed with
    equal weights (``common.stats.collapse_equal_weight``), so no size or problem dominates
    the mean because it has more tuples. Without, it is a plain groupby. ``conf95`` is
    ``1.96 * sem``. ``df`` is not modified.
    """
    by = list(by)
    unknown = [f for f in [*by, accfield] if f not in df.columns]
    if unknown:
        raise UserError(f"unknown field(s) {unknown}; available: {sorted(map(str, df.columns))}")
    finer = [f for f in REBALANCED if rebalance and f not in by and f in df.columns]
    table = stats.group_stats(df, by + finer, accfield)
    for level in finer:
        table = stats.collapse_equal_weight(table, [f for f in table.index.names if f != level])
    table["conf95"] = Z95 * table["sem"]
    return table


def bias_by_group(
    df: pd.DataFrame, by: Sequence[str] = ("prompting", "modelname", "problemname"), rebalance: bool = True
) -> pd.DataFrame:
    """Return ``accuracy_by_group`` of the ``bias`` field (mean in [-1, 1], >0 leans affirmative)."""
    return accuracy_by_group(df, by, rebalance, accfield="bias")


def format_cell(
    mean: float, sem: float, cell_style: str = "str", scale: float = 100.0, decimals: int | None = None
) -> Any:
    """Return one table cell for a mean and its standard error, both multiplied by ``scale``.

    ``cell_style``: ``mean`` (the value), ``conf`` (the 95% half-width 1.96*sem), ``tuple``
    (value, conf), ``str`` ("75.6 (0.4)"), ``latex`` ("75.6{\\tiny $\\pm 0.4$}"). Strings have
    ``decimals`` digits after the point (default 1 when ``scale`` >= 10, else 2).
    """
    value, conf = scale * mean, scale * Z95 * sem
    if cell_style == "mean":
        return value
    if cell_style == "conf":
        return conf
    if cell_style == "tuple":
        return (value, conf)
    places = (1 if scale >= 10 else 2) if decimals is None else decimals
    if cell_style == "str":
        return f"{value:.{places}f} ({conf:.{places}f})"
    if cell_style == "latex":
        return f"{value:.{places}f}{{\\tiny $\\pm {conf:.{places}f}$}}"
    raise ValueError(f"unknown cell_style {cell_style!r}: use one of {', '.join(CELL_STYLES)}")


def pivot_pretty(
    stats_table: pd.DataFrame,
    index: Sequence[str] | None = None,
    columns: str | Sequence[str] = (),
    cell_style: str = "str",
    scale: float = 100.0,
    hide_uniques: bool = True,
    order_prefs: dict[str, list[Any]] | None = None,
    decimals: int | None = None,
) -> pd.DataFrame:
    """Return a display table of ``format_cell`` cells from a stats table (mean and sem).

    Rows are ``index`` (default: the stats' index levels not in ``columns``, leaving out those
    with a single value when ``hide_uniques``), columns are ``columns``. Values follow
    ``order_prefs`` (default ``ORDER_PREFS``): known ones first in that order, then the others
    sorted. ``stats_table`` is not modified.
    """
    columns = [columns] if isinstance(columns, str) else list(columns)
    st = stats_table.reset_index()
    st["value"] = [
        format_cell(m, s, cell_style, scale, decimals) for m, s in zip(st["mean"], st["sem"], strict=True)
    ]
    if index is None:
        levels = [f for f in stats_table.index.names if f not in columns]
        index = [f for f in levels if not hide_uniques or st[f].nunique() > 1] or levels[:1]
    index = list(index)
    for name in index + columns:
        st[name] = display_order(st[name], name, order_prefs)
    st = st.drop_duplicates(subset=index + columns)
    table = st.set_index(index + columns)["value"]
    if not columns:
        return table.sort_index().to_frame("value")
    return table.unstack(columns).sort_index().sort_index(axis=1)  # unstack keeps first-seen column order


def display_order(
    values: pd.Series, name: str, order_prefs: dict[str, list[Any]] | None = None
) -> pd.Categorical:
    """Return ``values`` as an ordered categorical: preferred values first, then the rest sorted."""
    preferred = (ORDER_PREFS if order_prefs is None else order_prefs).get(name, [])
    present = list(pd.unique(values.astype(object)))
    known = [v for v in preferred if v in present]
    others = sorted((v for v in present if v not in known), key=_sort_key)
    return pd.Categorical(values.astype(object), categories=known + others, ordered=True)


def analyse_results_df(
    results_df: pd.DataFrame, by: Sequence[str] = ("problemname",), require_complete: bool = False
) -> Analysis:
    """Return the standard ``Analysis`` of a joined results table (one row per answered trial).

    Accuracy and bias are grouped by (prompting, modelname, *by); the average accuracy over
    all problems is computed only when there is more than one problem. ``require_complete``:
    see ``compute_acc_table``. ``results_df`` is not modified.
    """
    tuples = compute_acc_table(results_df, require_complete=require_complete)
    if tuples.empty:
        raise DataError("no complete tuple to analyse: every tuple lacks answers")
    return _analysis(tuples, by, answer_coverage(results_df))


def _analysis(tuples: pd.DataFrame, by: Sequence[str], coverage: pd.DataFrame | None) -> Analysis:
    """Return the ``Analysis`` of the tuples of every run (``compute_acc_table``) and the runs'
    ``coverage``: accuracy and bias grouped by (prompting, modelname, *by), the average accuracy
    over all problems when there is more than one."""
    models = list(MODEL_KEYS)
    by = [f for f in by if f not in models]
    average = accuracy_by_group(tuples, models) if tuples["problemname"].nunique() > 1 else None
    return Analysis(
        tuples=tuples,
        accuracy=accuracy_by_group(tuples, models + by),
        bias=bias_by_group(tuples, models + by),
        average=average,
        by=by,
        coverage=coverage,
    )


def answer_coverage(results_df: pd.DataFrame) -> pd.DataFrame | None:
    """Return per (prompting, modelname) how many trials were answered and how: ``trials`` in the
    set, ``answered`` (records in the results file), ``invalid`` (no valid option: "" or an
    answer outside the options, scored wrong as in the release) and ``refused`` (requests the
    server refused for that item, also scored wrong, counted apart). None when ``results_df``
    does not come from ``results_frame``. ``results_df`` is not modified.
    """
    rows = results_df.attrs.get("coverage")
    if not rows:
        return None
    valid = results_df["resp"].astype(object).isin(list(ANSWER_CLASS))
    return _coverage(
        rows, (~valid).groupby([results_df["prompting"], results_df["modelname"]], observed=True).sum()
    )


def _coverage(rows: list[dict[str, Any]], not_valid: pd.Series) -> pd.DataFrame:
    """Return ``answer_coverage``'s table of the runs' coverage ``rows`` (``results_frame``) and
    their answers not among the options (``not_valid``, by prompting and modelname; refused ones
    included), in display order."""
    table = pd.DataFrame(rows)
    order = pd.DataFrame({name: display_order(table[name], name).codes for name in MODEL_KEYS})
    table = table.loc[order.sort_values(list(MODEL_KEYS), kind="stable").index].set_index(list(MODEL_KEYS))
    table["invalid"] = not_valid.reindex(table.index, fill_value=0).astype(int) - table["refused"]
    return table[["trials", "answered", "invalid", "refused"]]


def analyse_results_in_testset_dir(
    testset_dir: str | Path, by: Sequence[str] = ("problemname",), require_complete: bool = False
) -> Analysis:
    """Return the ``Analysis`` of every results file in ``<testset_dir>/results`` (the release's
    entry point): the set's answers scored into the results database (the score stage,
    ``common.scoring.score_and_load``: only what changed), read back, then ``analyse_results_df``
    of their ``results_frame``. Raises FileNotFoundError for a missing directory, DataError when
    there is no answer to analyse."""
    from common import scoring  # the shared entry point (names the sets, scores, reads the database)

    _, scored = scoring.score_and_load(str(testset_dir), suite="worldsense")
    if scored.runs.empty:
        raise DataError(
            f"{testset_dir}/results: no <prompting>___<modelname>___results.jsonl file to analyse"
        )
    fields = [f for f in by if f not in ("prompting", "modelname")]
    return analyse_results_df(results_frame(scored, fields), by, require_complete)


def results_frame(scored: Scored, fields: Sequence[str] = ()) -> pd.DataFrame:
    """Return the scored rows of a test set as the release's joined results table: one row per
    run and first answer to a trial (draw 0), with the trial's ``Key``, ``tuple_ID``,
    ``problemname``, ``problemsize``, the other trial ``fields`` asked for, ``n_options``,
    ``goldresp``, the answer ``resp`` (categorical, "" for none), ``prompting`` and ``modelname``
    (categoricals, their categories sorted), in the runs' order then the trials' order.
    ``attrs["coverage"]``: per run, prompting, modelname, trials, answered, refused."""
    trials = _trials(scored.items, fields)
    position = _positions(trials)
    rows, resps, coverage = [], [], []
    for run in scored.runs.itertuples():
        found, resp, row = _run_rows(position, run, dbarrays.run_answers(scored, run.run_id))
        rows.append(found)
        resps.append(resp)
        coverage.append(row)
    df = trials.take(np.concatenate(rows) if rows else []).reset_index(drop=True)
    df["resp"] = pd.Categorical(np.concatenate(resps) if resps else [])
    which = np.repeat(np.arange(len(rows)), [len(r) for r in rows])
    for name in MODEL_KEYS:
        labels = [row[name] for row in coverage]
        categories = sorted(set(labels))
        codes = np.array([categories.index(label) for label in labels], dtype=np.int64)
        df[name] = pd.Categorical.from_codes(codes[which], categories=categories)
    df.attrs["coverage"] = coverage
    return df


def _trials(items: pd.DataFrame, fields: Sequence[str]) -> pd.DataFrame:
    """Return the trial columns of the joined results table (``results_frame``), one row per item
    in the items' order."""
    items = items.reset_index(drop=True)
    trials = pd.DataFrame(
        {
            "Key": items["Key"],
            "tuple_ID": items["unit"].astype("category"),
            "problemname": items["task"].astype("category"),
        }
    )
    if items["size"].notna().any():
        trials["problemsize"] = items["size"]
    extra = item_fields(items, [*fields, "expectedresp"])
    for name in fields:
        if name in ("skin",):
            trials[name] = items["variant"].astype("category")
        elif name not in trials:
            trials[name] = extra[name]
    trials["n_options"] = extra["expectedresp"].map(len).to_numpy()
    trials["goldresp"] = pd.Categorical(items["gold"])
    return trials


def _positions(trials: pd.DataFrame) -> pd.Series:
    """Return each trial's position by Key, built once (its lookup table too) for every ``_run_rows``."""
    return pd.Series(np.arange(len(trials)), index=trials["Key"].to_numpy())


def _run_rows(position: pd.Series, run: Any, answers: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, dict]:
    """Return one run's part of the joined results table: the positions (``_positions``) of the trials
    it answered (draw 0), in order, its answers ("" for none) and its coverage row (``_coverage``)."""
    mine = answers[answers["draw"] == 0]
    found = position.reindex(mine["Key"].to_numpy()).to_numpy()
    order = np.argsort(found, kind="stable")
    coverage = {
        "prompting": run.prompting,
        "modelname": run.model,
        "trials": len(position),
        "answered": len(mine),
        "refused": int(mine["refused"].notna().sum()),
    }
    return found[order].astype(np.int64), mine["answer"].fillna("").to_numpy()[order], coverage


def analyse_scored(
    scored: Scored, by: Sequence[str] = ("problemname",), require_complete: bool = False
) -> Analysis:
    """Return the standard ``Analysis`` of a test set's scored rows, one run at a time: each run's
    part of the joined results table (``results_frame``), its tuples (``compute_acc_table``) and
    its coverage, then the runs' tuples put together in the order the joined table gives them
    (by prompting, then model); the same as ``analyse_results_df(results_frame(scored, ...))``
    without a table of every answer of every run. Runs that share a prompting and a model (the
    joined table puts their answers in the same tuples) are analysed that way."""
    fields = [f for f in by if f not in MODEL_KEYS]
    labels = list(zip(scored.runs["prompting"], scored.runs["model"], strict=True))
    if len(set(labels)) < len(labels) or not labels:
        return analyse_results_df(results_frame(scored, fields), by, require_complete)
    trials = _trials(scored.items, fields)
    position = _positions(trials)
    categories = {name: sorted({label[i] for label in labels}) for i, name in enumerate(MODEL_KEYS)}
    runs = sorted(scored.runs.itertuples(), key=lambda run: (run.prompting, run.model))
    tuples, coverage, invalid, dropped = [], {}, {}, [0, 0]
    for run in runs:
        found, resp, row = _run_rows(position, run, dbarrays.run_answers(scored, run.run_id))
        frame = trials.take(found).reset_index(drop=True)
        frame["resp"] = pd.Categorical(resp)
        for name, label in zip(MODEL_KEYS, (run.prompting, run.model), strict=True):
            code = categories[name].index(label)
            frame[name] = pd.Categorical.from_codes(np.full(len(frame), code), categories=categories[name])
        complete, incomplete = complete_rows(frame)
        dropped = [dropped[0] + incomplete, dropped[1] + int((~complete).sum())]
        tuples.append(compute_acc_table(frame.loc[complete], filter_incomplete_tuples=False))
        invalid[(run.prompting, run.model)] = int((~pd.Series(resp).isin(list(ANSWER_CLASS))).sum())
        coverage[(run.prompting, run.model)] = row
    if dropped[0]:
        incomplete_said(*dropped, require_complete)
    table = pd.concat(tuples, ignore_index=True)
    if table.empty:
        raise DataError("no complete tuple to analyse: every tuple lacks answers")
    rows = [coverage[label] for label in labels]  # in the runs' order, as results_frame's
    return _analysis(table, by, _coverage(rows, pd.Series(invalid)))


def item_fields(items: pd.DataFrame, names: Sequence[str]) -> pd.DataFrame:
    """Return the trial fields ``names`` kept in the items' ``fields`` JSON, one row per item
    (UserError naming the fields there are, for an unknown one)."""
    parsed = pd.read_json(io.StringIO("\n".join(items["fields"].fillna("{}"))), lines=True, dtype=False)
    known = {"tuple_ID", "problemname", "problemsize", "skin", *parsed.columns}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise UserError(f"unknown trial field(s) {unknown}; the trials have: {', '.join(sorted(known))}")
    return parsed


def _sort_key(value: Any) -> tuple[int, Any]:
    """Sort numbers numerically before strings; missing values last."""
    if isinstance(value, int | float | np.number):
        return (2, 0) if math.isnan(value) else (0, value)
    return (1, str(value))


def paired_tests(tuples: pd.DataFrame) -> pd.DataFrame:
    """Return a paired comparison of every two (prompting, model) runs on the tuples both answered.

    ``tuples`` is a ``compute_acc_table`` result. The tuple is the unit (its trials share a
    description, so they are not independent), and the tuples are weighted equally here, not
    rebalanced by problem and size as the published averages are: a test of "same accuracy on the
    same items", which the separate intervals of two models cannot give. Columns: the exact
    paired test of every suite (``stats.pairwise_exact_tests``: ``a, b, n`` tuples,
    ``a_better``/``b_better`` the tuples where that run's accuracy is higher, ``p``), then the
    paired t-test (``stats.pairwise_t_tests``: ``stats.paired_t_test`` of every pair at once):
    the mean accuracies ``acc_a``/``acc_b``, the mean difference a - b ``diff`` with its 95%
    interval ``diff_low``/``diff_high`` and its two-sided p ``t_p``. Runs are named "<model>
    (<prompting>)"; pairs sharing fewer than two tuples are left out. Empty with fewer than two
    runs.
    """
    wide = _runs_by_tuple(tuples)
    table = stats.pairwise_exact_tests(wide)
    table = table[table["n"] >= 2].reset_index(drop=True)
    ttests = stats.pairwise_t_tests(wide, list(zip(table["a"], table["b"], strict=True)))
    fields = {"acc_a": "mean_a", "acc_b": "mean_b", "diff": "diff", "diff_low": "low", "diff_high": "high"}
    return table.assign(**{name: ttests[f].to_numpy() for name, f in {**fields, "t_p": "p"}.items()})


def _runs_by_tuple(tuples: pd.DataFrame) -> pd.DataFrame:
    """Return the tuples' accuracies as a table of a row per tuple (sorted by ``tuple_ID``) and a
    column per run, "<model> (<prompting>)", in the order the runs come in (NaN: not answered);
    the mean where a run has a tuple twice (runs sharing a prompting and a model), as a pivot
    table gives it, built directly when every run has each tuple once."""
    column = tuples.groupby(["prompting", "modelname"], sort=False, observed=True).ngroup().to_numpy()
    first = np.unique(column, return_index=True)[1]  # each run's first row: the runs in order
    runs = list(
        zip(tuples["prompting"].to_numpy()[first], tuples["modelname"].to_numpy()[first], strict=True)
    )
    names = [f"{model} ({prompting})" for prompting, model in runs]
    row, ids = pd.factorize(tuples["tuple_ID"], sort=True)
    if pd.Series(row * len(names) + column).duplicated().any():
        wide = tuples.pivot_table(index="tuple_ID", columns=["prompting", "modelname"], values="acc")
        return pd.DataFrame({name: wide[run] for name, run in zip(names, runs, strict=True)})
    values = np.full((len(ids), len(names)), np.nan)
    values[row, column] = tuples["acc"].to_numpy(dtype=float)
    return pd.DataFrame(values, index=pd.Index(ids, name="tuple_ID"), columns=names)
