"""The LLM + planner method: a model translates each problem to PDDL facts, our planner plans.

For every test problem of a blocks-world set (its prompts
<set>/prompts/<prompting>___pddl___<view>.jsonl, every view or --view) the model is asked twice:
the facts of the initial state, then of the goal (completions cut at the next ";", also the stop
sequence sent to HTTP models). The facts are read, the optimal planner plans from them, and the
plan is checked on the TRUE problem. No plan, or facts that cannot be read, is a failure whose
reason is recorded. Translation accuracy (precision and recall of the facts) is recorded apart
from plan success. As in the paper, the fact reader is given the true problem's objects (flagged
in every row); --objects described gives it only the objects the English names. With
--feedback N, an error of the fact reader or the planner (an undeclared object, facts that
contradict each other, no plan) goes back to the model on the same conversation and the part at
fault is asked again, up to N rounds; every round's answer and error is recorded, and the
analysis gives the success after each round. A chat endpoint (`api: chat`) gets the few shots as
turns (label <prompting>-turns); a completion endpoint the paper's prompt as is.
Rows go to results/blocks/<set>/pddl___<view>/<prompting>___<modelname>___results.jsonl.
Built-in models: rules (reads the English templates perfectly: an upper bound; --baselines asks
it), and by name oracle-facts (writes the true problem's facts) and random-facts (facts of a
random board of the same items: chance).
A refused request (e.g. longer than the context) is recorded, scored as a failure and counted in
a column of its own (--retry-errors asks it again). The analysis (scripts/analyse_results.py -t
<set>) scores the set's results files from their raw answers and prints the tables.

$ python scripts/codex_translate.py -t cogsci_problems --model rules --view all
$ python scripts/codex_translate.py -t cogsci_problems --model configs/models/llamacpp.yaml --feedback 2 \\
      --view one --limit 5
$ OPENAI_API_KEY=... python scripts/codex_translate.py -t scaling --model openai-gpt-4o-mini \\
      --objects described --view all --limit 20
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import sys

from common import cli
from common.blocks import ask


def main(argv: list[str] | None = None) -> int:
    """Return the exit code of translating the set's problems as ``argv`` says (``ask.translate``)."""
    return ask.translate(argv, __doc__)


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
