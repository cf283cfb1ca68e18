"""What one sentence of a reply answers, for each kind of canvas vocabulary (``reader.py``, step 4).

A sentence reader takes the text, the options and the question (``reader.Question``) and returns
None when the text holds no answer (read on), "" when it holds an invalid one, else the answer.
``FALLBACKS`` read what counts only when no sentence answers ("there is no red shape").
"""

import functools
import itertools
import re

HEDGE = re.compile(
    r"\b(?:or|either|maybe|perhaps|possibly|probably|likely|might|i\s+guess|i\s+suppose|presumably|"
    r"not\s+sure|unsure|uncertain|unclear|can't\s+tell|cannot\s+tell|could\s+be|may\s+be)\b",
    re.IGNORECASE,
)
APPROXIMATE = re.compile(  # no commitment to a count or a direction: "at least 2", "right-ish"
    r"\b(?:at\s+least|at\s+most|about|around|approximately|roughly|nearly|almost|or\s+so)\b|(?<=\w)-?ish\b",
    re.IGNORECASE,
)
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
COORDINATES = re.compile(r"\(\s*-?\d+(?:\.\d+)?\s*,\s*-?\d+(?:\.\d+)?\s*\)")
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


def reader_for(options: list[str]):
    """Return the sentence reader for this kind of vocabulary."""
    if all(word in VERTICAL + HORIZONTAL for option in options for word in option.split()):
        return directions
    if sorted(options) == ["No", "Yes"]:
        return yes_no
    if all(option.isdigit() for option in options):
        return count
    return named_options


def directions(sentence: str, options: list[str], asked) -> str | None:
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
    if len(vertical) > 1 or len(horizontal) > 1 or APPROXIMATE.search(kept):
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


def _turned_round(before: str, asked) -> bool:
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


def yes_no(sentence: str, options: list[str], asked) -> str | None:
    """Read yes / no answers in a sentence, else a present-tense statement of presence or absence
    ("no" before a noun is not an answer here: ``no_determiner``)."""
    kept = _NO_DETERMINER.sub(" ", _NOT_YES_NO.sub(" ", sentence))
    said = {"Yes"} if _YES.search(kept) else set()
    said |= {"No"} if _NO.search(kept) else set()
    if not said and not _PAST.search(sentence):
        said = {"No"} if _ABSENT.search(sentence) else {"Yes"} if _PRESENT.search(sentence) else set()
    if not said:
        return None
    return said.pop() if len(said) == 1 else ""


def no_determiner(sentence: str, options: list[str]) -> str | None:
    """Read "there is no red shape" as No (used when no sentence gives a yes/no answer)."""
    if not _NO_DETERMINER.search(sentence):
        return None
    return "" if HEDGE.search(sentence) else "No"


def count(sentence: str, options: list[str], asked) -> str | None:
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
        return _NOT_NUMBER.sub(" ", COORDINATES.sub(" ", restated.sub(" ", text)))

    base = clean(sentence)
    values = _numbers(clean(_ONE_AT.sub(" ", sentence))) or _numbers(base)
    if not values:
        return None
    if len(values) > 1 or values[0] not in options or APPROXIMATE.search(base):
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


def no_count(sentence: str, options: list[str]) -> str | None:
    """Read "none" or "there are no red shapes" as 0 (used when no sentence gives a number)."""
    if not (_NONE.search(sentence) or _NO_DETERMINER.search(sentence)):
        return None
    return "0" if "0" in options and not HEDGE.search(sentence) else ""


def named_options(sentence: str, options: list[str], asked) -> str | None:
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


FALLBACKS = {yes_no: no_determiner, count: no_count}  # weaker readings, when nothing else answers


@functools.lru_cache(maxsize=256)
def _pattern(option: str) -> re.Pattern[str]:
    """Return a regex finding ``option`` as whole words in any order, separated by spaces,
    hyphens or commas ("Large Blue Square" also finds "blue large square")."""
    words = option.split()
    orders = ["[\\s,-]+".join(re.escape(w) for w in order) for order in itertools.permutations(words)]
    return re.compile(r"(?<![\w-])(?:" + "|".join(orders) + r")(?![\w-])", re.IGNORECASE)
