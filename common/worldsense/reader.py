"""Reading the option a WorldSense reply gives, as a careful grader reads it.

The release's rule reads a reply that is an option, or names exactly one option as a whole word.
Real replies of small models (tests/worldsense/real_replies.jsonl, graded by hand) say more than
that, and the rule misread a quarter of them: "The situation you described is not possible"
(read POSSIBLE), "You're asking about the possible or impossible situation. The answer is
'POSSIBLE'." (read nothing), "The correct answer would be 'FALSE'" after "is not necessarily
true" (read nothing). ``extract_answer`` keeps the release's rule as its last step and reads,
before it, in this order:

1. the whole reply, or its last line, trimmed of spaces, quotes and punctuation, is an option;
   otherwise a base model's opening that goes on with the question's list (", or NOT
   POSSIBLE.") is set aside, as is a list of options repeated from the question ("'POSSIBLE'
   or 'IMPOSSIBLE'", "TRUE or FALSE", "possible or not");
2. the answer stated in so many words ("the answer is X", "the correct answer would be X",
   "Answer: X"): the one option so stated, unless the reply states other answers too
   ("Answer: YES! Answer: NO! Answer: IMPOSSIBLE!") or says the opposite in words ("is not
   possible" beside "the answer is possible"): no answer;
3. a reply that answers neither ("not possible or impossible", "not necessarily true", "can be
   either true or false", "the answer is either possible or impossibilite") gives none;
4. "not possible" is IMPOSSIBLE, "is a false statement" is FALSE, when those are the options;
5. the release's rule, on what is left: exactly one option named as a whole word (numbered
   options as options: "(2)", "option 2", not the 3 of "3 years").
"""

import re
from collections.abc import Sequence

_TRIM = " \t\r\n.,;:!?\"'`*()[]"
_QUOTE = r"[\"'`*(\[]*"
# "the answer is X", "the correct answer would be 'X'", "Answer: X", "the answer to the question is X"
_STATED = re.compile(
    rf"\banswer\b(?:\s+to\s+(?:the|this)\s+question(?:\s+above)?)?(?:\s+(?:is|would be|should be|will be))?"
    rf"(?:\s+indeed)?\s*[:\-]?\s*{_QUOTE}([\w-]+)",
    re.IGNORECASE,
)
_NEITHER = re.compile(
    r"\bnot\s+(?:either\s+)?(possible|true)\s+(?:or|nor)\s+(impossible|false)\b"
    r"|\bnot\s+(?:necessarily|entirely|directly)\s+(?:true|possible|false|impossible)\b"
    r"|\b(?:can|could)\s+be\s+either\b",
    re.IGNORECASE,
)
# "the answer is either ..." once the lists of options are out: two answers, one misspelt
_EITHER = re.compile(r"\banswer\s+(?:is|would be|should be|could be)\s+either\b", re.IGNORECASE)
# a base model going on with the question's list of options (", or NOT POSSIBLE.") before it
# writes anything else: not an answer
_CONTINUED = re.compile(r"\A\s*,?\s*(?:or|and)\b[^\n.]*[.\n]?", re.IGNORECASE)
# what negation turns into the other option: (pattern, the option it means, the option it needs)
_NEGATED = (
    (re.compile(r"\b(?:is|are|was|be|seems?)\s+not\s+possible\b", re.IGNORECASE), "IMPOSSIBLE"),
    (re.compile(r"\bis\s+(?:indeed\s+)?(?:a\s+)?false(?:\s+statement)?\b", re.IGNORECASE), "FALSE"),
)


def _spelled(word: str, options: Sequence[str]) -> str | None:
    """Return the option ``word`` is (ignoring case and surrounding punctuation), or None."""
    word = word.strip(_TRIM).casefold()
    return next((option for option in options if str(option).casefold() == word), None)


def _without_option_lists(text: str, options: Sequence[str]) -> str:
    """Return ``text`` without the lists of options it repeats ("'TRUE' or 'FALSE'", "either
    POSSIBLE or IMPOSSIBLE", "TRUE, FALSE"): two options or more joined by or, and, nor, commas
    or slashes."""
    if len(options) < 2:
        return text
    one = "|".join(re.escape(str(option)) for option in sorted(options, key=lambda o: -len(str(o))))
    item = rf"{_QUOTE}(?:{one})[\"'`*)\]]*"
    joined = rf"(?<![\w-])(?:either\s+)?{item}(?:\s*(?:,|/|\bor\b|\band\b|\bnor\b)\s*{item})+(?![\w-])"
    text = re.sub(joined, " ", text, flags=re.IGNORECASE)
    return re.sub(rf"(?<![\w-]){item}\s+or\s+not\b", " ", text, flags=re.IGNORECASE)  # "possible or not"


def _whole_words(text: str, options: Sequence[str]) -> list[str]:
    """Return the options named in ``text`` as whole words, in the order of ``options``; options
    that are numbers ("(1), (2), or (3)") only as such: "(2)", "option 2", or "2)" or "2." opening a
    line, not "3 years"."""
    numbered = all(str(option).isdigit() for option in options)
    found = []
    for option in options:
        k = re.escape(str(option))
        word = rf"\(\s*{k}\s*\)|\boption\s*{k}\b|^\s*{k}\s*[).:]" if numbered else rf"(?<![\w-]){k}(?![\w-])"
        if re.search(word, text, re.IGNORECASE | re.MULTILINE):
            found.append(option)
    return found


def extract_answer(completion: str, options: Sequence[str]) -> str | None:
    """Return the option ``completion`` gives, spelled as in ``options``, or None when it gives
    none or more than one (the rules of the module docstring, in order)."""
    lines = [line for line in completion.splitlines() if line.strip(_TRIM)]
    for part in (completion, lines[-1] if lines else ""):
        if (option := _spelled(part, options)) is not None:
            return option
    completion = _CONTINUED.sub("", completion, count=1)
    text = _without_option_lists(completion, options)
    negated = {meaning for pattern, meaning in _NEGATED if meaning in options and pattern.search(text)}
    words = {word.strip(_TRIM).casefold() for word in _STATED.findall(text)}
    stated = {option for word in words if (option := _spelled(word, options)) is not None}
    answers = {word for word in words if word in ("yes", "no") or _spelled(word, options) is not None}
    if len(stated) == 1 and len(answers) == 1:
        return None if negated - stated else stated.pop()
    if stated or _NEITHER.search(completion) or _EITHER.search(text):
        return None
    if len(negated) == 1:
        return negated.pop()
    found = _whole_words(text, options)
    return found[0] if len(found) == 1 else None
