"""The canvas scripts end to end: byte-identical regeneration, user errors, the oracle through ask_model."""

import pytest

from tests.conftest import run_script

SMALL = ["--set", "items=2", "--set", "num_shapes=[3, 4]"]


@pytest.fixture(scope="module")
def small_set(tmp_path_factory):
    out = tmp_path_factory.mktemp("canvas") / "small"
    done = run_script("scripts/generate_canvas.py", "configs/canvas/standard.yaml", "--out", str(out), *SMALL)
    assert done.returncode == 0, done.stderr
    return out


def test_generation_is_byte_identical_across_hash_seeds(tmp_path, small_set):
    for hash_seed in ("0", "12345"):
        out = tmp_path / hash_seed
        done = run_script(
            "scripts/generate_canvas.py",
            "configs/canvas/standard.yaml",
            "--out",
            str(out),
            *SMALL,
            env={"PYTHONHASHSEED": hash_seed},
        )
        assert done.returncode == 0, done.stderr
        for name in ("trials.jsonl.bz2", "manifest.json"):
            assert (out / name).read_bytes() == (small_set / name).read_bytes()


def test_other_seed_gives_other_trials(tmp_path, small_set):
    run_script(
        "scripts/generate_canvas.py",
        "configs/canvas/standard.yaml",
        "--out",
        str(tmp_path),
        *SMALL,
        "--set",
        "seed=99",
    )
    assert (tmp_path / "trials.jsonl.bz2").read_bytes() != (small_set / "trials.jsonl.bz2").read_bytes()


@pytest.mark.parametrize(
    "config, override, fragment",
    [
        ("itemz: 3\n", [], "bad.yaml:1: unknown config key: itemz"),
        ("tasks: [count, sorting]\n", [], "bad.yaml:1: field 'tasks.1': unknown task 'sorting'"),
        ("seed: 1\n", ["--set", "num_shapes=[0]"], "<command line>: field 'num_shapes.0'"),
    ],
)
def test_bad_config_exits_2_with_one_line(tmp_path, config, override, fragment):
    (tmp_path / "bad.yaml").write_text(config)
    done = run_script(
        "scripts/generate_canvas.py", str(tmp_path / "bad.yaml"), "--out", str(tmp_path / "o"), *override
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], done.stderr


def test_oracle_through_ask_model_scores_100_under_both_scorers(small_set):
    done = run_script("scripts/ask_model.py", "-t", str(small_set), "--model", "oracle", "--no-cache")
    assert done.returncode == 0, done.stderr
    done = run_script("scripts/score_canvas.py", "-t", str(small_set), "--csv", str(small_set / "scores.csv"))
    assert done.returncode == 0, done.stderr
    import pandas as pd

    table = pd.read_csv(small_set / "scores.csv")
    assert set(table["task"]) == {
        "existence",
        "count",
        "transitivity",
        "coordinate",
        "existence_tracking",
        "shuffle_tracking",
    }
    assert (table["contains_acc"] == 1).all() and (table["strict_acc"] == 1).all()
    assert (table["unparseable"] == 0).all()
    assert "100.0 [" in done.stdout


def test_score_without_results_and_partial_results_are_user_errors(tmp_path, small_set):
    done = run_script("scripts/score_canvas.py", "-t", str(tmp_path))
    assert done.returncode == 2 and "No trials.jsonl.bz2" in done.stderr
    partial = tmp_path / "partial"
    partial.mkdir()
    (partial / "trials.jsonl.bz2").write_bytes((small_set / "trials.jsonl.bz2").read_bytes())
    assert (
        run_script(
            "scripts/ask_model.py", "-t", str(partial), "--model", "random", "--limit", "5", "--no-cache"
        ).returncode
        == 0
    )
    done = run_script("scripts/score_canvas.py", "-t", str(partial))
    assert done.returncode == 2 and "unanswered (use --allow-partial)" in done.stderr
    assert run_script("scripts/score_canvas.py", "-t", str(partial), "--allow-partial").returncode == 0


def test_draw_writes_a_png_and_rejects_an_unknown_key(tmp_path, small_set):
    done = run_script(
        "scripts/draw_canvas.py", "-t", str(small_set), "--key", "3", "--out", str(tmp_path / "c.png")
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    done = run_script(
        "scripts/draw_canvas.py", "-t", str(small_set), "--key", "99999", "--out", str(tmp_path / "d.png")
    )
    assert done.returncode == 2 and "no canvas trial with Key 99999" in done.stderr
