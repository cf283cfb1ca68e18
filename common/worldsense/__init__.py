"""The WorldSense suite: the official test set's format, loading (``data``, ``columns``), the
built-in models (``baselines``), asking a model (``run``: the release's protocol, which the
canvas sets use too), scoring (``scoring``), statistics (``analysis``) and its section of the
report (``report``). Its sets are fetched, not generated: no ``generate``.

Names follow the release's ``worldsense.benchmark`` module so its users feel at home.
"""

from common.worldsense.analysis import (
    accuracy_by_group,
    analyse_results_df,
    analyse_results_in_testset_dir,
    bias_by_group,
    format_cell,
    pivot_pretty,
)
from common.worldsense.data import load_testset, load_trainset
from common.worldsense.scoring import compute_acc_table

__all__ = [
    "accuracy_by_group",
    "analyse_results_df",
    "analyse_results_in_testset_dir",
    "bias_by_group",
    "compute_acc_table",
    "format_cell",
    "load_testset",
    "load_trainset",
    "pivot_pretty",
]
