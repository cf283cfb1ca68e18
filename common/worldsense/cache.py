"""A local cache of parsed columns, keyed by the content hash of the file they were parsed from.

Parsing the 72 MB of bzip2-compressed trials text takes most of an analysis' time, and the
analysis needs only a few small columns. They are stored as ``<kind>-v<N>-<sha256>.npz``
(kind ``trials-<field>`` or ``results``; plain NumPy arrays, no pickle) under
``.cache/worldsense``. A changed input file has another
hash, so it never meets a stale entry; bumping ``FORMAT_VERSION`` retires every old entry when
the parsed layout changes. A damaged entry is ignored with a warning and rewritten.
"""

import hashlib
import logging
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from common import paths
from common.jsonl import atomic_write

log = logging.getLogger(__name__)

FORMAT_VERSION = 4  # bump when the columns stored for a file change
DEFAULT_DIR = paths.CACHE / "worldsense"


def content_digest(data: bytes) -> str:
    """Return the SHA-256 hex digest of ``data`` (the cache key of a file's content)."""
    return hashlib.sha256(data).hexdigest()


def entry_path(cache_dir: str | Path, kind: str, digest: str) -> Path:
    """Return the cache file for columns of ``kind`` parsed from content with ``digest``."""
    return Path(cache_dir) / f"{kind}-v{FORMAT_VERSION}-{digest}.npz"


def load_frame(path: Path) -> pd.DataFrame | None:
    """Return the DataFrame stored at ``path``, or None if it is missing or unreadable."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as npz:
            names = [str(name) for name in npz["__columns__"]]
            columns = {}
            for name in names:
                if f"{name}.codes" in npz:
                    labels = [label.decode() for label in npz[f"{name}.categories"].tolist()]
                    columns[name] = pd.Categorical.from_codes(npz[f"{name}.codes"], categories=labels)
                else:
                    columns[name] = npz[f"{name}.values"]
        return pd.DataFrame(columns, columns=names)
    except (OSError, ValueError, KeyError, UnicodeDecodeError, zipfile.BadZipFile) as exc:
        log.warning("ignoring damaged cache entry %s (%s); it will be rebuilt", path, exc)
        return None


def save_frame(path: Path, df: pd.DataFrame) -> None:
    """Store ``df`` at ``path``; its columns must be numeric or categorical of strings.

    Written to a temporary file renamed into place, so readers never see half an entry. There
    is no fsync: an entry damaged by a crash is detected on load and rebuilt.
    """
    arrays: dict[str, np.ndarray] = {"__columns__": np.array([str(c) for c in df.columns])}
    for name, column in df.items():
        if isinstance(column.dtype, pd.CategoricalDtype):
            arrays[f"{name}.codes"] = column.cat.codes.to_numpy()
            labels = [str(c).encode() for c in column.cat.categories]
            arrays[f"{name}.categories"] = np.array(labels, dtype=bytes)  # UTF-8: 1/4 the size of "<U"
        else:
            arrays[f"{name}.values"] = column.to_numpy()
    with atomic_write(path, binary=True, fsync=False) as handle:
        np.savez(handle, **arrays)
