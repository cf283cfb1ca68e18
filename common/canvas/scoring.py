"""Scoring canvas responses: the strict reader (the suite's score) and the seed's ``contains`` rule.

``contains`` is the original task's default, kept only for comparison with it: 1 when the gold
answer occurs in the response (case-insensitive), so "10" scores for "0", "not" for "no", and a
response listing every option scores. ``extract`` is the strict reading: it returns the one
answer a response commits to, or None (invalid: no answer, several, or a hedge).

How ``extract`` reads a response:

1. Markdown emphasis is dropped. If the response has an explicit marker ("Answer:", "The answer
   is", "Final answer:"), only the text after the last marker is read.
2. The text is split into sentences; the first sentence holding any answer decides, so a leading
   answer ("Yes. There is no large blue square...") or a leading sentence ("It is below and to
   the right.") is read, and later reasoning does not turn it into a conflict. That answer is
   invalid when its sentence is a question ("Yes? No.", "Below right? Or below left") or a later
   sentence corrects it ("wait", "actually", "I mean", ... with another answer: "It's 2. Wait,
   actually 3.").
3. Within that sentence, by the kind of vocabulary (negated answers, "not 2", "not above",
   "not yes", "not the small red square", are dropped first):
   - directions: the vertical and horizontal words are collected (any order, hyphens, commas,
     "to the"; upper, higher, top and lower, bottom, beneath, underneath as above and below, "up"
     and "down" before left or right or alone: "Down."), negated ones dropped, several at once
     ("not above or below", "not to the left or right", "neither above nor below"); one of each
     combines into "Below Right". Two words on one axis, a combination the vocabulary lacks, a
     hedge ("or", "maybe") or an approximation ("roughly", "about", "right-ish") is invalid;
   - Yes / No: yes, yeah, yep, yup and no, nope, nah as answers ("no doubt" is not one); "no"
     before a noun ("there is no red shape") counts as No only when no sentence gives a yes/no
     answer; both is invalid;
   - counts: digits and number words ("two", "twenty-one") as whole words ("10" is not "0"),
     coordinates "(3, -4)" left out, and "one" in "one at (3, 4)" when another number gives the
     count; several different numbers, a hedge, or an approximation ("at least 2", "about 2")
     is invalid; "none"
     or "no" before a noun ("there are no red shapes") counts as 0 only when no sentence gives a
     number;
   - anything else (shape identities): each option as whole words in any order ("blue large
     square"), separated by spaces, hyphens or commas; more than one option found is invalid.

The response scored is the model's last completion (``raw[-1]``: after the runner's re-prompt,
if one was needed), or ``resp`` when a results file has no ``raw``. The canvas runner
(``run.answer``) decides whether to re-prompt with this same reader, so a reply it credits is
never re-prompted. A record the server refused
(``refused`` set by the shared runner) has no response: it scores 0 and is flagged ``refused``.
"""

import functools
import itertools
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from common import paths, suites
from common.errors import DataError
from common.jsonl import sha256_file
from common.results import find_results_files, parse_results_filename, read_results
from common.scored import ScoredRun, reply_fields
from common.suite import SetRef
from common.worldsense.data import first_trial, load_testset, trials_path

_MARKER = re.compile(r"\b(?:final\s+answer|the\s+answer\s+is|answer)\b\s*[:\-]?\s*", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_HEDGE = re.compile(
    r"\b(?:or|either|maybe|perhaps|possibly|not\s+sure|unclear|can't\s+tell|cannot\s+tell)\b", re.IGNORECASE
)
VERTICAL = ("Above", "Below")
HORIZONTAL = ("Left", "Right")
_DIRECTION_WORDS = {
    "above": "Above",
    "upper": "Above",
    "higher": "Above",
    "top": "Above",
    "up": "Above",
    "below": "Below",
    "lower": "Below",
    "bottom": "Below",
    "beneath": "Below",
    "underneath": "Below",
    "down": "Below",
    "left": "Left",
    "right": "Right",
}
_WORDS = "|".join(w for w in _DIRECTION_WORDS if w not in ("up", "down"))
_SIDE = r"(?=[\s,-]+(?:and\s+)?(?:to\s+the\s+)?(?:left|right)\b)"  # "up" and "down" only before a side
_DIRECTION = re.compile(rf"(?<!\w)({_WORDS}|up{_SIDE}|down{_SIDE})(?!\w)", re.IGNORECASE)
_ALONE = re.compile(r"\W*(up|down)\W*", re.IGNORECASE)  # "Down." alone: a direction
_NEGATED = rf"(?:to\s+the\s+|directly\s+)?(?:{_WORDS}|up|down)"
_NOT_DIRECTION = re.compile(  # "not above", "not to the left or right", "neither above nor below"
    rf"\bnot\s+{_NEGATED}(?:\s*,?\s*(?:or|nor|and|and\s+not)\s+{_NEGATED})*\b|"
    rf"\bneither\s+{_NEGATED}\s+nor\s+{_NEGATED}\b",
    re.IGNORECASE,
)
_APPROXIMATE = re.compile(  # "at least 2", "about 2", "roughly left", "right-ish": no commitment
    r"\b(?:at\s+least|at\s+most|about|around|approximately|roughly|nearly|almost|or\s+so)\b|"
    r"(?<=\w)-?ish\b",
    re.IGNORECASE,
)
_YES = re.compile(r"(?<![\w-])(?:yes|yeah|yep|yup)(?![\w-])", re.IGNORECASE)
_NO = re.compile(r"(?<![\w-])(?:no|nope|nah)(?![\w-])", re.IGNORECASE)
_NOT_YES_NO = re.compile(r"\bnot\s+(?:a\s+)?(?:yes|no)\b|\bno\s+(?:doubt|question)\b", re.IGNORECASE)
_CORRECTION = re.compile(
    r"\b(?:wait|actually|correction|sorry|i\s+mean|on\s+second\s+thought|"
    r"scratch\s+that|rather)\b",
    re.IGNORECASE,
)
_COORDINATES = re.compile(r"\(\s*-?\d+(?:\.\d+)?\s*,\s*-?\d+(?:\.\d+)?\s*\)")
_ONE_AT = re.compile(r"\bone\s+(?=at\s*\()", re.IGNORECASE)  # "one at (3, 4)": a shape, not a count
_NONE = re.compile(r"(?<![\w-])none(?![\w-])", re.IGNORECASE)
_NO_DETERMINER = re.compile(
    r"(?<![\w-])no\s+(?:such\s+|other\s+)?"
    r"(?:small|large|red|blue|yellow|green|square|circle|triangle|shape|one)",
    re.IGNORECASE,
)
NUMBER_WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
]
_NUMBER = re.compile(
    r"(?<![\w.-])(\d+|twenty[\s-](?:one|two|three|four|five|six|seven|eight|nine)|"
    + "|".join(NUMBER_WORDS)
    + r")(?![\w-]|\.\d)",
    re.IGNORECASE,
)
_NOT_NUMBER = re.compile(r"\bnot\s+(?:" + _NUMBER.pattern + r")", re.IGNORECASE)


def contains(expected: str, response: str) -> int:
    """Return 1 if ``expected`` occurs in ``response`` ignoring case, else 0 (the original default scorer)."""
    return int(str(expected).casefold() in str(response).casefold())


def extract(response: str, vocabulary: Sequence[str]) -> str | None:
    """Return the one answer of ``vocabulary`` that ``response`` commits to (spelled as in the
    vocabulary), or None when it gives none, several, or hedges (see the module docstring)."""
    options = [str(option) for option in vocabulary]
    text = re.sub(r"[*_`#]+", " ", str(response))
    markers = list(_MARKER.finditer(text))
    if markers:
        text = text[markers[-1].end() :]
    reader = _reader(options)
    sentences = [sentence.strip() for sentence in _SENTENCE.split(text)]
    for index, sentence in enumerate(sentences):
        found = reader(sentence, options)
        if found is not None:
            return _committed(found, sentence, sentences[index + 1 :], reader, options)
    fallback = _FALLBACKS.get(reader)
    for sentence in sentences if fallback else []:
        found = fallback(sentence, options)
        if found is not None:
            return found or None
    return None


def _committed(found: str, sentence: str, later: list[str], reader, options: list[str]) -> str | None:
    """Return the answer ``found`` in ``sentence``, or None when it is invalid (""), asked as a
    question, or corrected by a ``later`` sentence giving another answer after "wait", "actually"..."""
    if not found or sentence.endswith("?"):
        return None
    for after in later:
        if _CORRECTION.search(after) and reader(after, options) not in (None, found):
            return None
    return found


def _reader(options: list[str]):
    """Return the sentence reader for this kind of vocabulary."""
    if all(word in VERTICAL + HORIZONTAL for option in options for word in option.split()):
        return _directions
    if sorted(options) == ["No", "Yes"]:
        return _yes_no
    if all(option.isdigit() for option in options):
        return _count
    return _options


# A sentence reader returns None when the sentence holds no answer (read on), "" when it holds an
# invalid one (stop: invalid), else the answer.
def _directions(sentence: str, options: list[str]) -> str | None:
    """Read the direction words of a sentence (see the module docstring)."""
    kept = _NOT_DIRECTION.sub(" ", sentence)
    alone = _ALONE.fullmatch(kept)
    words = [_DIRECTION_WORDS[w.lower()] for w in ([alone.group(1)] if alone else _DIRECTION.findall(kept))]
    if not words:
        return None
    vertical = list(dict.fromkeys(w for w in words if w in VERTICAL))
    horizontal = list(dict.fromkeys(w for w in words if w in HORIZONTAL))
    if len(vertical) > 1 or len(horizontal) > 1 or (len(words) > 1 and _HEDGE.search(kept)):
        return ""
    if _APPROXIMATE.search(kept):
        return ""
    answer = " ".join(vertical + horizontal)
    return answer if answer in options else ""


def _yes_no(sentence: str, options: list[str]) -> str | None:
    """Read yes / no answers in a sentence ("no" before a noun is not one: ``_no_determiner``)."""
    kept = _NO_DETERMINER.sub(" ", _NOT_YES_NO.sub(" ", sentence))
    said = {"Yes"} if _YES.search(kept) else set()
    said |= {"No"} if _NO.search(kept) else set()
    if not said:
        return None
    if len(said) > 1 or re.search(r"\b(?:maybe|perhaps|possibly|not\s+sure)\b", sentence, re.IGNORECASE):
        return ""
    return said.pop()


def _no_determiner(sentence: str, options: list[str]) -> str | None:
    """Read "there is no red shape" as No (used when no sentence gives a yes/no answer)."""
    if not _NO_DETERMINER.search(sentence):
        return None
    return "" if re.search(r"\b(?:maybe|perhaps|possibly|not\s+sure)\b", sentence, re.IGNORECASE) else "No"


def _count(sentence: str, options: list[str]) -> str | None:
    """Read the numbers of a sentence, negated ones ("not 2") and coordinates left out, and "one"
    in "one at (3, 4)" when another number gives the count (see the module docstring)."""
    kept = _NOT_NUMBER.sub(" ", _COORDINATES.sub(" ", _ONE_AT.sub(" ", sentence)))
    values = _numbers(kept) or _numbers(_NOT_NUMBER.sub(" ", _COORDINATES.sub(" ", sentence)))
    if not values:
        return None
    if len(values) > 1 or _HEDGE.search(kept) or _APPROXIMATE.search(kept) or values[0] not in options:
        return ""
    return values[0]


def _numbers(text: str) -> list[str]:
    """Return the different numbers of ``text`` (digits and number words), in order."""
    values = []
    for token in _NUMBER.findall(text):
        word = token.lower().replace(" ", "-")
        if word.isdigit():
            values.append(str(int(word)))
        elif word.startswith("twenty-"):
            values.append(str(20 + NUMBER_WORDS.index(word.split("-")[1])))
        else:
            values.append(str(NUMBER_WORDS.index(word)))
    return list(dict.fromkeys(values))


def _no_count(sentence: str, options: list[str]) -> str | None:
    """Read "none" or "there are no red shapes" as 0 (used when no sentence gives a number)."""
    if not (_NONE.search(sentence) or _NO_DETERMINER.search(sentence)):
        return None
    return "0" if "0" in options and not _HEDGE.search(sentence) else ""


def _options(sentence: str, options: list[str]) -> str | None:
    """Read whole-word options of any other vocabulary (shape identities), negated ones ("not the
    small red square") left out."""
    kept = sentence
    for option in options:
        kept = re.sub(
            r"\bnot\s+(?:the\s+|a\s+|an\s+)?" + _pattern(option).pattern, " ", kept, flags=re.IGNORECASE
        )
    found = [option for option in options if _pattern(option).search(kept)]
    if not found:
        return None
    return found[0] if len(found) == 1 and not _HEDGE.search(kept) else ""


_FALLBACKS = {_yes_no: _no_determiner, _count: _no_count}  # weaker readings, when nothing else answers


@functools.lru_cache(maxsize=256)
def _pattern(option: str) -> re.Pattern[str]:
    """Return a regex finding ``option`` as whole words in any order, separated by spaces,
    hyphens or commas ("Large Blue Square" also finds "blue large square")."""
    words = option.split()
    orders = ["[\\s,-]+".join(re.escape(w) for w in order) for order in itertools.permutations(words)]
    return re.compile(r"(?<![\w-])(?:" + "|".join(orders) + r")(?![\w-])", re.IGNORECASE)


def response_text(record: dict[str, Any]) -> str:
    """Return the response a results record is scored on: the last raw completion, else ``resp``."""
    raw = record.get("raw")
    if isinstance(raw, list) and raw:
        return str(raw[-1])
    return str(record.get("resp") or "")


COLUMNS = [
    "Key",
    "item",
    "task",
    "description",
    "fewshot",
    "num_shapes",
    "contains",
    "strict",
    "invalid",
    "refused",
    "draw",
    "answer",
]


def score_rows(trials: pd.DataFrame, results: list[dict[str, Any]]) -> pd.DataFrame:
    """Return one row per answered trial: ``contains`` and ``strict`` (0/1), ``invalid`` (the strict
    reader found no single answer) and ``refused`` (the server refused the request: no answer,
    both scores 0 and ``invalid`` False; tables count these apart and leave them out of accuracy);
    ``draw`` (which repeated answer: 0 for the first) and ``answer`` (the strict reader's, or None).

    ``trials`` needs Key, item, goldresp, expectedresp, task, description, fewshot, num_shapes.
    Results whose Key is not a trial are ignored. Neither input is modified.
    """
    by_key = {trial["Key"]: trial for trial in trials.to_dict("records")}
    rows = []
    for record in results:
        trial = by_key.get(record["Key"])
        if trial is None:
            continue
        refused = bool(record.get("refused"))
        response = "" if refused else response_text(record)
        found = None if refused else extract(response, list(trial["expectedresp"]))
        rows.append(
            {
                "Key": record["Key"],
                "item": trial["item"],
                "task": trial["task"],
                "description": trial["description"],
                "fewshot": trial["fewshot"],
                "num_shapes": trial["num_shapes"],
                "contains": 0 if refused else contains(trial["goldresp"], response),
                "strict": int(found == trial["goldresp"]),
                "invalid": not refused and found is None,
                "refused": refused,
                "draw": int(record.get("draw") or 0),
                "answer": found,
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


# ---- the scorer of the results database (``common.database``) ----------------------------------------
# A canvas set's trials as items (the canvas item, whose variants share a canvas and a question, is
# the unit), each results file scored once by ``score_rows``: ``correct`` is the strict reader's verdict.
CANVAS_FIELDS = ("task", "item")  # in every canvas trial, in no WorldSense one
RULE = "strict"  # the units' rule (the paired tests'): the share of an item's variants right
TRIAL_FIELDS = ("item", "task", "description", "fewshot", "num_shapes", "goldresp", "expectedresp")


def is_canvas_set(testset: str | Path) -> bool:
    """Return whether ``testset`` is a canvas set directory, by content: its trials carry the
    canvas fields (``task``, ``item``; a WorldSense trial has neither), with or without the
    manifest the generator writes beside them."""
    trial = first_trial(testset)
    return trial is not None and all(field in trial for field in CANVAS_FIELDS)


def data_fingerprint(ref: SetRef) -> str:
    """Return the fingerprint of a canvas set's trials: the trials file's SHA-256."""
    return sha256_file(trials_path(ref.data))


def results_files(ref: SetRef) -> list[Path]:
    """Return the results files of a canvas set (results/canvas/<set>/), sorted by name."""
    return find_results_files(ref.results)


def items_frame(ref: SetRef) -> pd.DataFrame:
    """Return a canvas set's trials as the database's items: the canvas item as unit, the task,
    the number of shapes as size, description and few-shot style as variant, the prompt and the
    gold answer, the other fields as JSON; with the trial fields ``score_rows`` reads (not stored)."""
    trials = load_testset(ref.data)
    missing = [f for f in TRIAL_FIELDS if f not in trials.columns]
    if missing:
        raise DataError(f"{trials_path(ref.data)}: not a canvas set: its trials lack {', '.join(missing)}")
    items = pd.DataFrame(
        {
            "Key": trials["Key"],
            "unit": trials["item"].astype(str),
            "task": trials["task"],
            "size": trials["num_shapes"],
            "variant": trials["description"] + " / " + trials["fewshot"],
            "prompt": trials["text"],
            "gold": trials["goldresp"].astype(str),
        }
    )
    others = sorted(c for c in trials.columns if c not in {"Key", "text", "goldresp"})
    items["fields"] = trials[others].to_json(orient="records", lines=True).rstrip("\n").split("\n")
    extra = [f for f in TRIAL_FIELDS if f not in ("task", "goldresp")]  # for score_rows; not stored
    return pd.concat([items, trials[extra]], axis=1)


def score_file(ref: SetRef, file: Path, items: pd.DataFrame) -> ScoredRun:
    """Return a results file of a canvas set scored by ``score_rows`` (every draw): ``correct`` the
    strict verdict, ``contains`` the seed's rule, the reply read and the answer found; the items
    as units (the share of their variants right, draw 0). A file of another suite's records (an
    Already Said That file copied here) is left out with a note."""
    prompting, model = parse_results_filename(file)
    label = model if prompting == "basic" else f"{model} ({prompting})"
    records = read_results(file, all_draws=True)
    writer = suites.writer_of(records)
    if records and (writer is None or writer.record_fields != suites.get("canvas").record_fields):
        kind = writer.name if writer else "unknown"
        note = f"{paths.shown(file)}: {kind} results, not answers to canvas trials; left out"
        return ScoredRun(prompting, model, label, 0, pd.DataFrame(), pd.DataFrame(), notes=[note])
    trials = items.rename(columns={"gold": "goldresp"})
    rows = score_rows(trials, records)
    keys = set(rows["Key"])
    answered = [r for r in records if r["Key"] in keys]
    answers = pd.DataFrame(
        {
            "Key": rows["Key"],
            "draw": rows["draw"],
            "turn": 0,
            "reply": [("" if r.get("refused") else response_text(r)) for r in answered],
            "answer": rows["answer"],
            "correct": rows["strict"],
            "contains": rows["contains"],
            "invalid": rows["invalid"].astype(int),
            "scored": 1,
        }
    )
    fields = pd.DataFrame([reply_fields(r) for r in answered], index=answers.index)
    answers = pd.concat([answers, fields], axis=1)
    first = rows[rows["draw"] == 0]
    units = first.groupby("item", sort=True).agg(
        score=("strict", "mean"), task=("task", "first"), size=("num_shapes", "first")
    )
    units = units.reset_index().assign(unit=lambda u: u["item"].astype(str), rule=RULE, censored=0, refused=0)
    return ScoredRun(prompting, model, label, len(first), answers, units.drop(columns="item"))


def pairs(runs: pd.DataFrame, units: pd.DataFrame) -> list[tuple[int, int, str]]:
    """Return the paired tests of a canvas set's runs: every two runs other than the shortcut
    baselines, in the report's order (``run_order``: the built-in models first)."""
    from common.canvas.shortcuts import SHORTCUTS

    shortcuts = {s.name for s in SHORTCUTS}
    found = []
    for _, group in runs.groupby("set_name", sort=False):
        ids = [r.run_id for r in run_order(group).itertuples() if r.label not in shortcuts]
        found += [(a, b, RULE) for i, a in enumerate(ids) for b in ids[i + 1 :]]
    return found


def run_order(runs: pd.DataFrame) -> pd.DataFrame:
    """Return ``runs`` (rows of the database's ``runs``) in the report's order: the built-in models
    first (their run metadata says ``builtin``), each group by results file."""
    builtin = [bool(json.loads(s or "{}").get("builtin")) for s in runs["settings"]]
    return (
        runs.assign(_builtin=builtin)
        .sort_values(["_builtin", "results_file"], ascending=[False, True], kind="stable")
        .drop(columns="_builtin")
    )
