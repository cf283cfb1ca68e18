"""What is sent to a model for a blocks prompt: the paper's text, or the same few shots as chat turns.

A completion endpoint (and every built-in model) gets the prompt text exactly as written by
``generate_prompts.py`` (the paper's prompt). A chat endpoint gets the same few-shot prompt
as turns (``turns``): a one-line system instruction, then each worked example as a user turn
(the problem) and an assistant turn (its answer), then the test problem as the last user
turn. The preamble of a planning prompt opens the first user turn; the opening "(" that ends
a translation prompt is left out (a chat model writes its own). Results of such runs carry
the prompting label ``<prompting>-turns``.

The feedback round of the LLM + planner method (``--feedback N``) goes on the same
conversation: the model's facts, then the fact reader's or planner's error and a request to
write the facts again (``follow_up``). Its results carry ``-feedback<N>`` in the label.
"""

from common.blocks.nlplan import STOP_MARKER
from common.models.base import Message

PLAN_SYSTEM = (
    "You solve blocks-world planning problems. Answer with the actions only, one per line, "
    "in exactly the form of the examples, and nothing else."
)
FACTS_SYSTEM = (
    "You translate descriptions of stacked items into PDDL facts. Answer with the facts only, "
    "one per line, in exactly the form of the examples, and nothing else."
)
FEEDBACK = "These facts cannot be used: {error}. Write all the facts again, corrected"
TURNS = "turns"


def uses_chat(model: object) -> bool:
    """Return whether ``model`` is asked through a chat endpoint (an HTTP model whose config
    says ``api: chat``); built-in models and completion endpoints get the prompt text."""
    return getattr(getattr(model, "config", None), "api", None) == "chat"


def prompting_label(prompting: str, chat: bool, feedback: int = 0) -> str:
    """Return the results label of a run: the prompt file's ``prompting``, ``-turns`` when sent
    as chat turns, ``-feedback<N>`` with feedback rounds (e.g. ``paper-turns-feedback2``)."""
    return prompting + (f"-{TURNS}" if chat else "") + (f"-feedback{feedback}" if feedback else "")


def opening(text: str, prompt_type: str, chat: bool) -> list[Message]:
    """Return the first request of a prompt: the text as one message, or chat turns."""
    if not chat:
        return [{"role": "user", "content": text}]
    return planning_turns(text) if prompt_type == "nl" else translation_turns(text)


def planning_turns(text: str) -> list[Message]:
    """Return a few-shot planning prompt as chat turns (see the module docstring).

    The text is cut at each "Initially:" line: what comes before the first is the preamble;
    each example is split after its "Actions:" line into problem and answer; the last block
    is the test problem.
    """
    marker = STOP_MARKER + "\n"
    head, *blocks = text.split(marker)
    if not blocks:
        raise ValueError("a planning prompt has at least one 'Initially:' block")
    messages: list[Message] = [{"role": "system", "content": PLAN_SYSTEM}]
    for index, block in enumerate(blocks):
        problem, _, answer = (marker + block).partition("Actions:\n")
        user = (head.strip() + "\n\n" if index == 0 and head.strip() else "") + problem + "Actions:"
        messages.append({"role": "user", "content": user})
        if index < len(blocks) - 1:
            messages.append({"role": "assistant", "content": answer.strip()})
    return messages


def translation_turns(text: str) -> list[Message]:
    """Return a few-shot translation prompt as chat turns: per example, its ";" English lines
    as the user turn and its PDDL facts as the assistant turn; the test's ";" lines last."""
    messages: list[Message] = [{"role": "system", "content": FACTS_SYSTEM}]
    blocks = [block for block in text.removesuffix("(").split("\n\n") if block.strip()]
    for index, block in enumerate(blocks):
        lines = block.strip("\n").split("\n")
        english = [line for line in lines if line.startswith(";")]
        facts = [line for line in lines if not line.startswith(";")]
        messages.append({"role": "user", "content": "\n".join(english)})
        if index < len(blocks) - 1:
            messages.append({"role": "assistant", "content": "\n".join(facts)})
    return messages


def follow_up(messages: list[Message], answer: str, error: str, chat: bool) -> list[Message]:
    """Return the conversation that asks again after ``answer`` (the model's facts) was
    refused by the fact reader or the planner with ``error``.

    Chat: the answer as an assistant turn, then the error as a user turn. Completion: one
    text, the prompt continued with the answer (cut at the ";" that stops a translation), a
    ";" comment line with the error, and a new opening "(" (so the model writes the facts in
    the prompt's own format).
    """
    request = FEEDBACK.format(error=error.rstrip("."))
    if chat:
        return [
            *messages,
            {"role": "assistant", "content": answer},
            {"role": "user", "content": request + ", one per line, and nothing else."},
        ]
    facts = answer.split(";", 1)[0].rstrip()
    flat = " ".join(request.split())
    return [{"role": "user", "content": f"{messages[-1]['content']}{facts}\n;{flat}:\n("}]
