"""The canvas reader: a reply's final answer (the suite's score), and the seed's ``contains`` rule.

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
import re
from collections.abc import Sequence
from dataclasses import dataclass

from common.canvas import sentence as said
from common.canvas.reading import SHAPE

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
_NEGATION = re.compile(r"\b(?:not|neither|nor)\b[^,.;:()]*", re.IGNORECASE)  # "not to the left or right"


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
    reader = said.reader_for(options)
    asked = Question.parse(question)
    text = re.sub(r"[*_`#]+", " ", str(response))
    statements = []
    for sentence in (s.strip() for s in _SENTENCE.split(text)):
        found = _statement(sentence, options, reader, asked)
        if found is not None:
            statements.append(found)
    if statements:
        return _final(statements)
    fallback = said.FALLBACKS.get(reader)
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
    retracts = bool(
        _RETRACTION.search(sentence) or (reader is not said.yes_no and _NO_COMMA.search(sentence))
    )
    asides = [a for a in _ASIDE.findall(sentence) if not said.COORDINATES.fullmatch(f"({a})")]
    main = _ASIDE.sub(lambda m: m.group(0) if said.COORDINATES.fullmatch(m.group(0)) else " ", sentence)
    cut = list(_CONCLUSION.finditer(main))
    concludes = bool(cut) and bool(main[cut[-1].end() :].strip(" .!?:"))
    part = main[cut[-1].end() :] if concludes else main
    part = _REASON.sub("", part) or part
    if retracts:
        part = _RETRACTION.sub(" ", part if reader is said.yes_no else _NO_COMMA.sub(" ", part))
    value = reader(part, options, asked)
    if value is None and asides and not part.strip(" .,;:!?"):
        value = reader(" ".join(asides), options, asked)
    if value is None:
        return None
    if value and (sentence.rstrip().endswith("?") or said.HEDGE.search(_NEGATION.sub(" ", part))):
        value = ""
    words = len(re.findall(r"[A-Za-z0-9]+", part))
    names_position = bool(asked.position) and asked.position.lower() in sentence.lower()
    return Statement(value, concludes or retracts or names_position, words <= 8)
