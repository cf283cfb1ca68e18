"""Pictures stored once per scene: a name from the scene's content, a PNG with nothing but pixels.

A picture is named by the first 16 hex digits of the SHA-256 of its scene (``picture_name``: the
kind of drawing, DRAWING_VERSION and the scene as canonical JSON), so the name is known without
drawing, the same scene is drawn once however many items, views or modalities show it, and a
changed scene or drawing gets a new name. ``save_picture`` writes ``<directory>/<name>.png``
unless it is there (atomically: a killed run leaves none half written). ``png_bytes`` encodes
without any chunk but the image (no time, no text, no dpi) at a fixed compression level, so the
bytes depend on the pixels and the pinned Pillow (with its bundled zlib) only. A prompt places a
picture with its marker, ``<image:NAME>`` (``marker``, ``marked_names``): here, not in the
models layer, so that a suite's generation and scoring place and read markers without importing
it.
"""

import hashlib
import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PIL import Image

from common.jsonl import atomic_write

DRAWING_VERSION = 1  # raise when a drawing changes: its pictures get new names
MARKER = re.compile(r"<image:([0-9a-f]{8,64})>")  # a picture placed in a prompt (``marker``)
COMPRESS_LEVEL = 6


def marker(name: str) -> str:
    """Return the marker that places picture ``name`` in a prompt (``common.models.images`` sends
    each as an image part)."""
    return f"<image:{name}>"


def marked_names(text: str) -> list[str]:
    """Return the picture names the markers of ``text`` place, in order."""
    return MARKER.findall(text)


def picture_name(kind: str, scene: Any) -> str:
    """Return the name of the picture of ``scene`` drawn as ``kind`` (e.g. "blocks", "canvas")."""
    text = json.dumps({"kind": kind, "version": DRAWING_VERSION, "scene": scene}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def png_bytes(image: Image.Image) -> bytes:
    """Return ``image`` as PNG bytes that depend on its pixels only (no ancillary chunks)."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False, compress_level=COMPRESS_LEVEL)
    return buffer.getvalue()


def save_picture(directory: str | Path, name: str, draw: Callable[[], Image.Image]) -> Path:
    """Return the path of picture ``name`` in ``directory``, drawing it with ``draw()`` and writing
    it atomically when it is not there yet."""
    path = Path(directory) / f"{name}.png"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(path, binary=True, fsync=False) as handle:  # redrawn if lost
            handle.write(png_bytes(draw()))
    return path
