"""Ask a model to plan every test problem of a blocks-world set (every view), and score its plans.

A completion endpoint gets the prompt as is (the paper's); a chat endpoint (`api: chat`) gets the
same few shots as turns (a one-line system instruction, each example as a user and an assistant
turn), and its results are labelled <prompting>-turns. The completion is cut at the stop marker
"Initially:" (also sent as the stop sequence to HTTP models unless --set stop=... says
otherwise), parsed, and checked on the true problem under the lenient (paper) and strict
rules. The prompts are <set>/prompts/<prompting>___nl___<view>.jsonl, every view (or --view).
One row per problem and view is appended to
results/blocks/<set>/nl___<view>/<prompting>___<modelname>___results.jsonl (raw completion,
parsed plan, verdicts, lengths, gap to optimal); a rerun resumes where it stopped. The analysis
(scripts/analyse_results.py -t <set>) scores every results file of the set again from its raw
completions, never by asking again, into the results database, and prints the tables.
Built-in models: noop (empty plan), random (random applicable moves), oracle (optimal planner);
--baselines asks the three.
A request the server refuses (e.g. longer than the model's context) is recorded as refused,
scored as a failure (the same denominator for every model) and counted in a column of its own,
and not asked again unless --retry-errors.

$ python scripts/lm_plan.py -t cogsci_problems --model random --view two
$ python scripts/lm_plan.py -t data/blocks/released --view all \\
      --problem-path data/cogsci22_blocks/dataset/simple_stack/problems --model configs/models/vllm.yaml
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import sys

from common import cli
from common.blocks import ask


def main(argv: list[str] | None = None) -> int:
    """Return the exit code of planning the set's problems as ``argv`` says (``ask.plan``)."""
    return ask.plan(argv, __doc__)


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
