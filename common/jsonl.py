"""JSON lines on disk: read and write plain or bzip2 files, write any file atomically, hash a file.

Readers name the file and line of a malformed record. Writers go through ``atomic_write``,
so a crash never leaves a half-written output where a finished one is expected.
"""

import bz2
import contextlib
import hashlib
import io
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from common.errors import DataError


def open_text(path: str | Path, mode: str = "r") -> IO[str]:
    """Return a text handle on ``path`` (UTF-8), decompressing or compressing ``.bz2`` files."""
    path = Path(path)
    if path.suffix == ".bz2":
        return bz2.open(path, mode + "t", encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def iter_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    """Yield one dict per non-blank line of a JSON lines file (plain or ``.bz2``).

    Raises ``FileNotFoundError`` before anything is read if the file is missing, and
    ``DataError`` naming the file and line for a line that is not a JSON object.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(2, "No such file", str(path))
    return _records(path)


def _records(path: Path) -> Iterator[dict[str, Any]]:
    """Yield the parsed non-blank lines of ``path``."""
    with open_text(path) as handle:
        for lineno, line in enumerate(handle, start=1):
            if line.strip():
                yield parse_json_line(line, path, lineno)


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Return all records of a JSON lines file as a list (see ``iter_jsonl``)."""
    return list(iter_jsonl(path))


def parse_lines(data: bytes) -> list[Any] | None:
    """Return the values of JSON lines ``data`` parsed in one call, or None if that fails.

    Parsing ``[line1,line2,...]`` at once is several times faster than a loop over lines
    (a newline cannot occur inside a JSON value). None for blank lines, a missing final
    newline (maybe a torn write) or any malformed line: the caller then reads line by line,
    which names the bad line.
    """
    if not data.endswith(b"\n") or b"\n\n" in data:
        return None
    try:
        return json.loads(b"[" + data[:-1].replace(b"\n", b",") + b"]")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None


def parse_json_line(line: str, path: str | Path, lineno: int) -> dict[str, Any]:
    """Return the JSON object on ``line``; raise ``DataError`` naming ``path:lineno`` if it is not one."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{lineno}: not valid JSON ({exc.msg}): {line[:80]!r}") from None
    if not isinstance(record, dict):
        raise DataError(f"{path}:{lineno}: expected a JSON object, got {type(record).__name__}")
    return record


def dumps(record: dict[str, Any]) -> str:
    """Return ``record`` as one compact JSON line (no newline), keys in insertion order."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def write_jsonl(path: str | Path, records: Iterable[dict[str, Any]]) -> int:
    """Write ``records`` atomically as JSON lines (bzip2 if ``path`` ends in .bz2); return the count.

    The output is byte-identical for identical records: compact separators, no sorting, and
    for .bz2 a fixed compression level.
    """
    count = 0
    with atomic_write(path, binary=True) as raw:
        stream: IO[bytes] = bz2.BZ2File(raw, "wb", compresslevel=9) if str(path).endswith(".bz2") else raw
        text = io.TextIOWrapper(stream, encoding="utf-8", newline="\n")
        for record in records:
            text.write(dumps(record) + "\n")
            count += 1
        text.flush()
        text.detach()  # leave closing the binary handle to atomic_write
        if stream is not raw:
            stream.close()
    return count


@contextlib.contextmanager
def atomic_write(path: str | Path, binary: bool = False, fsync: bool = True) -> Iterator[IO[Any]]:
    """Yield a handle on a temporary file beside ``path``; on success rename it over ``path``.

    On any exception the temporary file is removed and ``path`` is left as it was, so a
    reader never sees a half-written file. Parent directories are created. ``fsync=False``
    skips flushing to disk, for files that are checked on load and can be rebuilt (caches).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.chmod(tmp, 0o644)  # mkstemp makes 0600 files; outputs are ordinary readable files
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as handle:
            yield handle
            handle.flush()
            if fsync:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (UTF-8)."""
    with atomic_write(path) as handle:
        handle.write(text)


def write_json(path: str | Path, obj: Any) -> None:
    """Write ``obj`` as indented JSON (keys in insertion order, trailing newline) atomically."""
    write_text(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def sha256_file(path: str | Path) -> str:
    """Return the hex SHA-256 of a file, read in 1 MiB blocks (the pinned hashes of external data,
    the input hashes of the report)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cut_torn_tail(path: str | Path) -> int:
    """Cut a JSON-lines file back to its last complete line (a writer killed mid-write leaves a
    fragment without a newline, which the next append would glue to its own first line); return
    how many bytes were cut (0 for a missing file or one that ends with a newline)."""
    path = Path(path)
    if not path.is_file():
        return 0
    with open(path, "r+b") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return 0
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return 0
        handle.seek(0)
        good = handle.read().rfind(b"\n") + 1
        handle.truncate(good)
        os.fsync(handle.fileno())
    return size - good
