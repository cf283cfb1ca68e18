"""What one sentence of a reply answers, for each kind of canvas vocabulary (``reader.py`` step 4).

A sentence reader takes the text, the options and the question (``reader.Question``) and returns
None when the text holds no answer (read on), "" when it holds an invalid one (several, or one
the vocabulary lacks), else the answer spelled as in the vocabulary:

- ``directions``: vertical and horizontal words in any order, turned round when the sentence
  relates the reference to the subject; relations to a third shape left out, none when it tells
  where a third shape is;
- ``yes_no``: yes / no words ("no" before a noun is a determiner: "no removal follows"), else a
  present-tense statement of presence or absence about the asked shape, clause by clause;
- ``count``: numbers as digits or words, without coordinates, the restated total, step or event
  numbers and percentages;
- ``named_options`` (shape identities): whole-word options; with a shuffle question, of the clauses that
  name a position, only those naming the asked one.

``FALLBACKS`` read what counts only when no sentence answers: "there is no red shape" (No, 0).
"""

import functools
import itertools
import re

from common.canvas.reading import SHAPE

_SHAPE = re.compile(SHAPE, re.I)
HEDGE = re.compile(  # no commitment: "probably", "or"
    r"\b(?:or|either|maybe|perhaps|possibly|probably|likely|might|i\s+guess|i\s+suppose|presumably|"
    r"unsure|uncertain|unclear|could\s+be|may\s+be)\b",
    re.I,
)

VERTICAL = ("Above", "Below")
HORIZONTAL = ("Left", "Right")
_DIRECTION_WORDS = {
    **dict.fromkeys(("above", "upper", "higher", "top", "up", "north"), "Above"),
    **dict.fromkeys(("below", "lower", "bottom", "beneath", "underneath", "down", "south"), "Below"),
    **dict.fromkeys(("left", "west"), "Left"),
    **dict.fromkeys(("right", "east"), "Right"),
}
_COMPASS = re.compile(r"\b(north|south)-?(east|west)(?:ern)?\b", re.I)
_WORDS = "|".join(w for w in _DIRECTION_WORDS if w not in ("up", "down"))
_SIDE = r"(?=[\s,-]+(?:and\s+)?(?:to\s+the\s+)?(?:left|right)\b)"  # "up" and "down" only before a side
_DIRECTION = re.compile(rf"(?<!\w)({_WORDS}|up{_SIDE}|down{_SIDE})(?!\w)", re.I)
_ALONE = re.compile(r"\W*(up|down)\W*", re.I)  # "Down." alone: a direction
_NEGATED = rf"(?:to\s+the\s+|directly\s+)?(?:{_WORDS}|up|down)"
_NOT_DIRECTION = re.compile(  # "not above or below", "no left/right relation"
    rf"\b(?:not|no)\s+{_NEGATED}(?:\s*(?:,|/|\bor\b|\bnor\b|\band\b|\band\s+not\b)\s*{_NEGATED})*\b|"
    rf"\bneither\s+{_NEGATED}\s+nor\s+{_NEGATED}\b",
    re.I,
)
_RELATION = re.compile(  # a direction and the shape it is relative to: "to the right of the small red square"
    rf"(?:{_WORDS}|up|down)(?:\s+and\s+(?:to\s+the\s+)?(?:{_WORDS}))?(?:\s+(?:of|from|than))?\s+"
    rf"(?:the\s+|a\s+|an\s+)?(?P<shape>{SHAPE})",
    re.I,
)
_RELATIVE = re.compile(r"\b(?:relative\s+to|compared\s+(?:to|with)|from|of)\s*$", re.I)
_YES = re.compile(
    r"(?<![\w-])(?:yes|yeah|yep|yup)(?![\w-])|^\W*(?:absolutely|certainly|definitely|of\s+course)\W*$", re.I
)
# after "no", the words that leave it an answer ("No it isn't"); before any other it is a determiner
_NOT_ANSWER = (
    r"it|its|there|they|them|that|this|these|those|i|we|you|he|she|the|a|an|wait|sorry|way|not|but|"
    r"because|since|as|so|and|or|actually|thanks|thank"
)
_NO = re.compile(
    rf"(?<![\w-])(?:nope|nah)(?![\w-])|(?<![\w-])no(?![\w-])(?!\s+(?!(?:{_NOT_ANSWER})\b)[a-z])|"
    r"^\W*(?:absolutely|certainly|definitely|of\s+course)\s+not\W*$",
    re.I,
)
_NOT_YES_NO = re.compile(r"\bnot\s+(?:a\s+)?(?:yes|no)\b", re.I)
_CLAUSE = re.compile(r"[,;:]|\s[-\u2013\u2014]+\s|\b(?:but|and|so|while|whereas)\b", re.I)
_ABSENT = re.compile(
    r"\b(?:is|are)\s+(?:not|no\s+longer)\s+(?:there|here|present|(?:in|on)\b)|\bnot\s+(?:in|on)\s+the\s+canvas\b|"
    r"\b(?:is|are)\s+(?:now\s+)?(?:absent|gone|missing)\b|\bthere\s+(?:is|are)\s+not\b|\bdo(?:es)?\s+not\s+exist\b|"
    r"\bno\s+longer\b|\bnot\s+any\s*more\b|\bnothing\s+(?:is\s+)?(?:there|here|present)\b|^\W*nothing\W*$|"
    r"^\W*no\s+(?:\w+\s+){1,4}(?:(?:is|are)\s+(?:present|there|left|in|on)\b|remains?\b|exists?\b)",
    re.I,
)
_PRESENT = re.compile(
    r"\b(?:is|are)\s+(?:still\s+|now\s+)?(?:(?:in|on)\s+the\s+canvas|there|present)\b|\bexists\b|"
    r"\bthere\s+is\s+(?:still\s+)?(?:one|a|an)\b|\bstill\s+(?:there|here|present|in\s+the\s+canvas)\b|"
    r"\bremains?\b(?!\s+(?:to|unclear|unknown))",
    re.I,
)
_PAST = re.compile(
    r"\b(?:was|were|initially|at\s+first|originally|at\s+the\s+start|then|before|after)\b", re.I
)
COORDINATES = re.compile(r"\(\s*-?\d+(?:\.\d+)?\s*,\s*-?\d+(?:\.\d+)?\s*\)")
_ONE_AT = re.compile(r"\bone\s+(?=at\s*\()", re.I)  # "one at (3, 4)": a shape, not a count
_NONE = re.compile(r"(?<![\w-])none(?![\w-])", re.I)
_NO_DETERMINER = re.compile(
    r"(?<![\w-])no\s+(?:such\s+|other\s+)?(?:small|large|red|blue|yellow|green|square|circle|triangle|shape|one)",
    re.I,
)
_LABEL = re.compile(  # numbers that name, not count: "step 2", "event 6", "#3", "80%"
    r"\b(?:step|event|swap|round|move|line|item|stage|part|phase|question|option|position|turn|row|"
    r"column|case|point)s?\s*#?\s*\d+\b|#\s*\d+|\d+(?:\.\d+)?\s*%",
    re.I,
)
_SINGLE = re.compile(r"\b(?:a\s+)?single\b", re.I)
NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
NUMBER_WORDS += ["eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen"]
NUMBER_WORDS += ["eighteen", "nineteen", "twenty"]
_NUMBER_TOKEN = r"\d+(?:\.0+)?|twenty[\s-](?:one|two|three|four|five|six|seven|eight|nine)|" + "|".join(
    NUMBER_WORDS
)
_NUMBER = re.compile(rf"(?<![\w.-])({_NUMBER_TOKEN})(?![\w-]|\.\d)", re.I)
_NOT_NUMBER = re.compile(rf"\bnot\s+(?:{_NUMBER_TOKEN})\b", re.I)


@functools.lru_cache(maxsize=256)
def reader_for(options: tuple[str, ...]):
    """Return the sentence reader for this kind of vocabulary."""
    if all(word in VERTICAL + HORIZONTAL for option in options for word in option.split()):
        return directions
    if sorted(options) == ["No", "Yes"]:
        return yes_no
    if all(option.isdigit() for option in options):
        return count
    return named_options


def directions(text: str, options: list[str], asked) -> str | None:
    """Read the direction words of ``text``, turned round when it relates the reference to the
    subject; a relation to a third shape ("... and below the large red circle") left out, and
    None when it tells where a third shape is (a premise, not the answer)."""
    text = _COMPASS.sub(lambda m: f"{m.group(1)} {m.group(2)}", text)
    if asked.subject and _SHAPE.search(text):
        asked_pair = (asked.subject, asked.reference)
        text = _RELATION.sub(lambda m: m.group(0) if m["shape"].lower() in asked_pair else " ", text)
        if any(shape.lower() not in asked_pair for shape in _SHAPE.findall(text)):
            return None  # what another shape is relative to the asked ones: a premise
    kept = _NOT_DIRECTION.sub(" ", text)
    alone = _ALONE.fullmatch(kept)
    found = [alone] if alone else list(_DIRECTION.finditer(kept))
    if not found:
        return None
    words = [_DIRECTION_WORDS[m.group(1).lower()] for m in found]
    vertical = list(dict.fromkeys(w for w in words if w in VERTICAL))
    horizontal = list(dict.fromkeys(w for w in words if w in HORIZONTAL))
    if len(vertical) > 1 or len(horizontal) > 1 or APPROXIMATE.search(kept):
        return ""
    if _turned_round(kept[: found[0].start()], asked):
        vertical = [{"Above": "Below", "Below": "Above"}[w] for w in vertical]
        horizontal = [{"Left": "Right", "Right": "Left"}[w] for w in horizontal]
    answer = " ".join(vertical + horizontal)
    return answer if answer in options else ""


APPROXIMATE = re.compile(  # no commitment to a count or a direction: "at least 2", "right-ish"
    r"\b(?:at\s+least|at\s+most|about|around|approximately|roughly|nearly|almost|or\s+so)\b|(?<=\w)-?ish\b",
    re.I,
)


@functools.lru_cache(maxsize=1024)
def _named(shape: str, other: str) -> re.Pattern[str]:
    """Return a regex matching (zero-width) where a reply names ``shape`` apart from ``other``: its
    full name, and its kind, colour+kind or size+kind when those tell it from the other shape."""
    size, colour, kind = shape.split()
    names = [shape] + [
        s for s in (f"{colour} {kind}", f"{size} {kind}", kind) if not re.search(rf"\b{s}\b", other)
    ]
    return re.compile(r"(?=\b(?:" + "|".join(names) + r")\b)", re.I)


def _turned_round(before: str, asked) -> bool:
    """Return whether the text before a sentence's first direction word names the reference as
    what the direction is said of (last named there, and not after "relative to" / "from")."""
    if not asked.subject:
        return False
    last = {}
    for role, shape, other in (("s", asked.subject, asked.reference), ("r", asked.reference, asked.subject)):
        for match in _named(shape, other).finditer(before):
            last[role] = match.start()
    if "r" not in last or last.get("s", -1) > last["r"]:
        return False
    return not _RELATIVE.search(before[: last["r"]].rstrip().removesuffix("the").rstrip())


def yes_no(text: str, options: list[str], asked) -> str | None:
    """Read yes / no words in ``text``, else its present-tense statements of presence or absence
    (clause by clause, leaving out clauses in the past and clauses about another shape; never in a
    question)."""
    kept = _NOT_YES_NO.sub(" ", text)
    said = {"Yes"} if _YES.search(kept) else set()
    said |= {"No"} if _NO.search(kept) else set()
    if not said and not text.rstrip().endswith("?"):
        for clause in _CLAUSE.split(text):
            if _PAST.search(clause) or not _about(clause, asked):
                continue
            said |= {"No"} if _ABSENT.search(clause) else {"Yes"} if _PRESENT.search(clause) else set()
    if not said:
        return None
    return said.pop() if len(said) == 1 else ""


def _about(clause: str, asked) -> bool:
    """Return whether ``clause`` may speak of the asked shape: it names no shape, or one having every
    attribute the question names."""
    named = [set(s.lower().split()) for s in _SHAPE.findall(clause)]
    return not named or not asked.attributes or any(asked.attributes <= words for words in named)


def no_determiner(text: str, options: list[str]) -> str | None:
    """Read "there is no red shape" as No (used when no sentence gives a yes/no answer)."""
    if not _NO_DETERMINER.search(text):
        return None
    return "" if HEDGE.search(text) else "No"


def count(text: str, options: list[str], asked) -> str | None:
    """Read the numbers of ``text``: negated ones ("not 2"), coordinates, labels ("step 2", "80%")
    and the restated number of shapes left out, and "one" in "one at (3, 4)" when another number
    gives the count."""
    restated = _restated(max(int(option) for option in options))

    def clean(text: str) -> str:
        text = _SINGLE.sub(" one ", _LABEL.sub(" ", COORDINATES.sub(" ", text)))
        return _NOT_NUMBER.sub(" ", restated.sub(" ", text))

    base = clean(text)
    pointed = _ONE_AT.sub(" ", text)
    values = (pointed != text and _numbers(clean(pointed))) or _numbers(base)
    if not values:
        return None
    if len(values) > 1 or values[0] not in options or APPROXIMATE.search(base):
        return ""
    return values[0]


@functools.lru_cache(maxsize=64)
def _restated(total: int) -> re.Pattern[str]:
    """Return a regex finding the number of shapes restated ("out of 8", "8 shapes in total")."""
    stated = rf"(?:{total}|{NUMBER_WORDS[total] if total < len(NUMBER_WORDS) else total})"
    return re.compile(
        rf"\b(?:out\s+of|of\s+(?:the|all)|among(?:\s+the)?|all)\s+{stated}\b|"
        rf"\b{stated}\s+(?:shapes|objects)(?=\s*(?:$|[.,;:]|in\b|on\b|total\b|and\b|altogether\b))",
        re.I,
    )


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


def no_count(text: str, options: list[str]) -> str | None:
    """Read "none" or "there are no red shapes" as 0 (used when no sentence gives a number)."""
    if not (_NONE.search(text) or _NO_DETERMINER.search(text)):
        return None
    return "0" if "0" in options and not HEDGE.search(text) else ""


def named_options(text: str, options: list[str], asked) -> str | None:
    """Read whole-word options (shape identities), negated ones ("not the small red square") left
    out; with a position asked, of the clauses that place a shape, only those at the asked one."""
    kept = text
    for option in options:
        kept = _pattern(option, negated=True).sub(" ", kept)
    if asked.ordinal and _position().search(kept):
        clauses, carried = [], []
        for clause in _CLAUSE.split(kept):
            where = carried + places(clause, asked, len(options))
            named = any(_pattern(option).search(clause) for option in options)
            carried = [] if named else where  # "First from the bottom: the ...": the place goes on
            clauses.append((clause, where))
        at = [c for c, where in clauses if asked_place(asked, len(options)) in where]
        kept = " ; ".join(at or [c for c, where in clauses if not where])
    found = [option for option in options if _pattern(option).search(kept)]
    if not found:
        return None
    return found[0] if len(found) == 1 else ""


@functools.cache
def _position() -> re.Pattern[str]:
    """Return the regex of where a clause puts a shape in a column: an ordinal with or without its
    end, or an end alone (compiled when first needed: the ordinals are the shuffle task's)."""
    from common.canvas.tasks.shuffle_tracking import ORDINALS

    ordinals = r"(?:" + "|".join(sorted(ORDINALS, key=len, reverse=True)) + r"|\d+(?:st|nd|rd|th))"
    return re.compile(
        rf"\b(?P<k>{ordinals})\s+(?:(?:shape|one|position|place)\s+)?(?:from|to)\s+the\s+(?P<end>top|bottom)\b|"
        r"\b(?:at|on)\s+(?:the\s+)?(?:very\s+)?(?P<at>top|bottom)\b|"
        r"\b(?P<most>top|bottom)(?:most)?\s+(?:shape|one|position|place)\b|"
        r"\b(?P<extreme>topmost|bottommost|highest|lowest)\b|"
        rf"\b(?:is|are|in|at)\s+(?:the\s+)?(?P<bare>{ordinals})\b(?!\s+(?:swap|event|step|move|time|round)\b)",
        re.I,
    )


def places(text: str, asked, n: int) -> list[int]:
    """Return the places in a column of ``n`` (0 the bottom) that ``text`` names ("second from the
    top", "at the bottom", "lowest", "is third": an ordinal alone counts from the end asked)."""
    found = []
    for m in _position().finditer(text):
        if m["k"] or m["bare"]:
            k = ordinal(m["k"] or m["bare"])
            end = (m["end"] or asked.end).lower()
        else:
            word = (m["at"] or m["most"] or m["extreme"]).lower()
            k, end = 1, "top" if word in ("top", "topmost", "highest") else "bottom"
        found.append(k - 1 if end == "bottom" else n - k)
    return found


def ordinal(word: str) -> int:
    """Return the number an ordinal ("second", "2nd") stands for; 0 for another word."""
    from common.canvas.tasks.shuffle_tracking import ORDINALS

    word = word.lower()
    if word in ORDINALS:
        return ORDINALS.index(word) + 1
    return int(word[:-2]) if re.fullmatch(r"\d+(?:st|nd|rd|th)", word) else 0


def asked_place(asked, n: int) -> int:
    """Return the place the question asks about in a column of ``n`` (0 the bottom)."""
    return asked.ordinal - 1 if asked.end == "bottom" else n - asked.ordinal


FALLBACKS = {yes_no: no_determiner, count: no_count}  # weaker readings, when nothing else answers


@functools.lru_cache(maxsize=256)
def _pattern(option: str, negated: bool = False) -> re.Pattern[str]:
    """Return a regex finding ``option`` as whole words in any order, separated by spaces,
    hyphens or commas ("Large Blue Square" also finds "blue large square"); ``negated``: after
    "not" ("not the small red square")."""
    words = option.split()
    orders = ["[\\s,-]+".join(re.escape(w) for w in order) for order in itertools.permutations(words)]
    found = r"(?<![\w-])(?:" + "|".join(orders) + r")(?![\w-])"
    return re.compile(r"\bnot\s+(?:the\s+|a\s+|an\s+)?" + found if negated else found, re.I)
