"""The audit, the canvas sets' gate: with one piece of what the skill needs blinded, can a strong
learner still tell the answer?

For each task and each of its views (``views.VIEWS``: a placeholder instead of the subject, the
direction words, the links between mentions, the events' kinds, the swaps...; positions, order
and counts kept), two learners are fitted on fresh-seed sets of the same config ``TRAIN_SCALE``
times the size of the set, from generic position-aware features of the blinded prompt
(``features``): a regularised multinomial logit on every token (each sentence's kind with the
role of each shape it names, by position from the start in tenths and from the end; counts) and
gradient-boosted trees on the categorical and numeric ones (each of the last eight sentences'
kind, where and how often the question's shapes are named, in which order, the numbers naming
them, the order in which every shape is first named, the position asked). The learner that is
better on the sixth of the training items held out (each is fitted on the other five sixths: five
times the set) is tested once on the set: its accuracy, with a 95% interval clustered by item,
against the view's chance rate. The gate holds the set's k views together: each interval at
1 - 0.05 / k must hold chance (Bonferroni; a 95% interval per view would fail a set whose every
view is at chance about four times in ten with a dozen views). A view above it fails the gate;
``nothing blinded`` is the control (the learners' reach, not gated).

The answer a learner predicts is the gold answer, or for a shape (shuffle tracking) the order in
which the description first names it (its line-up place): an identity means nothing.

``audit_set`` caches its table (the analysis: under ``.cache/canvas/``) keyed by the set's trials,
its config and this package's code.
"""

import dataclasses
import functools
import hashlib
import itertools
import json
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from common import paths
from common.canvas import reading, views
from common.canvas.shortcuts import chance
from common.errors import DataError
from common.stats import clustered_wilson_interval

TRAIN_SCALE = 6  # training items per item of the set, from fresh seeds (a sixth held out: 5 to fit)
HELD_OUT = TRAIN_SCALE  # one training item in six chooses the learner
END = 8  # sentences described one by one from the end
TOKEN = re.compile(rf"{reading.SHAPE}|\[asked\]|\[shape \d+\]")


def _ordinal(word: str) -> int | None:
    """Return the 0-based index of an ordinal word ("second" -> 1), or None."""
    from common.canvas.tasks.shuffle_tracking import ORDINALS as words

    return words.index(word) if word in words else None


def _template(sentence: str, roles: dict[str, str]) -> tuple[str, tuple[str, ...]]:
    """Return a sentence's kind with each shape token replaced by its role (``Q1``, ``Q2``, ``X``)
    and numbers by ``#``, and its shape tokens in order."""
    return _kind(sentence, tuple(roles.items()))


@functools.lru_cache(maxsize=1 << 16)
def _kind(sentence: str, roles: tuple[tuple[str, str], ...]) -> tuple[str, tuple[str, ...]]:
    """``_template`` for roles given as items, remembered: the audit sees the same sentences with
    the same roles across its views and its training and test trials."""
    named = dict(roles)
    kind = TOKEN.sub(lambda m: named.get(m.group(0), "X"), sentence)
    return re.sub(r"-?\d+", "#", kind), tuple(TOKEN.findall(sentence))


@functools.lru_cache(maxsize=1 << 16)
def _tokens(text: str) -> list[str]:
    """The shape tokens of a text in order (``TOKEN``), remembered: the views share most sentences.
    The list is shared: do not change it."""
    return TOKEN.findall(text)


@functools.lru_cache(maxsize=1 << 14)
def _parts(prompt: str) -> views.Parts:
    """``views.parts`` remembered (parts are frozen): every view of the audit cuts the same prompts."""
    return views.parts(prompt)


def features(p: views.Parts, description: str, fewshot: str) -> tuple[dict, dict, dict]:
    """Return the generic features of a (blinded) prompt's parts: categorical, numeric, and a bag
    of token counts (see the module docstring)."""
    asked = _tokens(p.question)
    roles = {token: f"Q{i}" for i, token in enumerate(asked[:2], 1)}
    order: dict[str, int] = {}
    for text in [*p.sentences, *(q for q, _ in p.shots), p.question]:
        for token in _tokens(text):
            order.setdefault(token, len(order) + 1)
    kinds = [_template(s, roles) for s in p.sentences]
    n = len(p.sentences)
    question_kind = _template(p.question, roles)[0]
    cats: dict[str, str] = {"description": description, "fewshot": fewshot, "question": question_kind}
    nums: dict[str, float] = {"sentences": n, "length": len(p.text()), "shots": len(p.shots)}
    stated = re.match(r"There are (\d+) shapes", p.sentences[0]) if p.sentences else None
    nums["shapes"] = float(stated.group(1)) if stated else math.nan
    position = re.search(r"(\S+) from the (top|bottom)", p.question)
    place = _ordinal(position.group(1)) if position else None
    if place is not None:
        nums["asked_position"] = place if position.group(2) == "bottom" else nums["shapes"] - 1 - place
    bag: Counter = Counter()
    for k, (kind, tokens) in enumerate(kinds):
        bag[f"kind:{kind}"] += 1
        bag[f"tenth{10 * k // max(n, 1)}:{kind}"] += 1
        for slot, token in enumerate(tokens):
            bag[f"slot{slot}:{kind}:{order[token]}"] += 1
    for j in range(1, END + 1):
        kind, tokens = kinds[-j] if j <= n else ("", [])
        cats[f"end{j}"] = kind
        for slot in range(2):
            named = order[tokens[slot]] if slot < len(tokens) else math.nan
            nums[f"end{j}_shape{slot}"] = named
            if "asked_position" in nums and slot < len(tokens):
                nums[f"end{j}_offset{slot}"] = named - 1 - nums["asked_position"]
            bag[f"end{j}:{slot}:{named}"] += 1
        bag[f"end{j}:{kind}"] += 1
    for i, token in enumerate(asked[:2], 1):
        where = [k for k, (_, tokens) in enumerate(kinds) if token in tokens]
        nums[f"q{i}_first"] = where[0] if where else -1
        nums[f"q{i}_last"] = n - 1 - where[-1] if where else -1
        nums[f"q{i}_mentions"] = len(where)
        cats[f"q{i}_first_kind"] = kinds[where[0]][0] if where else ""
        cats[f"q{i}_last_kind"] = kinds[where[-1]][0] if where else ""
        nums[f"q{i}_order"] = order.get(token, math.nan)
        centre = next(
            (
                re.search(r"at \((-?\d+), (-?\d+)\)", p.sentences[k])
                for k in where
                if " at (" in p.sentences[k]
            ),
            None,
        )
        nums[f"q{i}_x"], nums[f"q{i}_y"] = (
            (float(centre[1]), float(centre[2])) if centre else (math.nan, math.nan)
        )
    if len(asked) >= 2:
        cats["order"] = str((nums["q1_first"] > nums["q2_first"]) - (nums["q1_first"] < nums["q2_first"]))
    words = _attribute_words(p.sentences)
    for word in ("small", "large", "red", "blue", "yellow", "green", "square", "circle", "triangle"):
        nums[f"described_{word}"] = words[word]
    cats["query"] = " ".join(re.findall(views.ATTRIBUTE, p.question))
    for _, a in p.shots:
        bag[f"shot:{_answer_token(a, order)}"] += 1
    for a in _other_answers(p.before):
        bag[f"other:{a}"] += 1
    return cats, nums, bag


@functools.lru_cache(maxsize=1 << 14)
def _attribute_words(sentences: tuple[str, ...]) -> Counter:
    """How often each attribute word occurs in a description's sentences, remembered (shared: do
    not change it)."""
    return Counter(re.findall(views.ATTRIBUTE, " ".join(sentences)))


@functools.lru_cache(maxsize=1 << 12)
def _other_answers(before: str) -> list[str]:
    """The answers of the other-canvas examples, in order, remembered (shared: do not change it)."""
    return re.findall(r"^Answer: (.*)$", before, flags=re.MULTILINE)


def _answer_token(answer: str, order: dict[str, int]) -> str:
    """Return an example's answer as a token: a shape as the order it was first named in."""
    shape = answer.lower()
    return f"shape{order[shape]}" if shape in order else answer


def gold_class(trial: dict) -> str:
    """Return the class a learner predicts: the gold answer, or for a shape answer the order in
    which the prompt first names it (``shape3``)."""
    gold = str(trial["goldresp"])
    if len(gold.split()) != 3:
        return gold
    p = _parts(trial["text"])
    order: dict[str, int] = {}
    for text in [*p.sentences, *(q for q, _ in p.shots), p.question]:
        for token in TOKEN.findall(text):
            order.setdefault(token, len(order) + 1)
    return f"shape{order[gold.lower()]}"


def frame(trials: pd.DataFrame, view: views.View) -> tuple[pd.DataFrame, pd.DataFrame, list[dict]]:
    """Return the categorical and numeric feature frames and the bags of ``trials`` seen through
    ``view``."""
    cats, nums, bags = [], [], []
    for trial in trials.to_dict("records"):
        c, n, b = features(view.mask(_parts(trial["text"])), trial["description"], trial["fewshot"])
        cats.append(c)
        nums.append(n)
        bags.append(b)
    return pd.DataFrame(cats).fillna(""), pd.DataFrame(nums), bags


def _logit_rows(cats: pd.DataFrame, nums: pd.DataFrame, bags: list[dict]) -> list[dict]:
    """Return one dict per trial for the logit: ``name=value`` for each categorical feature, the
    bag's counts, numeric features (a missing one as ``name=missing``)."""
    rows = []
    for c, n, b in zip(cats.to_dict("records"), nums.to_dict("records"), bags, strict=True):
        row = {f"{k}={v}": 1.0 for k, v in c.items()} | dict(b)
        for k, v in n.items():
            row[k if v == v else f"{k}=missing"] = v if v == v else 1.0
        rows.append(row)
    return rows


class Logit:
    """A multinomial logit with an L2 penalty (``C``) on every feature, scaled to at most 1."""

    def __init__(self, c: float):
        self.c = c

    def __repr__(self) -> str:
        return f"logit (C {self.c:g})"

    def fit(self, cats: pd.DataFrame, nums: pd.DataFrame, bags: list[dict], y: np.ndarray) -> "Logit":
        """Fit on the features of some trials and their classes; return self."""
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import MaxAbsScaler

        rows = _logit_rows(cats, nums, bags)
        names = sorted({name for row in rows for name in row})
        self.vocabulary = {name: column for column, name in enumerate(names)}
        x = _sparse_rows(rows, self.vocabulary)
        self.scaler = MaxAbsScaler().fit(x)
        self.model = LogisticRegression(C=self.c, max_iter=2000, tol=1e-3).fit(self.scaler.transform(x), y)
        return self

    def predict(self, cats: pd.DataFrame, nums: pd.DataFrame, bags: list[dict]) -> np.ndarray:
        """Return the predicted classes (a feature not seen in fitting is left out)."""
        x = _sparse_rows(_logit_rows(cats, nums, bags), self.vocabulary)
        return self.model.predict(self.scaler.transform(x))


def _sparse_rows(rows: list[dict], vocabulary: dict[str, int]):
    """Return ``rows`` (feature name: number) as a sparse matrix whose columns are ``vocabulary``'s
    (a name it lacks is left out), each row's entries sorted by column: the matrix scikit-learn's
    DictVectorizer makes of them (sorted names), built in a few array calls instead of one Python
    step per value with type checks (the most of a logit's fitting time)."""
    import scipy.sparse as sp

    known = vocabulary.keys()
    rows = [r if r.keys() <= known else {k: v for k, v in r.items() if k in known} for r in rows]
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, rows), dtype=np.int64, count=len(rows)), out=indptr[1:])
    columns = np.fromiter(map(vocabulary.__getitem__, itertools.chain.from_iterable(rows)), dtype=np.intc)
    values = np.fromiter(itertools.chain.from_iterable(map(dict.values, rows)), dtype=np.float64)
    matrix = sp.csr_matrix((values, columns, indptr), shape=(len(rows), len(vocabulary)))
    matrix.sort_indices()
    return matrix


class Trees:
    """Gradient-boosted trees (scikit-learn's histogram learner) on the categorical features
    (ordinal codes, rare values pooled) and the numeric ones."""

    def __repr__(self) -> str:
        return "boosted trees"

    def fit(self, cats: pd.DataFrame, nums: pd.DataFrame, bags: list[dict], y: np.ndarray) -> "Trees":
        """Fit on the features of some trials and their classes; return self."""
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.preprocessing import OrdinalEncoder

        self.columns = (list(cats.columns), [c for c in nums.columns if nums[c].nunique() > 1])
        self.encoder = OrdinalEncoder(
            handle_unknown="use_encoded_value", unknown_value=-1, min_frequency=5, max_categories=200
        ).fit(cats.astype(str))
        x = self._matrix(cats, nums)
        self.model = HistGradientBoostingClassifier(
            max_iter=80,
            learning_rate=0.1,
            max_leaf_nodes=15,
            min_samples_leaf=20,
            l2_regularization=1.0,
            categorical_features=np.arange(x.shape[1]) < cats.shape[1],
            early_stopping=len(y) >= 1000,
            validation_fraction=0.15,
            n_iter_no_change=10,
            random_state=0,
        ).fit(x, y)
        return self

    def _matrix(self, cats: pd.DataFrame, nums: pd.DataFrame) -> np.ndarray:
        """Return the dense matrix: categorical codes first, then the numeric columns (NaN missing)."""
        cats = cats.reindex(columns=self.columns[0], fill_value="").astype(str)
        nums = nums.reindex(columns=self.columns[1])
        return np.hstack([self.encoder.transform(cats), nums.to_numpy(dtype=float)])

    def predict(self, cats: pd.DataFrame, nums: pd.DataFrame, bags: list[dict]) -> np.ndarray:
        """Return the predicted classes."""
        return self.model.predict(self._matrix(cats, nums))


LEARNERS = (lambda: Logit(0.1), Trees)


def _take(data: tuple[pd.DataFrame, pd.DataFrame, list[dict]], mask: np.ndarray):
    """Return the rows of the feature frames and bags where ``mask`` holds."""
    cats, nums, bags = data
    return (
        cats[mask].reset_index(drop=True),
        nums[mask].reset_index(drop=True),
        [b for b, m in zip(bags, mask, strict=True) if m],
    )


def fit_best(data, y: np.ndarray, items: np.ndarray):
    """Return the learner of ``LEARNERS`` fitted on all but every ``HELD_OUT``-th training item that
    is most accurate on those (the first on ties). One thread: the same result on every machine."""
    from threadpoolctl import threadpool_limits

    chosen = np.isin(items, np.unique(items)[::HELD_OUT])
    fitted, scores = [], []
    with threadpool_limits(1):
        for make in LEARNERS:
            fitted.append(make().fit(*_take(data, ~chosen), y[~chosen]))
            scores.append(float(np.mean(fitted[-1].predict(*_take(data, chosen)) == y[chosen])))
    return fitted[int(np.argmax(scores))]


MIN_ITEMS = 8  # a task with fewer items in the set is not audited (the row says so)


def audit_view(
    train: pd.DataFrame, test: pd.DataFrame, view: views.View, gate: float = 0.95
) -> dict[str, object]:
    """Return one task's row for ``view``: the learner chosen on ``train`` (fresh-seed trials), its
    accuracy on ``test`` (the set) with a 95% interval clustered by item (``lo``, ``hi``) and the
    interval at the ``gate`` level (``gate_lo``, ``gate_hi``: the set's views together, see
    ``audit``), the chance rate, and whether the gate's interval holds it; below ``MIN_ITEMS`` items
    no accuracy, not gated."""
    row = {"view": view.name, "blinds": view.blinds, "trials": len(test), "items": test["item"].nunique()}
    row["train_trials"] = len(train)
    if row["items"] < MIN_ITEMS or train["goldresp"].nunique() < 2:
        nothing = dict.fromkeys(("accuracy", "lo", "hi", "gate_lo", "gate_hi", "chance"), math.nan)
        return (
            row
            | nothing
            | {"learner": f"fewer than {MIN_ITEMS} items: not audited", "gated": False, "at_chance": True}
        )
    from threadpoolctl import threadpool_limits

    fitted = fit_best(
        frame(train, view),
        np.array([gold_class(t) for t in train.to_dict("records")]),
        train["item"].to_numpy(),
    )
    with threadpool_limits(1):
        predicted = fitted.predict(*frame(test, view))
    right = predicted == np.array([gold_class(t) for t in test.to_dict("records")])
    sums = test.assign(right=right.astype(int)).groupby("item", sort=True)["right"].agg(["sum", "count"])
    p, lo, hi = clustered_wilson_interval(sums["sum"].tolist(), sums["count"].tolist())
    _, gate_lo, gate_hi = clustered_wilson_interval(sums["sum"].tolist(), sums["count"].tolist(), gate)
    rates = [
        view.chance or chance(t["task"], len(t["expectedresp"]), t["text"]) for t in test.to_dict("records")
    ]
    rate = float(np.mean(rates))
    return row | {
        "learner": repr(fitted),
        "accuracy": p,
        "lo": lo,
        "hi": hi,
        "gate_lo": gate_lo,
        "gate_hi": gate_hi,
        "chance": rate,
        "gated": view is not views.NOTHING,
        "at_chance": bool(gate_lo <= rate <= gate_hi),
    }


COLUMNS = [
    "task",
    "view",
    "blinds",
    "learner",
    "trials",
    "items",
    "train_trials",
    "accuracy",
    "lo",
    "hi",
    "gate_lo",
    "gate_hi",
    "chance",
    "gated",
    "at_chance",
]
FAMILY = 0.95  # the chance that a set whose every view is at chance passes the gate


def audit(trials: pd.DataFrame, training: pd.DataFrame) -> pd.DataFrame:
    """Return the audit of ``trials`` (one row per task and view, the control first): learners
    fitted on ``training`` (fresh-seed trials of the same config), tested on ``trials``. The gate
    holds the set's k views to intervals at 1 - 0.05 / k (Bonferroni), so that a set whose every
    view is at chance passes with probability ``FAMILY`` at least (a 95% interval per view would
    fail such a set about four times in ten with a dozen views)."""
    tasks = [
        t
        for t in views.VIEWS
        if not trials[trials["task"] == t].empty and not training[training["task"] == t].empty
    ]
    gated = sum(
        len(views.VIEWS[t]) for t in tasks if trials[trials["task"] == t]["item"].nunique() >= MIN_ITEMS
    )
    level = 1 - (1 - FAMILY) / max(gated, 1)
    rows = []
    for task in tasks:
        test, train = trials[trials["task"] == task], training[training["task"] == task]
        for view in [views.NOTHING, *views.VIEWS[task]]:
            rows.append({"task": task} | audit_view(train, test, view, level))
    return pd.DataFrame(rows, columns=COLUMNS)


def training_set(manifest: dict) -> pd.DataFrame:
    """Return fresh-seed trials of a set's config (its ``manifest.json``), ``TRAIN_SCALE`` times
    as many items."""
    from common.canvas.generate import SetConfig, generate_set
    from common.canvas.shapes import Geometry

    data = dict(manifest["config"])
    cfg = SetConfig(
        **{k: v for k, v in data.items() if k != "geometry"}, geometry=Geometry(**data["geometry"])
    )
    bigger = dataclasses.replace(cfg, items=cfg.items * TRAIN_SCALE)
    return pd.DataFrame(generate_set(bigger, seed=f"{cfg.seed}:audit").trials)


def _code_digest() -> str:
    """Return a digest of the canvas package's code and the learners' library version."""
    import sklearn

    digest = hashlib.sha256(sklearn.__version__.encode())
    for file in sorted((paths.ROOT / "common" / "canvas").rglob("*.py")):
        digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def audit_set(path: Path, trials: pd.DataFrame, cache: Path | None = None) -> pd.DataFrame:
    """Return the audit (``audit``) of the set at ``path`` (its ``trials``), training on fresh seeds
    of the config in its ``manifest.json``; cached under ``cache`` by the trials, the config and the
    code (None: no cache). Raises DataError when the set has no manifest."""
    manifest_file = path / "manifest.json"
    if not manifest_file.is_file():
        raise DataError(
            f"{paths.shown(manifest_file)} is missing: the audit trains on the set's config "
            "(regenerate the set)"
        )
    manifest = json.loads(manifest_file.read_text())
    key = hashlib.sha256(
        json.dumps([sorted(trials["Key"].tolist()), manifest["config"], _code_digest()]).encode()
    ).hexdigest()[:24]
    stored = cache / f"audit-{key}.json" if cache else None
    if stored and stored.is_file():
        table = pd.DataFrame(json.loads(stored.read_text()), columns=COLUMNS)
        return table.astype(
            {name: float for name in ("accuracy", "lo", "hi", "gate_lo", "gate_hi", "chance")}
        )
    table = audit(trials, training_set(manifest))
    if stored:
        stored.parent.mkdir(parents=True, exist_ok=True)
        stored.write_text(table.to_json(orient="records"))
    return table


def failures(table: pd.DataFrame, set_name: str) -> list[str]:
    """Return one message per gated view whose learner beats chance: which check, which task, the
    figures and what to do."""
    out = []
    for row in table[table["gated"] & ~table["at_chance"].astype(bool)].itertuples():
        out.append(
            f"canvas audit failed on {set_name}: {row.task}, view '{row.view}' (blinds {row.blinds}): "
            f"{row.learner} scores {100 * row.accuracy:.1f}% (95% interval [{100 * row.lo:.1f}, "
            f"{100 * row.hi:.1f}]; the gate's, over the set's views, [{100 * row.gate_lo:.1f}, "
            f"{100 * row.gate_hi:.1f}]) against chance {100 * row.chance:.1f}%: something other than "
            f"what the view blinds tells the answer. Fix the generator of {row.task} "
            "(common/canvas/tasks/) so that the answer is drawn first and that choice independently "
            "of it, regenerate the set, and rerun; do not report this set's results for that task "
            "until then"
        )
    return out
