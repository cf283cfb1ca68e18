"""The original Already Said That eval's own code, run from its pinned wheel, for the fidelity tests.

``original_code(root)`` imports the eval, its solvers and prompts from the wheel extracted at
``root``, as they are, without installing ``evals`` and its dependencies: what those modules
import beyond the few files that matter (the OpenAI SDK, tiktoken, pydantic, the registry, the
recorder) is stood in for by small modules that do nothing, except the completion functions,
which record each request the solvers would send (``Sent``) and answer it with the test's
``policy``. ``replay`` then plays one conversation through the original's own loop
(``AlreadySaidThat._conversation_loop``) with the turns the suite showed (its ``build_message``
replaced by them), so the requests of both can be compared byte for byte.
"""

import contextlib
import importlib
import random
import sys
import types
import typing
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PACKAGES = (
    "evals",
    "evals.elsuite",
    "evals.elsuite.already_said_that",
    "evals.solvers",
    "evals.solvers.nested",
    "evals.solvers.prompts",
    "evals.solvers.providers",
    "evals.solvers.providers.openai",
    "evals.prompt",
    "evals.completion_fns",
)
CHAT_MODEL, BASE_MODEL = "stub-model", "stub-base-model"  # the registry's chat check: by name


@dataclass
class Sent:
    """The requests the original's solvers sent, in order, and how they are answered."""

    policy: Callable[[dict[str, Any]], str]
    requests: list[dict[str, Any]] = field(default_factory=list)

    def answer(self, request: dict[str, Any]) -> str:
        """Record ``request`` and return the policy's reply to it."""
        self.requests.append(request)
        return self.policy(request)


def _module(name: str, **attributes: Any) -> types.ModuleType:
    """Return a new module ``name`` holding ``attributes``."""
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    return module


def _stand_ins(sent: Sent, prompt_base: Any) -> dict[str, types.ModuleType]:
    """Return the modules standing in for what the original's files import and the test does not
    need: no network, no tokenizer; the completion functions record and answer (``sent``)."""

    class Completion:
        def __init__(self, text: str):
            self.text = text

        def get_completions(self) -> list[str]:
            return [self.text]

    class CompletionFn:
        def __init__(self, model=None, api_base=None, api_key=None, n_ctx=None, extra_options=None, **_):
            self.model, self.extra_options = model, dict(extra_options or {})

    class OpenAIChatCompletionFn(CompletionFn):
        def __call__(self, prompt, **kwargs):  # the original's: the prompt formatted, then sent
            messages = prompt_base.ChatCompletionPrompt(raw_prompt=prompt).to_formatted_prompt()
            request = {"model": self.model, "messages": messages, **{**kwargs, **self.extra_options}}
            return Completion(sent.answer(request))

    class OpenAICompletionFn(CompletionFn):
        def __call__(self, prompt, **kwargs):
            text = prompt_base.CompletionPrompt(raw_prompt=prompt).to_formatted_prompt()
            request = {"model": self.model, "prompt": text, **{**kwargs, **self.extra_options}}
            return Completion(sent.answer(request))

    class SolverEval:
        def __init__(self, *args, seed: int = 20220722, **kwargs):
            self.seed = seed

    class BadRequestError(Exception):
        pass

    class TypeAdapter:
        def __init__(self, kind):
            pass

        def validate_python(self, value):
            return value

    def nothing(*args, **kwargs):
        return None

    class Encoding:  # the context precheck counts tokens; the model's context is unknown (None)
        def encode(self, text):
            return text.split()

    return {
        "evals.completion_fns.openai": _module(
            "evals.completion_fns.openai",
            OpenAIChatCompletionFn=OpenAIChatCompletionFn,
            OpenAICompletionFn=OpenAICompletionFn,
        ),
        "evals.api": _module("evals.api", CompletionFn=object),
        "evals.eval": _module("evals.eval", SolverEval=SolverEval),
        "evals.record": _module(
            "evals.record", RecorderBase=object, record_metrics=nothing, record_event=nothing
        ),
        "evals.registry": _module(
            "evals.registry", is_chat_model=lambda model: model != BASE_MODEL, n_ctx_from_model_name=nothing
        ),
        "openai": _module("openai", BadRequestError=BadRequestError),
        "tiktoken": _module("tiktoken", encoding_for_model=lambda model: Encoding()),
        "pydantic": _module("pydantic", TypeAdapter=TypeAdapter, ValidationError=ValueError),
        "typing_extensions": _module("typing_extensions", TypedDict=typing.TypedDict),
    }


@dataclass
class OriginalCode:
    """The original's modules (``eval``, ``utils``, ``distractors``, ``solver``, ``task_state``)
    and the requests its solvers sent (``sent``)."""

    modules: dict[str, types.ModuleType]
    sent: Sent

    def solver(self, prompting: str, options: dict[str, Any]) -> Any:
        """Return the original's solver for ``prompting``: ``direct`` (``generation/direct``),
        ``cot`` (``already_said_that/cot``, persistent memory off) or ``hhh``
        (``generation/hhh`` around a completions model), decoding with ``options``."""
        openai_solver = "evals.solvers.providers.openai.openai_solver:OpenAISolver"
        model = BASE_MODEL if prompting == "hhh" else CHAT_MODEL
        spec = {
            "class": openai_solver,
            "args": {"completion_fn_options": {"model": model, "extra_options": options}},
        }
        if prompting == "direct":
            return self.modules["solver"].create_solver(spec)
        if prompting == "cot":
            cot = {"cot_solver": spec, "extract_solver": spec, "persistent_memory": False}
            return self.modules["solver"].create_solver(
                {"class": "evals.solvers.nested.cot_solver:CoTSolver", "args": cot}
            )
        return self.modules["solver"].create_solver(
            {"class": "evals.solvers.nested.hhh_solver:HHHSolver", "args": {"solver": spec}}
        )

    def eval_for(
        self, variant: str, samples_of: Callable[[str], list[dict]], max_turns: int = 100, **options: Any
    ) -> Any:
        """Return the original's ``AlreadySaidThat`` eval of ``variant`` (its name: e.g.
        "which-is-heavier"), its distractor records read by ``samples_of`` (the registry's loader
        stood in for: the records of the variant's data file); ``options`` are more of its
        arguments (``seed``, as ``oaieval --seed`` gives it)."""
        self.modules["distractors"].get_samples = samples_of
        return self.modules["eval"].AlreadySaidThat(
            distractor_variant=variant, max_turns=max_turns, **options
        )

    def replay(self, evaluation: Any, solver: Any, words: list[str], turns: list[dict]) -> dict[str, Any]:
        """Play one conversation through the original's loop, its turns the suite's ``turns``
        (turn log lines, in order): each main-task word (checked to be one the original could
        have drawn there), each distractor question (the original's own record of that text).
        Return the original's conversation metrics and ``unplayed``, the turns it did not reach."""
        utils = self.modules["utils"]
        questions = {sample.question: sample for sample in evaluation.distractor_data}
        shown = iter(turns)
        real_build = utils.build_message

        def build_message(words_not_shown, words_prev_shown, distracting_words, rng, distractor_sample=None):
            turn = next(shown, None)
            if turn is None:
                raise AssertionError("the suite ended the conversation sooner: the original plays on")
            if turn["kind"] == "distractor":
                sample = questions[turn["message"]]
                message, words_in_it = utils.build_distractor_question_message(sample)
                return message, words_in_it, sample
            pool = distracting_words if turn["adversarial"] else words_not_shown | words_prev_shown
            if turn["word"] not in pool:
                raise AssertionError(
                    f"the original could not have shown {turn['word']!r} at turn {turn['turn']}"
                )
            return (
                self.modules["task_state"].Message(role="user", content=turn["message"]),
                [turn["word"]],
                None,
            )

        utils.build_message = build_message
        try:
            metrics = evaluation._conversation_loop(
                solver, words, deque(evaluation.distractor_data), random.Random(0)
            )
        finally:
            utils.build_message = real_build
        return {**metrics, "unplayed": list(shown)}


@contextlib.contextmanager
def original_code(root: Path, policy: Callable[[dict[str, Any]], str]) -> Iterator[OriginalCode]:
    """Yield the original's code imported from the extracted wheel at ``root`` (module docstring),
    its solvers' requests answered by ``policy``; ``sys.modules`` is restored afterwards."""
    saved = {name: module for name, module in sys.modules.items() if name.split(".")[0] in _ROOTS}
    for name in saved:
        del sys.modules[name]
    sent = Sent(policy)
    try:
        for name in PACKAGES:
            package = _module(name, __path__=[str(root / name.replace(".", "/"))])
            sys.modules[name] = package
        prompt_base = importlib.import_module("evals.prompt.base")
        sys.modules.update(_stand_ins(sent, prompt_base))
        names = {
            "eval": "evals.elsuite.already_said_that.eval",
            "utils": "evals.elsuite.already_said_that.utils",
            "distractors": "evals.elsuite.already_said_that.distractors",
            "solver": "evals.solvers.solver",
            "task_state": "evals.task_state",
        }
        yield OriginalCode({key: importlib.import_module(name) for key, name in names.items()}, sent)
    finally:
        for name in [n for n in sys.modules if n.split(".")[0] in _ROOTS]:
            del sys.modules[name]
        sys.modules.update(saved)


_ROOTS = ("evals", "openai", "tiktoken", "pydantic", "typing_extensions")
