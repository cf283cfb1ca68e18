"""Canvas in every modality, end to end: a set config's `modality` writes each trial's prompt in
every modality (the same Keys), every picture once (each decodes back to the canvas the trial
carries, nothing named); the built-ins answer every modality (the shortcuts, rules on words, the
text one only); a vision model behind the stub server gets the pictures as content parts, a
text-only one is refused before any request; the scored rows carry the modality, the database
keeps one picture per item once, the section pairs the modalities and the report's examples show
the thumbnails (escaped page, base64 only)."""

import json
import re
import sqlite3

import pytest
from PIL import Image

from common import analysis, database, examples, render, suites
from common.canvas import picture
from common.canvas.setconfig import load_config
from common.canvas.shown import trial_canvases
from common.models.stub_server import StubServer
from common.trials.data import load_testset
from tests.conftest import assert_text_only_model_refused, first_request_images, run_script

CONFIG = (
    "seed: 4\nnum_shapes: [3, 12]\nitems: 2\ndescriptions: [coordinates, full]\n"
    "fewshot: [none, other_canvas]\nmodality: [text, image, text+image]\n"
)


@pytest.fixture(scope="module")
def pictured(tmp_path_factory):
    """A small canvas set in three modalities, answered by the built-ins into its own results."""
    root = tmp_path_factory.mktemp("canvas")
    (root / "tiny.yaml").write_text(CONFIG)
    made = run_script("scripts/generate_problems.py", "--suite", "canvas", "-t", str(root / "tiny.yaml"),
                      "--out", str(root / "tiny"))  # fmt: skip
    assert made.returncode == 0, made.stderr
    asked = run_script(
        "scripts/ask_model.py",
        "-t",
        str(root / "tiny"),
        "--baselines",
        "--results-dir",
        str(root / "results"),
    )
    assert asked.returncode == 0, asked.stderr
    return root


def test_every_picture_is_a_canvas_the_trial_carries_and_names_nothing(pictured):
    trials = load_testset(pictured / "tiny").to_dict("records")
    geometry = load_config(pictured / "tiny.yaml").geometry
    shown = set()
    for trial in trials:
        assert set(trial["modalities"]) == {"image", "text+image"}
        image = trial["modalities"]["image"]
        names = re.findall(r"<image:([0-9a-f]+)>", image)
        canvases = trial_canvases(trial)
        assert names == [picture.name_of(c, geometry) for c in canvases[1:]] + [trial["picture"]]
        assert not re.search(r"\b(?:small|large) \w+ (?:square|circle|triangle) at \(", image)  # no centres
        assert trial["modalities"]["text+image"].count("<image:") == len(names)
        for canvas, name in zip([*canvases[1:], canvases[0]], names, strict=True):
            if name not in shown:
                read = picture.read_picture(
                    Image.open(pictured / "tiny" / "images" / f"{name}.png"), geometry
                )
                assert sorted(read, key=str) == sorted(canvas, key=str), name
                shown.add(name)
    assert len(shown) == len(list((pictured / "tiny" / "images").glob("*.png")))


def test_the_built_ins_answer_every_modality_with_the_same_keys(pictured):
    results = pictured / "results" / "tiny"
    keys = {}
    for label in ("basic", "basic-image", "basic-text+image"):
        records = [json.loads(line) for line in (results / f"{label}___oracle___results.jsonl").open()]
        assert all(r["resp"] for r in records)
        keys[label] = sorted(r["Key"] for r in records)
        assert all(r.get("modality", "text") == [*label.split("-", 1), "text"][1] for r in records)
    assert keys["basic"] == keys["basic-image"] == keys["basic-text+image"]
    assert not list(results.glob("basic-image___shortcut-*"))  # rules on words: the text modality only


def test_a_vision_model_gets_the_pictures_and_a_text_only_one_is_refused(pictured, tmp_path):
    with StubServer(answer=lambda prompt: "Yes") as server:
        config = tmp_path / "vision.yaml"
        config.write_text(f"base_url: {server.url}\nmodel: stub-model\nvision: true\n")
        args = [
            "-t",
            str(pictured / "tiny"),
            "--modality",
            "image",
            "--limit",
            "3",
            "--results-dir",
            str(tmp_path),
        ]
        ran = run_script("scripts/ask_model.py", *args, "--model", str(config), "--no-cache")
        assert ran.returncode == 0, ran.stderr
        images = first_request_images(server)
        assert images and all(image["url"].startswith("data:image/png") for image in images)
        assert_text_only_model_refused(server, "scripts/ask_model.py", args, tmp_path / "text.yaml", "other")


TEXT_ONLY_FILE = (
    "def answer(messages, item, rng):\n"
    "    words = messages[-1]['content'].split()  # a text-only model: its content is a string\n"
    "    return list(item['expectedresp'])[len(words) % len(item['expectedresp'])]\n"
)


def test_a_text_only_model_asked_without_modality_answers_the_text_and_says_what_it_left(pictured, tmp_path):
    """What `make all MODEL=x` does on a set that also shows pictures: a text-only model (a config
    without vision, a model file without VISION) is asked its text, not stopped."""
    model_file = tmp_path / "test_plain_model.py"
    model_file.write_text(TEXT_ONLY_FILE)
    with StubServer(answer=lambda prompt: "Yes") as server:
        config = tmp_path / "plain.yaml"
        config.write_text(f"base_url: {server.url}\nmodel: stub-model\n")
        for model, name in ((config, "plain"), (model_file, "plain")):
            out = tmp_path / f"results-{model.suffix[1:]}"
            args = ["-t", str(pictured / "tiny"), "--limit", "3", "--results-dir", str(out), "--no-cache"]
            ran = run_script("scripts/ask_model.py", *args, "--model", str(model))
            assert ran.returncode == 0, ran.stderr
            assert "not asked in image, text+image" in ran.stderr
            written = sorted(p.name for p in (out / "tiny").glob("*___results.jsonl"))
            assert written == [f"basic___{name}___results.jsonl"]
        assert not [r for r in server.requests if "image_url" in json.dumps(r["body"])]


def test_the_scored_rows_pair_the_modalities_and_keep_one_picture_per_canvas(pictured, tmp_path):
    ref = suites.resolve_set(pictured / "tiny", results_root=pictured / "results")
    with database.connection(tmp_path / "r.sqlite") as conn:
        database.update(conn, [ref])
        scored = database.read(conn, [ref], texts=True)
        pictures = conn.execute("SELECT count(*), count(DISTINCT digest) FROM images").fetchone()
        items = conn.execute("SELECT count(*), count(image), count(DISTINCT image) FROM items").fetchone()
        asked = conn.execute(
            "SELECT count(*) FROM answers a JOIN runs r USING (run_id) "
            "JOIN texts q ON q.text_id = a.question WHERE r.modality = 'image' AND q.text LIKE '%<image:%'"
        ).fetchone()[0]
        section = analysis.section([ref], scored, tmp_path / "figures")
        record = examples.attach(
            {"inputs": [{"path": f} for f in scored.runs["results_file"]], "paired_table": "x"}, conn
        )
    trials = load_testset(pictured / "tiny")
    canvases = trials["shapes"].map(json.dumps).nunique()  # a twin on another canvas has its own picture
    assert trials["item"].nunique() < canvases < len(trials)  # twins sharing a canvas share it
    assert items == (len(trials), len(trials), canvases) == (items[0], items[0], pictures[0])
    assert pictures[0] == pictures[1]
    assert set(scored.runs["modality"]) == {"text", "image", "text+image"}
    assert asked == 2 * len(trials)  # oracle and random, each trial with the prompt it was shown
    tests = section.data["modalities"]
    oracle = tests[(tests["run"] == "oracle") & (tests["task"] == "(all)")]
    assert list(zip(oracle["a"], oracle["b"], strict=True)) == [
        ("text", "image"),
        ("text", "text+image"),
        ("image", "text+image"),
    ]
    assert (oracle["n"] == trials["item"].nunique()).all() and (oracle["p"] == 1.0).all()
    assert any(path.name == "canvas_modalities.png" for _, path in section.figures)
    tables = [t for block in record["examples"]["pairs"] for t in block["tables"] if t.get("pictures")]
    assert tables
    for block in record["examples"]["pairs"]:  # thumbnails beside the answers of runs shown pictures only
        runs = block["summary"].split(" (strict)")[0]
        assert "image" in runs or not any(t.get("pictures") for t in block["tables"]), block["summary"]
    (failures,) = record["examples"]["failures"]["tables"]
    shown = [bool(p) for p in failures["pictures"]]
    assert shown == ["-image" in row[0] or "-text+image" in row[0] for row in failures["rows"]] and any(shown)
    page = render.html_table(
        {**tables[0], "rows": [["<b>x</b>"] * len(tables[0]["columns"])] * len(tables[0]["rows"])}
    )
    assert "&lt;b&gt;" in page and "<b>" not in page and page.count('src="data:image/png;base64,') >= 1


def test_a_picture_cell_takes_base64_only():
    page = render.html_table(
        {"columns": ["a"], "rows": [["x"], ["y"]], "pictures": ['"><script>', "iVBORw0K"]}
    )
    assert "<script>" not in page and page.count("<img") == 1


def test_the_explorer_query_shows_each_answer_beside_its_picture(pictured, tmp_path):
    from common import queries

    ref = suites.resolve_set(pictured / "tiny", results_root=pictured / "results")
    with database.connection(tmp_path / "r.sqlite") as conn:
        database.update(conn, [ref])
        rows = queries.run_query(conn, "pictured_answers", run="")
    assert len(rows) and all(isinstance(p, bytes) and p.startswith(b"\x89PNG") for p in rows["picture"])
    assert sqlite3.sqlite_version
