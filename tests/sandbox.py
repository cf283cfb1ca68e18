"""A throw-away copy of the repository for tests that run Make or documented commands, and what
of the working tree is the project's rather than its user's.

Tests never check what a user's runs and sets put in the working tree: results/, the sets built
under data/, model results added to a release, and configs the user wrote. ``shipped`` lists the
project's files of a directory: a file git does not know (not even added) under configs/ (a
new set, a model config) or named scripts/test_*_model.py (a copy of the model template) is the
user's, and is left out.

``make_sandbox(tmp)`` copies the working tree (the code as it is now, committed or not) without
.venv, data/, results/, caches and the user's files (``users_files``), then makes it usable at
once:
- .venv is a symlink to this checkout's environment (scripts put the copy first on sys.path,
  so the copy's code runs, not this checkout's);
- the downloaded inputs (data/worldsense, data/cogsci22_blocks, and when present data/nltk_data,
  data/already_said_that_original) are farms of real directories holding symlinks to this
  checkout's files (results files are copied, as runs append to them, and only those of the
  release as pinned in configs/data/<release>.sha256: a user's model results are not): a test
  may add or replace a file without touching the originals; generated sets are not copied;
  data/nltk_data is copied whole, as nltk refuses links that lead out of it;
- the environment and data stamps are made newer than what they depend on, so make neither
  rebuilds the shared .venv nor fetches again.
"""

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path

from common.fetch import read_checksums
from common.paths import ROOT
from tests import timing

SKIP = {".git", ".venv", ".cache", ".make", ".pytest_cache", ".ruff_cache", "__pycache__"}
TOP_SKIP = {"data", "results"}  # only at the top: configs/data/ is copied
# downloaded inputs under data/ (those present are shared); generated sets are never shared
RELEASES = ("worldsense", "cogsci22_blocks", "nltk_data", "already_said_that_original")
COPIED = ("nltk_data",)  # nltk refuses a corpus file linked from outside its data directory (36 MB)
STAMPS = {
    ".venv/.ok": ("requirements.txt", "requirements.lock", "pyproject.toml"),
    "data/worldsense/.fetched-core": ("configs/data/worldsense.yaml", "configs/data/worldsense.sha256"),
    "data/cogsci22_blocks/.fetched": (
        "configs/data/cogsci22_blocks.yaml",
        "configs/data/cogsci22_blocks.sha256",
    ),
    "data/already_said_that_original/report.json": (  # when fetched (the original_* sets need it)
        "configs/data/already_said_that_original.sha256",
        "scripts/fetch_already_said_that_original.py",
        "common/already_said_that/original.py",
        "common/already_said_that/distractors.py",
        "common/already_said_that/winograd.py",
    ),
}


# where a user's own files go (README.md): sets and model configs, copies of the model template
USERS_PLACES = ("configs", "scripts/test_*_model.py")  # git pathspecs


@functools.cache
def users_files() -> frozenset[Path]:
    """Return the files of ``USERS_PLACES`` that git does not know (not even added): the user's
    own. Empty when this is no git checkout (an unpacked archive: everything is the project's)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--others", "-z", "--", *USERS_PLACES],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return frozenset()
    return frozenset(ROOT / name for name in listed.decode().split("\0") if name)


def shipped(directory: Path, pattern: str = "*.yaml") -> list[Path]:
    """Return the project's files of ``directory`` matching ``pattern``, sorted: the user's own
    (``users_files``) left out."""
    return sorted(path for path in directory.glob(pattern) if path not in users_files())


def _ignore(directory: str, names: list[str]) -> list[str]:
    top = Path(directory) == ROOT
    return [
        n
        for n in names
        if n in SKIP
        or (top and n in TOP_SKIP)
        or n.endswith((".egg-info", ".tmp", ".pyc"))
        or Path(directory, n) in users_files()
    ]


def make_sandbox(target: Path, clone: bool = False) -> Path:
    """Return ``target/repo``: a copy of the repository ready for ``make`` (see the module doc);
    with ``clone``, also a git repository with all of it committed, as a fresh clone is (the
    files a test adds later are then the user's, as ``users_files`` sees them in the copy).

    Fails (AssertionError) when this checkout has no .venv or no fetched data: run
    `make env data` first (DATA_MIRROR=../shared offline)."""
    for needed in (".venv/.ok", "data/worldsense/.fetched-core", "data/cogsci22_blocks/.fetched"):
        assert (ROOT / needed).is_file(), f"{needed} is missing: run `make env data` (DATA_MIRROR=../shared)"
    repo = target / "repo"
    shutil.copytree(ROOT, repo, ignore=_ignore, symlinks=True)
    (repo / ".venv").symlink_to(ROOT / ".venv", target_is_directory=True)
    (repo / "data").mkdir()
    shutil.copy2(ROOT / "data" / "README.md", repo / "data" / "README.md")
    for release in RELEASES:
        if release in COPIED and (ROOT / "data" / release).is_dir():
            shutil.copytree(ROOT / "data" / release, repo / "data" / release)
        elif (ROOT / "data" / release).is_dir():
            _symlink_farm(ROOT / "data" / release, repo / "data" / release, _pinned(release))
    (repo / "results").mkdir()
    shutil.copy2(ROOT / "results" / "README.md", repo / "results" / "README.md")
    for stamp, sources in STAMPS.items():  # the copies keep their times: put them before the stamp's
        if not (repo / stamp).exists():  # a release this checkout has not fetched
            continue
        if (repo / stamp).is_symlink():  # the sandbox's own stamp: touching it must not touch the user's
            (repo / stamp).unlink()
            shutil.copy2(ROOT / stamp, repo / stamp)
        before = os.stat(repo / stamp).st_mtime - 10
        for source in sources:
            if (repo / source).exists():
                os.utime(repo / source, (before, before))
    if clone:
        who = ["-c", "user.name=sandbox", "-c", "user.email=sandbox@localhost"]
        for command in (["init", "-q"], ["add", "-A"], [*who, "commit", "-q", "-m", "as cloned"]):
            subprocess.run(["git", *command], cwd=repo, check=True, capture_output=True)
    return repo


def _pinned(release: str) -> frozenset[str] | None:
    """Return the paths (relative to data/<release>) that configs/data/<release>.sha256 pins, or
    None when the release has no such file."""
    sums = ROOT / "configs" / "data" / f"{release}.sha256"
    return frozenset(read_checksums(sums)) if sums.is_file() else None


def _symlink_farm(source: Path, target: Path, pinned: frozenset[str] | None) -> None:
    """Recreate ``source``'s directories under ``target``, each file a symlink to the original,
    except files in a ``results`` directory: those are copied (times kept), since a run appends
    to them and must never reach the original, and only those of the release (``pinned``, when
    given): what a user's runs added there stays out."""
    for directory, _dirs, files in os.walk(source):
        here = target / Path(directory).relative_to(source)
        here.mkdir(parents=True, exist_ok=True)
        for name in sorted(files):
            if here.name != "results":
                (here / name).symlink_to(Path(directory) / name)
            elif pinned is None or (here / name).relative_to(target).as_posix() in pinned:
                shutil.copy2(Path(directory) / name, here / name)


# a model file as the README says to make one: the template copied, its answer's body replaced by a
# rule of the user's own (here the first allowed answer, else the first word: no import of its own)
FIRST_ANSWER = '''    options = item.get("expectedresp") or item.get("options")
    if options:
        return list(options)[0]
    words = messages[-1]["content"].split()
    return words[0] if words else ""'''


def copied_model(repo: Path, name: str, body: str = FIRST_ANSWER) -> Path:
    """Write ``repo/scripts/test_<name>_model.py``: the template with the body of its ``answer``
    replaced by ``body`` (as the README tells a user to do); return its path."""
    template = (repo / "scripts/test_random_model.py").read_text()
    pattern = r'(    options = item.get\("expectedresp"\).*?return rng.choice\(words\) if words else ""\n)'
    old = re.search(pattern, template, re.S)
    assert old, "the template's answer() is not as tests/sandbox.py expects it"
    path = repo / f"scripts/test_{name}_model.py"
    path.write_text(template.replace(old.group(1), body + "\n"))
    return path


def run(repo: Path, command: str, timeout: float = 900) -> subprocess.CompletedProcess:
    """Run a shell command (bash, ``set -eo pipefail``) in ``repo`` with the usual environment
    (DATA_MIRROR removed, so nothing is fetched by accident); return the completed process.
    ``timeout`` is in seconds on an idle machine (``tests.timing.timeout`` scales it)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATA_MIRROR", "MAKEFLAGS", "MAKELEVEL", "RESULTS_DATABASE")
    }
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", command],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=timing.timeout(timeout),
    )
