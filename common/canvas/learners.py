"""The audit's learners: a regularised logit and boosted trees on the features of ``features``.

``fit_best`` fits both on most of the training trials and keeps the one more accurate on the
rest (every ``HELD_OUT``-th item held out): the audit (``audit``) then tests it once. Both run on
one thread, so a table is the same on every machine.
"""

import itertools
from collections import Counter

import numpy as np
import pandas as pd

HELD_OUT = 6  # one training item in six chooses the learner
RARE = 3  # a logit feature seen in fewer training trials is left out (it could not be learnt)


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
        seen = Counter(name for row in rows for name in row)
        names = sorted(name for name, count in seen.items() if count >= RARE)
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


def fit_best(data, y: np.ndarray, items: np.ndarray, makers=LEARNERS):
    """Return the learner of ``makers`` (default ``LEARNERS``) fitted on all but every
    ``HELD_OUT``-th training item that is most accurate on those (the first on ties). One thread:
    the same result on every machine."""
    from threadpoolctl import threadpool_limits

    chosen = np.isin(items, np.unique(items)[::HELD_OUT])
    fitted, scores = [], []
    with threadpool_limits(1):
        for make in makers:
            fitted.append(make().fit(*_take(data, ~chosen), y[~chosen]))
            scores.append(float(np.mean(fitted[-1].predict(*_take(data, chosen)) == y[chosen])))
    return fitted[int(np.argmax(scores))]
