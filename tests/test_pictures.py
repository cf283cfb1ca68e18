"""The pictures shown to models are faithful, leak nothing and are the same bytes everywhere.

Every picture of whole sets is read back from its pixels alone (``read_picture``): canvas, each
shape's colour, kind, size and position, from which every gold answer of the set is derived
again with the question's words; blocks, each stack's order and the goal relations, from which
every optimal plan length is computed again. A pixel-level learner (``pixel_baseline``) fit on
fresh-seed sets is at chance on every canvas task of the shipped set, and fails the check when
a picture leaks its answer. Pictures are byte-identical across runs and PYTHONHASHSEED values.
"""

import hashlib
import io
import re
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image, ImageDraw

from common.blocks import picture as blocks_picture
from common.blocks.generate import load_spec
from common.blocks.generate import make_problems as blocks_set
from common.blocks.planner import optimal_length
from common.canvas import picture as canvas_picture
from common.canvas import pixel_baseline
from common.canvas.build import generate_set as canvas_set
from common.canvas.relations import answer
from common.canvas.setconfig import load_config
from common.canvas.shapes import circumradius, shape_from_dict
from common.paths import CONFIGS, ROOT
from common.pictures import glyphs, modality
from common.pictures.store import picture_name, png_bytes, save_picture
from tests.canvas.test_prompt_solver import ORDINALS, parts, query_match

EVENT = re.compile(
    r"A ((?:small|large) \w+ \w+) is added to the canvas\.|The ((?:small|large) \w+ \w+) is removed"
)
SWAP = re.compile(r"The ((?:small|large) \w+ \w+) and the ((?:small|large) \w+ \w+) swap positions\.")


def reread(image: Image.Image) -> Image.Image:
    """Return ``image`` as a model gets it: encoded to PNG and decoded again."""
    return Image.open(io.BytesIO(png_bytes(image)))


def solve_from_picture(trial: dict, shapes: list) -> str:
    """Return the answer to a canvas trial's question from the shapes read off its picture and the
    question's words (the events and swaps the text tells happen after the pictured canvas)."""
    description, question = parts(trial["text"])
    present = [shape.name for shape in shapes]
    for added, removed in EVENT.findall(description):
        present.append(added) if added else present.remove(removed)
    if m := re.fullmatch(r"Is there an? (.+?)(?: in the canvas)?\?", question):
        return "Yes" if any(query_match(m[1], name) for name in present) else "No"
    if m := re.fullmatch(r"How many (.+?)(?: are there)?\?", question):
        return str(sum(query_match(m[1], name) for name in present))
    if m := re.fullmatch(r"Where is the (.+) relative to the (.+)\?", question):
        by_name = {shape.name: shape for shape in shapes}
        full = answer(by_name[m[2]], by_name[m[1]], GEOMETRY)
        if trial["task"] != "transitivity":
            return full
        # the two lie on one line of the frame: the answer is along that line, the axis on which
        # their centres differ most
        subject, reference = by_name[m[1]], by_name[m[2]]
        sideways = abs(subject.x - reference.x) > abs(subject.y - reference.y)
        return next(word for word in full.split() if (word in ("Left", "Right")) == sideways)
    if m := re.fullmatch(r"What shape is (\S+) from the (top|bottom)\?", question):
        order = [shape.name for shape in sorted(shapes, key=lambda shape: shape.y)]  # the column, bottom up
        for a, b in SWAP.findall(description):
            i, j = order.index(a), order.index(b)
            order[i], order[j] = order[j], order[i]
        k = ORDINALS.index(m[1])
        return order[k if m[2] == "bottom" else len(order) - 1 - k].title()
    raise AssertionError(f"unknown question {question!r}")


GEOMETRY = load_config(CONFIGS / "canvas" / "standard.yaml").geometry


def first_of_each_stratum(trials: list[dict]) -> list[dict]:
    """Return the trials of the first item of each (task, number of shapes): every task, size,
    description and few-shot style, a quick sample of a set."""
    first: dict[tuple, int] = {}
    for trial in trials:
        first.setdefault((trial["task"], trial["num_shapes"]), trial["item"])
    chosen = set(first.values())
    return [trial for trial in trials if trial["item"] in chosen]


@pytest.fixture(scope="module")
def standard_trials():
    config = load_config(CONFIGS / "canvas" / "standard.yaml")
    assert config.geometry == GEOMETRY
    return canvas_set(config).trials


def test_a_sample_of_canvas_pictures_gives_back_its_shapes_and_gold_answers(standard_trials):
    """The fast check: the first item of every task and size of the standard set (the whole sets:
    the slow test below)."""
    sample = first_of_each_stratum(standard_trials)
    assert {t["task"] for t in sample} == {t["task"] for t in standard_trials} and len(sample) > 40
    assert_pictures_give_back_gold(sample)


@pytest.mark.slow
@pytest.mark.parametrize("name, canvases", [("standard", 248), ("scaling", 440)])
def test_every_canvas_picture_gives_back_its_shapes_and_every_gold_answer(name, canvases):
    config = load_config(CONFIGS / "canvas" / f"{name}.yaml")
    assert config.geometry == GEOMETRY
    trials = canvas_set(config).trials
    assert len(trials) > 400
    # every distinct canvas of the set read back (the contrast twins share theirs)
    assert len(assert_pictures_give_back_gold(trials)) == canvases


def assert_pictures_give_back_gold(trials: list[dict]) -> dict[str, list]:
    """Assert that each trial's canvas, drawn and encoded, reads back to its shapes, and that its
    gold answer follows from them and the question's words; return the pictures read, by name."""
    pictures: dict[str, list] = {}
    for trial in trials:
        shapes = [shape_from_dict(shape) for shape in trial["shapes"]]
        name = canvas_picture.name_of(shapes, GEOMETRY)
        if name not in pictures:  # drawn once per scene, as a set's store does
            read = canvas_picture.read_picture(
                reread(canvas_picture.draw_picture(shapes, GEOMETRY)), GEOMETRY
            )
            assert sorted(read, key=str) == sorted(shapes, key=str), trial["Key"]
            pictures[name] = read
        assert solve_from_picture(trial, pictures[name]) == trial["goldresp"], trial["Key"]
    return pictures


def test_a_sample_of_blocks_pictures_gives_back_stacks_goal_and_optimal_length():
    """The fast check: the first problem of each size of the scaling set (the whole set: slow)."""
    problems = blocks_set(load_spec(CONFIGS / "blocks" / "scaling.yaml"))
    sizes: dict[int, object] = {}
    for problem in problems:
        sizes.setdefault(len(problem.items), problem)
    assert len(sizes) > 5
    assert assert_blocks_pictures(list(sizes.values())) == len(sizes) * 6


@pytest.mark.slow
def test_every_blocks_picture_gives_back_its_stacks_goal_and_optimal_length():
    problems = blocks_set(load_spec(CONFIGS / "blocks" / "scaling.yaml"))
    assert assert_blocks_pictures(problems) == len(problems) * 6 > 1300


def assert_blocks_pictures(problems: list) -> int:
    """Assert that every view of ``problems``, drawn and encoded, reads back to its stacks and goal,
    and gives its stored optimal length again; return how many pictures were read."""
    checked = 0
    for problem in problems:
        for name in problem.views:
            view = problem.view(name)
            init, goal = blocks_picture.read_picture(reread(blocks_picture.draw_picture(view)))
            assert init == [list(stack) for stack in view.init_board], (problem.id, name)
            assert sorted(goal, key=str) == sorted(map(tuple, view.goal), key=str), (problem.id, name)
            stored = problem.extra["optimal_plan_length"][name]
            if stored is not None:
                assert optimal_length(init, goal) == stored, (problem.id, name)
            checked += 1
    return checked


def test_a_goal_is_drawn_as_pieces_with_the_table_and_the_clear_marks():
    goal = [("mid", "b", "a"), ("bot", "a", None), ("top", None, "b"), ("mid", "d", "c"), ("top", None, "e")]
    assert blocks_picture.goal_pieces(goal) == [
        (["a", "b"], True, True),
        (["c", "d"], False, False),
        (["e"], False, True),
    ]
    assert blocks_picture.wrap("electric pencil sharpener") == ["electric", "pencil", "sharpener"]
    assert blocks_picture.wrap("tea tray") == ["tea tray"]


def test_the_glyphs_stay_in_their_cells_and_read_back_exactly():
    drawn = {}
    for char in glyphs.CHARSET:
        big = Image.new("L", (40, 40), 0)
        ImageDraw.Draw(big).text((10, 10), char, font=glyphs.font(), fill=255)
        box = big.getbbox()
        if box:
            assert (
                box[0] >= 10
                and box[1] >= 10
                and box[2] <= 10 + glyphs.CELL[0]
                and box[3] <= 10 + glyphs.CELL[1]
            )
        drawn[glyphs.glyph(char, (255, 255, 255))] = char
    assert len(drawn) == len(glyphs.CHARSET)  # no two characters look alike
    image = Image.new("RGB", (300, 30), (236, 226, 198))
    glyphs.draw_text(image, 3, 4, "Cutting board-3 (x)", (236, 226, 198))
    assert glyphs.read_cells(np.asarray(image), 3, 4, 20) == "Cutting board-3 (x) "
    with pytest.raises(ValueError, match="cannot draw"):
        glyphs.draw_text(image, 0, 0, "café", (255, 255, 255))


DRAW_BOTH = """
import hashlib, sys
from common.blocks.generate import make_problems, load_spec
from common.blocks.picture import draw_picture as blocks
from common.canvas.build import generate_set as canvases
from common.canvas.setconfig import load_config
from common.canvas.picture import draw_picture as canvas
from common.canvas.shapes import circumradius, shape_from_dict
from common.paths import CONFIGS
from common.pictures.store import png_bytes
view = make_problems(load_spec(CONFIGS / "blocks" / "scaling.yaml"))[150].view("c3-renamed")
config = load_config(CONFIGS / "canvas" / "standard.yaml")
trial = canvases(config).trials[40]
pictures = [blocks(view), canvas([shape_from_dict(s) for s in trial["shapes"]], config.geometry)]
print(" ".join(hashlib.sha256(png_bytes(p)).hexdigest() for p in pictures))
"""


def test_pictures_are_byte_identical_across_runs_and_hash_seeds():
    digests = {
        subprocess.run(
            [sys.executable, "-c", DRAW_BOTH],
            cwd=ROOT,
            env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("0", "1", "4242")
    }
    assert len(digests) == 1
    image = Image.open(io.BytesIO(png_bytes(canvas_picture.draw_picture([], GEOMETRY))))
    assert not image.info  # no text, time or dpi chunk: the bytes are the pixels
    assert image.size == (585, 561)


def test_the_store_draws_a_scene_once_under_a_name_of_its_content(tmp_path):
    calls = []

    def draw():
        calls.append(1)
        return Image.new("RGB", (4, 4), (1, 2, 3))

    name = picture_name("test", {"a": [1, 2]})
    assert name == picture_name("test", {"a": [1, 2]}) != picture_name("test", {"a": [2, 1]})
    first = save_picture(tmp_path, name, draw)
    assert save_picture(tmp_path, name, draw) == first and len(calls) == 1
    assert hashlib.sha256(first.read_bytes()).hexdigest() == hashlib.sha256(png_bytes(draw())).hexdigest()


def test_modalities_of_a_set_config():
    assert modality.modalities_of("text") == ["text"]
    assert modality.modalities_of(["text+image", "text", "image"]) == ["text", "image", "text+image"]
    assert modality.label("paper", "text") == "paper" and modality.label("paper", "image") == "paper-image"
    with pytest.raises(Exception, match="unknown modality 'picture'"):
        modality.modalities_of(["picture"], "x.yaml:3: field 'modality'")


FRESH_SEEDS = (1001, 1002, 1003, 1004)  # the pixel learner's training sets
TEST_SEEDS = (2001, 2002, 2003, 2004)  # and its test sets (a shipped set's 30 items per task see no leak)


def fresh_examples(config, seeds, draw=None):
    """Return the pixel baseline's examples of fresh-seed sets of ``config`` (pictures drawn by
    ``draw``, if given: ``pixel_baseline.item_examples``), pooled per task (an item known by its
    seed and number)."""
    pooled: dict = {}
    for seed in seeds:
        trials = canvas_set(config, seed=seed).trials
        for task, (x, y, items) in pixel_baseline.item_examples(trials, config.geometry, draw).items():
            pooled.setdefault(task, ([], [], []))
            pooled[task][0].extend(x)
            pooled[task][1].extend(y)
            pooled[task][2].extend((seed, item) for item in items)
    return pooled


@pytest.mark.slow
def test_a_pixel_level_learner_is_at_chance_on_every_canvas_task():
    config = load_config(CONFIGS / "canvas" / "standard.yaml")
    verdicts = pixel_baseline.check(fresh_examples(config, FRESH_SEEDS), fresh_examples(config, TEST_SEEDS))
    assert len(verdicts) == 6
    assert all(verdict.at_chance for verdict in verdicts), verdicts


@pytest.mark.slow
def test_the_pixel_check_fails_when_a_picture_leaks_its_answer():
    """The gate can fail: pictures that carry a mark placed by their answer are caught."""
    config = load_config(CONFIGS / "canvas" / "standard.yaml")

    def leaky(trial, shapes, geometry):
        image = pixel_baseline.draw_picture(shapes, geometry)
        slot = int(hashlib.sha256(str(trial["goldresp"]).encode()).hexdigest(), 16) % 16
        ImageDraw.Draw(image).rectangle([slot * 36, 0, slot * 36 + 35, 35], fill=(0, 0, 0))
        return image

    train = fresh_examples(config, FRESH_SEEDS, leaky)
    verdicts = pixel_baseline.check(train, fresh_examples(config, TEST_SEEDS, leaky))
    assert not any(verdict.at_chance for verdict in verdicts), verdicts


ASKED = re.compile(  # the phrase naming the asked shapes: existence, count, relations
    r"Is there an? (.+?)(?: in the canvas)?\?|How many (.+?)(?: are there)?\?"
    r"|Where is the (.+) relative to the .+\?"
)


def asked_shapes(trial: dict, shapes: list) -> list:
    """Return the shapes of a trial's canvas its question is about: those its query phrase matches
    (existence, count), its subject (relations), the shape it asks for (shuffle)."""
    found = ASKED.fullmatch(trial["question"])
    if found is None:
        return [shape for shape in shapes if shape.name.title() == trial["goldresp"]]
    phrase = next(group for group in found.groups() if group)
    if found[3]:
        return [shape for shape in shapes if shape.name == phrase]
    return [shape for shape in shapes if query_match(phrase, shape.name)]


def thicker(trial, shapes, geometry):
    """Return a trial's picture drawn with a planted defect: the shapes the question is about
    outlined three pixels thick, every other shape as it is drawn."""
    image = pixel_baseline.draw_picture(shapes, geometry)
    unit, half = canvas_picture.scale(geometry), geometry.half
    for shape in asked_shapes(trial, shapes):
        x = canvas_picture.LEFT + (shape.x + half) * unit
        y = canvas_picture.TOP + (half - shape.y) * unit
        r = circumradius(shape, geometry) * unit
        ImageDraw.Draw(image).ellipse([x - r, y - r, x + r, y + r], outline=(0, 0, 0), width=3)
    return image


@pytest.mark.slow
def test_the_pixel_check_fails_when_the_asked_shape_is_drawn_thicker():
    """The gate can fail on the defect it is for: the asked shape drawn unlike the others (a thick
    black outline where every shape has a white hairline) lets the pixel learner answer
    existence questions (is the asked shape there?) and relations (where is the outlined
    subject?) above chance."""
    config = load_config(CONFIGS / "canvas" / "standard.yaml")
    train = fresh_examples(config, FRESH_SEEDS, thicker)
    verdicts = pixel_baseline.check(train, fresh_examples(config, TEST_SEEDS, thicker))
    caught = {verdict.task for verdict in verdicts if not verdict.at_chance}
    assert {"existence", "coordinate"} <= caught, verdicts
