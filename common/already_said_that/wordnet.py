"""WordNet 3.0 through nltk, offline: the word list the samples are drawn from.

nltk's own downloader needs its servers, which this project does not rely on. The recipe here
works offline: Debian's ``wordnet-base`` and ``wordnet-sense-index`` packages put the WordNet
3.0 database in /usr/share/wordnet; its regular files are copied (not symlinked: nltk refuses
paths that leave its data root) into ``data/nltk_data/corpora/wordnet/`` with the ``lexnames``
file Debian leaves out, and nltk reads them with ``NLTK_DATA=data/nltk_data``. A WordNet that
nltk already finds on its own search path (``NLTK_DATA``, ``~/nltk_data``, ...) is used as it is.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from common.errors import DataError, UserError
from common.jsonl import atomic_write, write_json
from common.paths import DATA, ROOT, shown

PROJECT_NLTK_DATA = DATA / "nltk_data"
STAMP_NAME = ".wordnet-ok"
WORDS_NAME = "wordnet_words.txt"
DEBIAN_DIR = Path("/usr/share/wordnet")
DEBIAN_PACKAGES = ("wordnet-base", "wordnet-sense-index")
FIX = (
    "run `make data/nltk_data/.wordnet-ok` as root (it apt-get installs "
    f"{' and '.join(DEBIAN_PACKAGES)} and builds data/nltk_data), or put an nltk WordNet "
    "under a directory on NLTK_DATA (python -m nltk.downloader wordnet where nltk's servers "
    "are reachable)"
)

# The 45 lexicographer files of WordNet 3.0 (lexnames(5WN)): number, name, syntactic category
# (1 noun, 2 verb, 3 adjective, 4 adverb). nltk reads this file to name every synset's lexname.
LEXNAMES: tuple[tuple[int, str, int], ...] = (
    (0, "adj.all", 3),
    (1, "adj.pert", 3),
    (2, "adv.all", 4),
    (3, "noun.Tops", 1),
    (4, "noun.act", 1),
    (5, "noun.animal", 1),
    (6, "noun.artifact", 1),
    (7, "noun.attribute", 1),
    (8, "noun.body", 1),
    (9, "noun.cognition", 1),
    (10, "noun.communication", 1),
    (11, "noun.event", 1),
    (12, "noun.feeling", 1),
    (13, "noun.food", 1),
    (14, "noun.group", 1),
    (15, "noun.location", 1),
    (16, "noun.motive", 1),
    (17, "noun.object", 1),
    (18, "noun.person", 1),
    (19, "noun.phenomenon", 1),
    (20, "noun.plant", 1),
    (21, "noun.possession", 1),
    (22, "noun.process", 1),
    (23, "noun.quantity", 1),
    (24, "noun.relation", 1),
    (25, "noun.shape", 1),
    (26, "noun.state", 1),
    (27, "noun.substance", 1),
    (28, "noun.time", 1),
    (29, "verb.body", 2),
    (30, "verb.change", 2),
    (31, "verb.cognition", 2),
    (32, "verb.communication", 2),
    (33, "verb.competition", 2),
    (34, "verb.consumption", 2),
    (35, "verb.contact", 2),
    (36, "verb.creation", 2),
    (37, "verb.emotion", 2),
    (38, "verb.motion", 2),
    (39, "verb.perception", 2),
    (40, "verb.possession", 2),
    (41, "verb.social", 2),
    (42, "verb.stative", 2),
    (43, "verb.weather", 2),
    (44, "adj.ppl", 3),
)


def lexnames_text() -> str:
    """Return the ``lexnames`` file: one ``NN<TAB>name<TAB>category`` line per lexicographer
    file, as WordNet ships it and nltk expects it (Debian's packages leave it out)."""
    return "".join(f"{number:02d}\t{name}\t{category}\n" for number, name, category in LEXNAMES)


def build_from_debian(dest_root: Path = PROJECT_NLTK_DATA, source: Path = DEBIAN_DIR) -> Path:
    """Copy the WordNet database files of ``source`` into ``<dest_root>/corpora/wordnet/`` and
    add ``lexnames``; return that directory.

    Only regular files at the top of ``source`` are copied (symlinks are followed, so the copy
    holds file contents; the bin/, pixmaps/ and wnres/ folders are not nltk's business). The
    folder is built beside its final place and renamed into it, so a failure leaves nothing
    half-copied.
    """
    files = sorted(p for p in source.iterdir() if p.is_file()) if source.is_dir() else []
    if not any(p.name == "data.noun" for p in files):
        raise UserError(f"{source} holds no WordNet database (no data.noun): {FIX}")
    target = dest_root / "corpora" / "wordnet"
    staging = target.with_name(".wordnet.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        for path in files:
            shutil.copyfile(path, staging / path.name)  # follows symlinks: contents, not links
        (staging / "lexnames").write_text(lexnames_text(), encoding="utf-8")
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def install_debian_packages(run=subprocess.run) -> None:
    """apt-get install Debian's WordNet packages (``apt-get update`` first only if the install
    cannot find them). Raises UserError naming the fix when apt-get is missing, the user is not
    root, or the install fails. ``run`` is ``subprocess.run`` (replaceable in tests)."""
    if shutil.which("apt-get") is None:
        raise UserError(f"WordNet is not installed and apt-get is not available: {FIX}")
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        raise UserError(
            "WordNet is not installed and installing Debian's packages needs root: "
            f"sudo apt-get install {' '.join(DEBIAN_PACKAGES)}, then rerun; or {FIX}"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "--no-install-recommends", *DEBIAN_PACKAGES]
    if run(install, env=env).returncode == 0:
        return
    if run(["apt-get", "update"], env=env).returncode != 0 or run(install, env=env).returncode != 0:
        raise UserError(
            f"apt-get could not install {' '.join(DEBIAN_PACKAGES)} (see its output above): {FIX}"
        )


def probe(nltk_data: Path | None) -> dict | None:
    """Return ``{"root", "version", "words"}`` when ``nltk.corpus.wordnet`` loads in a fresh
    Python with ``NLTK_DATA=nltk_data`` (``None``: nltk's own search path as it is), else None.

    A fresh interpreter makes the check exactly "nltk loads WordNet from this directory",
    whatever this process has imported; ``words`` is its word list (see ``lemma_words``).
    """
    env = dict(os.environ)
    if nltk_data is not None:
        env["NLTK_DATA"] = str(nltk_data)
    code = "import common.already_said_that.wordnet as w; w._print_probe()"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        return None
    return json.loads(proc.stdout)


def _print_probe() -> None:
    """Print what ``probe`` returns, from nltk's default search path (run in the subprocess)."""
    import nltk
    from nltk.corpus import wordnet

    root = str(nltk.data.find("corpora/wordnet"))
    print(
        json.dumps(
            {"root": root, "version": wordnet.get_version(), "words": lemma_words(wordnet.all_lemma_names())}
        )
    )


def lemma_words(names) -> list[str]:
    """Return the alphabetic names of ``names`` lower-cased, deduplicated and sorted: the word
    list samples are drawn from (sorted, so a seed gives the same samples whatever the hash
    order; multi-word lemmas such as ``ice_cream`` and names with digits or hyphens are out)."""
    return sorted({name.lower() for name in names if name.isalpha()})


def has_corpus(nltk_data: Path) -> bool:
    """Return whether ``nltk_data`` holds a WordNet corpus folder nltk would look at."""
    return (nltk_data / "corpora" / "wordnet" / "data.noun").is_file()


def ensure_wordnet(
    dest_root: Path = PROJECT_NLTK_DATA, install: bool = True, source: Path = DEBIAN_DIR, run=subprocess.run
) -> dict:
    """Make nltk's WordNet loadable, write its word list ``<dest_root>/wordnet_words.txt`` and
    then the stamp ``<dest_root>/.wordnet-ok``; return the stamp's contents (``nltk_data``: the
    directory nltk loaded it from, ``version``, ``words``: the count, ``sha256`` of the list).

    Order: the project's folder if it already loads; else a WordNet nltk finds by itself (used
    as it is); else the Debian files (installed with apt-get first when ``install`` and missing)
    copied into the project's folder. Raises UserError naming the fix when none works.
    """
    found = probe(dest_root) if has_corpus(dest_root) else None
    nltk_data = dest_root
    if found is None:
        found = probe(None)
        if found is not None:
            nltk_data = Path(found["root"]).parents[1]  # <root>/corpora/wordnet -> <root>
    if found is None:
        if not (source / "data.noun").is_file():
            if not install:
                raise UserError(f"no WordNet for nltk and none in {source}: {FIX}")
            install_debian_packages(run)
        build_from_debian(dest_root, source)
        found = probe(dest_root)
        if found is None:
            raise UserError(
                f"nltk cannot load the WordNet copied into {shown(dest_root)}: remove that folder and {FIX}"
            )
    words = found["words"]
    if not words:
        raise DataError(f"WordNet in {shown(nltk_data)} gave no alphabetic lemma: {FIX}")
    text = "".join(word + "\n" for word in words)
    with atomic_write(dest_root / WORDS_NAME) as handle:
        handle.write(text)
    stamp = {
        "nltk_data": shown(nltk_data),
        "version": found["version"],
        "words": len(words),
        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
    }
    write_json(dest_root / STAMP_NAME, stamp)
    return stamp


def load_words(dest_root: Path = PROJECT_NLTK_DATA) -> list[str]:
    """Return the sorted WordNet word list written by ``ensure_wordnet`` (checked against the
    SHA-256 in its stamp); raise UserError naming the fix when it is missing or altered."""
    stamp_path, words_path = dest_root / STAMP_NAME, dest_root / WORDS_NAME
    if not stamp_path.is_file() or not words_path.is_file():
        raise UserError(f"the WordNet word list {shown(words_path)} is missing: {FIX}")
    stamp = json.loads(stamp_path.read_text(encoding="utf-8"))
    data = words_path.read_bytes()
    if hashlib.sha256(data).hexdigest() != stamp.get("sha256"):
        raise DataError(
            f"{shown(words_path)} does not match the SHA-256 in {shown(stamp_path)}: delete both and {FIX}"
        )
    return data.decode("utf-8").splitlines()
