"""How a model is asked each turn (``--prompting``): the original eval's solvers around a model.

``PROMPTINGS`` maps each name to a function ``(model, messages, item, wording) -> Asked``;
``messages`` is the conversation as the task sees it (the system message, then every question
and every reply that was judged), ``item`` the turn's context for built-in models, ``wording``
the set's texts (``wording.Wording``: the original's or the suite's; this module holds the
suite's own).

- ``direct``: the conversation as it is; the reply is judged (the original's
  ``generation/direct`` solvers).
- ``cot``: chain of thought, as the original's ``CoTSolver`` with ``persistent_memory: False``
  (its ``already_said_that/cot`` solvers): a system message asks for step-by-step reasoning,
  the model reasons; then, with its reasoning and a second system message asking for the reply
  in the required format, it replies, and that reply is judged. Two requests a turn. The
  reasoning stays private to its turn: later turns see every question and every judged reply,
  never earlier reasoning.
- ``hhh``: a base (completion) model, as the original's ``HHHSolver`` around a completions model
  (``generation/hhh/gpt-4-base``): the conversation is rendered as a plain-text transcript
  ("System: ", "User: ", "Assistant: " lines) after a preamble of example dialogues with a
  helpful, honest and harmless assistant, ending in "Assistant:"; the completion is cut at the
  first role marker or dialogue separator (also sent as stop sequences, ``Wording.stops``) and
  stripped. Needs ``api: completions`` in the model config.

``DECODING`` holds the decoding defaults every prompting uses, the original's.
"""

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from common.models.base import Message, Model, Reply

# The suite's decoding defaults for HTTP models, the original's: its solvers ask at temperature 1
# for at most 512 tokens and send no seed. A model config's own values (its top level, then its
# `suites: {already_said_that: ...}` section), then --set, override them.
DECODING = {"temperature": 1.0, "max_tokens": 512, "seed": None}
# The suite's own wording (wording: suite) of the CoT prompts and the base-model preamble.
COT_PROMPT = (
    "Before you reply, think the question through step by step. This reasoning is private and "
    "is not graded: the message after it is the reply that counts."
)
EXTRACT_PROMPT = "Now, following your reasoning, give your reply in the format the instructions ask for:"

ROLE_PREFIXES = {"system": "System: ", "user": "User: ", "assistant": "Assistant: "}
SEPARATOR = "-----"  # between the preamble's dialogues (the prefix of a spacer message)

HHH_HEADER = (
    "What follows are conversations between people and an AI assistant. The assistant is helpful, "
    "honest and harmless: it works out what the person needs and gives it clearly, says so when it "
    "is unsure or does not know, corrects its own mistakes, and will not help with harm. It is "
    "practical rather than over-cautious, and keeps its answers as short as the question allows."
)
HHH_DIALOGUES: list[list[str]] = [  # each starts with the person; the two speak in turn
    [
        "How long should I boil an egg if I want the yolk still runny?",
        (
            "About six minutes for a large egg put straight into boiling water, then a minute in "
            "cold water so it stops cooking. Smaller eggs need a little less."
        ),
        "And if I start it in cold water?",
        (
            "Then it depends on your pan and stove, so I can't give an exact time. Roughly three "
            "to four minutes after the water starts boiling is a reasonable first try."
        ),
    ],
    [
        "Which is bigger, 9.11 or 9.9?",
        "9.9 is bigger: 9.90 against 9.11, and 90 hundredths is more than 11 hundredths.",
    ],
    [
        "Write me a Python function that returns the words of a sentence in reverse order.",
        (
            "def reversed_words(sentence):\n    return ' '.join(reversed(sentence.split()))\n\n"
            "For 'the cat sat' it returns 'sat cat the'."
        ),
        "Thanks. Does it keep punctuation?",
        (
            "It keeps punctuation attached to its word, so 'Hello, world!' becomes 'world! Hello,'. "
            "If you want punctuation handled separately, tell me how it should move."
        ),
    ],
    [
        "Who was the first person to walk on Mars?",
        (
            "Nobody yet: as far as I know, no person has been to Mars. Robotic rovers have driven "
            "there, and crewed missions have been proposed but not flown."
        ),
    ],
]


@dataclass
class Asked:
    """What one turn's requests gave: the reply that is judged (its text goes into the history;
    tokens and attempts summed over the turn's requests), and what is kept beside it."""

    reply: Reply
    cot: str | None = None  # cot: the written reasoning of this turn (never sent again)
    raw: str | None = None  # hhh: the completion before it was cut at a role marker
    finish_reasons: list[str] | None = None  # cot: the reasoning's and the reply's (either may be cut)


def ask_direct(model: Model, messages: list[Message], item: dict[str, Any], wording: Any) -> Asked:
    """Return the model's reply to the conversation as it is."""
    return Asked(model.complete(messages, item))


def ask_with_reasoning(model: Model, messages: list[Message], item: dict[str, Any], wording: Any) -> Asked:
    """Return the reply the model gives after reasoning step by step with ``wording``'s prompts
    (two requests; ``messages`` is not modified, so the reasoning never reaches later turns)."""
    thinking = [*messages, {"role": "system", "content": wording.cot_prompt}]
    reasoning = model.complete(thinking, item)
    replying = [
        *thinking,
        {"role": "assistant", "content": reasoning.text},
        {"role": "system", "content": wording.extract_prompt},
    ]
    reply = model.complete(replying, item)
    together = dataclasses.replace(
        reply,
        prompt_tokens=reply.prompt_tokens + reasoning.prompt_tokens,
        completion_tokens=reply.completion_tokens + reasoning.completion_tokens,
        attempts=reply.attempts + reasoning.attempts,
        cached=reply.cached and reasoning.cached,
        latency_s=reply.latency_s + reasoning.latency_s,
        reasoning_tokens=reply.reasoning_tokens + reasoning.reasoning_tokens,
        cached_tokens=reply.cached_tokens + reasoning.cached_tokens,
        reasoning="\n\n".join(part for part in (reasoning.reasoning, reply.reasoning) if part),
    )
    return Asked(together, cot=reasoning.text, finish_reasons=[reasoning.finish_reason, reply.finish_reason])


def ask_base_model(model: Model, messages: list[Message], item: dict[str, Any], wording: Any) -> Asked:
    """Return a base model's continuation of ``wording``'s transcript of ``messages``, cut at the
    next role marker (the whole completion is kept as ``raw``)."""
    reply = model.complete([{"role": "user", "content": wording.transcript(messages)}], item)
    return Asked(dataclasses.replace(reply, text=wording.cut(reply.text)), raw=reply.text)


PROMPTINGS: dict[str, Callable[[Model, list[Message], dict[str, Any], Any], Asked]] = {
    "direct": ask_direct,
    "cot": ask_with_reasoning,
    "hhh": ask_base_model,
}
