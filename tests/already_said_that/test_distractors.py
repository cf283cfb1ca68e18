"""Already Said That distractors: every generated gold answer re-checked on many seeds, the
checker catches wrong golds, generation is deterministic, the Winograd table is consistent."""

from fractions import Fraction

import pytest

from common.already_said_that import distractors, winograd
from common.already_said_that.distractors import SOURCES, check, generate, question_words
from common.errors import UserError

SEEDS = range(25)
SIZES = {
    "which_is_heavier": 200,
    "first_letters": 200,
    "reverse_sort": 200,
    "ambiguous_sentences": len(winograd.SENTENCES),
}


@pytest.mark.parametrize("source", SOURCES)
def test_every_gold_answer_rechecked_on_many_seeds(source):
    for seed in SEEDS:
        records = generate(source, SIZES[source], seed)
        assert len(records) == SIZES[source]
        assert len({r["question"] for r in records}) == len(records), "questions repeat in a pool"
        for index, record in enumerate(records, start=1):
            assert record["id"] == f"{source}-{index:04d}" and record["source"] == source
            assert check(record) is None, record
            assert record["answer"] == record["answer"].strip().lower()
            assert record["words"] == question_words(record["question"])


@pytest.mark.parametrize("source", SOURCES)
def test_generation_is_deterministic_and_depends_on_the_seed(source):
    assert generate(source, 50, 3) == generate(source, 50, 3)
    assert generate(source, 50, 3) != generate(source, 50, 4)


@pytest.mark.parametrize("source", SOURCES)
def test_check_rejects_a_wrong_gold(source):
    for record in generate(source, 30, 1):
        wrong = dict(record)
        if source == "which_is_heavier":
            wrong["answer"] = "no" if record["answer"] == "yes" else "yes"
        elif source == "reverse_sort":
            items = record["answer"].split(", ")
            wrong["answer"] = ", ".join(sorted(items))  # ascending, not reversed
        elif source == "first_letters":
            wrong["answer"] = record["answer"][1:] + record["answer"][0]
        else:
            row = winograd.SENTENCES[winograd.BY_QUESTION[record["question"]]]
            wrong["answer"] = row[3]  # the other candidate
        if wrong["answer"] == record["answer"]:
            continue  # e.g. a sorted list equal to its reverse: nothing to break
        assert check(wrong) is not None, wrong


def test_which_is_heavier_gold_is_unit_conversion_without_near_ties():
    records = generate("which_is_heavier", 500, 11)
    answers = [r["answer"] for r in records]
    assert 0.4 < answers.count("yes") / len(answers) < 0.6
    different_units = traps = 0
    for record in records:
        match = distractors._HEAVIER.match(record["question"])
        qa, ua, stuff_a, qb, ub, stuff_b = match.groups()
        light_first = stuff_a in distractors.LIGHT_MATERIALS
        light, dense = (stuff_a, stuff_b) if light_first else (stuff_b, stuff_a)
        assert light in distractors.LIGHT_MATERIALS and dense in distractors.DENSE_MATERIALS
        traps += light_first == (record["answer"] == "yes")  # the light stuff is the heavier side
        grams = distractors.GRAMS_PER_UNIT
        mass_a = int(qa) * grams[distractors.UNIT_NAMES[ua]]
        mass_b = int(qb) * grams[distractors.UNIT_NAMES[ub]]
        assert max(mass_a, mass_b) >= Fraction(105, 100) * min(mass_a, mass_b)
        different_units += distractors.UNIT_NAMES[ua] != distractors.UNIT_NAMES[ub]
    assert different_units > 100  # conversion is really needed in many questions
    assert 150 < traps < 350  # about half the time the lighter material weighs more


def test_which_is_heavier_checker_on_hand_written_questions():
    def rec(question, answer):
        return {"source": "which_is_heavier", "question": question, "answer": answer}

    assert check(rec("Is 1 kilogram of feathers heavier than 2 pounds of lead?", "yes")) is None
    assert check(rec("Is 16 ounces of sand heavier than 1 pound of iron?", "no")) is not None  # a tie
    assert check(rec("Is 3 pounds of wool heavier than 1 kilogram of gold?", "yes")) is None
    assert "conversion" in check(rec("Is 3 pounds of wool heavier than 1 kilogram of gold?", "no"))
    assert check(rec("Is 3 stones of wool heavier than 1 kilogram of gold?", "yes")) is not None


def test_first_letters_and_reverse_sort_checkers_on_hand_written_questions():
    fl = {
        "source": "first_letters",
        "answer": "cat",
        "question": 'What word do the first letters spell: "Cows always talk."?',
    }
    assert check(fl) is None
    assert check({**fl, "answer": "cow"}) is not None
    # a word with an apostrophe is one word (its initial counts once)
    assert check({**fl, "question": 'Spell: "Clark\'s ant tires."?'}) is None
    rs = {
        "source": "reverse_sort",
        "question": "Sort in reverse alphabetical order: hill, ant, hilltop, ant",
        "answer": "hilltop, hill, ant, ant",
    }
    assert check(rs) is None
    assert check({**rs, "answer": "hilltop, hill, ant"}) is not None  # a duplicate dropped


def test_reverse_sort_gold_is_in_the_asked_format():
    for record in generate("reverse_sort", 200, 5):
        listed = record["question"].rpartition(": ")[2].split(", ")
        assert record["answer"] == ", ".join(sorted(listed, reverse=True))
        assert 6 <= len(listed) <= 10
    assert any(
        len(set(r["answer"].split(", "))) < len(r["answer"].split(", "))
        for r in generate("reverse_sort", 200, 5)
    ), "no question with a repeated word"


def test_winograd_table_is_large_and_consistent():
    assert len(winograd.SENTENCES) >= 60 and len(winograd.SENTENCES) % 2 == 0
    assert [winograd.check_row(i) for i in range(len(winograd.SENTENCES))] == [None] * len(winograd.SENTENCES)
    assert len(winograd.BY_QUESTION) == len(winograd.SENTENCES)  # no repeated question
    # the referents split evenly between the first- and second-named candidate of a schema
    first = sum(row[0].lower().find(row[2]) < row[0].lower().find(row[3]) for row in winograd.SENTENCES)
    assert first == len(winograd.SENTENCES) // 2


def test_check_row_catches_a_broken_row(monkeypatch):
    rows = list(winograd.SENTENCES)
    rows[1] = (rows[1][0], rows[1][1], rows[1][3], rows[1][2])  # twin now points at the same one
    monkeypatch.setattr(winograd, "SENTENCES", tuple(rows))
    assert "twin" in winograd.check_row(0)
    rows[0] = ("The tap dripped.", "What dripped?", "sink", "tap")
    monkeypatch.setattr(winograd, "SENTENCES", tuple(rows))
    assert "does not occur" in winograd.check_row(0)


def test_original_style_ambiguous_records_get_the_weaker_check():
    record = {
        "source": "ambiguous_sentences",
        "answer": "piece",
        "question": "Mary played one of her favourite pieces on the flute. What has she loved?",
    }
    assert check(record) is None
    assert check({**record, "answer": "violin"}) is not None


def test_question_words_follow_the_original_rule():
    words = question_words("Don't sort THE words: the, apple, Apple's, 5kg")
    assert words == ["sort", "the", "words", "apple", "kg"]


def test_bad_requests_are_user_errors():
    with pytest.raises(UserError, match="unknown distractor source"):
        generate("riddles", 3, 0)
    with pytest.raises(UserError, match="sentences"):
        generate("ambiguous_sentences", len(winograd.SENTENCES) + 1, 0)
    assert check({"source": "riddles", "question": "?", "answer": "x"}) is not None
    assert check({"source": "which_is_heavier", "question": "?", "answer": "Yes"}) is not None
