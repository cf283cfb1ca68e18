"""What a run would cost, before it runs (``--dry-run``): the requests of a suite's protocol,
their input tokens (text and pictures) and the most output they may take.

``estimate_run`` runs the protocol on every item with a stand-in (``DryRunModel``) that takes
the place of the model: it builds each request's body exactly as the model would (the same
messages, pictures, settings) and answers nothing (an empty reply), so nothing is sent, written
or cached. A protocol that asks again after a wrong answer (blocks' feedback rounds) asks its
follow-ups too: the estimate is the most a run can ask. Text is counted at CHARS_PER_TOKEN
characters a token (no tokenizer is installed; a real one differs by some 10-30%), each picture
by ``images.image_tokens`` (OpenAI's documented rule for its models, the config's
``image_tokens`` for others), and the output at ``max_tokens`` per request (the most it may be).
"""

import contextlib
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from common.models.base import Message, Model, Reply, RequestRefused
from common.models.config import cost_usd
from common.models.images import image_parts, image_tokens, png_of, png_size, text_of

CHARS_PER_TOKEN = 4


@dataclass
class Estimate:
    """The totals of a dry run."""

    items: int = 0
    requests: int = 0
    text_tokens: int = 0
    pictures: int = 0
    image_tokens: int = 0
    output_tokens: int = 0  # at most: max_tokens per request (0 when the config sends no limit)
    rules: set[str] = field(default_factory=set)  # how the pictures were counted

    @property
    def input_tokens(self) -> int:
        """Return the input tokens: text and pictures."""
        return self.text_tokens + self.image_tokens


class DryRunModel:
    """Stands in for ``model`` in a protocol: records what each request would be, answers ""."""

    def __init__(self, model: Model):
        self.model = model
        self.name, self.concurrency = model.name, 1
        self.config = getattr(model, "config", None)  # protocols read it (e.g. chat or completions)
        self.estimate = Estimate()
        self._chars = 0

    def complete(self, messages: list[Message], item: dict[str, Any]) -> Reply:
        """Count the request ``messages`` would make (its body built as the model builds it), answer ""."""
        payload = getattr(self.model, "payload", None)
        if payload is not None:
            payload(messages)  # raises as a live request would (e.g. pictures to a text-only config)
        estimate = self.estimate
        estimate.requests += 1
        self._chars += sum(len(text_of(message)) for message in messages)
        estimate.text_tokens = math.ceil(self._chars / CHARS_PER_TOKEN)
        config = self.config
        for part in image_parts(messages):
            width, height = png_size(png_of(part["image_url"]["url"]))
            tokens, rule = image_tokens(
                width,
                height,
                getattr(config, "model", ""),
                getattr(config, "image_detail", None),
                getattr(config, "image_tokens", None),
            )
            estimate.pictures += 1
            estimate.image_tokens += tokens
            estimate.rules.add(rule)
        estimate.output_tokens += int(getattr(config, "max_tokens", 0) or 0)
        return Reply("", finish_reason="stop", attempts=0)

    def settings(self) -> dict[str, Any]:
        """Return the model's settings."""
        return self.model.settings()

    def close(self) -> None:
        """Nothing to release (the model is the caller's)."""


def estimate_run(
    model: Model, items: Iterable[dict[str, Any]], answer: Callable[[Any, dict[str, Any]], Any]
) -> Estimate:
    """Return the Estimate of asking ``model`` every item with the protocol ``answer`` (nothing is
    sent or written). A built-in model asks nothing: its estimate counts the items only."""
    stand_in = DryRunModel(model)
    builtin = getattr(model, "config", None) is None
    for item in items:
        stand_in.estimate.items += 1
        if builtin:
            continue
        with contextlib.suppress(RequestRefused):  # a protocol's own refusal: counted as asked
            answer(stand_in, item)
    return stand_in.estimate


def estimate_text(label: str, estimate: Estimate, price: dict[str, Any] | None, batch: bool = False) -> str:
    """Return the --dry-run line of one run: items, requests, input tokens (of which pictures, and
    how they were counted), the most output, and dollars when the model config has a price (at
    the batch share with ``batch``)."""
    money = cost_usd(price, estimate.input_tokens, estimate.output_tokens, batch=batch)
    rules = "; ".join(sorted(estimate.rules))
    pictures = f" (of which {estimate.image_tokens:,} for {estimate.pictures:,} pictures: {rules})"
    pictures = pictures if estimate.pictures else ""
    return (
        f"{label}: {estimate.items:,} items, {estimate.requests:,} requests, ~{estimate.input_tokens:,} "
        f"input tokens{pictures} (text at {CHARS_PER_TOKEN} characters a token), at most "
        f"{estimate.output_tokens:,} output tokens (max_tokens per request)"
        + (f"; at most ${money:,.4f}{' at the batch price' if batch else ''}" if money is not None else "")
        + ("; no price in the model config" if money is None and estimate.requests else "")
    )
