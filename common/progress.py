"""Progress bars, one way for every long step (scripts and the models layer alike)."""

import sys
from collections.abc import Iterable
from typing import Any

from tqdm import tqdm

PROGRESS_DELAY_S = 2.0  # a progress bar shows only for steps that take longer than this


def progress(iterable: Iterable[Any], **kwargs: Any) -> tqdm:
    """Return a tqdm progress bar over ``iterable``, on stderr.

    On a terminal it refreshes ten times a second; in a log file (not a TTY) at most every
    30 s, so long runs leave a readable trace instead of thousands of carriage returns. A bar
    appears only after PROGRESS_DELAY_S, so steps that finish sooner print nothing.
    """
    kwargs.setdefault("mininterval", 0.1 if sys.stderr.isatty() else 30)
    kwargs.setdefault("delay", PROGRESS_DELAY_S)
    return tqdm(iterable, **kwargs)
