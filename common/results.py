"""Append-only model results files: ``<prompting>___<modelname>___results.jsonl``.

One JSON object a line with at least ``Key`` and ``resp``. A run appends and flushes one
line per finished item; a restarted run skips the Keys already present. A process killed
mid-write can leave a torn last line (no newline, or half a JSON object): opening the file
for appending detects it, warns, and cuts it off, so the next run rewrites that item. Only
one process writes a results file at a time: the writer holds an exclusive lock on
``.<name>.lock`` beside it (``flock``, released by the OS even when the process is killed),
and a second writer is refused at once.

A record with a true ``refused`` field is an item the server refused to answer (too long for
the model's context, a content filter); readers count it apart from wrong or invalid answers.

The first record each run writes carries that run's identity in a ``run`` field (``RUN_FIELD``:
the project's commit, its labels such as prompting, model name, view or modality, and the
model's settings, never a key; not the time, so that a run asked again writes the same bytes),
so that a file says itself which runs wrote it, whatever its name (``run_stamps`` reads them
back). Files written before carry none.
"""

import errno
import fcntl
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common.errors import DataError, UserError
from common.jsonl import atomic_write, dumps, parse_json_line, parse_lines

log = logging.getLogger(__name__)

SEPARATOR = "___"
SUFFIX = "___results.jsonl"
RUN_FIELD = "run"  # the field of a run's first record that holds the run's identity and settings


class LabelError(UserError, ValueError):
    """A model or prompting label that cannot name a results file."""


def check_label(label: str, what: str = "model name") -> str:
    """Return ``label`` if it can name a results file; raise LabelError saying why not: it must be
    non-empty, not start with '.', and contain neither '/' nor a triple underscore (the file name
    must parse back into exactly its two labels)."""
    if not label or "/" in label or SEPARATOR in label or label.startswith("."):
        raise LabelError(
            f"{what} {label!r} cannot be used in a results file name: it must be "
            f"non-empty, not start with '.', and contain neither '/' nor '{SEPARATOR}'"
        )
    return label


def results_filename(prompting: str, modelname: str) -> str:
    """Return ``<prompting>___<modelname>___results.jsonl``; raise LabelError (a UserError: the
    scripts print it without a traceback) on a label that would not parse back (``check_label``)."""
    return f"{check_label(prompting, 'prompting label')}{SEPARATOR}{check_label(modelname)}{SUFFIX}"


def parse_results_filename(path: str | Path) -> tuple[str, str]:
    """Return ``(prompting, modelname)`` parsed from a results file name.

    Raises ``DataError`` if the name does not follow ``<prompting>___<modelname>___results.jsonl``.
    """
    name = Path(path).name
    parts = name[: -len(SUFFIX)].split(SEPARATOR) if name.endswith(SUFFIX) else []
    if len(parts) != 2 or not all(parts):
        raise DataError(
            f"{path}: results files must be named <prompting>___<modelname>___results.jsonl "
            "(triple underscores)"
        )
    return parts[0], parts[1]


def find_results_files(directory: str | Path) -> list[Path]:
    """Return the results files in ``directory``, sorted by name (empty if it does not exist)."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.name.endswith(SUFFIX) and p.is_file())


def read_results(path: str | Path, all_draws: bool = False) -> list[dict[str, Any]]:
    """Return the records of a results file, first occurrence of each Key (and draw) only.

    A model asked ``samples: k`` times per item has k records per Key, the later ones marked
    ``draw`` 1 .. k-1 (``draw_of``); only the first (draw 0: what one answer per item gives, and
    what every suite's main tables use) is returned unless ``all_draws``. A torn last line
    (left by a killed writer) is ignored with a warning; a malformed line elsewhere, or a record
    without ``Key``, raises ``DataError`` naming the line. Later duplicates are dropped with a
    warning. The file is not modified.
    """
    path = Path(path)
    data = path.read_bytes()
    good_end, records = _scan(path, data)
    if good_end < len(data):
        log.warning("%s: ignoring a torn last line (%d bytes)", path, len(data) - good_end)
    note_read(path, len(records))
    return records if all_draws else [record for record in records if not record.get("draw")]


def note_read(path: str | Path, records: int) -> None:
    """Append "<path>\t<records>" to the file $RESULTS_READ_LOG names, when set: how bench/ counts
    that ``make all`` reads (parses) each answer once. Nothing happens otherwise."""
    log_file = os.environ.get(READ_LOG)
    if log_file:
        with open(log_file, "a", encoding="utf-8") as handle:
            handle.write(f"{Path(path).resolve()}\t{records}\n")


READ_LOG = "RESULTS_READ_LOG"


def run_stamps(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the identities of the runs that wrote ``records`` (every draw, in file order): the
    ``RUN_FIELD`` of each record that has one (a run's first record), oldest first; [] for a
    file written before runs recorded themselves (released results, older runs)."""
    return [record[RUN_FIELD] for record in records if isinstance(record.get(RUN_FIELD), dict)]


def draw_of(record: dict[str, Any]) -> int:
    """Return which of a model's repeated answers to its item a record is: its ``draw`` (0 when
    absent: a run with one answer per item writes no draw field)."""
    return int(record.get("draw") or 0)


def record_id(record: dict[str, Any]) -> tuple[Any, int]:
    """Return what identifies a record in its results file: (Key, draw)."""
    return record["Key"], draw_of(record)


def run_files(path: str | Path) -> list[Path]:
    """Return the files of one run beside its results file ``<prompting>___<model>___results.jsonl``:
    every file of that directory named ``<prompting>___<model>___*`` (the results, the run
    metadata, and a suite's own files such as a turn log), sorted; not the lock file."""
    path = Path(path)
    stem = path.name.removesuffix(SUFFIX) + SEPARATOR
    if not path.parent.is_dir():
        return []
    return sorted(p for p in path.parent.iterdir() if p.name.startswith(stem) and p.is_file())


def metadata_path(results_path: str | Path) -> Path:
    """Return the run metadata file of a results file: ``<name without .jsonl>.meta.json`` beside it."""
    results_path = Path(results_path)
    return results_path.with_name(results_path.name.removesuffix(".jsonl") + ".meta.json")


def lock_path(path: str | Path) -> Path:
    """Return the lock file of a results file: ``.<name>.lock`` in the same directory."""
    path = Path(path)
    return path.with_name(f".{path.name}.lock")


class ResultsWriter:
    """Append-only writer of one results file, safe to share between threads.

    Opening takes the file's lock (UserError naming the other process when a second writer
    tries), then reads the ``record_id`` (Key, draw) of each record present (``done``; ``has``
    asks it), truncating a torn last line. With ``fresh`` the run's files (``run_files``) are
    removed first, under the lock. ``redo`` names records to remove first so that their items
    are asked again: "refused" (refused by the server) and "truncated" (a reply cut at the
    token limit); the file is rewritten atomically and ``dropped`` says how many. ``append``
    writes one line and flushes it, unless its (Key, draw) is already there: none is written
    twice. With ``run`` set (``stamp``), the first record this writer appends carries it as its
    ``RUN_FIELD``: the identity of the run that wrote it. Use
    as a context manager or call ``close`` (which releases the lock). A file this writer
    created and never wrote to is removed on close (``removed`` True): a run that stopped
    before its first answer (a server that is down, an unknown model) leaves no empty results
    file for the analysis to list.
    """

    def __init__(self, path: str | Path, redo: tuple[str, ...] = (), fresh: bool = False):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.done: set[Any] = set()
        self.dropped = 0
        self.removed = False
        self.run: dict[str, Any] | None = None  # the run's identity, on the first record it appends
        self._lock = threading.Lock()
        self._lock_handle = _acquire_lock(self.path)
        if fresh:
            for file in run_files(self.path):
                file.unlink()
        self._created = not self.path.exists()
        try:
            self._repair_and_load(redo)
            self._handle = open(self.path, "a", encoding="utf-8")
        except BaseException:
            self._lock_handle.close()
            raise

    def __repr__(self) -> str:
        return f"<ResultsWriter {self.path.name}: {len(self.done)} keys>"

    def append(self, record: dict[str, Any]) -> bool:
        """Write ``record`` as one flushed line; return False (writing nothing) if its (Key, draw)
        is done."""
        if "Key" not in record:
            raise ValueError(f"results record has no 'Key': {record!r}")
        with self._lock:
            if record_id(record) in self.done:
                return False
            if self.run is not None:  # this run's first record: it says which run wrote it
                record, self.run = {**record, RUN_FIELD: self.run}, None
            self._handle.write(dumps(record) + "\n")
            self._handle.flush()
            self.done.add(record_id(record))
        return True

    def has(self, key: Any, draw: int = 0) -> bool:
        """Return whether the file holds the answer ``draw`` to the item ``key``."""
        return (key, draw) in self.done

    @property
    def untouched(self) -> bool:
        """Return whether this writer created the file and has written nothing to it yet."""
        return self._created and not self.done

    def close(self) -> None:
        """Flush and close the file (removing it when this writer created it and wrote nothing),
        then release its lock."""
        with self._lock:
            if not self._handle.closed:
                self._handle.close()
                if self.untouched and self.path.stat().st_size == 0:
                    self.path.unlink()
                    self.removed = True
            if not self._lock_handle.closed:
                self._lock_handle.close()  # closing the descriptor releases the flock

    def __enter__(self) -> "ResultsWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _repair_and_load(self, redo: tuple[str, ...]) -> None:
        """Read the Keys present, and cut off a torn last line so appends start on a line boundary;
        with ``redo``, rewrite the file without the records it names."""
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        good_end, records = _scan(self.path, data)
        if good_end < len(data):
            log.warning(
                "%s: dropping a torn last line (%d bytes) left by an interrupted run; "
                "its item will be asked again",
                self.path,
                len(data) - good_end,
            )
            with open(self.path, "r+b") as handle:
                handle.truncate(good_end)
                os.fsync(handle.fileno())

        def dropped(record: dict[str, Any]) -> bool:
            return any(REDO[name](record) for name in redo)

        if redo and any(dropped(record) for record in records):
            kept = [
                line
                for line in data[:good_end].decode("utf-8").splitlines(keepends=True)
                if line.strip() and not dropped(parse_json_line(line, None, 0))
            ]
            self.dropped = len(records) - len(kept)
            with atomic_write(self.path) as handle:
                handle.write("".join(kept))
            records = [record for record in records if not dropped(record)]
            log.info("%s: %d %s items will be asked again", self.path, self.dropped, " or ".join(redo))
        self.done = {record_id(record) for record in records}


def finish_reasons(record: dict[str, Any]) -> list[str]:
    """Return the finish reasons of every reply behind a results record, in order, whatever the
    suite's shape of its ``finish_reason`` field (one string, a list, a mapping per part of a
    translation, a list of those): [] when the record has none (built-in baselines, old files)."""
    value = record.get("finish_reason")
    if isinstance(value, list) and all(type(part) is str for part in value):
        return list(value)  # the common shape (a reply per turn), without walking it
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, list):
            for part in value:
                walk(part)
        elif isinstance(value, dict):
            for key in sorted(value):
                walk(value[key])

    walk(value)
    return found


def truncated(record: dict[str, Any]) -> bool:
    """Return whether a reply behind the record was cut at the token limit (finish_reason "length")."""
    return "length" in finish_reasons(record)


def token_use(records: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Return what a run's replies spent, for the report's token-budget table: ``replies`` (those
    with a finish reason), ``cut`` (of them, cut at the token limit), ``reasoning_tokens`` and
    ``answer_tokens`` (completion tokens less reasoning tokens) summed over the records."""
    reasons = [finish_reasons(record) for record in records]
    completion = sum(int(record.get("completion_tokens") or 0) for record in records)
    reasoning = sum(int(record.get("reasoning_tokens") or 0) for record in records)
    return {
        "replies": sum(map(len, reasons)),
        "cut": sum(found.count("length") for found in reasons),
        "reasoning_tokens": reasoning,
        "answer_tokens": completion - reasoning,
    }


REDO = {"refused": lambda record: bool(record.get("refused")), "truncated": truncated}


def _acquire_lock(path: Path):
    """Return the open lock file of ``path``, holding its exclusive flock; raise UserError when
    another process holds it (naming that process, which wrote its pid into the lock file)."""
    handle = open(lock_path(path), "a+", encoding="utf-8")
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        handle.seek(0)
        holder = handle.read().strip() or "?"
        handle.close()
        if exc.errno not in (errno.EWOULDBLOCK, errno.EACCES):
            raise
        raise UserError(
            f"{path} is being written by another run (process {holder}); wait for it "
            "to finish or stop it, or write another file (another --modelname or --prompting)"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return handle


def _scan(path: Path, data: bytes) -> tuple[int, list[dict[str, Any]]]:
    """Return (byte offset where the good part ends, unique records) of a results file's bytes.

    Only the last line may be torn: it is torn if it lacks a newline or is not a JSON object.
    """
    whole = parse_lines(data)  # fast: the whole file in one parse, when every line is whole
    if whole is not None and all(type(record) is dict and type(record.get("Key")) is int for record in whole):
        return len(data), _unique(path, whole)
    records: list[dict[str, Any]] = []
    seen: set[Any] = set()
    lines = data.split(b"\n")
    offset = 0
    duplicates = 0
    for index, raw in enumerate(lines):
        is_last = index == len(lines) - 1
        if is_last and raw == b"":
            break  # file ends with a newline: nothing torn
        if raw.strip():
            try:
                record = parse_json_line(raw.decode("utf-8"), path, index + 1)
            except (DataError, UnicodeDecodeError):
                if is_last or (index == len(lines) - 2 and lines[-1] == b""):
                    return offset, records
                raise
            if is_last:  # a complete JSON object but no newline: the write was cut short
                return offset, records
            if "Key" not in record:
                raise DataError(f"{path}:{index + 1}: results record has no 'Key' field")
            if type(record["Key"]) is not int:
                raise DataError(
                    f"{path}:{index + 1}: 'Key' must be an integer, as every item's is "
                    f"(got {record['Key']!r})"
                )
            if record_id(record) in seen:
                duplicates += 1
            else:
                seen.add(record_id(record))
                records.append(record)
        offset += len(raw) + 1
    if duplicates:
        log.warning("%s: %d duplicate Keys ignored (first answer kept)", path, duplicates)
    return offset, records


def _unique(path: Path, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return ``records`` without the later ones of the same Key and draw (with a warning)."""
    ids = [(record["Key"], record.get("draw") or 0) for record in records]
    if len(set(ids)) == len(ids):
        return records
    seen: set[Any] = set()
    kept = []
    for record, found in zip(records, ids, strict=True):
        if found not in seen:
            seen.add(found)
            kept.append(record)
    log.warning("%s: %d duplicate Keys ignored (first answer kept)", path, len(records) - len(kept))
    return kept
