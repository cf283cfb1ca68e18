"""Seeded distractor questions whose gold answers are checked by code.

Four sources, each a pool of unrelated questions mixed into the conversation:

- ``which_is_heavier``: "Is 3 pounds of feathers heavier than 1 kilogram of lead?" with masses
  in grams, kilograms, ounces, pounds or tonnes; the gold (yes/no) comes from exact unit
  conversion, and near-ties (less than 5% apart) are never asked.
- ``first_letters``: a sentence whose words' initials spell a target word; the gold is the word.
- ``reverse_sort``: words to sort in reverse alphabetical order; the gold is the sorted list,
  comma-separated, as the question asks.
- ``ambiguous_sentences``: the Winograd-style sentences of ``winograd``; the gold is the referent.

A record is ``{"id", "source", "question", "answer", "words"}`` (``words``: the question's
alphabetic words, lower-cased, for the adversarial option). ``check(record)`` recomputes the
gold from the question text alone, so it checks generated and original records alike.
"""

import random
import re
from fractions import Fraction

from common.already_said_that import winograd
from common.errors import UserError

# The data tables below are kept in columns (fmt: off), one screen each, not a word a line.
SOURCES = ("which_is_heavier", "first_letters", "reverse_sort", "ambiguous_sentences")

# fmt: off
# The worked example of the distractorless variant (the original's): no source to draw from.
BASIC_EXAMPLE = {"id": "basic-example", "source": "basic", "question": "What is the capital of Italy?",
                 "answer": "rome", "words": ["what", "is", "the", "capital", "of", "italy"]}

# ---- which is heavier ---------------------------------------------------------------------
GRAMS_PER_UNIT = {  # exact definitions (the pound and ounce are defined from the kilogram)
    "gram": Fraction(1), "kilogram": Fraction(1000), "tonne": Fraction(1_000_000),
    "pound": Fraction("453.59237"), "ounce": Fraction("453.59237") / 16,
}
UNIT_NAMES = {**{unit: unit for unit in GRAMS_PER_UNIT}, **{unit + "s": unit for unit in GRAMS_PER_UNIT}}
MIN_RATIO = Fraction(105, 100)  # the heavier side is at least 5% heavier: no near-ties
# Every question weighs a light material against a dense one (as the original's feathers
# against steel), so that a larger amount of the lighter stuff is a real trap.
LIGHT_MATERIALS = ("feathers", "cotton wool", "popcorn", "styrofoam", "paper", "straw", "dry leaves",
                   "sponges", "marshmallows", "bread", "wool", "cork")
DENSE_MATERIALS = ("sand", "bricks", "gravel", "granite", "iron", "steel", "lead", "copper", "gold",
                   "silver", "concrete", "marble")
QUANTITIES = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20, 25, 30, 40, 50, 100, 200, 500)
# fmt: on
_HEAVIER = re.compile(r"^Is (\d+) ([a-z]+) of ([a-z ]+) heavier than (\d+) ([a-z]+) of ([a-z ]+)\?$")

# ---- first letters ------------------------------------------------------------------------
# fmt: off
# Words by initial (any part of speech): sentences read as strings of real words.
FIRST_LETTER_WORDS = {
    "a": "ants apples always arrive across amber", "b": "brave bears bring blue boxes bravely",
    "c": "cats carry clever copper coins calmly", "d": "dark ducks dance during dinner daily",
    "e": "eager eagles eat eight eggs early", "f": "four foxes find fresh figs fast",
    "g": "green geese gather golden grapes gladly", "h": "happy horses hide heavy hats here",
    "i": "idle insects inspect iron islands inside", "j": "jolly jugglers juggle jam jars joyfully",
    "k": "kind kings keep kettles kites kindly", "l": "little lions lick lemon lollies lazily",
    "m": "many mice move melons mostly", "n": "nine nervous newts nibble nuts nightly",
    "o": "old owls open orange oysters often", "p": "purple parrots paint pretty pictures",
    "q": "quiet queens quickly quilt quaint quarters", "r": "red rabbits race round rocks",
    "s": "small snails sing soft songs slowly", "t": "tall tigers take ten tomatoes today",
    "u": "upset uncles use useful umbrellas upstairs", "v": "vivid violets visit velvet vans",
    "w": "wise wolves watch white waves", "x": "xylophones xenon",
    "y": "young yaks yawn yearly yellow", "z": "zany zebras zigzag zealously",
}
TARGET_WORDS = (
    "apple", "bread", "chair", "dream", "eagle", "flame", "grape", "house", "island", "jacket",
    "kettle", "lemon", "magnet", "needle", "orange", "pencil", "quilt", "river", "stone", "table",
    "umbrella", "velvet", "window", "yellow", "zebra", "garden", "forest", "planet", "bottle",
    "candle", "rocket", "silver", "winter", "summer", "spring", "market", "basket", "button",
    "castle", "copper", "dinner", "engine", "finger", "ginger", "hammer", "jungle", "ladder",
    "mirror", "monkey", "parrot", "pepper", "pirate", "puzzle", "rabbit", "saddle", "tunnel",
    "violin", "wallet", "wizard", "anchor", "bamboo", "cactus", "dragon", "falcon", "helmet",
    "insect", "kitten", "lantern", "meadow", "nectar", "oyster", "pillow", "rainbow", "sailor",
    "thunder", "village", "whisper", "blanket", "cabinet", "diamond", "feather", "harvest",
    "journey", "kingdom", "library", "mustard", "orchard", "pumpkin", "quarter", "sunrise",
    "teacher", "unicorn", "volcano", "weather", "blossom", "captain", "dolphin", "factory",
    "glacier", "horizon", "lobster", "mineral", "network", "penguin", "raccoon", "shadow",
)
# fmt: on
_QUOTED = re.compile(r'"([^"]+)"')

# ---- reverse sort -------------------------------------------------------------------------
# fmt: off
SORT_WORDS = (
    "anchor", "apricot", "badger", "balcony", "banjo", "beacon", "biscuit", "blizzard", "bramble",
    "breeze", "bucket", "cabbage", "canyon", "carpet", "cinnamon", "clover", "cobweb", "comet",
    "compass", "crayon", "daisy", "dentist", "domino", "drizzle", "eclipse", "elbow", "emerald",
    "fable", "ferret", "fiddle", "flannel", "fossil", "gadget", "galaxy", "gazebo", "goblin",
    "gravel", "hamlet", "harbor", "hazel", "hedgehog", "hickory", "igloo", "ivory", "jasmine",
    "jelly", "jigsaw", "juniper", "kayak", "kernel", "kiwi", "koala", "lagoon", "lantern", "lilac",
    "lizard", "lullaby", "magenta", "mango", "marble", "meadow", "mitten", "mosaic", "nickel",
    "noodle", "nutmeg", "oasis", "olive", "omelet", "otter", "paddle", "pebble", "pickle",
    "plume", "pretzel", "quartz", "quiver", "radish", "raven", "ribbon", "saffron", "satchel",
    "scarf", "sparrow", "sprocket", "tablet", "tangerine", "thimble", "tulip", "tundra", "umber",
    "urchin", "valley", "vanilla", "velvet", "walrus", "whistle", "willow", "yarrow", "yodel",
    "zephyr", "zigzag", "zinnia", "hilltop", "hill", "paper", "papaya", "candle", "candor",
)
# fmt: on
_SORT_PROMPT = "Sort the following comma-separated words in reverse alphabetical order: "
_WORDS_IN = re.compile(r"[A-Za-z]+(?:['`][A-Za-z]+)*")


def question_words(question: str) -> list[str]:
    """Return the alphabetic words of ``question``, lower-cased, first occurrence order, without
    repeats: the words a distractor turn shows (a word with an apostrophe, "don't", is left out,
    as the original eval did). The adversarial option asks about them later."""
    seen: dict[str, None] = {}
    for word in _WORDS_IN.findall(question):
        if word.isalpha():
            seen.setdefault(word.lower(), None)
    return list(seen)


def _record(source: str, index: int, question: str, answer: str) -> dict:
    """Return a pool record (ids are 1-based: ``which_is_heavier-0001``)."""
    return {
        "id": f"{source}-{index:04d}",
        "source": source,
        "question": question,
        "answer": answer,
        "words": question_words(question),
    }


def _amount(quantity: int, unit: str) -> str:
    """Return ``3 pounds`` / ``1 pound``."""
    return f"{quantity} {unit}{'' if quantity == 1 else 's'}"


def _heavier_question(rng: random.Random) -> tuple[str, str] | None:
    """Return one which-is-heavier question and its gold, or None for a (near-)tie draw."""
    units = sorted(GRAMS_PER_UNIT)
    first, second = rng.choice(LIGHT_MATERIALS), rng.choice(DENSE_MATERIALS)
    if rng.random() < 0.5:
        first, second = second, first
    unit_a = rng.choice(units)
    unit_b = unit_a if rng.random() < 0.5 else rng.choice(units)  # half the time: same unit
    qty_a, qty_b = rng.choice(QUANTITIES), rng.choice(QUANTITIES)
    mass_a, mass_b = qty_a * GRAMS_PER_UNIT[unit_a], qty_b * GRAMS_PER_UNIT[unit_b]
    if max(mass_a, mass_b) < MIN_RATIO * min(mass_a, mass_b):
        return None
    question = f"Is {_amount(qty_a, unit_a)} of {first} heavier than {_amount(qty_b, unit_b)} of {second}?"
    return question, "yes" if mass_a > mass_b else "no"


def _first_letters_question(rng: random.Random) -> tuple[str, str]:
    """Return a first-letters question and its gold (the target word)."""
    target = rng.choice(TARGET_WORDS)
    words = [rng.choice(FIRST_LETTER_WORDS[letter].split()) for letter in target]
    sentence = " ".join(words)
    sentence = sentence[0].upper() + sentence[1:] + "."
    question = f'What word do the first letters of the words in this sentence spell: "{sentence}"?'
    return question, target


def _reverse_sort_question(rng: random.Random) -> tuple[str, str]:
    """Return a reverse-sort question (6-10 words, sometimes one repeated) and its gold."""
    words = rng.sample(SORT_WORDS, rng.randint(6, 10))
    if rng.random() < 0.3:
        words[rng.randrange(len(words))] = rng.choice(words)  # a duplicate, as in the original
    return _SORT_PROMPT + ", ".join(words), ", ".join(sorted(words, reverse=True))


_MAKERS = {
    "which_is_heavier": _heavier_question,
    "first_letters": _first_letters_question,
    "reverse_sort": _reverse_sort_question,
}


def generate(source: str, n: int, seed: int) -> list[dict]:
    """Return ``n`` distinct records of ``source`` drawn with ``seed`` (same arguments, same
    records), each gold answer verified by ``check``. Raises UserError for an unknown source or
    more ambiguous sentences than were written."""
    if source not in SOURCES:
        raise UserError(f"unknown distractor source {source!r} (known: {', '.join(SOURCES)})")
    rng = random.Random(f"already_said_that:{source}:{seed}")  # str seeds hash with SHA-512
    if source == "ambiguous_sentences":
        if n > len(winograd.SENTENCES):
            raise UserError(
                f"ambiguous_sentences has {len(winograd.SENTENCES)} sentences; {n} were asked for"
            )
        rows = rng.sample(range(len(winograd.SENTENCES)), n)
        pairs = [(winograd.question_text(winograd.SENTENCES[i]), winograd.SENTENCES[i][2]) for i in rows]
    else:
        make, found = _MAKERS[source], {}
        for _ in range(200 * n + 1000):
            if len(found) == n:
                break
            drawn = make(rng)
            if drawn is not None:
                found.setdefault(drawn[0], drawn[1])
        if len(found) < n:
            raise UserError(f"{source}: only {len(found)} distinct questions found for n={n}")
        pairs = list(found.items())
    records = [_record(source, index, q, a) for index, (q, a) in enumerate(pairs, start=1)]
    for record in records:
        reason = check(record)
        if reason is not None:  # a bug in a generator, never a user error
            raise AssertionError(f"{record['id']}: {reason}: {record['question']!r}")
    return records


def check(record: dict) -> str | None:
    """Return None if the record's gold answer is what its question implies (recomputed from
    the question text), else the reason. Works on generated and original records; an original
    ambiguous sentence (not one of ours) gets the weaker check that every word of the gold
    referent begins a word of the question (the referent itself is a human judgement)."""
    source, question, answer = record.get("source"), record.get("question", ""), record.get("answer")
    if not isinstance(answer, str) or answer != answer.strip().lower() or not answer:
        return f"gold answer {answer!r} is not a non-empty lower-case string"
    if source == "basic":
        return None if (question, answer) == (BASIC_EXAMPLE["question"], "rome") else "unknown basic question"
    if source == "which_is_heavier":
        return _check_heavier(question, answer)
    if source == "first_letters":
        match = _QUOTED.search(question)
        if match is None:
            return "no quoted sentence in the question"
        initials = "".join(word[0] for word in _WORDS_IN.findall(match.group(1))).lower()
        return None if initials == answer else f"the initials spell {initials!r}, not {answer!r}"
    if source == "reverse_sort":
        _, sep, listed = question.rpartition(": ")
        if not sep:
            return "no ': ' before the list of words"
        expected = ", ".join(sorted((w.strip().lower() for w in listed.split(",")), reverse=True))
        return None if expected == answer else f"reverse-sorted the words are {expected!r}"
    if source == "ambiguous_sentences":
        index = winograd.BY_QUESTION.get(question)
        if index is None:
            said = re.findall(r"[a-z]+", question.lower())  # gold "piece" for "pieces" is fine
            missing = [w for w in re.findall(r"[a-z]+", answer) if not any(s.startswith(w) for s in said)]
            return f"gold words {missing} do not occur in the question" if missing else None
        reason = winograd.check_row(index)
        if reason is None and winograd.SENTENCES[index][2] != answer:
            reason = f"the written referent is {winograd.SENTENCES[index][2]!r}"
        return reason
    return f"unknown source {source!r}"


def _check_heavier(question: str, answer: str) -> str | None:
    """Return None if ``answer`` (yes/no) is right for a which-is-heavier question, else why."""
    match = _HEAVIER.match(question)
    if match is None:
        return "the question does not read 'Is <n> <unit> of <stuff> heavier than <n> <unit> of <stuff>?'"
    qty_a, unit_a, _, qty_b, unit_b, _ = match.groups()
    if unit_a not in UNIT_NAMES or unit_b not in UNIT_NAMES:
        return f"unknown unit in {unit_a!r}, {unit_b!r}"
    mass_a = int(qty_a) * GRAMS_PER_UNIT[UNIT_NAMES[unit_a]]
    mass_b = int(qty_b) * GRAMS_PER_UNIT[UNIT_NAMES[unit_b]]
    if mass_a == mass_b:
        return "the two masses are equal: neither is heavier"
    expected = "yes" if mass_a > mass_b else "no"
    return None if expected == answer else f"by unit conversion the answer is {expected!r}"
