"""The blocks-world suite: plan in English, or translate to PDDL for our planner.

The rooms every suite has: ``generate`` (problem sets and their prompts from a config),
``prompts`` (few-shot prompts), ``items`` (a set's items: its prompts' problems and views),
``baselines`` (``BASELINES``: planners and translators), ``run`` (the items asked through the
shared runner), ``grade`` (plans and facts checked on the true problem), ``scoring`` (the score
stage: each results file scored once into the results database), ``analysis`` and ``report``
(from the scored rows). Beside them the world itself (``state``, ``boards``, ``problems``,
``planner``, ``fullgoal``, ``consistency``, ``check``, ``nlplan``, ``pddl``, ``translate``,
``conversation``), the results' names (``runs``) and the paper's release (``release``, ``release_runs``,
``reproduce``, ``paper``). The suite's page is docs/blocks.md; its conventions are in this
package's README.md.
"""

from common.suite import Suite

SUITE = Suite(
    name="blocks",
    title="Blocks world",
    unit="problem (of a view)",
    headline="lenient: the plan reaches the goal, bad lines skipped",
    answer_row="problem of a view",
    rules=("strict", *("init_precision", "init_recall", "goal_precision", "goal_recall")),
    run_scripts=("scripts/lm_plan.py", "scripts/codex_translate.py"),
    record_fields=("id", "view"),
)
