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
    answer_row="turn",
    rules=("main",),
    run_scripts=("scripts/already_said_that.py",),
    record_fields=("turns", "ended"),
    section_scope="suite",
    # its analysis reads these answer columns (common.dbarrays: the conversations as arrays, the
    # turns' rows with these columns only), not every column of every turn
    # and the turns after each conversation's first row counted by those columns, not one row each
    extra={
        "answer_arrays": "common.already_said_that.scoring:ANSWER_ARRAYS",
        "count_turns": "common.already_said_that.scoring:COUNT_TURNS",
    },
)
