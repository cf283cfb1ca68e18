"""The blocks-world suite: plan in English, or translate to PDDL for our planner.

The rooms every suite has: ``generate`` (problem sets from a config), ``prompts`` (few-shot
prompts), ``baselines`` (``BASELINES``: planners and translators), ``run`` (the items of a
set's prompts, asked through the shared runner), ``scoring`` (plans and facts checked on the
true problem), ``analysis``, ``report``. Beside them the world itself (``state``,
``boards``, ``problems``, ``planner``, ``fullgoal``, ``consistency``, ``check``, ``nlplan``,
``pddl``, ``translate``, ``conversation``) and the paper's release (``release``,
``reproduce``). The suite's page is docs/blocks.md; its conventions are in this package's
README.md.
"""
