"""The original eval's texts, read as data from its pinned wheel: what a model reads in
reproduction mode (a set's ``wording: original``, see ``wording.py``).

``extract_texts`` parses five Python files of ``evals==3.0.1.post1`` (each pinned by SHA-256 in
configs/data/already_said_that_original.sha256) with ``ast``: nothing is imported or run, and
nothing of them is kept in this repository. It returns:

- ``task_description``: the system message template (``prompts.py``: ``TASK_DESCRIPTION``) with
  its three slots for the worked example (``SLOTS``);
- ``basic_example``: the question and answer the distractorless variant's worked example uses
  (``distractors.py``: ``get_basic_distractor_example``);
- ``cot_prompt`` and ``extract_prompt``: the CoT solver's reasoning and answer-extraction
  prompts (``solvers/prompts/cot.py``);
- ``hhh_messages``: the base-model preamble of the HHH solver (``solvers/prompts/hhh.py``:
  ``HHH_MSGS``, role and content of each message);
- ``role_prefixes``: the prefixes its completions solver renders a transcript with
  (``openai_solver.py``: ``ROLE_TO_PREFIX``), whose stripped forms are the stop sequences.

``original.build_original`` writes them to ``texts.json`` (with the files' SHA-256s) beside the
original data; ``load_texts`` reads them back.
"""

import ast
import json
import string
from pathlib import Path
from typing import Any

from common.errors import DataError, UserError
from common.paths import shown

TEXTS_NAME = "texts.json"
TEXT_FILES = {  # what is read -> the file of the wheel it is read from
    "task": "evals/elsuite/already_said_that/prompts.py",
    "distractors": "evals/elsuite/already_said_that/distractors.py",
    "cot": "evals/solvers/prompts/cot.py",
    "hhh": "evals/solvers/prompts/hhh.py",
    "solver": "evals/solvers/providers/openai/openai_solver.py",
}
SLOTS = ("distractor_question", "distractor_answer", "distractor_word")  # the task description's
ROLES = ("system", "user", "assistant")


def extract_texts(sources: dict[str, bytes]) -> dict[str, Any]:
    """Return the original's texts (module docstring) from ``sources`` (``{path in the wheel:
    bytes}`` of every file of ``TEXT_FILES``). Raises DataError naming the file and what is
    missing or malformed."""
    modules = {key: _parse(sources, path) for key, path in TEXT_FILES.items()}
    task = _string(modules["task"], "TASK_DESCRIPTION", TEXT_FILES["task"])
    slots = sorted({field for _, field, _, _ in string.Formatter().parse(task) if field})
    if slots != sorted(SLOTS):
        raise DataError(
            f"{TEXT_FILES['task']}: TASK_DESCRIPTION has the slots {slots}, expected {list(SLOTS)}"
        )
    prefixes = _literal(
        _assigned(modules["solver"], "ROLE_TO_PREFIX", TEXT_FILES["solver"]), TEXT_FILES["solver"]
    )
    if not isinstance(prefixes, dict) or not all(isinstance(prefixes.get(role), str) for role in ROLES):
        raise DataError(f"{TEXT_FILES['solver']}: ROLE_TO_PREFIX lacks a prefix for {', '.join(ROLES)}")
    return {
        "task_description": task,
        "basic_example": _basic_example(modules["distractors"], TEXT_FILES["distractors"]),
        "cot_prompt": _string(modules["cot"], "DEFAULT_COT_TEMPLATE", TEXT_FILES["cot"]),
        "extract_prompt": _string(modules["cot"], "DEFAULT_EXTRACT_ANSWER_TEMPLATE", TEXT_FILES["cot"]),
        "hhh_messages": _messages(modules["hhh"], "HHH_MSGS", TEXT_FILES["hhh"]),
        "role_prefixes": prefixes,
    }


def _parse(sources: dict[str, bytes], path: str) -> ast.Module:
    """Return the syntax tree of file ``path`` of ``sources`` (DataError when absent or unparsable)."""
    if path not in sources:
        raise DataError(f"the wheel's {path} was not read: is it pinned?")
    try:
        return ast.parse(sources[path].decode("utf-8"), filename=path)
    except (SyntaxError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not Python source ({exc})") from None


def _assigned(module: ast.Module, name: str, path: str) -> ast.expr:
    """Return the value a top-level statement of ``module`` assigns to ``name``."""
    for node in module.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets) and node.value is not None:
            return node.value
    raise DataError(f"{path}: no assignment to {name}")


def _literal(node: ast.expr, path: str) -> Any:
    """Return the Python literal ``node`` holds (DataError when it is not one)."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise DataError(f"{path}:{node.lineno}: expected a literal") from None


def _string(module: ast.Module, name: str, path: str) -> str:
    """Return the string literal assigned to ``name`` in ``module``."""
    value = _literal(_assigned(module, name, path), path)
    if not isinstance(value, str):
        raise DataError(f"{path}: {name} is not a string")
    return value


def _keywords(call: ast.expr, names: tuple[str, ...], path: str) -> dict[str, str]:
    """Return the string keyword arguments ``names`` of a call (``Message(role=..., content=...)``)."""
    if not isinstance(call, ast.Call):
        raise DataError(f"{path}:{call.lineno}: expected a call")
    given = {k.arg: _literal(k.value, path) for k in call.keywords if k.arg in names}
    if sorted(given) != sorted(names) or not all(isinstance(v, str) for v in given.values()):
        raise DataError(f"{path}:{call.lineno}: expected the string arguments {', '.join(names)}")
    return given


def _messages(module: ast.Module, name: str, path: str) -> list[dict[str, str]]:
    """Return the messages (role, content) of the list of ``Message(...)`` calls assigned to ``name``."""
    value = _assigned(module, name, path)
    if not isinstance(value, ast.List) or not value.elts:
        raise DataError(f"{path}: {name} is not a list of messages")
    return [_keywords(element, ("role", "content"), path) for element in value.elts]


def _basic_example(module: ast.Module, path: str) -> dict[str, str]:
    """Return ``{"question", "answer"}`` of the distractorless variant's worked example: the
    ``DistractorSample(question=..., ideal=...)`` that ``get_basic_distractor_example`` returns."""
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name == "get_basic_distractor_example":
            returned = [n.value for n in ast.walk(node) if isinstance(n, ast.Return) and n.value is not None]
            if len(returned) == 1:
                found = _keywords(returned[0], ("question", "ideal"), path)
                return {"question": found["question"], "answer": found["ideal"]}
    raise DataError(f"{path}: no get_basic_distractor_example returning one DistractorSample")


def load_texts(dest: Path, fix: str) -> dict[str, Any]:
    """Return the texts ``build_original`` wrote to ``dest``; UserError naming ``fix`` when absent."""
    path = dest / TEXTS_NAME
    if not path.is_file():
        raise UserError(f"the original eval's texts (wording: original) are not in {shown(dest)}: {fix}")
    return json.loads(path.read_text(encoding="utf-8"))
