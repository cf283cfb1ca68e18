"""Blocks in every modality, end to end: a set config's `modality` writes the text, image and
text+image prompts of the same problems (the same Keys), the pictures once each; the built-ins
answer every modality (the oracle from the scene, `rules` from the picture); a vision model
behind the stub server gets the pictures as content parts through the shared runner, a
text-only one is refused before any request; --dry-run counts the pictures' tokens."""

import json

import pandas as pd
import pytest

from common import analysis, database, figures, modalities, suites
from common.jsonl import read_jsonl
from common.models.stub_server import StubServer
from common.results import metadata_path, read_results
from tests.conftest import assert_text_only_model_refused, first_request_images, run_script

SPEC = (
    "modality: [text, image, text+image]\nseed: 5\nviews:\n  - {name: c2, constraints: 2, rename: none}\n"
    "  - {name: all-renamed, constraints: all, rename: all}\n"
    "problems:\n  - {num_obj: 3, count: 2}\n  - {num_obj: 5, test: true, count: 4}\n"
)


@pytest.fixture(scope="module")
def pictured_set(tmp_path_factory):
    """A small blocks set in three modalities (the one generator: problems, prompts of both types,
    pictures)."""
    root = tmp_path_factory.mktemp("blocks") / "tiny"
    spec = root.parent / "tiny.yaml"
    spec.write_text(SPEC)
    args = ["--suite", "blocks", "-t", str(spec), "--out", str(root)]
    made = run_script("scripts/generate_problems.py", *args)
    assert made.returncode == 0, made.stderr
    return root


def test_the_prompts_of_every_modality_show_the_same_problems(pictured_set):
    records = read_jsonl(pictured_set / "prompts" / "paper___nl___c2.jsonl")
    assert len(records) == 4 and all(set(r["modalities"]) == {"image", "text+image"} for r in records)
    image = records[0]["modalities"]["image"]
    assert "<image:" in image and "The " not in image.split("Actions:")[-2].split("Initially:")[-1]
    both = records[0]["modalities"]["text+image"]
    assert "<image:" in both and records[0]["text"].split("Initially:")[-1].split("\n", 1)[1][:30] in both
    pictures = sorted((pictured_set / "images").glob("*.png"))
    assert len(pictures) == 6 * 2  # one per problem and view (2 examples + 4 tests, 2 views), drawn once
    manifest = json.loads((pictured_set / "problems" / "manifest.json").read_text())
    assert manifest["modalities"] == ["text", "image", "text+image"]


def test_built_ins_answer_every_modality_with_the_same_keys(pictured_set, tmp_path):
    for script in ("scripts/lm_plan.py", "scripts/codex_translate.py"):
        ran = run_script(script, "-t", str(pictured_set), "--baselines", "--results-dir", str(tmp_path))
        assert ran.returncode == 0, ran.stderr
    keys = {}
    for modality, label in (("text", "paper"), ("image", "paper-image"), ("text+image", "paper-text+image")):
        plans = read_results(tmp_path / "tiny" / "nl___c2" / f"{label}___oracle___results.jsonl")
        facts = read_results(tmp_path / "tiny" / "pddl___all-renamed" / f"{label}___rules___results.jsonl")
        assert all(r["lenient"] and r["strict"] for r in plans + facts), modality  # the scene; the picture
        assert all(r.get("modality", "text") == modality for r in plans)
        assert all(len(r["images"]) == 3 for r in plans if modality != "text")  # 2 examples + the test
        keys[modality] = sorted(r["Key"] for r in plans)
        meta = json.loads(
            metadata_path(tmp_path / "tiny" / "nl___c2" / f"{label}___oracle___results.jsonl").read_text()
        )
        assert meta["runs"][-1]["modality"] == modality
    assert keys["text"] == keys["image"] == keys["text+image"] and len(keys["text"]) == 4


def test_a_vision_model_gets_the_pictures_and_a_text_only_one_is_refused(pictured_set, tmp_path):
    with StubServer(answer=lambda prompt: "Move the a onto the table.") as server:
        config = tmp_path / "vision.yaml"
        config.write_text(f"base_url: {server.url}\nmodel: stub-model\nvision: true\nimage_detail: high\n")
        args = [
            "-t",
            str(pictured_set),
            "--view",
            "c2",
            "--modality",
            "image",
            "--results-dir",
            str(tmp_path),
        ]
        ran = run_script("scripts/lm_plan.py", *args, "--model", str(config), "--no-cache")
        assert ran.returncode == 0, ran.stderr
        images = first_request_images(server)
        assert len(images) == 3 and all(
            i["detail"] == "high" and i["url"].startswith("data:image/png") for i in images
        )
        assert_text_only_model_refused(server, "scripts/lm_plan.py", args, tmp_path / "text.yaml", "paper")


def test_the_dry_run_counts_the_pictures_and_asks_nothing(pictured_set, tmp_path):
    """A dry run needs no API key (its variable is unset here): it sends nothing."""
    config = tmp_path / "gpt.yaml"
    config.write_text(
        "base_url: http://127.0.0.1:9/v1\nmodel: gpt-4o\nvision: true\nmax_tokens: 100\n"
        "price_per_1k_tokens: {input: 0.0025, output: 0.01}\napi_key_env: DRY_RUN_TEST_UNSET_KEY\n"
    )
    ran = run_script(
        "scripts/lm_plan.py",
        "-t",
        str(pictured_set),
        "--view",
        "c2",
        "--model",
        str(config),
        "--dry-run",
        "--results-dir",
        str(tmp_path),
    )
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert len(lines) == 3 and "pictures: OpenAI tiles (gpt-4o)" in lines[1] and "12 pictures" in lines[1]
    assert "pictures" not in lines[0] and "4 requests" in lines[0] and "$" in lines[0]
    assert not list(tmp_path.glob("tiny/**/*.jsonl"))


def test_the_scored_rows_carry_the_modality_and_the_section_pairs_them(pictured_set, tmp_path):
    ran = run_script(
        "scripts/lm_plan.py", "-t", str(pictured_set), "--baselines", "--results-dir", str(tmp_path)
    )
    assert ran.returncode == 0, ran.stderr
    ref = suites.resolve_set(pictured_set, results_root=tmp_path)
    with database.connection(tmp_path / "r.sqlite") as conn:
        database.update(conn, [ref])
        scored = database.read(conn, [ref])
        items = conn.execute("SELECT count(*), count(image), count(DISTINCT image) FROM items").fetchone()
        shown = conn.execute(
            "SELECT r.modality, count(*), coalesce(sum(q.text LIKE '%<image:%'), 0) FROM answers a "
            "JOIN runs r USING (run_id) LEFT JOIN texts q ON q.text_id = a.question "
            "GROUP BY r.modality ORDER BY r.modality"
        ).fetchall()
    section = analysis.section([ref], scored, tmp_path / "figures")
    # every item of both methods and views has its test problem's picture: 4 problems x 2 views
    assert items[0] == items[1] and items[2] == 4 * 2
    assert shown == [("image", 3 * 8, 3 * 8), ("text", 3 * 8, 0), ("text+image", 3 * 8, 3 * 8)]
    tests = section.data["modalities"]
    oracle = tests[tests["run"] == "oracle (plan, paper)"]
    assert len(oracle) == 2 * 3 and (oracle["n"] == 4).all() and (oracle["score_a"] == 1.0).all()
    assert any(path.name.endswith("_modalities.png") for _, path in section.figures)


def test_the_modality_figure_names_every_run_whichever_panel_shows_it(tmp_path, monkeypatch):
    """Runs of different methods are in different panels: the legend names each of them."""
    legends = []

    def keep_legend(fig, path, dpi=120):
        legends.append([text.get_text() for legend in fig.legends for text in legend.get_texts()])
        figures.pyplot().close(fig)  # as save_png does: no figure left open for later tests

    monkeypatch.setattr(figures, "save_png", keep_legend)
    rows = [
        (run, "two", task, modality, 4, score, score, score)
        for run, task, score in [("oracle (plan)", "plan", 1.0), ("rules (LLM+planner)", "LLM+planner", 0.5)]
        for modality in ("text", "image")
    ]
    scores = pd.DataFrame(rows, columns=["run", "view", "task", "modality", "units", "score", "lo", "hi"])
    modalities.plot_modalities(scores, tmp_path / "m.png", "lenient success")
    assert legends == [["oracle (plan)", "rules (LLM+planner)"]]
