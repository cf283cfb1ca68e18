"""Asking a model trials: the items of a trial set and the ask-and-re-prompt protocol.

``answer`` is the WorldSense release README's protocol, for any trial with ``text`` and
``expectedresp``: ask ``text``; read the answer with the suite's ``reader``; when it reads none,
re-prompt in the same conversation with "Only respond with one of these options: ..."
(``reprompts`` times at most); when it still reads none, the answer is "" (which scoring counts
as wrong). A reply cut at the token limit while thinking has no answer: it is not re-prompted, and
``resp`` is "". ``items`` reads what the runner asks. A suite that asks trials names this module as
its protocol (the reader is then ``exact_option``) or a module of its own that calls ``answer``
with its reader (WorldSense's careful grader, canvas's strict reader).
"""

import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from common.models.base import Message, Model, Reply, RequestRefused, request_totals
from common.models.images import attach_images
from common.trials.data import load_testset

REPROMPT = "Only respond with one of these options: {options}"
# Chain of thought (--prompting cot; any set this protocol asks, canvas too): the question, then
# this request to reason before answering. A reply whose reasoning names more than one option is
# re-prompted as any other, and the re-prompt asks for the option alone.
COT_PROMPT = (
    "Before you answer, think it through step by step. Then give your final answer, one of the "
    "options the question allows, alone on the last line."
)
CUT_WHILE_THINKING = "cut at the token limit while thinking: no answer (raise max_tokens; --retry-truncated)"


def prompted(item: dict[str, Any], prompting: str) -> dict[str, Any]:
    """Return ``item`` as asked with ``prompting``: unchanged, or for ``cot`` with ``sent`` (the
    prompt the protocol sends) ending in ``COT_PROMPT``; any other prompting only labels the file."""
    if prompting != "cot":
        return item
    return {**item, "sent": f"{item.get('sent', item['text']).rstrip()}\n\n{COT_PROMPT}"}


def reprompt_text(options: Sequence[str]) -> str:
    """Return the follow-up message listing the allowed answers."""
    return REPROMPT.format(options=", ".join(map(str, options)))


Reader = Callable[[str, Sequence[str]], "str | None"]  # a completion and the options -> the option, or None

_TRIM = " \t\r\n.,;:!?\"'`*()[]"


def exact_option(completion: str, options: Sequence[str]) -> str | None:
    """Return the option ``completion`` is, trimmed of spaces, quotes and punctuation and ignoring
    case, spelled as in ``options``; None when it is none of them. The plainest reader: what a
    suite without a reader of its own re-prompts by."""
    said = completion.strip(_TRIM).casefold()
    return next((option for option in options if str(option).casefold() == said), None)


def answer(
    model: Model, item: dict[str, Any], reprompts: int = 1, reader: Reader = exact_option
) -> dict[str, Any]:
    """Return the results record of asking ``model`` about ``item`` (keys: see below). Changes nothing.

    The prompt is the item's ``text``, or its ``sent`` when it has one (a trial shown in a picture
    modality: its pictures' markers become image parts, from ``image_dir``).

    ``reader`` reads the option a completion gives (WorldSense: ``reader.extract_answer``); a completion
    it reads no option from is re-prompted.

    ``Key`` and ``resp`` (an option or ""), then diagnostics: ``raw`` (every answer, in order;
    a reasoning model's thinking is in ``reasoning``), ``finish_reason`` (the server's, per
    completion: "length" means cut at max_tokens),
    ``attempts`` (HTTP requests), ``cached`` (all turns from the cache), ``latency_s``,
    ``prompt_tokens``, ``completion_tokens`` and ``error`` (why ``resp`` is "", else None).
    Transport failures propagate (RequestFailed, ModelError): an item that was not really
    answered is not recorded, so a later run asks it again. So does RequestRefused on the
    first turn (the runner records a refused item); a refused re-prompt (the longer
    conversation no longer fits the context) gives a refused record that keeps ``raw``.
    """
    options = list(item["expectedresp"])
    messages: list[Message] = [{"role": "user", "content": item.get("sent", item["text"])}]
    if item.get("images"):  # a trial shown as pictures: its markers become image parts
        messages = attach_images(messages, item["image_dir"])
    replies: list[Reply] = []
    start = time.monotonic()
    resp, refused = None, None
    for turn in range(reprompts + 1):
        if turn:
            messages += [
                {"role": "assistant", "content": replies[-1].text},
                {"role": "user", "content": reprompt_text(options)},
            ]
        try:
            replies.append(model.complete(messages, item))
        except RequestRefused as refusal:
            if not turn:
                raise  # nothing answered: the runner records the refused item
            refused = refusal
            break
        if replies[-1].cut_while_thinking:
            break  # no answer to re-prompt about: the budget ran out while thinking
        resp = reader(replies[-1].text, options)
        if resp is not None:
            break
    record = {
        "Key": item["Key"],
        "resp": resp or "",
        "raw": [reply.text for reply in replies],
        "finish_reason": [reply.finish_reason for reply in replies],
        **request_totals(replies, start),
    }
    if refused is not None:
        error = f"the re-prompt was refused: {refused.message}"
        return {**record, "cached": False, "refused": refused.kind, "error": error}
    if replies[-1].cut_while_thinking:
        return {**record, "error": CUT_WHILE_THINKING}
    return {
        **record,
        "error": None if resp is not None else f"no valid option after {reprompts} re-prompt(s)",
    }


ASKED_FIELDS = ["Key", "text", "expectedresp", "goldresp"]  # what the protocol and the built-ins read


def items(testset: str | Path, limit: int | None = None) -> Iterator[dict[str, Any]]:
    """Yield the first ``limit`` trials of a trial set (all when None) as the runner's items, with
    the fields the protocol and the built-in models read. A generator: the runner reads it only
    once it holds the results file's lock, so a second run is refused before the set loads."""
    yield from load_testset(testset)[ASKED_FIELDS].head(limit).to_dict("records")
