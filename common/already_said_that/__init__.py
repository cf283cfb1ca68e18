"""Already Said That: a multi-turn memory suite. The model is shown words one by one (``MAIN
TASK - <word>``) and must say whether each was shown before, while unrelated distractor
questions are mixed into the same conversation; a conversation ends at the first wrong or
malformed main-task answer.

The rooms every suite has: ``generate`` (a set from its config: word samples, distractor
pools, manifest; ``load_set`` reads it back), ``prompts`` (the conversation's rules: task text,
schedule, answer parsing, judging), ``baselines`` (``BASELINES``), ``run`` (playing the
conversations through the shared runner), ``analysis``, ``report``. Beside them the data
sources: ``wordnet``, ``distractors``, ``winograd``, ``original`` (with ``original_texts``),
and ``wording``, what a model reads: the original's texts (reproduction mode) or the suite's
own. The suite's page is
docs/already_said_that.md; its modules are listed in this package's README.md.
"""

from common.suite import Suite

SUITE = Suite(
    name="already_said_that",
    title="Already Said That",
    unit="conversation (a sample)",
    headline="the turn's answer is right (main task: ends it if not)",
    rules=("main",),
    run_scripts=("scripts/already_said_that.py",),
    record_fields=("turns", "ended"),
    detect="common.already_said_that.scoring:is_asat_set",
    protocol="common.already_said_that.run",
    baselines="common.already_said_that.baselines:BASELINES",
    generate="common.already_said_that.generate:generate",
    fingerprint="common.already_said_that.scoring:data_fingerprint",
    results_files="common.already_said_that.scoring:results_files",
    items="common.already_said_that.scoring:items_frame",
    score="common.already_said_that.scoring:score_file",
    pairs="common.already_said_that.scoring:pairs",
    section="common.already_said_that.report:section",
    queries="common.already_said_that.report:QUERIES",
    section_scope="suite",
)
