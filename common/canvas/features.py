"""The audit's features: generic, position-aware features of a (blinded) canvas prompt.

The same features for every task and view, read from the prompt's parts (``views.Parts``) alone:
three kinds, for the two learners of ``learners``:

- categorical: the description type and few-shot style, the question's kind, the kind of each of
  the last ``END`` sentences, the kinds of the first and last sentences naming each asked shape,
  the query's attribute words;
- numeric: counts (sentences, characters, examples, the stated number of shapes), where and how
  often the asked shapes are named (first, last, mentions, their order), their centres, the
  position asked, which shapes the last sentences name (by the order in which the prompt first
  names them, and their offset from the asked position), how often each attribute word occurs in
  the description and how many of the query's words it lacks, and for the two shapes named most
  often apart from the asked ones: their mentions and the kind and place of their last sentence;
- a bag of tokens: each sentence's kind, by tenth of the description and by the slots of the
  shapes it names, the last sentences' kinds and shapes, the examples' answers.

A sentence's kind is its words with each shape name replaced by its role: ``Q1`` and ``Q2`` for
the question's shapes, else ``X1``, ``X2`` or ``X3`` by how many sentences name that shape (a
shape named once is a line's end, an event's only mention, ...); numbers become ``#``.
"""

import functools
import math
import re
from collections import Counter

import pandas as pd

from common.canvas import reading, views

END = 8  # sentences described one by one from the end
TOKEN = re.compile(rf"{reading.SHAPE}|\[asked\]|\[reference\]|\[shape \d+\]")
WORDS = ("small", "large", "red", "blue", "yellow", "green", "square", "circle", "triangle")


def _ordinal(word: str) -> int | None:
    """Return the 0-based index of an ordinal word ("second" -> 1), or None."""
    from common.canvas.tasks.shuffle_tracking import ORDINALS as words

    return words.index(word) if word in words else None


def _kind(sentence: str, roles: dict[str, str]) -> tuple[str, tuple[str, ...]]:
    """Return a sentence's kind (each shape token replaced by its role in ``roles``, numbers by
    ``#``) and its shape tokens in order."""
    tokens = _tokens(sentence)
    return _kind_of(sentence, tuple(roles.get(t, "X") for t in tokens)), tokens


@functools.lru_cache(maxsize=1 << 17)
def _kind_of(sentence: str, roles: tuple[str, ...]) -> str:
    """``_kind`` for the roles of a sentence's tokens in order, remembered: the audit sees the same
    sentences with the same roles across its views and trials."""
    named = iter(roles)
    return re.sub(r"-?\d+", "#", TOKEN.sub(lambda _: next(named), sentence))


@functools.lru_cache(maxsize=1 << 16)
def _tokens(text: str) -> tuple[str, ...]:
    """The shape tokens of a text in order (``TOKEN``), remembered: the views share most sentences."""
    return tuple(TOKEN.findall(text))


@functools.lru_cache(maxsize=1 << 14)
def parts(prompt: str) -> views.Parts:
    """``views.parts`` remembered (parts are frozen): every view of the audit cuts the same prompts."""
    return views.parts(prompt)


def features(p: views.Parts, description: str, fewshot: str) -> tuple[dict, dict, dict]:
    """Return the generic features of a (blinded) prompt's parts: categorical, numeric, and a bag
    of token counts (see the module docstring)."""
    asked = _tokens(p.question)
    texts = [*p.sentences, *(q for q, _ in p.shots), p.question]
    order: dict[str, int] = {}
    for text in texts:
        for token in _tokens(text):
            order.setdefault(token, len(order) + 1)
    mentions = Counter(token for s in p.sentences for token in dict.fromkeys(_tokens(s)))
    roles = {token: f"X{min(count, 3)}" for token, count in mentions.items()}
    roles |= {token: f"Q{i}" for i, token in enumerate(asked[:2], 1)}
    kinds = [_kind(s, roles) for s in p.sentences]
    n = len(p.sentences)
    cats: dict[str, str] = {
        "description": description,
        "fewshot": fewshot,
        "question": _kind(p.question, roles)[0],
    }
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
    _ends(kinds, order, nums, cats, bag)
    lines = _lines(p.sentences)
    for i, token in enumerate(asked[:2], 1):
        _named(f"q{i}", token, kinds, p, nums, cats)
        nums[f"q{i}_order"] = order.get(token, math.nan)
        _placed(f"q{i}", token, lines, nums)
    if len(asked) >= 2:
        cats["order"] = str((nums["q1_first"] > nums["q2_first"]) - (nums["q1_first"] < nums["q2_first"]))
    others = [t for t, _ in sorted(mentions.items(), key=lambda tc: (-tc[1], order[tc[0]])) if t not in asked]
    for i, token in enumerate(others[:2], 1):
        _named(f"x{i}", token, kinds, p, nums, cats)
    words = _attribute_words(p.sentences)
    query = re.findall(views.ATTRIBUTE, p.question)
    for word in WORDS:
        nums[f"described_{word}"] = words[word]
    nums["query_words_missing"] = sum(words[w] == 0 for w in query)
    nums["query_words_rarest"] = min((words[w] for w in query), default=math.nan)
    cats["query"] = " ".join(query)
    for _, a in p.shots:
        bag[f"shot:{_answer_token(a, order)}"] += 1
    for a in _other_answers(p.before):
        bag[f"other:{a}"] += 1
    return cats, nums, bag


def _ends(kinds: list, order: dict[str, int], nums: dict, cats: dict, bag: Counter) -> None:
    """Add the features of the last ``END`` sentences (their kinds, the shapes they name)."""
    n = len(kinds)
    for j in range(1, END + 1):
        kind, tokens = kinds[-j] if j <= n else ("", ())
        cats[f"end{j}"] = kind
        for slot in range(2):
            named = order[tokens[slot]] if slot < len(tokens) else math.nan
            nums[f"end{j}_shape{slot}"] = named
            if "asked_position" in nums and slot < len(tokens):
                nums[f"end{j}_offset{slot}"] = named - 1 - nums["asked_position"]
            bag[f"end{j}:{slot}:{named}"] += 1
        bag[f"end{j}:{kind}"] += 1


def _named(prefix: str, token: str, kinds: list, p: views.Parts, nums: dict, cats: dict) -> None:
    """Add where and how often the description names the shape ``token`` (``<prefix>_first``,
    ``_last`` from the end, ``_mentions``, the kinds of its first and last sentences, its centre)."""
    n = len(kinds)
    where = [k for k, (_, tokens) in enumerate(kinds) if token in tokens]
    nums[f"{prefix}_first"] = where[0] if where else -1
    nums[f"{prefix}_last"] = n - 1 - where[-1] if where else -1
    nums[f"{prefix}_mentions"] = len(where)
    cats[f"{prefix}_first_kind"] = kinds[where[0]][0] if where else ""
    cats[f"{prefix}_last_kind"] = kinds[where[-1]][0] if where else ""
    centre = next(
        (re.search(r"at \((-?\d+), (-?\d+)\)", p.sentences[k]) for k in where if " at (" in p.sentences[k]),
        None,
    )
    nums[f"{prefix}_x"], nums[f"{prefix}_y"] = (
        (float(centre[1]), float(centre[2])) if centre else (math.nan, math.nan)
    )


@functools.lru_cache(maxsize=1 << 12)
def _lines(sentences: tuple[str, ...]) -> dict[str, list[list[str]]]:
    """The lines the description's links make (``reading.chain_lines``), remembered (shared: do not
    change it)."""
    return reading.chain_lines(" ".join(sentences))


def _placed(prefix: str, token: str, lines: dict[str, list[list[str]]], nums: dict) -> None:
    """Add where the shape ``token`` sits on the line of each axis its links put it on: how many
    shapes are below and above it on that line, and its offset from the line's middle (a shape's
    place in the frame, which a rule reading one shape's links can know)."""
    for up in ("Right", "Above"):
        line = next((line for line in lines.get(up, []) if token in line), None)
        index = line.index(token) if line else math.nan
        nums[f"{prefix}_{up}_below"] = index
        nums[f"{prefix}_{up}_above"] = len(line) - 1 - index if line else math.nan
        nums[f"{prefix}_{up}_offset"] = index - (len(line) - 1) / 2 if line else math.nan


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
    which the prompt first names it (``shape3``): an identity means nothing."""
    gold = str(trial["goldresp"])
    if len(gold.split()) != 3:
        return gold
    p = parts(trial["text"])
    order: dict[str, int] = {}
    for text in [*p.sentences, *(q for q, _ in p.shots), p.question]:
        for token in TOKEN.findall(text):
            order.setdefault(token, len(order) + 1)
    return f"shape{order[gold.lower()]}"


def frame(trials: pd.DataFrame, view: views.View) -> tuple[pd.DataFrame, pd.DataFrame, list[dict]]:
    """Return the categorical and numeric feature frames and the bags of ``trials`` seen through
    ``view``."""
    cats, nums, bags = [], [], []
    for text, description, fewshot in zip(
        trials["text"], trials["description"], trials["fewshot"], strict=True
    ):
        c, n, b = features(view.mask(parts(text)), description, fewshot)
        cats.append(c)
        nums.append(n)
        bags.append(b)
    return pd.DataFrame(cats).fillna(""), pd.DataFrame(nums), bags
