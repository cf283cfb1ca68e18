"""The original eval's data and texts: the word samples and four distractor sets of
``evals==3.0.1.post1``, which ship inside that PyPI wheel as package data, and the texts its
code sends a model (``original_texts``).

``build_original`` downloads the wheel with ``pip download --no-deps`` into a cache folder,
checks its SHA-256 and the SHA-256 of the ten files it reads (pinned in
configs/data/already_said_that_original.sha256), applies the original eval's clean-ups (the
which-is-heavier question loses its trailing " Answer Yes or No", the reverse-sort instruction
its "(respond as concisely ...)" suffix, every gold answer is lower-cased), re-checks every gold
answer with ``distractors.check`` and writes, under data/already_said_that_original/:
``words.jsonl`` (the 500 samples), ``<source>.jsonl`` per distractor source (every record, in
file order; one whose gold is wrong carries ``wrong_gold``, the reason), ``texts.json`` (the
original's texts) and ``report.json`` (written last: counts and the records with a wrong gold).
A set takes the records with a wrong gold only when its config says ``wrong_golds: keep`` (as
the original did; its manifest lists them); by default they are left out. Either way they are
reported, never silently kept.
"""

import hashlib
import io
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from common.already_said_that.distractors import SOURCES, check, question_words
from common.already_said_that.original_texts import TEXT_FILES, TEXTS_NAME, extract_texts, load_texts
from common.errors import DataError, FetchError, UserError
from common.fetch import read_checksums, sha256_file
from common.jsonl import parse_json_line, read_jsonl, write_json, write_jsonl
from common.paths import CONFIGS, DATA, shown

log = logging.getLogger(__name__)

REQUIREMENT = "evals==3.0.1.post1"
WHEEL_NAME = "evals-3.0.1.post1-py3-none-any.whl"
CHECKSUMS = CONFIGS / "data" / "already_said_that_original.sha256"
ORIGINAL_DIR = DATA / "already_said_that_original"
REPORT_NAME = "report.json"
WORDS_FILE = "evals/registry/data/already_said_that/500_100.jsonl"
DISTRACTOR_FILES = {  # our source name -> its file inside the wheel
    "which_is_heavier": "evals/registry/data/which_is_heavier/which_is_heavier.jsonl",
    "first_letters": "evals/registry/data/first-letters/samples.jsonl",
    "reverse_sort": "evals/registry/data/reverse-sort-words-eng/samples.jsonl",
    "ambiguous_sentences": "evals/registry/data/ambiguous-sentences/samples.jsonl",
}
MIRROR_DIR = "already_said_that_original"  # where $DATA_MIRROR may hold the wheel
FIX = "run `make asat-original` (it needs the network to PyPI once, or the wheel in $DATA_MIRROR)"
_HEAVIER_SUFFIX = " Answer Yes or No"
_CONCISE_SUFFIX = re.compile(r" \(respond as concisely[^)]*\):$")


def download_wheel(cache_dir: Path, digest: str, run=subprocess.run) -> Path:
    """Return the pinned evals wheel in ``cache_dir``: copied from
    ``$DATA_MIRROR/already_said_that_original/`` when the mirror holds it (an offline machine),
    else downloaded with ``pip download --no-deps --only-binary=:all:``, when it is not there
    with the pinned SHA-256.

    Raises FetchError with pip's last words when the download fails (no network, no PyPI), and
    when the mirror's or the downloaded wheel does not match ``digest``; nothing is left behind.
    """
    wheel = cache_dir / WHEEL_NAME
    if wheel.is_file() and sha256_file(wheel) == digest:
        return wheel
    cache_dir.mkdir(parents=True, exist_ok=True)
    mirror = Path(os.environ.get("DATA_MIRROR") or "") / MIRROR_DIR / WHEEL_NAME
    with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".download.") as tmp:
        got = Path(tmp) / WHEEL_NAME
        if os.environ.get("DATA_MIRROR") and mirror.is_file():
            shutil.copyfile(mirror, got)
            origin = f"the copy in {mirror}"
        else:
            _pip_download(Path(tmp), run)
            origin = "the download from PyPI"
        actual = sha256_file(got)
        if actual != digest:
            raise FetchError(
                f"SHA-256 mismatch for {WHEEL_NAME} ({origin}): got {actual}, pinned {digest} "
                f"in {shown(CHECKSUMS)}; nothing was kept"
            )
        shutil.move(got, wheel)
    return wheel


def _pip_download(directory: Path, run=subprocess.run) -> None:
    """Download the pinned wheel into ``directory`` with pip; FetchError with pip's last words when
    it cannot."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--quiet",
        "--dest",
        str(directory),
        REQUIREMENT,
    ]
    proc = run(command, capture_output=True, text=True)
    if proc.returncode != 0 or not (directory / WHEEL_NAME).is_file():
        tail = " | ".join((proc.stderr or proc.stdout or "").strip().splitlines()[-3:])
        raise FetchError(
            f"pip could not download {REQUIREMENT} from PyPI ({tail or 'no output'}); check the "
            f"network or pip's index settings, or put the wheel in $DATA_MIRROR/{MIRROR_DIR}/, then retry"
        )


def extract(wheel: Path, pinned: dict[str, str]) -> dict[str, bytes]:
    """Return ``{path in the wheel: bytes}`` for the word file, the four distractor files and the
    files the texts come from (``TEXT_FILES``), each checked against its pinned SHA-256
    (DataError naming the file otherwise)."""
    contents = {}
    with zipfile.ZipFile(wheel) as archive:
        for name in (WORDS_FILE, *DISTRACTOR_FILES.values(), *TEXT_FILES.values()):
            if name not in pinned:
                raise DataError(f"{shown(CHECKSUMS)}: no pinned SHA-256 for {name}")
            try:
                data = archive.read(name)
            except KeyError:
                raise DataError(f"{wheel.name} has no {name}: is it the pinned wheel?") from None
            actual = hashlib.sha256(data).hexdigest()
            if actual != pinned[name]:
                raise DataError(
                    f"SHA-256 mismatch for {name} in {wheel.name}: got {actual}, pinned {pinned[name]}"
                )
            contents[name] = data
    return contents


def read_lines(data: bytes, name: str) -> list[tuple[int, dict]]:
    """Return ``(line number, record)`` for every non-blank JSON line of ``data``."""
    text = io.StringIO(data.decode("utf-8"))
    return [(n, parse_json_line(line, name, n)) for n, line in enumerate(text, start=1) if line.strip()]


def clean_record(source: str, raw: dict, where: str) -> tuple[str, str]:
    """Return ``(question, gold)`` of an original record after the original eval's clean-ups.

    ``raw`` is ``{"input": [system message, user message], "ideal": ...}``. Raises DataError
    naming ``where`` when the record does not have that shape or the suffix to trim.
    """
    try:
        system, user = raw["input"][0]["content"], raw["input"][1]["content"]
        ideal = raw["ideal"]
    except (KeyError, IndexError, TypeError):
        raise DataError(f"{where}: expected input[0..1].content and ideal") from None
    if not isinstance(ideal, str):
        raise DataError(f"{where}: ideal is not a string: {ideal!r}")
    question = user
    if source == "which_is_heavier":
        if not user.endswith(_HEAVIER_SUFFIX):
            raise DataError(f"{where}: the question does not end with {_HEAVIER_SUFFIX!r}")
        question = user[: -len(_HEAVIER_SUFFIX)]
    elif source == "reverse_sort":
        instruction, count = _CONCISE_SUFFIX.subn("", system)
        if count != 1:
            raise DataError(f"{where}: the instruction has no '(respond as concisely ...):' suffix")
        question = f"{instruction}: {user}"
    return question, ideal.strip().lower()


def clean_source(source: str, data: bytes, name: str) -> tuple[list[dict], list[dict]]:
    """Return ``(records, rejected)`` of one original distractor file, in file order.

    Every record is a pool record (``id`` = ``<source>-<line>``); one whose gold ``check``
    refuses also carries ``wrong_gold`` (the reason) and is listed in ``rejected`` as
    ``{"line", "id", "question", "answer", "reason"}``.
    """
    records, rejected = [], []
    for line, raw in read_lines(data, name):
        question, answer = clean_record(source, raw, f"{name}:{line}")
        record = {
            "id": f"{source}-{line:04d}",
            "source": source,
            "question": question,
            "answer": answer,
            "words": question_words(question),
        }
        reason = check(record)
        if reason is not None:
            record["wrong_gold"] = reason
            rejected.append(
                {"line": line, "id": record["id"], "question": question, "answer": answer, "reason": reason}
            )
        records.append(record)
    return records, rejected


def clean_words(data: bytes, name: str) -> list[dict]:
    """Return the original word samples as ``{"sample", "words"}``, checking each holds 100
    distinct lower-case alphabetic words (DataError naming the line otherwise)."""
    samples = []
    for line, raw in read_lines(data, name):
        words = raw.get("words")
        if (
            not isinstance(words, list)
            or len(words) != 100
            or len(set(words)) != 100
            or not all(isinstance(w, str) and w.isalpha() and w == w.lower() for w in words)
        ):
            raise DataError(f"{name}:{line}: expected 100 distinct lower-case alphabetic words")
        samples.append({"sample": len(samples), "words": words})
    return samples


def build_original(
    dest: Path = ORIGINAL_DIR, checksums: Path = CHECKSUMS, wheel: Path | None = None, run=subprocess.run
) -> dict:
    """Download (or reuse) the pinned wheel, extract, clean and check the original data and read
    its texts into ``dest``; return the report (also written last to ``dest/report.json``).
    ``wheel`` uses a given wheel file instead of the download (still checked against its pin)."""
    pinned = read_checksums(checksums)
    if WHEEL_NAME not in pinned:
        raise DataError(f"{shown(checksums)}: no pinned SHA-256 for {WHEEL_NAME}")
    if wheel is None:
        wheel = download_wheel(dest / "wheel", pinned[WHEEL_NAME], run)
    elif sha256_file(wheel) != pinned[WHEEL_NAME]:
        raise DataError(f"{wheel} is not the pinned {WHEEL_NAME} (SHA-256 differs)")
    contents = extract(wheel, pinned)
    texts = extract_texts(contents)
    (dest / REPORT_NAME).unlink(missing_ok=True)  # the stamp goes first, comes back last
    samples = clean_words(contents[WORDS_FILE], WORDS_FILE)
    write_jsonl(dest / "words.jsonl", samples)
    report: dict = {
        "wheel": WHEEL_NAME,
        "words": {"file": WORDS_FILE, "samples": len(samples)},
        "distractors": {},
    }
    for source in SOURCES:
        name = DISTRACTOR_FILES[source]
        records, rejected = clean_source(source, contents[name], name)
        write_jsonl(dest / f"{source}.jsonl", records)
        report["distractors"][source] = {
            "file": name,
            "records": len(records),
            "kept": len(records) - len(rejected),
            "rejected": rejected,
        }
        for bad in rejected:
            log.warning(
                "original %s line %d has a wrong gold answer (left out of a set unless it says "
                "wrong_golds: keep, as the original did): %s (gold %r: %s)",
                source,
                bad["line"],
                bad["question"],
                bad["answer"],
                bad["reason"],
            )
    write_json(dest / TEXTS_NAME, {**texts, "sha256": {path: pinned[path] for path in TEXT_FILES.values()}})
    report["texts"] = {"file": TEXTS_NAME, "from": sorted(TEXT_FILES.values())}
    write_json(dest / REPORT_NAME, report)
    return report


def load_original(dest: Path | None = None) -> dict:
    """Return the report of the extracted original data; UserError naming the fix if absent."""
    dest = ORIGINAL_DIR if dest is None else dest
    path = dest / REPORT_NAME
    if not path.is_file():
        raise UserError(f"the original Already Said That data is not in {shown(dest)}: {FIX}")
    return json.loads(path.read_text(encoding="utf-8"))


def original_samples(n: int, dest: Path | None = None) -> list[dict]:
    """Return the first ``n`` samples of the original word file (in its order)."""
    dest = ORIGINAL_DIR if dest is None else dest
    load_original(dest)
    return read_jsonl(dest / "words.jsonl")[:n]


def original_distractors(
    source: str, dest: Path | None = None, keep_wrong_golds: bool = False
) -> tuple[dict, list[dict]]:
    """Return ``(example, pool)`` of an original distractor source: the example is the last
    record, held out of the pool (the original eval popped the last one for its task
    description). Records with a wrong gold (``wrong_gold``) are left out first unless
    ``keep_wrong_golds`` (as the original kept them)."""
    dest = ORIGINAL_DIR if dest is None else dest
    load_original(dest)
    records = read_jsonl(dest / f"{source}.jsonl")
    if not keep_wrong_golds:
        records = [record for record in records if not record.get("wrong_gold")]
    if len(records) < 2:
        raise DataError(f"{shown(dest / (source + '.jsonl'))}: too few records; {FIX}")
    return records[-1], records[:-1]


def original_texts(dest: Path | None = None) -> dict:
    """Return the original's texts (``original_texts.extract_texts``) written by ``build_original``;
    UserError naming the fix when they are not there."""
    return load_texts(ORIGINAL_DIR if dest is None else dest, FIX)
