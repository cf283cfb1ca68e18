"""Play the Already Said That conversations of a set with a model: does it remember the words?

One conversation per sample, up to 100 turns (see common/already_said_that/prompts.py): the
model must say whether each "MAIN TASK - <word>" was shown before, answering unrelated
questions in between, as [answer: ...]. A wrong or malformed main-task answer ends the
conversation. Conversations run concurrently (turns in order; --set concurrency=N), each turn
through the response cache; a killed run resumes (finished conversations are skipped, turns
already answered come from the cache). A request the server refuses as too long for the context
is the reply, as in the original (a violation: on a main-task turn it ends the conversation,
counted apart; --retry-errors plays those again); a content filter stops the run, as the
original's OpenAI solver did (--filtered-as-violations plays on).

--prompting picks how a model is asked, as the original eval's solvers: direct (the reply is
the answer), cot (it reasons step by step, then replies in the format; its reasoning is not
shown at later turns), hhh (a base model, api: completions, continues a transcript after
example dialogues with a helpful, honest, harmless assistant). The texts are the set's wording:
the original eval's (the original_* sets; make asat-original reads them from its pinned
wheel) or the suite's own. Model configs decode at the original's temperature 1 and
max_tokens 512, with no seed, unless they set their own (or their `suites: already_said_that:`
section does; a warning names a max_tokens too small for the set's longest gold reply).

Writes results/already_said_that/<set>/<prompting>___<model>___results.jsonl (one line per
conversation), ...___turns.jsonl (every turn), ...___summary.json (this run's requests, tokens, cost) and
the runner's ...___results.meta.json. Models: random, oracle (--baselines plays both, afresh),
human (you type the answers), or any config of configs/models/.

$ python scripts/already_said_that.py -t which_is_heavier --model oracle
$ python scripts/already_said_that.py -t mixed --model human --limit 1 --results-dir /tmp/try
$ python scripts/already_said_that.py -t distractorless --model llamacpp --limit 5 --dry-run
$ python scripts/already_said_that.py -t reverse_sort --model llamacpp --prompting cot --limit 5 --dry-run
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import sys

from common import cli
from common.already_said_that import ask


def main(argv: list[str] | None = None) -> int:
    """Return the exit code of playing the set's conversations as ``argv`` says (``ask.main``)."""
    return ask.main(argv, __doc__)


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
