"""What a model reads (a set's ``wording``): the original eval's texts or the suite's own.

- ``original`` (reproduction mode; the ``original_*`` sets): the texts of
  ``evals==3.0.1.post1``, read from its pinned wheel at build time (``make asat-original``,
  ``original_texts``): its task description with its worked example (the held-out distractor
  question, its answer, and the question's last word stripped of ``.,!?`` and lower-cased, as
  its ``get_distractor_word``; without distractors the example of its distractorless variant),
  its chain-of-thought and answer-extraction prompts, its base-model preamble, role prefixes
  and stop sequences.
- ``suite``: the suite's own texts (``prompts.task_description``, ``prompting``'s prompts and
  preamble), the default for the other sets.

Either way the messages are laid out as the original's solvers lay them out (``prompting``):
the system message, then every question and judged reply; a base model reads the preamble's
messages, the system message and the conversation rendered "<prefix><content>" a line, ending
in the assistant's prefix.
"""

from dataclasses import dataclass, field
from typing import Any

from common.already_said_that import prompting
from common.already_said_that.original import original_texts
from common.already_said_that.prompts import task_description
from common.errors import ConfigError
from common.models.base import Message

WORDINGS = ("original", "suite")
DEFAULT = "suite"  # sets written before a set had a wording, and every set that says none


@dataclass(frozen=True)
class Wording:
    """The texts a model reads in one set: ``system`` (the task description with its worked
    example), the CoT prompts, and a base model's preamble (messages before the system message)
    with the role prefixes of its transcript."""

    name: str  # a name of WORDINGS
    system: str
    cot_prompt: str
    extract_prompt: str
    preamble: tuple[Message, ...] = ()
    prefixes: dict[str, str] = field(default_factory=dict)  # role -> its prefix in a transcript

    @property
    def stops(self) -> list[str]:
        """Return the stop sequences of a base model: every non-blank prefix, stripped."""
        return [prefix.strip() for prefix in self.prefixes.values() if prefix.strip()]

    def transcript(self, messages: list[Message]) -> str:
        """Return the plain-text prompt of a base model: the preamble and ``messages`` one a line
        ("<prefix><content>", an unknown role "<Role>: "), then the assistant's prefix stripped."""
        lines = [
            self.prefixes.get(m["role"], m["role"].capitalize() + ": ") + m["content"] + "\n"
            for m in (*self.preamble, *messages)
        ]
        return ("".join(lines) + self.prefixes["assistant"].rstrip()).lstrip()

    def cut(self, completion: str) -> str:
        """Return a base model's completion up to its first stop sequence, stripped (each stop in
        turn, as the original's solver parses it)."""
        for stop in self.stops:
            completion = completion.split(stop)[0].strip()
        return completion


def wording_name(config: dict[str, Any]) -> str:
    """Return the wording a set's config names (``DEFAULT`` when it names none)."""
    return str(config.get("wording") or DEFAULT)


def wording_of(config: dict[str, Any], example: dict[str, Any] | None, distractors: bool) -> Wording:
    """Return the Wording of a set whose config is ``config`` (its manifest's), whose held-out
    worked example is ``example`` and which asks distractor questions or not. The original's
    texts come from ``make asat-original`` (UserError naming it when they are not there)."""
    name = wording_name(config)
    if name == "suite":
        return Wording(
            name,
            task_description(example if distractors else None),
            prompting.COT_PROMPT,
            prompting.EXTRACT_PROMPT,
            _suite_preamble(),
            {**prompting.ROLE_PREFIXES, "spacer": prompting.SEPARATOR},
        )
    if name != "original":
        raise ConfigError(f"wording {name!r} is not one of {', '.join(WORDINGS)}")
    texts = original_texts()
    shown = example if distractors and example else texts["basic_example"]
    system = texts["task_description"].format(
        distractor_question=shown["question"],
        distractor_answer=shown["answer"],
        distractor_word=original_example_word(shown["question"]),
    )
    return Wording(
        name,
        system,
        texts["cot_prompt"],
        texts["extract_prompt"],
        tuple(texts["hhh_messages"]),
        dict(texts["role_prefixes"]),
    )


def original_example_word(question: str) -> str:
    """Return the word the original's worked example shows as a main-task word: the question's
    last word, stripped of ``.,!?`` and lower-cased."""
    return question.split()[-1].strip(".,!?").lower()


def _suite_preamble() -> tuple[Message, ...]:
    """Return the suite's base-model preamble as messages: its header, then each example
    dialogue (the person first, the two in turn), each closed by a spacer."""
    messages: list[Message] = [{"role": "system", "content": prompting.HHH_HEADER}, _SPACER]
    for dialogue in prompting.HHH_DIALOGUES:
        messages += [
            {"role": ("user", "assistant")[i % 2], "content": text} for i, text in enumerate(dialogue)
        ]
        messages.append(_SPACER)
    return tuple(messages)


_SPACER: Message = {"role": "spacer", "content": ""}
