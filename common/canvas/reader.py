"""The canvas reader: a reply's final answer, as a careful human grader reads it (the suite's
score), and the seed's ``contains`` rule.

``contains`` is the original task's default, kept only for comparison with it: 1 when the gold
answer occurs in the response (case-insensitive), so "10" scores for "0", "not" for "no", and a
response listing every option scores. ``extract`` reads a response for its final answer or
returns None (invalid: no answer, two live answers, a hedge).

How ``extract`` reads a response:

1. What is not the reply's answer is set aside: reasoning inside ``<think>...</think>`` or
   ``<thinking>...</thinking>`` (everything before a closing tag with no opening one, whose
   opening the chat template wrote; everything after an opening tag never closed: still
   thinking), a question the model goes on to ask itself ("Question: ..." after its answer, or
   the asked one again after an "Answer:"; a reply opening on another question answers none) and
   a new canvas it goes on to describe ("Now a new canvas. ..."), as base models do; a reply
   opening with a comma goes on with the prompt's list of options and gives no answer. A reply
   that is an option itself is that option (most of the built-in models' replies), without more
   reading. Markdown marks, list numbers and bullets are dropped, contractions spelt out, and the
   text cut into sentences (at . ! ? ; and line breaks, not inside "2.0"); asides in brackets are
   set apart ("3 (not 2)").
2. Each sentence is read for an answer (``sentence.py``, by the kind of vocabulary). How firmly it
   gives it: an answer marker ("Answer:", "The answer is", "Final answer") or a retraction
   ("wait", "actually", "hmm", "on reflection", "I mean", "sorry", "correction", "let me
   re-check", "let me recount", and "no," before another direction, count or shape) gives the
   final answer so far; a conclusion ("so", "therefore", "thus", "hence", "=", "->") or, with a
   shuffle question, naming the asked position ("... is second from the top", "... is at the
   bottom") gives it unless an answer marker came before; a plain sentence gives it only when it
   is the first answer. The sentence is read from its last marker or conclusion word, from its
   last retraction word when an answer follows it, and a reason it gives ("because", "since",
   ", which", ", as") is left out. A retraction with no answer ("Wait, let me recount.") lets the
   next answer replace what came before.
3. A sentence restating the options ("The options are Left, Right, Above, Below", "Answer Yes or
   No", "Yes or no?") or repeating the question gives nothing. A later bare answer (eight words or
   fewer) that differs from the final one leaves two live answers ("2; 3.", "Yes. No."): invalid;
   reasoning sentences that mention other options do not ("Yes. I went through the events: ...").
   A hedge in the deciding sentence ("probably", "most likely", "maybe", "or", "I guess", "I'm not
   sure", "I can't determine", "at least", "about", "right-ish") is invalid. An answer asked as a
   question counts only as what the next sentence makes of it ("Left? No. It is to the right."
   Right; "Above right? Yes." Above Right); a reply ending on one is invalid.
4. Within a sentence (``sentence.py``): negated answers ("not 2", "not above", "no left/right
   relation", "not the small red square") are dropped; directions combine one vertical and one
   horizontal word ("below and to the right", "lower right", "south-east"), turned round when the
   relation is stated the other way round; a relation to a third shape is left out, and where a
   third shape is, is a premise, not the answer; "no" before a noun ("no removal follows") is not
   No, and a present-tense statement ("it is not in the canvas", "not anymore", "it is still
   there") answers Yes / No when it is about the asked shape; counts are digits and number
   words, without coordinates, the restated total of shapes, step numbers and percentages; shape
   names are whole words in any order, and with a shuffle question a clause placing a shape
   elsewhere than the asked position is not an answer. "None" or "there is no red shape" counts
   as 0 or No only when no sentence gives an answer.

The response scored is the model's last completion (``raw[-1]``: after the runner's re-prompt,
if one was needed), or ``resp`` when a results file has no ``raw``. The canvas runner
(``run.answer``) decides whether to re-prompt with this same reader, so a reply it credits is
never re-prompted.
"""

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from common.canvas import sentence as said
from common.canvas.reading import SHAPE

PLAIN, CONCLUSION, ANSWER = 0, 1, 2  # how firmly a sentence gives its answer (step 2)
_THOUGHT = re.compile(r"<(/?)think(?:ing)?\s*>", re.I)
_CONTRACTIONS = [
    (re.compile(r"\b(can)(?:'t|not)\b", re.I), r"\1 not"),
    (re.compile(r"\b(won)'t\b", re.I), "will not"),
    (re.compile(r"n't\b", re.I), " not"),
    (re.compile(r"\b(it|there|that|what|here|he|she)'s\b", re.I), r"\1 is"),
    (re.compile(r"\b(i)'m\b", re.I), r"\1 am"),
    (re.compile(r"\b(they|we|you)'re\b", re.I), r"\1 are"),
]
_MARKUP = re.compile(r"[*_`#]+|\\boxed|\$")
_ENUMERATOR = re.compile(r"^[ \t]*\(?\d+[.)][ \t]+", re.M)
_BULLET = re.compile(r"^[ \t]*(?:[-+\u2022>|]+(?:[ \t]+|$))+", re.M)
_WORD = re.compile(r"[A-Za-z0-9]+")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_ASIDE = re.compile(r"\(([^()]*)\)")
_MARKER = (  # an answer marker (group "answer") or a conclusion word
    r"(?P<answer>\b(?:(?:the\s+)?(?:final|correct|short)\s+answer|(?:the|my)\s+answer)\s*(?:is|would\s+be|:|-)"
    r"|^\W*answer\s*[:\-])|\b(?:so|therefore|thus|hence|consequently)\b,?|(?<![=<>!])=(?![=>])|->|=>|\u2192"
)
_CONCLUSION = re.compile(_MARKER + r"\s*", re.I)
_RETRACTION = re.compile(  # anywhere in a sentence, and (second line) only at its start
    r"\b(?:wait|actually|i\s+mean|on\s+(?:second\s+thought|reflection|closer\s+look)|correction|sorry|"
    r"scratch\s+that)\b|^\W*(?:hmm+|h?m+|oh|oops|rather|hold\s+on|i\s+was\s+wrong|re-?check(?:ing)?|"
    r"let\s+me\s+(?:re-?(?:check|consider|think|count|examine)|double-check|check\s+again|verify))\b",
    re.I,
)
_NO_RETRACTS = re.compile(r"(?<![\w-])no(?=\s*(?:[,.!:;\u2014\u2013-]|$))", re.I)  # "Left. No, right."
_REASON = re.compile(
    r"(?:,\s*|\s+)(?:because|since|given\s+that|due\s+to)\b.*$|,\s*(?:which|as|where)\b.*$", re.I
)
_UNSURE = re.compile(  # read before negations are dropped ("not sure" holds "not")
    r"\bnot\s+(?:\d+\s*%\s+|entirely\s+|completely\s+|quite\s+)?(?:sure|certain)\b|\bdo\s+not\s+know\b|"
    r"\b(?:can|could)\s+not\s+(?:tell|determine|say|be\s+sure)\b|\bunable\s+to\b|\bhard\s+to\s+(?:say|tell)\b|"
    r"\bnot\s+(?:enough|sufficient)\s+information\b|\binsufficient\s+information\b",
    re.I,
)
_NEGATION = re.compile(r"\b(?:not|neither|nor)\b[^,.;:()]*", re.I)  # "not to the left or right"
_RESTATES = re.compile(
    r"\b(?:options?|choices?|choose|one\s+of|answer\s+with|possible\s+answers|question)\b|^\W*answer\s+yes\b",
    re.I,
)
_ATTRIBUTES = {"small", "large", "red", "blue", "yellow", "green", "square", "circle", "triangle"}
# a question the model asks itself, or a new canvas it goes on to describe (base models continue
# the prompt's pattern): nothing from there on is the reply's answer
_CONTINUES = re.compile(r"^[ \t]*(?:Question\s*:|Now a new canvas\b)", re.M)
_ANSWERED = re.compile(r"\banswer\s*:", re.I)


def contains(expected: str, response: str) -> int:
    """Return 1 if ``expected`` occurs in ``response`` ignoring case, else 0 (the original default scorer)."""
    return int(str(expected).casefold() in str(response).casefold())


@dataclass(frozen=True)
class Question:
    """What the reader uses of the question: the subject and reference of a relation question,
    the asked position of a shuffle question (its words, ordinal and end), the attributes of the
    shape an existence question asks about."""

    subject: str = ""
    reference: str = ""
    position: str = ""  # "second from the top"
    ordinal: int = 0  # 2
    end: str = ""  # "top"
    # the attributes of the shape asked: {"large", "red", "circle"}; {"large"} for "a shape that is large"
    attributes: frozenset[str] = frozenset()
    text: str = ""

    @classmethod
    @functools.lru_cache(maxsize=4096)
    def parse(cls, question: str | None) -> "Question":
        """Return what ``question`` asks (empty fields for what it does not say)."""
        text = str(question or "").strip()
        pair = re.search(rf"Where is the ({SHAPE}) relative to the ({SHAPE})\?", text)
        where = re.search(r"What shape is ((\S+) from the (top|bottom))\?", text)
        thing = re.search(r"Is there an? (.+?)(?: in the canvas)?\?", text)
        words = set(thing.group(1).split()) if thing else set()
        attributes = words & _ATTRIBUTES
        return cls(
            subject=pair.group(1) if pair else "",
            reference=pair.group(2) if pair else "",
            position=where.group(1) if where else "",
            ordinal=said.ordinal(where.group(2)) if where else 0,
            end=where.group(3) if where else "",
            attributes=frozenset(attributes),
            text=text,
        )


@dataclass(frozen=True)
class Statement:
    """An answer a sentence gives: its value ("" for an invalid one), how firmly (``PLAIN``,
    ``CONCLUSION``, ``ANSWER``) and whether it is bare (says little but the answer)."""

    value: str
    rank: int
    bare: bool


ASKING = -1  # an answer asked as a question ("Left?"): what follows decides, else invalid
_PENDING = Statement("", -2, False)  # a retraction giving no answer: the next answer replaces
_CONFIRM = Statement("", -3, False)  # "Yes." after an answer asked as a question, where Yes is no option
_CONFIRMS = re.compile(r"\W*(?:yes|yeah|yep|correct|exactly|indeed)\W*", re.I)


def extract(response: str, vocabulary: Sequence[str], question: str | None = None) -> str | None:
    """Return the final answer of ``vocabulary`` that ``response`` commits to (spelled as in the
    vocabulary), or None when it gives none, two live ones, or hedges (see the module docstring).
    ``question`` (the trial's) lets a relation stated the other way round, a premise about another
    shape, or a shape named beside the asked position, be read."""
    return _read(str(response), tuple(str(option) for option in vocabulary), question)


@functools.lru_cache(maxsize=65536)
def _read(response: str, vocabulary: tuple[str, ...], question: str | None) -> str | None:
    """``extract``, remembered: the built-in models give the same reply to the same question in
    many runs, and a set's rescoring reads each of those once. A reply that is an option itself
    (most of the built-ins' replies) is that option without more reading (``read_fully`` agrees:
    a test checks it for every option of every task)."""
    found = _spelt(vocabulary).get(response.strip(" \t\n.!*_`'\"").casefold())
    return found if found is not None else read_fully(response, vocabulary, question)


@functools.lru_cache(maxsize=256)
def _spelt(vocabulary: tuple[str, ...]) -> dict[str, str]:
    """Return the options of ``vocabulary`` by their casefolded spelling."""
    return {option.casefold(): option for option in reversed(vocabulary)}


def read_fully(response: str, vocabulary: Sequence[str], question: str | None) -> str | None:
    """Return ``extract``'s answer, read sentence by sentence (steps 1 to 4 of the module docstring)."""
    options = list(vocabulary)
    reader = said.reader_for(tuple(options))
    asked = Question.parse(question)
    sentences = _sentences(response, asked)
    statements = [_statement(text, options, reader, asked) for text in sentences]
    statements = [s for s in statements if s is not None]
    if any(s.rank >= ASKING for s in statements):
        return _final(statements)
    fallback = said.FALLBACKS.get(reader)
    for sentence in sentences if fallback else []:
        found = fallback(sentence, options)
        if found is not None:
            return None if _UNSURE.search(sentence) else found or None
    return None


def _sentences(response: str, asked: Question) -> list[str]:
    """Return the sentences of a reply's answer (step 1 of the module docstring)."""
    text = _outside_thoughts(response) if "<" in response else response
    if text.lstrip().startswith(","):  # ", Above Right." goes on with the prompt's list of options
        return []
    for match in _CONTINUES.finditer(text) if "uestion" in text or "canvas" in text else ():
        before = text[: match.start()]
        repeated = asked.text and asked.text in text[match.end() :].split("\n", 1)[0]
        if not repeated or _ANSWERED.search(before):  # the asked question again, after an answer: a new turn
            text = before
            break
    text = text.replace("\u2019", "'")
    for pattern, spelt in _CONTRACTIONS if "'" in text or "annot" in text else ():
        text = pattern.sub(spelt, text)
    text = _BULLET.sub("", _MARKUP.sub(" ", text))
    if len(_ENUMERATOR.findall(text)) > 1:  # a numbered list, not "2. Wait, 3."
        text = _ENUMERATOR.sub("", text)
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def _outside_thoughts(text: str) -> str:
    """Return ``text`` without its thinking: the inside of ``<think>`` blocks, what comes before a
    closing tag with none open (the chat template opened it), what comes after an opening tag
    never closed."""
    kept: list[str] = []
    depth = start = 0
    for tag in _THOUGHT.finditer(text):
        closing = bool(tag.group(1))
        if depth == 0:
            kept = [] if closing else [*kept, text[start : tag.start()]]
        depth = max(depth - 1, 0) if closing else depth + 1
        start = tag.end()
    return " ".join(kept + ([text[start:]] if depth == 0 else []))


def _final(statements: list[Statement]) -> str | None:
    """Return the final answer of a response's statements (steps 2 and 3 of the module docstring)."""
    live: list[Statement] = []
    pending, proposed = False, None
    for s in statements:
        if s is _CONFIRM and proposed:
            live, pending = [Statement(proposed.value, ANSWER, True)], False
        if s.rank < PLAIN:
            pending, proposed = pending or s is _PENDING, s if s.rank == ASKING else None
            continue
        if proposed:  # the answer after a question decides
            pending, proposed = True, None
        if not live or pending or s.rank == ANSWER or (s.rank == CONCLUSION and live[0].rank < ANSWER):
            live, pending = [s], False
        elif s.bare and s.value != live[-1].value:
            live.append(s)
    if proposed:  # the reply ends on a question
        live.append(Statement("", ASKING, True))
    values = {s.value for s in live}
    return values.pop() or None if len(values) == 1 else None


def _statement(sentence: str, options: list[str], reader, asked: Question) -> Statement | None:
    """Return the answer ``sentence`` gives, ``_PENDING`` for a retraction giving none, or None."""
    if asked.text and sentence[-len(asked.text) :].casefold() == asked.text.casefold():
        return None  # the question repeated
    if reader is not said.yes_no and _CONFIRMS.fullmatch(sentence):
        return _CONFIRM
    marks = list(_RETRACTION.finditer(sentence))
    if reader is not said.yes_no:
        marks += list(_NO_RETRACTS.finditer(sentence))
    if not marks:
        return _reading(sentence, options, reader, asked)
    last = max(marks, key=lambda m: m.end())
    after = _reading(sentence[last.end() :], options, reader, asked)
    if after is not None:
        return Statement(after.value, ANSWER, after.bare)
    before = _reading(sentence[: min(m.start() for m in marks)], options, reader, asked)
    return before if before is not None else _PENDING


def _reading(sentence: str, options: list[str], reader, asked: Question) -> Statement | None:
    """Return the answer a sentence (or the part of one a retraction leaves) gives, or None."""
    asides, main = [], sentence
    if "(" in sentence:
        asides = [a for a in _ASIDE.findall(sentence) if not said.COORDINATES.fullmatch(f"({a})")]
        main = _ASIDE.sub(lambda m: m.group(0) if said.COORDINATES.fullmatch(m.group(0)) else " ", sentence)
    cut = list(_CONCLUSION.finditer(main))
    part = main[cut[-1].end() :] if cut else main
    rank = (ANSWER if cut[-1]["answer"] else CONCLUSION) if cut else PLAIN
    if cut and not part.strip(" .!?:,;") and not asides:
        part, rank = main, PLAIN
    part = _REASON.sub("", part) or part
    value = reader(part, options, asked)
    if value is None and asides and not part.strip(" .,;:!?"):
        value = reader(" ".join(asides), options, asked)
    if value is None:
        return None
    question = sentence.rstrip().endswith("?")
    if value == "" and (question or _RESTATES.search(sentence)):
        return None  # the options or the question restated
    if value and (_UNSURE.search(sentence) or said.HEDGE.search(_NEGATION.sub(" ", part))):
        value = ""
    if question:
        return Statement(value, ASKING, True)
    n = len(options)
    if (
        asked.ordinal
        and reader is said.named_options
        and said.asked_place(asked, n) in said.places(part, asked, n)
    ):
        rank = max(rank, CONCLUSION)  # "... is second from the top"
    words = _WORD.findall(part)
    leads = (
        bool(value) and " ".join(words[: value.count(" ") + 1]).casefold() == value.casefold()
    )  # "No, the ..."
    return Statement(value, rank, leads or len(words) <= 8)
