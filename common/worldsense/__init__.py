"""The WorldSense suite: the official test set, in the trial format of the shared trials layer
(``common.trials``: loading, the ask-and-re-prompt protocol, the random and oracle built-ins),
with what is WorldSense's own: its layout and training sets (``data``), the careful reader of
replies (``reader``) the protocol asks with (``run``), scoring (``scoring``), statistics
(``analysis``) and its section of the report (``report``). Its sets are fetched, not generated.

Names follow the release's ``worldsense.benchmark`` module so its users feel at home.
"""

from common.suite import Suite

SUITE = Suite(
    name="worldsense",
    title="WorldSense",
    unit="tuple (trials sharing a description)",
    headline="the answer is in the gold answer's class",
    answer_row="trial",
    run_scripts=("scripts/ask_model.py",),
    record_fields=("resp",),
    ask="common.trials.ask:ask_set",  # the trials layer's: every trial asked with the suite's protocol
    generate=None,  # its sets are fetched
    baselines="common.trials.baselines:BASELINES",  # the trials layer's random and oracle
    fetched_sets=("test_set",),
    results_in_data=True,
    detect_shared=True,  # its detect recognises the trial format, which other suites' sets share
    analysis_options={
        "--by": {
            "nargs": "+",
            "default": ["problemname"],
            "metavar": "FIELD",
            "help": "trial fields to group accuracy and bias by (e.g. problemsize, skin)",
        }
    },
    # its analysis reads each run's first answers as arrays (common.dbarrays), not every answer row
    extra={"answer_arrays": "common.worldsense.scoring:ANSWER_ARRAYS"},
)
