"""The pixel-level baseline: can a learner that sees only a canvas picture's pixels answer its
question better than chance? It must not: the asked shape is drawn like any other, so the
picture alone says nothing about which shape or attribute is asked.

Per task, one example per question of a contrast tuple (a member: the descriptions and few-shot
styles of one member show one picture and share one answer; the members of an item share its
canvas, and twins of one canvas answer differently, so by construction a picture alone gives at
most one of them): the features are the picture shrunk to SHRUNK pixels (RGB, area-averaged)
and the histogram of its colours (the pixels of each shape colour, of the grid and axes, of the
background and of the rest), standardised; the learner is scikit-learn's L2-regularised multinomial logistic
regression (``C``), fit on fresh-seed sets and tested once on other fresh-seed sets of the same
generator (as the canvas audit does: a shipped set's few items per task could not see a leak).
Chance is what an answer given without looking scores on the test items: the better of the
answer most frequent in training and the one most frequent among the test items (with many
possible answers, shuffle tracking's shape names, the training's most frequent one alone can be
all but absent from the test items: chance 1%, which a learner that merely names a shape it
sees beats without any leak). The check holds when the learner's 95% interval on the test
examples, clustered by item (its members share a canvas), contains chance or lies below it.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image

from common.canvas.picture import AXES, BACKGROUND, COLOURS, GRID, draw_picture
from common.canvas.shapes import Geometry, shape_from_dict
from common.pictures.glyphs import colour_code, colour_codes
from common.stats import clustered_wilson_interval

SHRUNK = (16, 16)
C = 0.1  # inverse regularisation strength of the logit
PALETTE = [*COLOURS.values(), GRID, AXES, BACKGROUND]


@dataclass
class Verdict:
    """The learner's accuracy on one task's test examples (``items``: how many), against chance."""

    task: str
    items: int
    accuracy: float
    low: float
    high: float
    chance: float

    @property
    def at_chance(self) -> bool:
        """Return whether the 95% interval contains chance or lies below it."""
        return self.low <= self.chance


def features(image: Image.Image) -> np.ndarray:
    """Return the features of one picture: its shrunk RGB pixels (0..1) and the shares of its
    pixels in each colour of PALETTE and in none of them."""
    small = np.asarray(image.resize(SHRUNK, Image.Resampling.BOX), dtype=np.float64).ravel() / 255
    codes = colour_codes(np.asarray(image))
    counts = [np.count_nonzero(codes == colour_code(colour)) for colour in PALETTE]
    shares = np.array([*counts, codes.size - sum(counts)], dtype=np.float64) / codes.size
    return np.concatenate([small, shares])


def questions(trials: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the first trial of each question of ``trials`` (each member of each item and task,
    in their order): the trials a picture learner is shown, one per picture and answer."""
    first: dict[tuple[str, int, int], dict[str, Any]] = {}
    for trial in trials:
        first.setdefault((trial["task"], trial["item"], trial.get("member", 0)), trial)
    return list(first.values())


def item_examples(
    trials: Iterable[dict[str, Any]], geometry: Geometry, draw: Callable[..., Image.Image] | None = None
) -> dict[str, tuple[list, list, list]]:
    """Return per task ``(features, answers, items)``: one example per question (``questions``),
    its picture drawn, with the item it belongs to (the cluster of its interval). ``draw(trial,
    shapes, geometry)`` draws a trial's picture instead of ``draw_picture`` (a test's planted
    defect)."""
    out: dict[str, tuple[list, list, list]] = {}
    for trial in questions(trials):
        shapes = [shape_from_dict(shape) for shape in trial["shapes"]]
        image = draw(trial, shapes, geometry) if draw else draw_picture(shapes, geometry)
        found = out.setdefault(trial["task"], ([], [], []))
        found[0].append(features(image))
        found[1].append(str(trial["goldresp"]))
        found[2].append(trial["item"])
    return out


def check(train: dict[str, tuple[list, ...]], test: dict[str, tuple[list, list, list]]) -> list[Verdict]:
    """Return one Verdict per task of ``test``: the logit fit on ``train``'s examples of the task,
    its accuracy on ``test``'s with an interval clustered by ``test``'s items."""
    from sklearn.linear_model import LogisticRegression  # a heavy import, only where it is used
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    verdicts = []
    for task, (x_test, y_test, items) in sorted(test.items()):
        x_train, y_train = train[task][:2]
        answers = np.array(y_test)
        if len(set(y_train)) < 2:
            predicted = np.array([y_train[0]] * len(y_test))
        else:
            learner = make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=2000))
            predicted = learner.fit(np.array(x_train), np.array(y_train)).predict(np.array(x_test))
        chance = max(_constant_accuracy(y_train, answers), _constant_accuracy(y_test, answers))
        right = predicted == answers
        clusters: dict[Any, list[int]] = {}
        for item, hit in zip(items, right, strict=True):
            clusters.setdefault(item, []).append(int(hit))
        sums, sizes = zip(*((sum(hits), len(hits)) for hits in clusters.values()), strict=True)
        accuracy, low, high = clustered_wilson_interval(sums, sizes)
        verdicts.append(Verdict(task, len(answers), accuracy, low, high, chance))
    return verdicts


def _constant_accuracy(answers_seen: list[str], answers: np.ndarray) -> float:
    """Return the accuracy on ``answers`` of always giving the answer most frequent in
    ``answers_seen`` (ties: the first in sorted order)."""
    values, counts = np.unique(np.array(answers_seen), return_counts=True)
    return float(np.mean(answers == values[np.argmax(counts)]))
