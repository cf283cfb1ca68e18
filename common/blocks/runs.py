"""How blocks results are laid out and named, shared by the scorer and the report.

A set's results are ``results/blocks/<set>/<nl|pddl>___<view>/<prompting>___<model>___results.jsonl``
(``nl``: the model plans; ``pddl``: the model translates, our planner plans). A *run* is one
(method, prompting, model); each of its results files is one view.
"""

import re
from pathlib import Path

METHODS = {"nl": "plan", "pddl": "LLM+planner"}  # results directory prefix -> method shown
RUN = ["method", "prompting", "model"]
RULES = ("lenient", "strict")  # the rules of the units and paired tests; lenient is ``correct``
FACT_FIELDS = ("init_precision", "init_recall", "goal_precision", "goal_recall")
PAPER_VIEWS = ("one", "two", "all")
RELEASE_MODELS = {"gpt": "cogsci22-gpt-neo", "codex": "cogsci22-codex"}  # the release's runs (release_runs)
AS_RECORDED = "scores as recorded (prompts or problems not at hand to re-score)"  # a run's note
_DIRECTORY = re.compile(r"^(nl|pddl)___(.+)$")


def directory_parts(name: str) -> tuple[str, str] | None:
    """Return ``(prompt type, view)`` of a results directory name ``<nl|pddl>___<view>``, else None."""
    match = _DIRECTORY.match(name)
    return (match.group(1), match.group(2)) if match else None


def run_label(method: str, prompting: str, model: str) -> str:
    """Return the display name of a run: ``<model> (<method>, <prompting>)``."""
    return f"{model} ({method}, {prompting})"


def file_name(results_file: str | Path) -> str:
    """Return how notes name a results file: ``<directory>/<file>``, e.g.
    ``nl___one/paper___x___results.jsonl``."""
    path = Path(results_file)
    return f"{path.parent.name}/{path.name}"


def view_order(found: list[str], listed: list[str]) -> list[str]:
    """Return the views ``found`` in display order: those of the set's manifest (``listed``) in its
    order, then the rest by name; without a manifest the paper's one / two / all first."""
    first = [v for v in listed if v in found] if listed else [v for v in PAPER_VIEWS if v in found]
    return first + sorted(v for v in dict.fromkeys(found) if v not in first)
