"""Pictures in requests: OpenAI chat content parts, the markers that place them, what they cost.

A suite's prompt places a picture with a marker, ``<image:NAME>`` (``marker``), NAME being the
picture's file ``NAME.png`` in the set's picture directory (``common.pictures.store``: content
addressed, so a name says exactly which picture was shown). ``attach_images`` turns the markers
of a conversation into OpenAI chat content parts: the text around them as ``{"type": "text"}``
parts, each picture as ``{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}``.
A message without a marker stays a plain string, so a text-only request is exactly what it was
(same body, same cache key). The image bytes are in the request body, so the response cache key
(a hash of the body) covers them, and so do the lines of a batch file.

``detail`` (``low``, ``high``, ``auto``; the model config's ``image_detail``) is added to every
image part by the client (``with_detail``). ``image_tokens`` is what one picture costs: OpenAI's
documented rule for its models (tiles of 512 px or patches of 32 px, by model), else the
model config's ``image_tokens``, else a 28-px patch count (the rule of Qwen2-VL and its kin).
"""

import base64
import functools
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from common.errors import DataError
from common.pictures.store import MARKER, marked_names, marker

__all__ = ["MARKER", "attach_images", "image_tokens", "marked_names", "marker", "text_of", "with_detail"]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
DETAILS = ("auto", "low", "high")

# OpenAI's image costs (platform docs, "Images and vision: calculating costs"): tile models pay
# base + tile per 512-px tile after fitting in 2048 x 2048 and the short side in 768 (low detail:
# base only); patch models pay 32-px patches (at most 1536) times a multiplier, detail or not.
# The longest matching model-id prefix decides.
OPENAI_TILES = {  # model prefix -> (base tokens, tokens per tile)
    "gpt-4o-mini": (2833, 5667),
    "gpt-4o": (85, 170),
    "gpt-4.1": (85, 170),
    "gpt-4.5": (85, 170),
    "gpt-5": (70, 140),
    "o1": (75, 150),
    "o3": (75, 150),
    "computer-use-preview": (65, 129),
}
OPENAI_PATCHES = {  # model prefix -> multiplier of the patch count
    "gpt-4.1-mini": 1.62,
    "gpt-4.1-nano": 2.46,
    "gpt-5-mini": 1.62,
    "gpt-5-nano": 2.46,
    "o4-mini": 1.72,
}
PATCH_BUDGET = 1536
FALLBACK_PATCH_PX = 28  # tokens of a model without a rule: one per 28 x 28 pixels (Qwen2-VL's patching)


def attach_images(messages: list[dict[str, Any]], directory: str | Path) -> list[dict[str, Any]]:
    """Return ``messages`` with every marker turned into an image part of the picture in
    ``directory`` (text around it as text parts); a message without a marker is returned as it
    was. Raises DataError naming a picture file that is missing. ``messages`` is not modified."""
    attached = []
    for message in messages:
        content = message["content"]
        if isinstance(content, str) and MARKER.search(content):
            message = {**message, "content": content_parts(content, Path(directory))}
        attached.append(message)
    return attached


def content_parts(text: str, directory: Path) -> list[dict[str, Any]]:
    """Return the OpenAI content parts of ``text``: its text pieces and its marked pictures."""
    parts: list[dict[str, Any]] = []
    pieces = MARKER.split(text)  # text, name, text, name, ..., text
    for index, piece in enumerate(pieces):
        if index % 2:
            parts.append({"type": "image_url", "image_url": {"url": data_url(directory / f"{piece}.png")}})
        elif piece:
            parts.append({"type": "text", "text": piece})
    return parts


@functools.lru_cache(maxsize=512)
def data_url(path: Path) -> str:
    """Return the ``data:image/png;base64,...`` URL of the PNG file ``path`` (kept in memory: the
    few-shot examples' pictures repeat in every request of a set). Raises DataError when the file
    is missing or is not a PNG."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DataError(
            f"{path}: no such picture; the set's pictures are drawn with its prompts: generate the set "
            "again (e.g. `make <suite>/<set>`)"
        ) from None
    if not data.startswith(PNG_SIGNATURE):
        raise DataError(f"{path}: not a PNG file")
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def png_of(url: str) -> bytes:
    """Return the PNG bytes of a ``data:image/png;base64,`` URL; raise ValueError for another URL."""
    head, _, payload = url.partition(",")
    if head != "data:image/png;base64":
        raise ValueError(f"not a base64 PNG data URL: {url[:40]!r}")
    return base64.b64decode(payload, validate=True)


def image_parts(messages: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return every image part of ``messages`` (content-part lists), in order."""
    return [
        part
        for message in messages
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if isinstance(part, dict) and part.get("type") == "image_url"
    ]


def has_images(messages: Iterable[dict[str, Any]]) -> bool:
    """Return whether any message of a conversation carries a picture."""
    return bool(image_parts(messages))


def text_of(message: dict[str, Any]) -> str:
    """Return the text of a message: its string content, or its text parts joined, each picture
    as its ``<image>`` place (what a reader of the words sees)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    pieces = []
    for part in content or []:
        pieces.append(part.get("text", "") if part.get("type") == "text" else "<image>")
    return "".join(pieces)


def with_detail(messages: list[dict[str, Any]], detail: str | None) -> list[dict[str, Any]]:
    """Return ``messages`` with ``detail`` set on every image part (None: ``messages`` as they are);
    ``messages`` is not modified."""
    if detail is None or not has_images(messages):
        return messages
    out = []
    for message in messages:
        content = message["content"]
        if isinstance(content, list):
            content = [
                {**part, "image_url": {**part["image_url"], "detail": detail}}
                if part.get("type") == "image_url"
                else part
                for part in content
            ]
        out.append({**message, "content": content})
    return out


def png_size(data: bytes) -> tuple[int, int]:
    """Return ``(width, height)`` of a PNG from its header; raise ValueError if it is not a PNG."""
    if not data.startswith(PNG_SIGNATURE) or data[12:16] != b"IHDR":
        raise ValueError("not a PNG image")
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def image_tokens(
    width: int, height: int, model: str, detail: str | None = None, per_image: int | None = None
) -> tuple[int, str]:
    """Return ``(tokens, rule)``: the input tokens a ``width`` x ``height`` picture costs ``model``
    (a model id) at ``detail``, and the rule used. ``per_image`` (the config's ``image_tokens``)
    wins when given; then OpenAI's documented rule for its models (``OPENAI_PATCHES``,
    ``OPENAI_TILES``: the longest prefix of the id decides); else one token per 28 x 28 pixels."""
    if per_image is not None:
        return per_image, "image_tokens of the model config"
    name = model.lower().rsplit("/", 1)[-1]
    patch = _longest_prefix(name, OPENAI_PATCHES)
    if patch is not None:
        return math.ceil(patch_count(width, height) * OPENAI_PATCHES[patch]), f"OpenAI patches ({patch})"
    tile = _longest_prefix(name, OPENAI_TILES)
    if tile is not None:
        base, per_tile = OPENAI_TILES[tile]
        if detail == "low":
            return base, f"OpenAI low detail ({tile})"
        return base + per_tile * tile_count(width, height), f"OpenAI tiles ({tile})"
    cells = math.ceil(width / FALLBACK_PATCH_PX) * math.ceil(height / FALLBACK_PATCH_PX)
    return cells, "28-px patches (set image_tokens in the model config for this model)"


def _longest_prefix(name: str, table: dict[str, Any]) -> str | None:
    """Return the longest key of ``table`` that ``name`` starts with, or None."""
    found = [prefix for prefix in table if name.startswith(prefix)]
    return max(found, key=len) if found else None


def tile_count(width: int, height: int) -> int:
    """Return the 512-px tiles of OpenAI's high detail: the picture fitted into 2048 x 2048, then
    its short side brought down to 768 (never up), each side covered by tiles."""
    scale = min(1.0, 2048 / max(width, height))
    width, height = width * scale, height * scale
    scale = min(1.0, 768 / min(width, height))
    width, height = width * scale, height * scale
    return math.ceil(width / 512) * math.ceil(height / 512)


def patch_count(width: int, height: int) -> int:
    """Return the 32-px patches of OpenAI's patch models: the patches covering the picture, or,
    above PATCH_BUDGET, those of the picture shrunk to fit the budget (as documented: shrink by
    sqrt(budget * 32^2 / area), then once more so whole patches fit the width), at most the budget."""
    patches = math.ceil(width / 32) * math.ceil(height / 32)
    if patches <= PATCH_BUDGET:
        return patches
    shrink = math.sqrt(32**2 * PATCH_BUDGET / (width * height))
    fitted = shrink * (math.floor(width * shrink / 32) / (width * shrink / 32))
    resized = math.ceil(width * fitted / 32) * math.ceil(height * fitted / 32)
    return min(PATCH_BUDGET, resized)
