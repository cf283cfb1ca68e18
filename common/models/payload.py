"""The JSON body of a request to an OpenAI-compatible server, from the model's config: chat
messages or a completions prompt, the sampling settings, the seed of a draw or of the item's own
(``independence``), pictures with the config's detail."""

from typing import Any

from common.models import independence
from common.models.base import Message, ModelError
from common.models.images import has_images, with_detail
from common.models.vision import check_takes_images


def request_body(
    model: Any, messages: list[Message], draw: int = 0, item_identity: str | None = None
) -> dict[str, Any]:
    """Return the JSON body for ``messages`` to the HTTP model ``model`` (its ``config``, its
    ``url`` for messages): chat messages, or one prompt for the completions API.

    Settings that are None are not sent (the server's default applies); the token limit goes
    under the name ``token_limit_param`` says; ``extra_body`` is merged last, as given. The
    ``draw``-th answer to an item (repeated sampling) is asked with ``seed + draw``; with an
    ``item_identity`` (the model samples) the seed is the item's own
    (``independence.item_seed``). Pictures (content parts, ``images.attach_images``) get the
    config's ``image_detail``; raises ModelError naming the field to set when the config says
    the model takes none (``vision``) or the completions API is used (a prompt string cannot
    carry a picture).
    """
    config = model.config
    body: dict[str, Any] = {"model": config.model}
    if has_images(messages):
        check_takes_images(model)
    if config.api == "chat":
        body["messages"] = with_detail(messages, config.image_detail)
    elif has_images(messages):
        raise ModelError(
            f"{model.url}: a picture cannot go to the completions API (a prompt is text): "
            f"set api: chat in the model config {config.name!r}"
        )
    else:
        body["prompt"] = "\n\n".join(message["content"] for message in messages)
    if config.temperature is not None:
        body["temperature"] = config.temperature
    if config.max_tokens is not None:
        body[config.token_limit_param] = config.max_tokens
    for name in ("stop", "seed", "top_p", "reasoning_effort"):
        if getattr(config, name) is not None:
            body[name] = getattr(config, name)
    if draw and config.seed is not None:
        body["seed"] = config.seed + draw
    if item_identity is not None and config.seed is not None:
        body["seed"] = independence.item_seed(config.seed + draw, item_identity)
    body.update(config.extra_body or {})
    return body
