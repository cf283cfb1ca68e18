"""Already Said That sets: config errors, the WordNet word list and samples, set directories,
byte-identical output under any PYTHONHASHSEED, the WordNet set-up recipe."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from common.already_said_that import generate, wordnet
from common.already_said_that.generate import load_set_config
from common.errors import ConfigError, UserError
from common.fetch import sha256_file
from common.jsonl import read_jsonl
from common.paths import CONFIGS
from tests.conftest import run_script
from tests.sandbox import shipped

SET_CONFIGS = CONFIGS / "already_said_that"
VARIANTS = (
    "which_is_heavier",
    "first_letters",
    "reverse_sort",
    "ambiguous_sentences",
    "distractorless",
    "mixed",
)


@pytest.fixture(scope="module")
def words() -> list[str]:
    """The sorted WordNet word list; fails (not skips) when WordNet was not set up."""
    try:
        return wordnet.load_words()
    except UserError as exc:
        pytest.fail(f"{exc} (make test does it first)")


# ---- configs ---------------------------------------------------------------------------------
def test_shipped_configs_load_and_share_one_seed():
    loaded = [load_set_config(SET_CONFIGS / f"{v}.yaml") for v in VARIANTS]
    assert [c.variant for c in loaded] == list(VARIANTS) and [c.name for c in loaded] == list(VARIANTS)
    assert {(c.seed, c.samples, c.turns, c.adversarial, c.words, c.distractors) for c in loaded} == {
        (0, 500, 100, True, "wordnet", "generated")
    }
    assert loaded[-1].sources == ["which_is_heavier", "first_letters", "reverse_sort", "ambiguous_sentences"]
    assert loaded[4].sources == []
    for path in shipped(SET_CONFIGS, "original_*.yaml"):
        config = load_set_config(path)
        assert (config.words, config.distractors) == ("original", "original")


@pytest.mark.parametrize(
    "text, message",
    [
        ("variant: mixed\nsources: [first_letters, reverse_sort]\nturns: 101\n", r"x.yaml:3: field 'turns'"),
        ("variant: riddles\nsources: []\n", r"x.yaml:1: field 'variant': 'riddles' is not one of"),
        (
            "variant: mixed\nsources: [first_letters, riddles]\n",
            r"x.yaml:2: field 'sources': unknown source 'riddles'",
        ),
        ("variant: mixed\nsources: [first_letters]\n", r"x.yaml:2: .*two or more sources"),
        (
            "variant: first_letters\nsources: [reverse_sort]\n",
            r"x.yaml:2: .*write sources: \[first_letters\]",
        ),
        ("variant: distractorless\nsources: [reverse_sort]\n", r"x.yaml:2: .*write sources: \[\]"),
        ("variant: mixed\nsources:\n  - first_letters\n  - first_letters\n", r"x.yaml:4: .*listed twice"),
        ("variant: distractorless\nsources: []\nseedz: 3\n", r"x.yaml:3: unknown config key: seedz"),
        (
            "variant: distractorless\nsources: []\nplay: 900\n",
            r"x.yaml:3: field .play.: 900 must be between 1 and samples",
        ),
        ("variant: distractorless\nsources: []\nseeds: 0\n", r"x.yaml:3: field .seeds.: must be 1 or more"),
        (
            "variant: distractorless\nsources: []\nwords: original\nsamples: 600\n",
            r"x.yaml:4: .*original word file has 500",
        ),
        (
            "variant: distractorless\nsources: []\nadversarial: maybe\n",
            r"x.yaml:3: field 'adversarial': expected bool",
        ),
        ("variant: distractorless\nsources: []\nname: other\n", r"x.yaml:3: 'name' is not a setting"),
        ("sources: []\n", r"missing required field 'variant'"),
        ("variant: [distractorless\n", r"x.yaml:2:1: YAML syntax error"),
    ],
)
def test_config_errors_name_file_line_and_field(tmp_path, text, message):
    path = tmp_path / "x.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_set_config(path)


def test_script_reports_a_bad_config_with_exit_code_2_and_writes_nothing(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("variant: mixed\nsources: []\n")
    proc = run_script(
        "scripts/generate_problems.py",
        "--suite",
        "already_said_that",
        "-t",
        str(path),
        "--out",
        str(tmp_path / "out"),
    )
    assert proc.returncode == 2 and "bad.yaml:2: field 'sources'" in proc.stderr
    assert not (tmp_path / "out").exists()


# ---- words and samples -----------------------------------------------------------------------
def test_word_list_is_wordnets_sorted_alphabetic_lemmas(words):
    assert len(words) == 77_503  # WordNet 3.0
    assert words == sorted(set(words))
    assert all(w.isalpha() and w == w.lower() for w in words)
    assert {"dog", "aardvark", "zymurgy"} <= set(words) and "ice_cream" not in words


def test_samples_are_500_by_100_distinct_words_from_the_list(words):
    samples = generate.draw_samples(words, 500, 0)
    known = set(words)
    assert [s["sample"] for s in samples] == list(range(500))
    for sample in samples:
        assert len(sample["words"]) == 100 == len(set(sample["words"]))
        assert set(sample["words"]) <= known
    assert len({tuple(s["words"]) for s in samples}) == 500
    assert generate.draw_samples(words, 500, 0) == samples != generate.draw_samples(words, 500, 1)


def test_the_list_loads_only_with_its_recorded_sha256(tmp_path):
    (tmp_path / wordnet.WORDS_NAME).write_text("apple\nbanana\n")
    with pytest.raises(UserError, match=r"make data/nltk_data/\.wordnet-ok"):
        wordnet.load_words(tmp_path)
    (tmp_path / wordnet.STAMP_NAME).write_text(json.dumps({"sha256": "0" * 64}))
    with pytest.raises(UserError, match="does not match the SHA-256"):
        wordnet.load_words(tmp_path)


# ---- set directories ----------------------------------------------------------------------------
def _generate(out: Path, variant: str, hash_seed: str, *overrides: str) -> subprocess.CompletedProcess:
    extra = [item for o in overrides for item in ("--set", o)]
    proc = run_script(
        "scripts/generate_problems.py",
        "-t",
        str(SET_CONFIGS / f"{variant}.yaml"),
        "--out",
        str(out),
        *extra,
        env={"PYTHONHASHSEED": hash_seed},
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def test_sets_are_byte_identical_under_two_hash_seeds(tmp_path, words):
    for variant in ("mixed", "first_letters"):
        _generate(tmp_path / "a" / variant, variant, "1")
        _generate(tmp_path / "b" / variant, variant, "4242")
        for name in ("samples.jsonl", "distractors.jsonl", "manifest.json"):
            a, b = tmp_path / "a" / variant / name, tmp_path / "b" / variant / name
            assert a.read_bytes() == b.read_bytes(), name


def test_set_directory_follows_the_contract(tmp_path, words):
    settings = {v: load_set_config(SET_CONFIGS / f"{v}.yaml") for v in VARIANTS}
    manifests = {v: generate.write_set(settings[v], tmp_path / v) for v in VARIANTS}
    samples = {v: (tmp_path / v / "samples.jsonl").read_bytes() for v in VARIANTS}
    assert len(set(samples.values())) == 1, "the same seed must give the same samples in every variant"
    for variant, manifest in manifests.items():
        out = tmp_path / variant
        assert manifest == json.loads((out / "manifest.json").read_text())
        assert manifest["set"] == variant and manifest["samples"] == 500
        assert manifest["config"] == settings[variant].as_dict()
        assert manifest["sha256"] == {n: sha256_file(out / n) for n in ("samples.jsonl", "distractors.jsonl")}
        pool = read_jsonl(out / "distractors.jsonl")
        assert {r["source"] for r in pool} == set(settings[variant].sources)
        sources = settings[variant].sources
        assert manifest["distractors"] == {s: sum(r["source"] == s for r in pool) for s in sources}
        assert len({r["id"] for r in pool}) == len(pool)
        example = manifest["example"]
        assert example["question"] not in {r["question"] for r in pool}, "the worked example is held out"
        assert set(example) == {"id", "source", "question", "answer", "words"}
    assert manifests["distractorless"]["example"]["answer"] == "rome"
    assert (tmp_path / "distractorless" / "distractors.jsonl").read_bytes() == b""
    assert manifests["mixed"]["distractors"] == {
        "which_is_heavier": 200,
        "first_letters": 200,
        "reverse_sort": 200,
        "ambiguous_sentences": 67,
    }
    # mixed draws the very pools of the single-source variants
    mixed = read_jsonl(tmp_path / "mixed" / "distractors.jsonl")
    for source in ("which_is_heavier", "ambiguous_sentences"):
        alone = read_jsonl(tmp_path / source / "distractors.jsonl")
        assert [r for r in mixed if r["source"] == source] == alone


def test_a_failed_rewrite_leaves_no_manifest(tmp_path, words, monkeypatch):
    settings = load_set_config(SET_CONFIGS / "reverse_sort.yaml")
    generate.write_set(settings, tmp_path)
    calls = []

    def broken(path, records):
        calls.append(path)
        raise OSError("disk full")

    monkeypatch.setattr(generate, "write_jsonl", broken)
    with pytest.raises(OSError):
        generate.write_set(settings, tmp_path)
    assert calls and not (tmp_path / "manifest.json").exists()


def test_original_sets_need_the_original_data(tmp_path, monkeypatch):
    from common.already_said_that import original

    monkeypatch.setattr(original, "ORIGINAL_DIR", tmp_path / "nothing")
    settings = load_set_config(SET_CONFIGS / "original_reverse_sort.yaml")
    with pytest.raises(UserError, match="make asat-original"):
        generate.write_set(settings, tmp_path / "out")


# ---- the WordNet recipe ---------------------------------------------------------------------------
def test_lexnames_are_the_45_standard_files():
    lines = wordnet.lexnames_text().splitlines()
    assert len(lines) == 45
    assert lines[0] == "00\tadj.all\t3" and lines[-1] == "44\tadj.ppl\t3" and lines[3] == "03\tnoun.Tops\t1"
    assert [int(line[:2]) for line in lines] == list(range(45))


def test_build_from_debian_copies_file_contents_and_adds_lexnames(tmp_path):
    source = tmp_path / "wordnet"
    (source / "bin").mkdir(parents=True)
    (source / "bin" / "wnb").write_text("binary")
    (tmp_path / "elsewhere.noun").write_text("noun data")
    (source / "data.noun").symlink_to(tmp_path / "elsewhere.noun")
    (source / "index.noun").write_text("index")
    target = wordnet.build_from_debian(tmp_path / "nltk_data", source)
    assert target == tmp_path / "nltk_data" / "corpora" / "wordnet"
    assert sorted(p.name for p in target.iterdir()) == ["data.noun", "index.noun", "lexnames"]
    assert not (target / "data.noun").is_symlink() and (target / "data.noun").read_text() == "noun data"
    assert (target / "lexnames").read_text() == wordnet.lexnames_text()
    with pytest.raises(UserError, match=r"no WordNet database.*make data/nltk_data/\.wordnet-ok"):
        wordnet.build_from_debian(tmp_path / "other", tmp_path / "missing")


class _FakeApt:
    """Records apt-get calls; the first install fails until ``apt-get update`` ran."""

    def __init__(self, update_fixes: bool = True):
        self.calls, self.updated, self.update_fixes = [], False, update_fixes

    def __call__(self, command, env=None):
        self.calls.append(command[1])
        self.updated |= command[1] == "update"
        ok = command[1] == "update" or (self.updated and self.update_fixes)
        return subprocess.CompletedProcess(command, 0 if ok else 100)


def test_apt_get_update_runs_only_when_the_install_needs_it(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(wordnet.shutil, "which", lambda name: "/usr/bin/apt-get")
    apt = _FakeApt()
    wordnet.install_debian_packages(apt)
    assert apt.calls == ["install", "update", "install"]

    def installs(command, env=None):
        calls.append(command[1])
        return subprocess.CompletedProcess(command, 0)

    calls: list[str] = []
    wordnet.install_debian_packages(installs)
    assert calls == ["install"]
    with pytest.raises(UserError, match="could not install wordnet-base"):
        wordnet.install_debian_packages(_FakeApt(update_fixes=False))


def test_installing_needs_root_and_apt_get(monkeypatch):
    monkeypatch.setattr(wordnet.shutil, "which", lambda name: "/usr/bin/apt-get")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(UserError, match="needs root: sudo apt-get install wordnet-base wordnet-sense-index"):
        wordnet.install_debian_packages(_FakeApt())
    monkeypatch.setattr(wordnet.shutil, "which", lambda name: None)
    with pytest.raises(UserError, match="apt-get is not available"):
        wordnet.install_debian_packages(_FakeApt())


def test_no_wordnet_anywhere_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(wordnet, "probe", lambda nltk_data: None)  # nltk finds nothing
    with pytest.raises(UserError, match=r"no WordNet for nltk and none in .*\.wordnet-ok"):
        wordnet.ensure_wordnet(tmp_path / "nltk_data", install=False, source=tmp_path / "none")
    assert not (tmp_path / "nltk_data" / wordnet.STAMP_NAME).exists()


def test_nltk_loads_the_project_copy_with_nltk_data_set(words):
    if not wordnet.has_corpus(wordnet.PROJECT_NLTK_DATA):
        pytest.skip("WordNet comes from an existing nltk_data folder here, not the project's copy")
    found = wordnet.probe(wordnet.PROJECT_NLTK_DATA)
    assert found is not None and found["version"] == "3.0" and found["words"] == words
    assert Path(found["root"]) == wordnet.PROJECT_NLTK_DATA / "corpora" / "wordnet"
