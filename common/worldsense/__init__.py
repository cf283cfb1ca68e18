"""The WorldSense suite: the official test set's format and loading (``data``, with the fast
readers ``extract`` and ``bzip2``), the built-in models (``baselines``), asking a model (``run``:
the release's protocol, which the canvas sets use too), scoring (``scoring``), statistics
(``analysis``) and its section of the report (``report``). Its sets are fetched, not generated.

Names follow the release's ``worldsense.benchmark`` module so its users feel at home.
"""

from common.suite import Suite

SUITE = Suite(
    name="worldsense",
    title="WorldSense",
    unit="tuple (trials sharing a description)",
    headline="the answer is in the gold answer's class",
    run_scripts=("scripts/ask_model.py",),
    record_fields=("resp",),
    detect="common.worldsense.report:detect",
    protocol="common.worldsense.run",
    baselines="common.worldsense.baselines:BASELINES",
    fingerprint="common.worldsense.scoring:data_fingerprint",
    results_files="common.worldsense.scoring:results_files",
    items="common.worldsense.scoring:items_frame",
    score="common.worldsense.scoring:score_file",
    pairs="common.worldsense.scoring:pairs",
    section="common.worldsense.report:section",
    queries="common.worldsense.report:QUERIES",
    fetched_sets=("test_set",),
    results_in_data=True,
)
