"""Surface features of a canvas prompt, and a test of their independence from the gold answer.

The invariant every task keeps (each task's docstring says how): the answer is drawn first, and
every choice the prompt's surface shows (which sentences name the asked shapes and where, in
which order, the kind of each sentence counted from the end, how many there are, how long the
prompt is) is drawn independently of it, or balanced within each answer. ``features`` reads
those choices from the prompt text alone, for a generic list that is the same for every task:

- ``sentences`` and ``length`` (characters; binned into deciles within a stratum by the test);
- ``question``: the question's kind (its words, shape names left out: for shuffle tracking, the
  position asked);
- for each asked shape (the shapes the question names, in its order): ``first_i`` (the index
  of the first sentence of the description naming it), ``last_i`` (of the last one, counted from the end) and
  ``mentions_i`` (how many sentences name it); where the description gives centres,
  ``quadrant_i`` (the signs of its centre's coordinates); with two, ``order`` (which is named
  first), ``last_order`` (which is named last), and ``first_pair_kind`` / ``last_pair_kind`` (the
  kind of the first and the last sentence naming either, with ``Qa`` and ``Qb`` for the two);
- ``end_j`` for j = 1..6: the kind of the j-th sentence from the end (its words, shape names and
  numbers left out: "The _ is removed from the canvas.", "Left of the _ is a _.").

``independence`` tests each feature against the gold answer (a chi-square test of independence
within each stratum of the design, summed over the strata) for each variant (description type
and few-shot style: within one, every item gives one trial, so the trials are independent).
What each task cannot make independent, because it is the skill itself, is listed in
``EXEMPT`` with the reason.
"""

import re

import numpy as np
import pandas as pd
import scipy.stats

from common.canvas import reading

ENDS = 6  # sentences counted from the end
_NUMBER = re.compile(r"-?\d+")

_NAMED = (
    "a query of a full identity names a shape, and the description names it exactly when it is on "
    "the canvas: reading that is the skill"
)
# (task, feature) -> why the feature is the skill itself, not a surface choice
EXEMPT: dict[tuple[str, str], str] = {
    **{
        (task, f"{what}_1"): _NAMED
        for task in ("existence", "count")
        for what in ("first", "last", "mentions")
    },
    ("coordinate", "quadrant_1"): (
        "the subject is beyond the reference in the answer's direction, so with the reference's centre "
        "drawn apart from the answer the subject's leans the answer's way: on a bounded canvas one of the "
        "two centres must (if neither's mean depended on the answer, their difference's would not)"
    ),
    ("existence_tracking", "mentions_1"): (
        "each event naming the asked shape toggles its presence and the first description names it "
        "exactly when it is there at first, so the parity of its mentions is the answer (the kinds of "
        "its events follow from it): the history itself, read by linking every mention"
    ),
}


def asked_shapes(prompt: str) -> list[str]:
    """Return the shapes the question names, in its order."""
    return re.findall(reading.SHAPE, reading.question(prompt))


def template(sentence: str) -> str:
    """Return the kind of a sentence: its words with shape names as ``_`` and numbers as ``#``."""
    return _NUMBER.sub("#", re.sub(reading.SHAPE, "_", sentence))


def features(prompt: str) -> dict[str, object]:
    """Return the generic surface features of a prompt (see the module docstring)."""
    sentences = reading.sentences(reading.description(prompt))
    out: dict[str, object] = {
        "sentences": len(sentences),
        "length": len(prompt),
        "question": template(reading.question(prompt)),
    }
    firsts, lasts = [], []
    for i, shape in enumerate(asked_shapes(prompt), 1):
        where = [k for k, sentence in enumerate(sentences) if shape in sentence]
        first = where[0] if where else -1
        last = len(sentences) - 1 - where[-1] if where else -1
        out |= {f"first_{i}": first, f"last_{i}": last, f"mentions_{i}": len(where)}
        centre = re.search(rf"There is a {shape} at \((-?\d+), (-?\d+)\)", " ".join(sentences))
        if centre:
            out[f"quadrant_{i}"] = "".join(
                "+" if int(v) > 0 else "-" if int(v) < 0 else "0" for v in centre.groups()
            )
        firsts.append(where[0] if where else len(sentences))
        lasts.append(where[-1] if where else -1)
    if len(firsts) == 2:
        out["order"] = (firsts[0] > firsts[1]) - (firsts[0] < firsts[1])
        out["last_order"] = (lasts[0] > lasts[1]) - (lasts[0] < lasts[1])
        asked = asked_shapes(prompt)
        named = [k for k, sentence in enumerate(sentences) if any(shape in sentence for shape in asked)]
        roles = lambda k: _roles(sentences[k], asked)  # noqa: E731
        out["first_pair_kind"] = roles(named[0]) if named else ""
        out["last_pair_kind"] = roles(named[-1]) if named else ""
    for j in range(1, ENDS + 1):
        out[f"end_{j}"] = template(sentences[-j]) if j <= len(sentences) else ""
    return out


def _roles(sentence: str, asked: list[str]) -> str:
    """Return a sentence's kind with the question's shapes as ``Qa``, ``Qb`` and the others ``_``."""
    for shape, role in zip(asked, ("Qa", "Qb"), strict=False):
        sentence = sentence.replace(shape, role)
    return template(sentence)


def gold_class(trial: dict) -> str:
    """Return the gold answer as a class: the answer itself, or for a shape (shuffle tracking) its
    place in the order the description first names the shapes (its identity means nothing)."""
    gold = str(trial["goldresp"])
    if len(gold.split()) != 3:
        return gold
    named = reading.shapes_named(reading.description(trial["text"]))
    return str(named.index(gold.lower()))


def stratum(trial: dict) -> str:
    """Return the design stratum a trial's answer is balanced within: the number of shapes; for
    count, the query type (which attributes the question names: it bounds a count);
    for transitivity the axis (the chain's words tell it: the answer is balanced within it)."""
    words = re.findall(
        r"small|large|red|blue|yellow|green|square|circle|triangle", reading.question(trial["text"])
    )
    query = "+".join(words) if trial["task"] == "count" else ""
    kinds = re.sub(r"small|large", "size", re.sub(r"red|blue|yellow|green", "colour", query))
    kinds = re.sub(r"square|circle|triangle", "kind", kinds)
    if trial["task"] == "transitivity":
        steps = reading.chain_facts(reading.description(trial["text"]))
        kinds = "horizontal" if steps and steps[0][1] in ("Left", "Right") else "vertical"
    return f"{trial['num_shapes']}|{kinds}"


def table(trials: pd.DataFrame) -> pd.DataFrame:
    """Return one row per trial: task, variant (description / few-shot style), stratum, gold class
    and the surface features (``features``)."""
    rows = []
    for trial in trials.to_dict("records"):
        rows.append(
            {
                "task": trial["task"],
                "variant": f"{trial['description']}/{trial['fewshot']}",
                "stratum": stratum(trial),
                "gold": gold_class(trial),
            }
            | features(trial["text"])
        )
    return pd.DataFrame(rows)


MIN_LEVEL = 20  # a feature value seen fewer times in a stratum is pooled with the other rare ones


def _levels(values: pd.Series, name: str) -> pd.Series:
    """Return the values as levels for a contingency table: prompt length in deciles, rare values
    pooled into one level."""
    if name == "length":
        return pd.qcut(values.rank(method="first"), 10, labels=False).astype(str)
    text = values.astype(str)
    counts = text.value_counts()
    return text.where(text.map(counts) >= MIN_LEVEL, "rare")


def chi_square(rows: pd.DataFrame, feature: str) -> tuple[float, int]:
    """Return the chi-square statistic of independence between ``feature`` and the gold class,
    summed over the strata of ``rows``, and its degrees of freedom (0: nothing to test)."""
    total, df = 0.0, 0
    for _, part in rows.groupby("stratum", sort=True):
        if len(part) < 2 * MIN_LEVEL:
            continue
        table_ = pd.crosstab(_levels(part[feature], feature), part["gold"])
        if min(table_.shape) < 2:
            continue
        stat, _, dof, _ = scipy.stats.chi2_contingency(table_.to_numpy(), correction=False)
        total, df = total + float(stat), df + int(dof)
    return total, df


def independence(trials: pd.DataFrame) -> pd.DataFrame:
    """Return one test per (task, variant, feature): the chi-square statistic of independence from
    the gold answer summed over the strata, its degrees of freedom, its p value, and the p value
    after a Bonferroni correction over every test of the table; ``exempt`` gives the reason of a
    feature that is the skill itself (``EXEMPT``; tested all the same, left out of the correction)."""
    rows = table(trials)
    out = []
    for (task, variant), part in rows.groupby(["task", "variant"], sort=True):
        for feature in [c for c in part.columns if c not in ("task", "variant", "stratum", "gold")]:
            if part[feature].isna().all():
                continue
            stat, df = chi_square(part.dropna(subset=[feature]), feature)
            if df:
                p = float(scipy.stats.chi2.sf(stat, df))
                exempt = EXEMPT.get((task, feature), "")
                out.append(
                    {
                        "task": task,
                        "variant": variant,
                        "feature": feature,
                        "chi2": stat,
                        "df": df,
                        "p": p,
                        "exempt": exempt,
                    }
                )
    result = pd.DataFrame(out)
    tested = (result["exempt"] == "").sum()
    result["p_bonferroni"] = np.minimum(1.0, result["p"] * tested)
    return result
