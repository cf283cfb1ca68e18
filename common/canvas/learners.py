"""Classifiers of the ablation check (``ablation``): pick one of a trial's candidate answers from
categorical features, fitted on some items and applied to others.

The data is ``Rows``: one row per (trial, candidate answer) with the candidate's features
(``label``: the answer itself, where answers mean something; then whatever the task's view
gives), whether it is the gold answer, and the trial's item. Two families of models are fitted:

- ``TableRule(keys)``: majority by feature tuple. For the values a candidate has on ``keys``,
  the share of training candidates with those values that were gold (add-one smoothing); the
  candidate with the highest share wins (ties: the first candidate). Every subset of one or two
  features is a rule, and ``label`` with any two others (an XOR of two features is in reach).
- ``Logit(3)``: a conditional logit (a softmax over the candidates of a trial) on one-hot
  features and all their pairwise products, L2-penalised, fitted by L-BFGS-B (scipy).

``best`` picks one on the training items only, by 2-fold cross-validation split by item, and
keeps the null rule ("always the first candidate", i.e. the answer order) unless a model beats
it by more than one standard error: on a set balanced exactly over its answers, a rule fitted to
noise on one half is wrong more often than chance on the other (the counts it learned are
reversed there), so noise must not be chosen. Everything is deterministic.
"""

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass
class Rows:
    """Candidate rows: integer feature ``codes`` (one column per name of ``names``), the sparse
    one-hot ``design`` (features and their pairs), ``trial`` (rows of a trial adjacent, in
    candidate order), ``item``, ``stratum`` (the item's balancing labels, for the split) and
    ``gold``."""

    names: list[str]
    levels: np.ndarray  # per feature, the number of values it takes over all rows
    codes: np.ndarray
    design: object  # scipy.sparse.csr_matrix
    trial: np.ndarray
    item: np.ndarray
    stratum: np.ndarray
    gold: np.ndarray

    @classmethod
    def build(cls, features: pd.DataFrame, trial, item, stratum, gold) -> "Rows":
        """Return the rows of a table of candidate features (any hashable values)."""
        import scipy.sparse

        names = list(features.columns)
        codes = np.column_stack([pd.factorize(features[n].astype(str), sort=True)[0] for n in names])
        offsets = np.r_[0, np.cumsum(codes.max(axis=0) + 1)]
        ones = codes + offsets[:-1]  # one-hot column of each feature value
        pairs = [
            ones[:, a] * offsets[-1] + ones[:, b] for a, b in itertools.combinations(range(len(names)), 2)
        ]
        columns = np.column_stack([ones, *pairs]) if pairs else ones
        _, columns = np.unique(columns, return_inverse=True)
        columns = columns.reshape(len(features), -1)
        rows = np.repeat(np.arange(len(features)), columns.shape[1])
        design = scipy.sparse.csr_matrix((np.ones(rows.size), (rows, columns.ravel())))
        arrays = (np.asarray(trial), np.asarray(item), np.asarray(stratum), np.asarray(gold, dtype=bool))
        return cls(names, codes.max(axis=0) + 1, codes, design, *arrays)

    def take(self, mask: np.ndarray) -> "Rows":
        """Return the rows where ``mask`` is true (whole trials: masks come from ``item``)."""
        arrays = (self.trial[mask], self.item[mask], self.stratum[mask], self.gold[mask])
        return Rows(self.names, self.levels, self.codes[mask], self.design[mask], *arrays)

    def picked(self, scores: np.ndarray) -> np.ndarray:
        """Return, per trial in increasing order, whether the highest-scoring row (the first on
        ties) is gold."""
        if not len(scores):
            return np.zeros(0, dtype=bool)
        order = np.lexsort((np.arange(len(scores)), -np.round(scores, 9), self.trial))
        first = np.r_[True, self.trial[order][1:] != self.trial[order][:-1]]
        return self.gold[order][first]


class TableRule:
    """Majority by feature tuple (see the module docstring)."""

    def __init__(self, keys: tuple[str, ...]):
        self.keys = keys
        self.known = np.zeros(0, dtype=np.int64)  # the key codes seen in training, sorted
        self.rates = np.zeros(0)

    def __repr__(self) -> str:
        return "table: " + (" x ".join(self.keys) or "first candidate")

    def fit(self, rows: Rows) -> "TableRule":
        """Learn the smoothed share of gold candidates per tuple of values on ``keys``; return self."""
        self.known, inverse = np.unique(self._codes(rows), return_inverse=True)
        hits = np.bincount(inverse, weights=rows.gold, minlength=len(self.known))
        totals = np.bincount(inverse, minlength=len(self.known))
        self.rates = (hits + 1) / (totals + 2)
        return self

    def scores(self, rows: Rows) -> np.ndarray:
        """Return each row's learned share (1/2 for a tuple never seen)."""
        codes = self._codes(rows)
        where = np.clip(np.searchsorted(self.known, codes), 0, max(len(self.known) - 1, 0))
        seen = self.known[where] == codes if len(self.known) else np.zeros(len(codes), dtype=bool)
        return np.where(seen, self.rates[where] if len(self.known) else 0.5, 0.5)

    def _codes(self, rows: Rows) -> np.ndarray:
        """Return one integer per row for its tuple of values on ``keys`` (mixed radix)."""
        code = np.zeros(len(rows.trial), dtype=np.int64)
        for key in self.keys:
            column = rows.names.index(key)
            code = code * (rows.levels[column] + 1) + rows.codes[:, column]
        return code


class Logit:
    """Conditional logit on one-hot features and their pairwise products (see the module docstring)."""

    def __init__(self, l2: float):
        self.l2 = l2
        self.weights = np.zeros(0)

    def __repr__(self) -> str:
        return f"logistic on feature pairs (L2 {self.l2:g})"

    def fit(self, rows: Rows) -> "Logit":
        """Fit the weights on the penalised log-likelihood of the gold candidates; return self."""
        import scipy.optimize

        x, gold = rows.design, rows.gold.astype(float)
        starts = np.flatnonzero(np.r_[True, rows.trial[1:] != rows.trial[:-1]])
        sizes = np.diff(np.r_[starts, len(gold)])

        def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
            """Return the penalised negative log-likelihood of the gold candidates and its gradient."""
            scores = x @ w
            top = np.maximum.reduceat(scores, starts)
            exp = np.exp(scores - np.repeat(top, sizes))
            total = np.add.reduceat(exp, starts)
            p = exp / np.repeat(total, sizes)
            nll = float(np.sum(np.log(total) + top) - gold @ scores)
            return nll + self.l2 * float(w @ w) / 2, x.T @ (p - gold) + self.l2 * w

        start = np.zeros(x.shape[1])
        options = {"maxiter": 200}
        self.weights = scipy.optimize.minimize(loss, start, jac=True, method="L-BFGS-B", options=options).x
        return self

    def scores(self, rows: Rows) -> np.ndarray:
        """Return each row's linear score."""
        return rows.design @ self.weights


def models(names: list[str]) -> list:
    """Return the unfitted models searched over: the null rule (first), every table rule on one or
    two of ``names`` and on ``label`` with two others, and the logit."""
    rules = [TableRule(())]
    rules += [TableRule(keys) for size in (1, 2) for keys in itertools.combinations(names, size)]
    if "label" in names:
        others = [n for n in names if n != "label"]
        rules += [TableRule(("label", *pair)) for pair in itertools.combinations(others, 2)]
    return [*rules, Logit(3.0)]


def accuracy(model, rows: Rows) -> float:
    """Return the share of the trials of ``rows`` on which ``model`` picks the gold candidate."""
    picked = rows.picked(model.scores(rows))
    return float(picked.mean()) if len(picked) else 0.0


def folds(rows: Rows, k: int = 2) -> list[np.ndarray]:
    """Return masks of ``k`` folds of the items, split by item (the variants of an item never sit
    in two folds) and stratified: the items of each stratum go to the folds in turn (in order of
    first appearance, starting with the fold that has fewest items), so every fold holds each
    stratum, answers included, about equally. (An exactly balanced set split at random puts a
    little more of some answer in one part and less in the other, and a model fitted to that
    scores below chance on the other part.)"""
    fold: dict[object, int] = {}
    sizes = [0] * k
    turn: dict[object, int] = {}
    for item, stratum in zip(rows.item.tolist(), rows.stratum.tolist(), strict=True):
        if item not in fold:
            chosen = turn.get(stratum, sizes.index(min(sizes)))
            fold[item] = chosen
            turn[stratum] = (chosen + 1) % k
            sizes[chosen] += 1
    assigned = np.array([fold[item] for item in rows.item.tolist()])
    return [assigned == f for f in range(k)]


def halves(rows: Rows) -> tuple[np.ndarray, np.ndarray]:
    """Return the masks of two stratified halves of the items (``folds`` with k = 2)."""
    first, second = folds(rows, 2)
    return first, second


def cross_validated(model, rows: Rows, k: int = 4) -> float:
    """Return the share of trials ``model`` gets right when each of ``k`` folds is predicted by the
    model fitted on the others."""
    right = 0
    for mask in folds(rows, k):
        if mask.any() and (~mask).any():
            right += int(rows.take(mask).picked(model.fit(rows.take(~mask)).scores(rows.take(mask))).sum())
    return right / len(np.unique(rows.trial))


def best(rows: Rows):
    """Return the model of ``models`` with the best 4-fold cross-validated accuracy on ``rows``
    (split by item; the earlier, simpler model on ties), refitted on all of ``rows``; the null
    rule unless the best beats it by more than one standard error (see the module docstring)."""
    scored = [(cross_validated(m, rows), m) for m in models(rows.names)]
    null, top = scored[0][0], max(score for score, _ in scored)
    if top - null <= math.sqrt(max(null * (1 - null), 0.05) / len(set(rows.item.tolist()))):
        return scored[0][1].fit(rows)
    return next(model for score, model in scored if score == top).fit(rows)


def cross_fit(rows: Rows) -> tuple[np.ndarray, list[str]]:
    """Return whether each trial of ``rows`` (in increasing order) is answered right by the
    ``best`` model fitted on the other half of the items (``halves``), and the two models chosen."""
    right = np.zeros(len(np.unique(rows.trial)), dtype=bool)
    index = {trial: i for i, trial in enumerate(np.unique(rows.trial).tolist())}
    chosen = []
    first, second = halves(rows)
    for train, test in ((first, second), (second, first)):
        model = best(rows.take(train))
        chosen.append(repr(model))
        tested = rows.take(test)
        right[[index[t] for t in np.unique(tested.trial).tolist()]] = tested.picked(model.scores(tested))
    return right, chosen
