"""The canvas scripts end to end: byte-identical regeneration, user errors, the baselines through
ask_model.py and the analysis through analyse_results.py, the Make block's baselines."""

import pytest

from tests.conftest import comparable, live_then_batch, run_script

SMALL = ["--set", "items=2", "--set", "num_shapes=[3, 12]"]


@pytest.fixture(scope="module")
def small_set(tmp_path_factory):
    out = tmp_path_factory.mktemp("canvas") / "small"
    done = run_script("scripts/generate_problems.py", "-t", "canvas/standard", "--out", str(out), *SMALL)
    assert done.returncode == 0, done.stderr
    return out


def test_generation_is_byte_identical_across_hash_seeds(tmp_path, small_set):
    for hash_seed in ("0", "12345"):
        out = tmp_path / hash_seed
        done = run_script(
            "scripts/generate_problems.py",
            "-t",
            "canvas/standard",
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
        "scripts/generate_problems.py",
        "-t",
        "canvas/standard",
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
        (  # a task the config leaves no trial: an error before anything is written, not a warning
            "tasks: [count, existence_tracking]\nnum_shapes: [3]\nevents: 1\n",
            [],
            "bad.yaml:1: field 'tasks': existence_tracking gets no trial from this config",
        ),
    ],
)
def test_bad_config_exits_2_with_one_line(tmp_path, config, override, fragment):
    (tmp_path / "bad.yaml").write_text(config)
    done = run_script(
        "scripts/generate_problems.py",
        "--suite",
        "canvas",
        "-t",
        str(tmp_path / "bad.yaml"),
        "--out",
        str(tmp_path / "o"),
        *override,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = [line for line in done.stderr.strip().splitlines() if not line.startswith("INFO ")]
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], done.stderr
    assert not (tmp_path / "o").exists()


def test_baselines_through_ask_model_and_the_one_analysis_entry_point(tmp_path, small_set):
    import pandas as pd

    out = tmp_path / "results"
    for model in ("oracle", "random", "shortcut-shuffle-initial"):
        done = run_script(
            "scripts/ask_model.py", "-t", str(small_set), "--model", model, "--results-dir", str(out)
        )
        assert done.returncode == 0, done.stderr
    assert len(list((out / small_set.name).glob("basic___*___results.jsonl"))) == 3  # results/canvas/<set>
    csv = tmp_path / "stats.csv"
    done = run_script(
        "scripts/analyse_results.py",
        "-t",
        str(small_set),
        "--results-dir",
        str(out),
        "--csv",
        str(csv),
        "--figures",
        str(tmp_path / "figures"),
    )
    assert done.returncode == 0, done.stderr
    assert "CANVAS RESULTS" in done.stdout and "incomplete tuples" not in done.stdout + done.stderr
    assert "Shortcut baselines on their task vs chance" in done.stdout
    assert "Paired exact tests on shared items" in done.stdout
    assert (tmp_path / "figures" / "canvas_accuracy.png").read_bytes()[:4] == b"\x89PNG"
    stats = pd.read_csv(csv)
    by_task = stats[stats["table"] == "accuracy_by_task"]
    oracle = by_task[by_task["model"] == "oracle"]
    assert set(oracle["task"]) == {
        "existence",
        "count",
        "transitivity",
        "coordinate",
        "existence_tracking",
        "shuffle_tracking",
    }
    assert (oracle["strict"] == 1).all() and (oracle["contains"] == 1).all()
    assert (oracle["invalid"] == 0).all()
    assert "shortcut-shuffle-initial" not in set(by_task["model"])  # shortcuts have their own table
    shortcut = stats[stats["table"] == "shortcuts"]
    assert list(shortcut["shortcut"]) == ["shortcut-shuffle-initial"]


def test_analysis_errors_partial_and_refused_results(tmp_path, small_set):
    import json

    done = run_script("scripts/analyse_results.py", "-t", str(tmp_path), "--suite", "canvas")
    assert done.returncode == 2 and f"no set '{tmp_path}'" in done.stderr
    partial = tmp_path / "partial"
    partial.mkdir()
    for name in ("trials.jsonl.bz2", "manifest.json"):
        (partial / name).write_bytes((small_set / name).read_bytes())
    done = run_script(
        "scripts/analyse_results.py", "-t", str(partial), "--results-dir", str(tmp_path / "none")
    )
    assert done.returncode == 2 and "no results files" in done.stderr and "ask_model.py" in done.stderr
    out = tmp_path / "results"
    done = run_script(
        "scripts/ask_model.py",
        "-t",
        str(partial),
        "--model",
        "random",
        "--limit",
        "5",
        "--results-dir",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    results = out / "partial" / "basic___random___results.jsonl"
    key = json.loads(results.read_text().splitlines()[0])["Key"]
    lines = [line for line in results.read_text().splitlines() if json.loads(line)["Key"] != key]
    refused = {"Key": key, "resp": "", "refused": "context_length", "error": "too long for the context"}
    results.write_text("\n".join([*lines, json.dumps(refused)]) + "\n")
    done = run_script("scripts/analyse_results.py", "-t", str(partial), "--results-dir", str(out))
    assert done.returncode == 0, done.stderr
    assert "partial results, 5 of" in done.stdout and "1 trials refused by the server" in done.stdout
    header = next(line for line in done.stdout.splitlines() if "invalid" in line)
    assert header.split()[-2:] == ["invalid", "refused"]


def test_a_set_given_to_another_suites_analysis_is_a_clear_error(tmp_path, small_set):
    import bz2
    import json
    import shutil

    worldsense = tmp_path / "ws"
    worldsense.mkdir()
    trial = {
        "Key": 1,
        "tuple_ID": 1,
        "problemname": "Infer.trivial",
        "problemsize": 3,
        "text": "?",
        "expectedresp": ["TRUE", "FALSE"],
        "goldresp": "TRUE",
    }
    (worldsense / "trials.jsonl.bz2").write_bytes(bz2.compress((json.dumps(trial) + "\n").encode()))
    done = run_script("scripts/analyse_results.py", "-t", str(worldsense), "--suite", "canvas")
    assert done.returncode == 2 and "Traceback" not in done.stderr and "KeyError" not in done.stderr
    assert "holds worldsense data, not canvas data" in done.stderr
    assert f"without --suite canvas (`scripts/analyse_results.py -t {worldsense}`)" in done.stderr
    # and the other way round: a canvas set given to the WorldSense or Already Said That analysis
    canvas = tmp_path / "canvas"
    shutil.copytree(small_set, canvas)
    done = run_script(
        "scripts/ask_model.py",
        "-t",
        str(canvas),
        "--model",
        "oracle",
        "--limit",
        "3",
        "--results-dir",
        str(tmp_path / "results"),
    )
    assert done.returncode == 0, done.stderr
    for suite in ("worldsense", "already_said_that"):
        done = run_script("scripts/analyse_results.py", "-t", str(canvas), "--suite", suite)
        assert done.returncode == 2, done.stderr
        assert f"holds canvas data, not {suite} data" in done.stderr
        assert "tuples" not in done.stderr and "gold answer" not in done.stderr


def test_make_runs_every_canvas_baseline_through_the_registry():
    from common.paths import ROOT

    makefile = (ROOT / "Makefile").read_text()
    assert "$$script -t $(1)/$(2) --baselines" in makefile  # the registry, not a copied list
    assert "shortcut-" not in makefile


def test_draw_writes_a_png_and_rejects_an_unknown_key(tmp_path, small_set):
    import bz2
    import json

    key = json.loads(bz2.decompress((small_set / "trials.jsonl.bz2").read_bytes()).splitlines()[3])["Key"]
    done = run_script(
        "scripts/draw_canvas.py", "-t", str(small_set), "--key", str(key), "--out", str(tmp_path / "c.png")
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    done = run_script(
        "scripts/draw_canvas.py", "-t", str(small_set), "--key", "99999", "--out", str(tmp_path / "d.png")
    )
    assert done.returncode == 2 and "no canvas trial Key 99999" in done.stderr
    done = run_script(
        "scripts/draw_canvas.py", "-t", str(small_set), "--line", "4", "--out", str(tmp_path / "e.png")
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "e.png").read_bytes() == (tmp_path / "c.png").read_bytes()  # line 4 is that Key


def test_a_batch_run_writes_the_records_of_a_live_run(tmp_path, small_set):
    import json

    from common.models.stub_server import StubServer
    from common.results import find_results_files

    with StubServer(answer=lambda prompt: "yes") as server:  # not an option of most tasks: re-prompted
        config = tmp_path / "stub.yaml"
        settings = {"base_url": server.url, "model": "stub-model", "batch_poll_s": 0.01, "backoff_s": 0.001}
        config.write_text(json.dumps(settings))
        for _, options, code in live_then_batch(tmp_path):
            done = run_script("scripts/ask_model.py", "-t", str(small_set), "--model", str(config), *options)
            assert done.returncode == code, done.stderr
        rounds = len(server.batches.batches)
    rows = {name: comparable(*find_results_files(tmp_path / name / "small")) for name in ("live", "batch")}
    assert rows["batch"] == rows["live"] and rounds == 2  # the question, then the re-prompts


def test_a_shortcut_planted_off_chance_opens_the_canvas_part_of_the_report(tmp_path, small_set):
    # the defect the check looks for, planted: a shortcut baseline that answers every trial right
    out = tmp_path / "results"
    done = run_script(
        "scripts/ask_model.py", "-t", str(small_set), "--model", "oracle", "--results-dir", str(out)
    )
    assert done.returncode == 0, done.stderr
    answers = out / small_set.name / "basic___oracle___results.jsonl"
    (answers.parent / "basic___shortcut-shuffle-initial___results.jsonl").write_text(answers.read_text())
    section, database = tmp_path / "canvas.json", tmp_path / "results.sqlite"
    done = run_script(
        "scripts/analyse_results.py", "-t", str(small_set), "--results-dir", str(out), "--quiet",
        "--database", str(database), "--section", str(section), "--figures", str(tmp_path / "figures"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr  # a check not met is no gate: the analysis goes on
    said = "canvas check 'shortcut at chance' not met on task shuffle_tracking: shortcut-shuffle-initial"
    assert said in done.stderr  # make shows it as it runs
    page = tmp_path / "report.html"
    done = run_script(
        "scripts/build_report.py", str(section), "--database", str(database),
        "--html", str(page), "--markdown", str(tmp_path / "report.md"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    html = page.read_text()
    top = html[html.index('<h2 id="canvas">') :].split("<p>", 1)[0]  # the suite's part, before its text
    assert said in top.replace("&#x27;", "'") and "another seed" in top
