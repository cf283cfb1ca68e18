"""Ask a model (built-in or any OpenAI-compatible server) every trial of a WorldSense or canvas set.

Follows the WorldSense protocol: ask `text`, extract the answer, re-prompt with "Only respond
with one of these options: ..." when it is not in `expectedresp`, record "" when it still is
not. Answers are appended to <prompting>___<modelname>___results.jsonl as they come
(re-running resumes), in the test set's results/ for WorldSense (the release's layout) and in
results/canvas/<set>/ for a canvas set; each run is summarised in <...>___results.meta.json.
The question text is sent as is, or with --prompting cot followed by a request to reason step by
step first (common/trials/protocol.py: COT_PROMPT); any other --prompting only labels the results
file. Without --prompting, a model config's `promptings` for the suite are asked in turn (the
shipped engine configs: basic and cot), else basic. A trial the server
refuses for itself (too long for the model's context, a content filter) is recorded as refused
and the run goes on; re-running skips it unless --retry-errors. Built-in models: random and
oracle, and on canvas sets every shortcut baseline (--baselines asks them all, each afresh).
A canvas set whose config has picture modalities (`modality: [text, image, text+image]`) is
asked in each (--modality picks), the same trials (Keys) into <prompting>-image___... and so
on; a model must say `vision: true` in its config to be shown pictures (the shortcut baselines,
rules on the prompt's words, answer the text modality only). --dry-run prints what each run
would cost (requests, text and picture tokens, dollars) and asks nothing.

$ python scripts/ask_model.py -t worldsense/test_set --model oracle --limit 100 --results-dir /tmp/try
$ OPENAI_API_KEY=... python scripts/ask_model.py -t worldsense/test_set --model openai-gpt-4o-mini
$ python scripts/ask_model.py -t worldsense/test_set --model configs/models/vllm.yaml \\
      --set concurrency=32 --set max_tokens=8 --no-cache
$ python scripts/ask_model.py -t canvas/standard --baselines
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import sys

from common import cli
from common.trials import ask


def main(argv: list[str] | None = None) -> int:
    """Return the exit code of asking the set's trials as ``argv`` says (``ask.main``)."""
    return ask.main(argv, __doc__)


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
