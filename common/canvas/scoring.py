"""Scoring canvas responses: the reader (the suite's score) and the seed's ``contains`` rule.

``contains`` is the original task's default, kept only for comparison with it: 1 when the gold
answer occurs in the response (case-insensitive), so "10" scores for "0", "not" for "no", and a
response listing every option scores. ``extract`` reads a response for its final answer, as a
careful human grader would, or returns None (invalid: no answer, two live answers, a hedge).

How ``extract`` reads a response:

1. Markdown emphasis is dropped and the text is cut into sentences (at . ! ? ; and line breaks,
   not inside "2.0"); asides in brackets are set apart ("3 (not 2)").
2. Each sentence is read for an answer (below). A sentence that states a conclusion ("Answer:",
   "The answer is", "Final answer", "so", "therefore", "thus", "hence") is read from its last such
   word; a reason it gives ("because", "since", ", which", ", as") is left out.
3. The final answer: a concluding sentence, a retraction ("wait", "actually", "hmm", "no,", "on
   reflection", "I mean", "sorry", "correction", "on second thought", "let me re-check") or a
   sentence naming the asked position ("... is second from the top") replaces
   whatever came before; otherwise the first answer stands, and reasoning sentences after it that
   mention other options do not change it ("Yes. I went through the events: ..."), but a second
   bare answer that differs from it ("2; 3.", "Yes. No.") leaves two live answers: invalid. A
   hedge in the deciding sentence ("probably", "most likely", "maybe", "or", "I guess", "not
   sure", "at least", "about", "right-ish") is invalid; so is an answer asked as a question.
4. Within a sentence, by the kind of vocabulary (negated answers, "not 2", "not above", "not the
   small red square", are dropped first):
   - directions: vertical and horizontal words in any order, with hyphens, commas or "to the"
     (upper, higher, top, up and lower, bottom, beneath, underneath, down; north, south, east,
     west and their compounds), one of each combining into "Below Right"; with the question, a
     relation stated the other way round ("the square is above the triangle" when asked where
     the triangle is relative to the square) is turned round. Two words on one axis, or a
     combination the vocabulary lacks, is invalid;
   - Yes / No: yes, yeah, yep, yup and no, nope, nah ("Certainly." and "Absolutely not." as a
     whole sentence too); a statement of presence or absence ("it is
     not in the canvas", "there isn't one", "it is still there") when the sentence has neither;
     "no" before a noun ("there is no red shape") counts as No only when no sentence gives one;
   - counts: digits (also "2.0") and number words as whole words ("10" is not "0"), coordinates
     "(3, -4)" and the stated number of shapes ("there are 8 shapes", "out of 8") left out, "one"
     in "one at (3, 4)" when another number gives the count; several numbers is invalid; "none"
     or "no" before a noun counts as 0 only when no sentence gives a number;
   - anything else (shape identities): each option as whole words in any order, separated by
     spaces, hyphens or commas; when a sentence names several, the clause holding the asked
     position ("second from the top"), else invalid.

The response scored is the model's last completion (``raw[-1]``: after the runner's re-prompt,
if one was needed), or ``resp`` when a results file has no ``raw``. The canvas runner
(``run.answer``) decides whether to re-prompt with this same reader, so a reply it credits is
never re-prompted. A record the server refused (``refused`` set by the shared runner) has no
response: it scores 0 and is flagged ``refused``.
"""

import functools
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from common import paths, suites
from common.errors import DataError
from common.jsonl import sha256_file
from common.pictures.modality import MODALITIES, TEXT, record_modality
from common.results import find_results_files, parse_results_filename, read_results
from common.scored import ScoredRun, reply_columns
from common.suite import SetRef
from common.worldsense.data import first_trial, load_testset, trials_path

SHAPE = r"(?:small|large) (?:red|blue|yellow|green) (?:square|circle|triangle)"
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_ASIDE = re.compile(r"\(([^()]*)\)")
_CONCLUSION = re.compile(
    r"(?:\b(?:(?:the\s+)?(?:final|correct|short)\s+answer|(?:the|my)\s+answer)\s*(?:is|would\s+be|:|-)"
    r"|^\s*answer\s*[:\-]|\b(?:so|therefore|thus|hence|consequently)\b,?)\s*",
    re.IGNORECASE,
)
_NO_COMMA = re.compile(
    r"^\W*(?:no|nope),", re.IGNORECASE
)  # "Left. No, right.": a retraction, unless no is an answer
_RETRACTION = re.compile(
    r"^\W*(?:wait|actually|hmm+|h?m+|oh|oops|correction|sorry|i\s+mean|scratch\s+that|rather|"
    r"hold\s+on|on\s+(?:second\s+thought|reflection|closer\s+look)|let\s+me\s+re-?(?:check|consider|think)|"
    r"re-?checking|i\s+was\s+wrong)(?!\w)|\b(?:wait|actually|i\s+mean|on\s+(?:second\s+thought|reflection))\b",
    re.IGNORECASE,
)
_REASON = re.compile(
    r"(?:,\s*|\s+)(?:because|since|given\s+that|due\s+to)\b.*$|,\s*(?:which|as|where)\b.*$", re.I
)
_HEDGE = re.compile(
    r"\b(?:or|either|maybe|perhaps|possibly|probably|likely|might|i\s+guess|i\s+suppose|presumably|"
    r"not\s+sure|unsure|uncertain|unclear|can't\s+tell|cannot\s+tell|could\s+be|may\s+be)\b",
    re.IGNORECASE,
)
_APPROXIMATE = re.compile(  # no commitment to a count or a direction: "at least 2", "right-ish"
    r"\b(?:at\s+least|at\s+most|about|around|approximately|roughly|nearly|almost|or\s+so)\b|(?<=\w)-?ish\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"\b(?:not|neither|nor)\b[^,.;:()]*", re.IGNORECASE)  # "not to the left or right"
VERTICAL = ("Above", "Below")
HORIZONTAL = ("Left", "Right")
_DIRECTION_WORDS = {
    "above": "Above",
    "upper": "Above",
    "higher": "Above",
    "top": "Above",
    "up": "Above",
    "north": "Above",
    "below": "Below",
    "lower": "Below",
    "bottom": "Below",
    "beneath": "Below",
    "underneath": "Below",
    "down": "Below",
    "south": "Below",
    "left": "Left",
    "west": "Left",
    "right": "Right",
    "east": "Right",
}
_COMPASS = re.compile(r"\b(north|south)-?(east|west)(?:ern)?\b", re.IGNORECASE)
_WORDS = "|".join(w for w in _DIRECTION_WORDS if w not in ("up", "down"))
_SIDE = r"(?=[\s,-]+(?:and\s+)?(?:to\s+the\s+)?(?:left|right)\b)"  # "up" and "down" only before a side
_DIRECTION = re.compile(rf"(?<!\w)({_WORDS}|up{_SIDE}|down{_SIDE})(?!\w)", re.IGNORECASE)
_ALONE = re.compile(r"\W*(up|down)\W*", re.IGNORECASE)  # "Down." alone: a direction
_NEGATED = rf"(?:to\s+the\s+|directly\s+)?(?:{_WORDS}|up|down)"
_NOT_DIRECTION = re.compile(
    rf"\bnot\s+{_NEGATED}(?:\s*,?\s*(?:or|nor|and|and\s+not)\s+{_NEGATED})*\b|"
    rf"\bneither\s+{_NEGATED}\s+nor\s+{_NEGATED}\b",
    re.IGNORECASE,
)
_RELATIVE = re.compile(r"\b(?:relative\s+to|compared\s+(?:to|with)|from|of)\s*$", re.IGNORECASE)
_YES = re.compile(
    r"(?<![\w-])(?:yes|yeah|yep|yup)(?![\w-])|^\W*(?:absolutely|certainly|definitely|of\s+course)\W*$",
    re.IGNORECASE,
)
_NO = re.compile(
    r"(?<![\w-])(?:no|nope|nah)(?![\w-])|^\W*(?:absolutely|certainly|definitely|of\s+course)\s+not\W*$",
    re.IGNORECASE,
)
_NOT_YES_NO = re.compile(r"\bnot\s+(?:a\s+)?(?:yes|no)\b|\bno\s+(?:doubt|question)\b", re.IGNORECASE)
_ABSENT = re.compile(
    r"\bnothing\b|\b(?:is|are)\s*(?:n't|\s+not|\s+no\s+longer)\s+(?:in|on|there|present)\b|\b(?:is|are)\s+absent\b|"
    r"\bnot\s+(?:in|on)\s+the\s+canvas\b|\bthere\s+(?:is|are)\s*(?:n't|\s+not)\b|"
    r"\b(?:does|do)\s*(?:n't|\s+not)\s+exist\b|\bno\s+longer\s+(?:there|present|in|on)\b",
    re.IGNORECASE,
)
_PRESENT = re.compile(
    r"\b(?:is|are)\s+(?:still\s+)?(?:in|on)\s+the\s+canvas\b|\b(?:is|are)\s+(?:still\s+)?(?:there|present)\b|"
    r"\bexists\b|\bthere\s+is\s+(?:still\s+)?(?:one|a|an)\b",
    re.IGNORECASE,
)
_PAST = re.compile(
    r"\b(?:was|were|initially|at\s+first|originally|at\s+the\s+start|then|before|after)\b", re.I
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
_NUMBER_TOKEN = r"\d+(?:\.0+)?|twenty[\s-](?:one|two|three|four|five|six|seven|eight|nine)|" + "|".join(
    NUMBER_WORDS
)
_NUMBER = re.compile(rf"(?<![\w.-])({_NUMBER_TOKEN})(?![\w-]|\.\d)", re.IGNORECASE)
_NOT_NUMBER = re.compile(rf"\bnot\s+(?:{_NUMBER_TOKEN})\b", re.IGNORECASE)


def contains(expected: str, response: str) -> int:
    """Return 1 if ``expected`` occurs in ``response`` ignoring case, else 0 (the original default scorer)."""
    return int(str(expected).casefold() in str(response).casefold())


@dataclass(frozen=True)
class Question:
    """What the reader uses of the question: the subject and reference of a relation question,
    the asked position of a shuffle question."""

    subject: str = ""
    reference: str = ""
    position: str = ""  # "second from the top"

    @classmethod
    def parse(cls, question: str | None) -> "Question":
        """Return what ``question`` asks (empty fields for what it does not say)."""
        text = str(question or "")
        pair = re.search(rf"Where is the ({SHAPE}) relative to the ({SHAPE})\?", text)
        where = re.search(r"What shape is (\S+ from the (?:top|bottom))\?", text)
        return cls(
            subject=pair.group(1) if pair else "",
            reference=pair.group(2) if pair else "",
            position=where.group(1) if where else "",
        )


@dataclass(frozen=True)
class Statement:
    """An answer a sentence gives: its value ("" for an invalid one), whether the sentence concludes
    or retracts, and whether it is bare (says little but the answer)."""

    value: str
    decisive: bool
    bare: bool


def extract(response: str, vocabulary: Sequence[str], question: str | None = None) -> str | None:
    """Return the final answer of ``vocabulary`` that ``response`` commits to (spelled as in the
    vocabulary), or None when it gives none, two live ones, or hedges (see the module docstring).
    ``question`` (the trial's) lets a relation stated the other way round, or a shape named beside
    the asked position, be read."""
    return _read(str(response), tuple(str(option) for option in vocabulary), question)


@functools.lru_cache(maxsize=65536)
def _read(response: str, vocabulary: tuple[str, ...], question: str | None) -> str | None:
    """``extract``, remembered: the built-in models give the same reply to the same question in
    many runs, and a set's rescoring reads each of those once."""
    options = list(vocabulary)
    reader = _reader(options)
    asked = Question.parse(question)
    text = re.sub(r"[*_`#]+", " ", str(response))
    statements = []
    for sentence in (s.strip() for s in _SENTENCE.split(text)):
        found = _statement(sentence, options, reader, asked)
        if found is not None:
            statements.append(found)
    if statements:
        return _final(statements)
    fallback = _FALLBACKS.get(reader)
    for sentence in _SENTENCE.split(text) if fallback else []:
        found = fallback(sentence, options)
        if found is not None:
            return found or None
    return None


def _final(statements: list[Statement]) -> str | None:
    """Return the final answer of a response's statements (step 3 of the module docstring)."""
    live: list[Statement] = []
    for statement in statements:
        if statement.decisive or not live:
            live = [statement]
        elif statement.bare and statement.value != live[-1].value:
            live.append(statement)
    values = {statement.value for statement in live}
    return values.pop() or None if len(values) == 1 else None


def _statement(sentence: str, options: list[str], reader, asked: Question) -> Statement | None:
    """Return the answer ``sentence`` gives, or None when it gives none."""
    if not sentence:
        return None
    retracts = bool(_RETRACTION.search(sentence) or (reader is not _yes_no and _NO_COMMA.search(sentence)))
    asides = [a for a in _ASIDE.findall(sentence) if not _COORDINATES.fullmatch(f"({a})")]
    main = _ASIDE.sub(lambda m: m.group(0) if _COORDINATES.fullmatch(m.group(0)) else " ", sentence)
    cut = list(_CONCLUSION.finditer(main))
    concludes = bool(cut) and bool(main[cut[-1].end() :].strip(" .!?:"))
    part = main[cut[-1].end() :] if concludes else main
    part = _REASON.sub("", part) or part
    if retracts:
        part = _RETRACTION.sub(" ", part if reader is _yes_no else _NO_COMMA.sub(" ", part))
    value = reader(part, options, asked)
    if value is None and asides and not part.strip(" .,;:!?"):
        value = reader(" ".join(asides), options, asked)
    if value is None:
        return None
    if value and (sentence.rstrip().endswith("?") or _HEDGE.search(_NEGATION.sub(" ", part))):
        value = ""
    words = len(re.findall(r"[A-Za-z0-9]+", part))
    names_position = bool(asked.position) and asked.position.lower() in sentence.lower()
    return Statement(value, concludes or retracts or names_position, words <= 8)


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
# invalid one, else the answer.
def _directions(sentence: str, options: list[str], asked: Question) -> str | None:
    """Read the direction words of a sentence, turned round when it relates the reference to the
    subject (see the module docstring)."""
    text = _COMPASS.sub(lambda m: f"{m.group(1)} {m.group(2)}", sentence)
    kept = _NOT_DIRECTION.sub(" ", text)
    alone = _ALONE.fullmatch(kept)
    found = [alone] if alone else list(_DIRECTION.finditer(kept))
    if not found:
        return None
    words = [_DIRECTION_WORDS[m.group(1).lower()] for m in found]
    vertical = list(dict.fromkeys(w for w in words if w in VERTICAL))
    horizontal = list(dict.fromkeys(w for w in words if w in HORIZONTAL))
    if len(vertical) > 1 or len(horizontal) > 1 or _APPROXIMATE.search(kept):
        return ""
    if _turned_round(kept[: found[0].start()], asked):
        vertical = [{"Above": "Below", "Below": "Above"}[w] for w in vertical]
        horizontal = [{"Left": "Right", "Right": "Left"}[w] for w in horizontal]
    answer = " ".join(vertical + horizontal)
    return answer if answer in options else ""


def _names(shape: str, other: str) -> list[str]:
    """Return the ways a reply may name ``shape`` apart from ``other``: its full name, and its kind,
    colour+kind or size+kind when those tell it from the other shape."""
    size, colour, kind = shape.split()
    out = [shape]
    for short in (f"{colour} {kind}", f"{size} {kind}", kind):
        if not re.search(rf"\b{short}\b", other):
            out.append(short)
    return out


def _turned_round(before: str, asked: Question) -> bool:
    """Return whether the text before a sentence's first direction word names the reference as
    what the direction is said of (last named there, and not after "relative to" / "from")."""
    if not asked.subject:
        return False
    last = {}
    for role, shape, other in (("s", asked.subject, asked.reference), ("r", asked.reference, asked.subject)):
        for name in _names(shape, other):
            for match in re.finditer(rf"\b{name}\b", before, re.IGNORECASE):
                last[role] = max(last.get(role, -1), match.start())
    if "r" not in last or last.get("s", -1) > last["r"]:
        return False
    return not _RELATIVE.search(before[: last["r"]].rstrip().removesuffix("the").rstrip())


def _yes_no(sentence: str, options: list[str], asked: Question) -> str | None:
    """Read yes / no answers in a sentence, else a present-tense statement of presence or absence
    ("no" before a noun is not an answer here: ``_no_determiner``)."""
    kept = _NO_DETERMINER.sub(" ", _NOT_YES_NO.sub(" ", sentence))
    said = {"Yes"} if _YES.search(kept) else set()
    said |= {"No"} if _NO.search(kept) else set()
    if not said and not _PAST.search(sentence):
        said = {"No"} if _ABSENT.search(sentence) else {"Yes"} if _PRESENT.search(sentence) else set()
    if not said:
        return None
    return said.pop() if len(said) == 1 else ""


def _no_determiner(sentence: str, options: list[str]) -> str | None:
    """Read "there is no red shape" as No (used when no sentence gives a yes/no answer)."""
    if not _NO_DETERMINER.search(sentence):
        return None
    return "" if _HEDGE.search(sentence) else "No"


def _count(sentence: str, options: list[str], asked: Question) -> str | None:
    """Read the numbers of a sentence: negated ones ("not 2"), coordinates and the restated number
    of shapes left out, and "one" in "one at (3, 4)" when another number gives the count."""
    total = max(int(option) for option in options)
    stated = rf"(?:{total}|{NUMBER_WORDS[total] if total < len(NUMBER_WORDS) else total})"
    restated = re.compile(
        rf"\b(?:out\s+of|of\s+(?:the|all)|among(?:\s+the)?|all)\s+{stated}\b|"
        rf"\b{stated}\s+(?:shapes|objects)(?=\s*(?:$|[.,;:]|in\b|on\b|total\b|and\b|altogether\b))",
        re.IGNORECASE,
    )

    def clean(text: str) -> str:
        return _NOT_NUMBER.sub(" ", _COORDINATES.sub(" ", restated.sub(" ", text)))

    base = clean(sentence)
    values = _numbers(clean(_ONE_AT.sub(" ", sentence))) or _numbers(base)
    if not values:
        return None
    if len(values) > 1 or values[0] not in options or _APPROXIMATE.search(base):
        return ""
    return values[0]


def _numbers(text: str) -> list[str]:
    """Return the different numbers of ``text`` (digits, "2.0" and number words), in order."""
    values = []
    for token in _NUMBER.findall(text):
        word = token.lower().replace(" ", "-")
        if word.replace(".", "").isdigit():
            values.append(str(int(float(word))))
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


def _options(sentence: str, options: list[str], asked: Question) -> str | None:
    """Read whole-word options of any other vocabulary (shape identities), negated ones ("not the
    small red square") left out; of several, the one in the clause holding the asked position."""
    kept = sentence
    for option in options:
        kept = re.sub(
            r"\bnot\s+(?:the\s+|a\s+|an\s+)?" + _pattern(option).pattern, " ", kept, flags=re.IGNORECASE
        )
    found = [option for option in options if _pattern(option).search(kept)]
    if len(found) > 1 and asked.position:
        for clause in re.split(r",\s*(?:and|but|while|whereas)\b|;|\bwhile\b|\bwhereas\b", kept):
            if asked.position.lower() in clause.lower():
                found = [option for option in options if _pattern(option).search(clause)]
                break
    if not found:
        return None
    return found[0] if len(found) == 1 else ""


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


def score_rows(
    trials: pd.DataFrame, results: list[dict[str, Any]], by_key: dict[Any, dict[str, Any]] | None = None
) -> pd.DataFrame:
    """Return one row per answered trial: ``contains`` and ``strict`` (0/1), ``invalid`` (the strict
    reader found no single answer) and ``refused`` (the server refused the request: no answer,
    both scores 0 and ``invalid`` False; tables count these apart and leave them out of accuracy);
    ``draw`` (which repeated answer: 0 for the first) and ``answer`` (the strict reader's, or None).

    ``trials`` needs Key, item, goldresp, expectedresp, task, description, fewshot, num_shapes
    (and ``question``, when it has it, for the reader).
    Results whose Key is not a trial are ignored. Neither input is modified. ``by_key``: the
    trials' fields by Key (``_by_key``), when the caller has them already.
    """
    by_key = by_key if by_key is not None else _by_key(trials)
    rows = []
    for record in results:
        trial = by_key.get(record["Key"])
        if trial is None:
            continue
        refused = bool(record.get("refused"))
        response = "" if refused else response_text(record)
        found = None if refused else extract(response, list(trial["expectedresp"]), trial.get("question"))
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


def _by_key(trials: pd.DataFrame) -> dict[Any, dict[str, Any]]:
    """Return the fields ``score_rows`` reads of each trial (not the prompts' texts), by Key."""
    read = [c for c in ("Key", *TRIAL_FIELDS, "question") if c in trials]
    return {trial["Key"]: trial for trial in trials[read].to_dict("records")}


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
    gold answer, the other fields as JSON; with the trial fields ``score_rows`` reads (not stored).
    In a picture set also ``image`` (the trial's canvas picture) and ``shown`` (its prompt in each
    picture modality: the question of a picture run's answers; not stored with the items)."""
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
    others = [c for c in others if c != "modalities"]  # a picture set's prompts: the answers' questions
    items["fields"] = trials[others].to_json(orient="records", lines=True).rstrip("\n").split("\n")
    if "picture" in trials.columns:  # a picture set: each trial's canvas, stored once in the database
        items["image"] = [
            None if p != p else str(ref.data / "images" / f"{p}.png") for p in trials["picture"]
        ]
        items["shown"] = trials["modalities"]
    # the fields score_rows reads beside the stored ones (not stored: they are in ``fields``)
    extra = [f for f in (*TRIAL_FIELDS, "question") if f not in ("task", "goldresp") and f in trials]
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
    trials, by_key = _set_trials(items)
    rows = score_rows(trials, records, by_key)
    keys = set(rows["Key"])
    answered = [r for r in records if r["Key"] in keys]
    modality = record_modality(records[0]) if records else TEXT
    answers = pd.DataFrame(
        {
            "Key": rows["Key"],
            "draw": rows["draw"],
            "turn": 0,
            "question": _shown(items, rows["Key"], modality),
            "reply": [("" if r.get("refused") else response_text(r)) for r in answered],
            "answer": rows["answer"],
            "correct": rows["strict"],
            "contains": rows["contains"],
            "invalid": rows["invalid"].astype(int),
            "scored": 1,
        }
    )
    fields = pd.DataFrame(reply_columns(answered), index=answers.index)
    answers = pd.concat([answers, fields], axis=1)
    first = rows[rows["draw"] == 0]
    units = first.groupby("item", sort=True).agg(
        score=("strict", "mean"), task=("task", "first"), size=("num_shapes", "first")
    )
    units = units.reset_index().assign(unit=lambda u: u["item"].astype(str), rule=RULE, censored=0, refused=0)
    return ScoredRun(
        prompting, model, label, len(first), answers, units.drop(columns="item"), modality=modality
    )


def _set_trials(items: pd.DataFrame) -> tuple[pd.DataFrame, dict[Any, dict[str, Any]]]:
    """Return a set's items (``items_frame``, which the database reads once per set and passes to
    every file's ``score_file`` unchanged) as trials, and their fields by Key: worked out once per
    set, not once per file."""
    if _SET[0] is not items:
        trials = items.rename(columns={"gold": "goldresp"})
        _SET[:] = [items, (trials, _by_key(trials))]
    return _SET[1]


_SET: list[Any] = [None, None]  # the items ``_set_trials`` saw last (held, so never another's id)


def _shown(items: pd.DataFrame, keys: pd.Series, modality: str) -> list[str | None]:
    """Return the prompt each of ``keys`` was asked in ``modality`` (a picture modality's, from the
    items' ``shown``); None for text (the item's own prompt)."""
    if modality == TEXT or "shown" not in items.columns:
        return [None] * len(keys)
    by_key = dict(zip(items["Key"], items["shown"], strict=True))
    return [(by_key.get(key) or {}).get(modality) for key in keys]


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
    first (their run metadata says ``builtin``), each group by results file, a run's modalities
    together (text, image, text+image)."""
    # a run without metadata (settings NULL: NaN beside other runs' text) is no built-in
    builtin = [
        bool(json.loads(s).get("builtin")) if isinstance(s, str) and s else False for s in runs["settings"]
    ]
    modality = runs["modality"] if "modality" in runs else pd.Series(TEXT, index=runs.index)
    file = [str(f).replace(f"-{m}___", "___", 1) for f, m in zip(runs["results_file"], modality, strict=True)]
    rank = [MODALITIES.index(m) if m in MODALITIES else 0 for m in modality]
    return (
        runs.assign(_builtin=builtin, _file=file, _rank=rank)
        .sort_values(["_builtin", "_file", "_rank"], ascending=[False, True, True], kind="stable")
        .drop(columns=["_builtin", "_file", "_rank"])
    )
