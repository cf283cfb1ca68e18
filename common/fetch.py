"""Fetch external data files (public releases) with a pinned SHA-256 for every file.

A source is described by ``configs/data/<name>.yaml`` (base URL, mirror subdirectory,
destination, file groups) and a ``sha256sum``-style checksum file beside it. Each file is
copied from ``$DATA_MIRROR/<mirror>/<path>`` when that exists, else downloaded from
``<url>/<path>``; it is written to a temporary file, checked against its pinned hash and only
then renamed into place, so a failed or partial transfer never stays on disk.
"""

import hashlib
import logging
import os
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from common import cli, config
from common.errors import ConfigError, FetchError, OfflineError
from common.jsonl import atomic_write, sha256_file
from common.paths import ROOT

log = logging.getLogger(__name__)

CHUNK = 1 << 20
TIMEOUT = (10, 60)  # seconds to connect, seconds between bytes


@dataclass
class DataSource:
    """One external release: where it lives, where it goes, and which files it has."""

    name: str  # short name, e.g. worldsense
    url: str  # base URL; a file's URL is <url>/<path>
    mirror: str  # subdirectory of $DATA_MIRROR holding the same layout
    dest: str  # destination directory, relative to the project root
    checksums: str  # sha256sum-style file beside the config: "<sha256>  <path>"
    groups: dict[str, list[str]] = field(default_factory=dict)  # group -> path prefixes
    description: str = ""  # provenance and licence, shown in logs

    def __repr__(self) -> str:
        return f"<DataSource {self.name}: {self.url}>"


def load_source(path: str | Path) -> tuple[DataSource, dict[str, str]]:
    """Return the source described by a config file and its pinned ``{path: sha256}``."""
    data, source = config.load_yaml(path)
    spec = config.build(DataSource, data, source)
    sums_path = Path(path).parent / spec.checksums
    pinned = read_checksums(sums_path)
    for group, prefixes in spec.groups.items():
        if not any(p.startswith(tuple(prefixes)) for p in pinned):
            raise ConfigError(
                f"{source.where('groups.' + group)}: group {group!r} matches no file of {sums_path}"
            )
    return spec, pinned


def read_checksums(path: str | Path) -> dict[str, str]:
    """Return ``{relative path: sha256}`` from a ``sha256sum`` file (``<hex>  <path>`` lines)."""
    pinned: dict[str, str] = {}
    for lineno, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        digest, _, rel = line.partition("  ")
        if len(digest) != 64 or not rel:
            raise ConfigError(f"{path}:{lineno}: expected '<64 hex digits>  <path>', got {line!r}")
        pinned[rel.strip()] = digest.lower()
    return pinned


def select(pinned: dict[str, str], prefixes: list[str]) -> dict[str, str]:
    """Return the pinned files whose path starts with one of ``prefixes`` (all if none given)."""
    return {p: h for p, h in pinned.items() if not prefixes or p.startswith(tuple(prefixes))}


def fetch(
    spec: DataSource, files: dict[str, str], mirror: str | None = None, retries: int = 3, root: Path = ROOT
) -> list[Path]:
    """Make every file of ``files`` present and verified under ``root/spec.dest``; return the paths.

    Files already present with the right hash are kept. ``mirror`` (default: ``$DATA_MIRROR``)
    is tried first; a file missing there is downloaded. Raises ``FetchError`` naming the file,
    its URL and what to do, after removing any partial download.
    """
    mirror = os.environ.get("DATA_MIRROR") if mirror is None else mirror
    session = _session(retries)
    dest_root = root / spec.dest
    paths = []
    for rel, digest in cli.progress(
        files.items(), desc=f"fetch {spec.name}", unit="file", disable=len(files) < 10
    ):
        target = dest_root / rel
        if not (target.is_file() and sha256_file(target) == digest):
            mirrored = Path(mirror) / spec.mirror / rel if mirror else None
            if mirrored is not None and mirrored.is_file():
                _copy_verified(mirrored, target, digest)
            else:
                if mirrored is not None:
                    log.warning("%s is not in the mirror %s; downloading it", rel, mirror)
                _download_verified(session, f"{spec.url}/{rel}", target, digest)
        paths.append(target)
    return paths


def _session(retries: int) -> requests.Session:
    """Return a Session retrying connection errors and 429/5xx with backoff (never 4xx)."""
    retry = Retry(
        total=retries,
        connect=retries,
        read=retries,
        status=retries,
        backoff_factor=0.5,
        status_forcelist=(429, 500, 502, 503, 504),
        allowed_methods=frozenset({"GET"}),
        raise_on_status=False,
    )
    session = requests.Session()
    session.mount("http://", HTTPAdapter(max_retries=retry))
    session.mount("https://", HTTPAdapter(max_retries=retry))
    return session


def _copy_verified(src: Path, target: Path, digest: str) -> None:
    """Copy ``src`` to ``target`` atomically, refusing it if its SHA-256 is not ``digest``."""
    hasher = hashlib.sha256()
    with atomic_write(target, binary=True) as out, open(src, "rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            hasher.update(chunk)
            out.write(chunk)
        _check_digest(
            hasher.hexdigest(),
            digest,
            target,
            str(src),
            "the mirror holds a different version: refresh it, or unset DATA_MIRROR "
            "to download the pinned file",
        )


def _download_verified(session: requests.Session, url: str, target: Path, digest: str) -> None:
    """Stream ``url`` into ``target`` atomically, refusing it if its SHA-256 is not ``digest``."""
    hasher = hashlib.sha256()
    try:
        response = session.get(url, stream=True, timeout=TIMEOUT)
    except requests.ConnectionError as exc:  # not a byte received: the host is out of reach
        raise OfflineError(
            f"could not download {target.name}: cannot reach {url} ({_reason(exc)}). No network? "
            "Set DATA_MIRROR to a directory holding a copy of the release (e.g. DATA_MIRROR=../shared)",
            host=urllib.parse.urlsplit(url).netloc,
        ) from None
    except requests.RequestException as exc:
        raise FetchError(f"could not download {target.name} from {url}: {_reason(exc)}") from None
    try:
        with response, atomic_write(target, binary=True) as out:
            if response.status_code != 200:
                raise FetchError(
                    f"could not download {target.name}: HTTP {response.status_code} "
                    f"{response.reason} from {url}. Check the URL in the data config, or set "
                    "DATA_MIRROR to a directory holding a copy of the release"
                )
            for chunk in response.iter_content(CHUNK):
                hasher.update(chunk)
                out.write(chunk)
            _check_digest(
                hasher.hexdigest(),
                digest,
                target,
                url,
                "the file changed upstream or the transfer was corrupted: retry, or "
                "set DATA_MIRROR to a verified copy",
            )
    except requests.RequestException as exc:
        raise FetchError(
            f"could not download {target.name} from {url}: {_reason(exc)}. Retry, or set DATA_MIRROR "
            "to a directory holding a copy of the release (e.g. DATA_MIRROR=../shared)"
        ) from None


def _check_digest(actual: str, expected: str, target: Path, origin: str, advice: str) -> None:
    """Raise FetchError (so the temporary file is discarded) when the two digests differ."""
    if actual != expected:
        raise FetchError(
            f"SHA-256 mismatch for {target.name} from {origin}: got {actual}, "
            f"pinned {expected}; {advice}. Nothing was written."
        )


def _reason(exc: requests.RequestException) -> str:
    """Return the innermost, shortest useful description of a requests error."""
    reason = exc.args[0] if exc.args else exc
    reason = getattr(reason, "reason", reason)
    return f"{type(exc).__name__}: {reason}"
