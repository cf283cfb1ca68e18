"""The fetched releases are complete and load with the expected sizes (data/README.md)."""

from common import fetch
from common.paths import DATA
from common.worldsense.data import load_testset, load_trainset


def test_worldsense_test_set_loads_with_gold_in_clear(worldsense_test_set):
    trials = load_testset(worldsense_test_set)
    assert len(trials) == 87_048
    assert "goldresp_obfusc" not in trials.columns
    assert set(trials["goldresp"].unique()) == {"TRUE", "FALSE", "POSSIBLE", "IMPOSSIBLE", "1", "2", "3"}
    assert trials["Key"].is_unique
    pairs = zip(trials["goldresp"], trials["expectedresp"], strict=True)
    assert all(gold in options for gold, options in pairs)


def test_worldsense_training_sets_load(worldsense_test_set):
    for name, count in [("trials_10k.jsonl.bz2", 12_096), ("trials_100k.jsonl.bz2", 108_864)]:
        train = load_trainset(DATA / "worldsense" / "training_set" / name)
        assert len(train) == count
        assert (train["prompt"].str.len() > 100).all()
        assert train["target"].isin(["TRUE", "FALSE", "POSSIBLE", "IMPOSSIBLE", "1", "2", "3"]).all()


def test_fetched_files_match_their_pins():
    for name, groups in [("worldsense", ["test_set/", "training_set/"]), ("cogsci22_blocks", [])]:
        _, pinned = fetch.load_source(f"configs/data/{name}.yaml")
        for rel, digest in fetch.select(pinned, groups).items():
            assert fetch.sha256_file(DATA / name / rel) == digest, rel
