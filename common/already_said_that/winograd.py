"""Winograd-style sentences written for this project: the ``ambiguous_sentences`` distractors.

Each schema is a pair of sentences that differ in a word or phrase; the pronoun refers to one
candidate in the first sentence and to the other in the second. A row is ``(sentence, question,
answer, other)``: the gold referent and the other candidate, both named in the sentence. The
referents are human judgements; ``check_row`` verifies what code can (both candidates occur in
the sentence, the twin sentence points at the other one, the question is a question).
"""

import re

# (sentence, question, answer, other): two consecutive rows form one schema.
# fmt: off
SENTENCES: tuple[tuple[str, str, str, str], ...] = (
    ("The plumber called the landlord because he needed to approve the repair.",
     "Who needed to approve the repair?", "landlord", "plumber"),
    ("The plumber called the landlord because he needed permission to start the repair.",
     "Who needed permission to start the repair?", "plumber", "landlord"),
    ("The bottle would not fit on the shelf because it was too tall.",
     "What was too tall?", "bottle", "shelf"),
    ("The bottle would not fit on the shelf because it was too cluttered.",
     "What was too cluttered?", "shelf", "bottle"),
    ("Anna lent her umbrella to Maria because she was going out in the rain.",
     "Who was going out in the rain?", "maria", "anna"),
    ("Anna lent her umbrella to Maria because she was staying at home all day.",
     "Who was staying at home all day?", "anna", "maria"),
    ("The teacher praised the student because she had solved the hardest problem.",
     "Who had solved the hardest problem?", "student", "teacher"),
    ("The teacher praised the student because she wanted to encourage the whole class.",
     "Who wanted to encourage the whole class?", "teacher", "student"),
    ("The dog would not cross the bridge because it was afraid.",
     "What was afraid?", "dog", "bridge"),
    ("The dog would not cross the bridge because it was swaying in the wind.",
     "What was swaying in the wind?", "bridge", "dog"),
    ("The bank refused the company a loan because it had too many debts.",
     "Which had too many debts?", "company", "bank"),
    ("The bank refused the company a loan because it had strict lending rules.",
     "Which had strict lending rules?", "bank", "company"),
    ("Peter could not lift the box onto the truck because it was too heavy.",
     "What was too heavy?", "box", "truck"),
    ("Peter could not lift the box onto the truck because it was too high.",
     "What was too high?", "truck", "box"),
    ("The river flooded the village because it had risen overnight.",
     "What had risen overnight?", "river", "village"),
    ("The river flooded the village because it was built on low ground.",
     "What was built on low ground?", "village", "river"),
    ("The hammer broke the window because it was made of thin glass.",
     "What was made of thin glass?", "window", "hammer"),
    ("The hammer broke the window because it was swung too hard.",
     "What was swung too hard?", "hammer", "window"),
    ("Tom beat Jack at chess because he had practised every evening.",
     "Who had practised every evening?", "tom", "jack"),
    ("Tom beat Jack at chess because he had never learned the openings.",
     "Who had never learned the openings?", "jack", "tom"),
    ("The coach shouted at the player because he had missed an easy goal.",
     "Who had missed an easy goal?", "player", "coach"),
    ("The coach shouted at the player because he was responsible for the results of the team.",
     "Who was responsible for the results of the team?", "coach", "player"),
    ("The cake did not fit in the tin because it was too wide.",
     "What was too wide?", "cake", "tin"),
    ("The cake did not fit in the tin because it was too narrow.",
     "What was too narrow?", "tin", "cake"),
    ("Lucy thanked Sarah because she had helped her move house.",
     "Who had helped with the move?", "sarah", "lucy"),
    ("Lucy thanked Sarah because she was grateful for the help with the move.",
     "Who was grateful for the help?", "lucy", "sarah"),
    ("The pilot reassured the passenger because he was nervous about the storm.",
     "Who was nervous about the storm?", "passenger", "pilot"),
    ("The pilot reassured the passenger because he had flown through many storms before.",
     "Who had flown through many storms before?", "pilot", "passenger"),
    ("The police officer stopped the driver because he was speeding.",
     "Who was speeding?", "driver", "police officer"),
    ("The police officer stopped the driver because he was checking every car on the road.",
     "Who was checking every car on the road?", "police officer", "driver"),
    ("The boy ignored his brother because he was busy with his homework.",
     "Who was busy with homework?", "boy", "brother"),
    ("The boy ignored his brother because he kept teasing him.",
     "Who kept teasing?", "brother", "boy"),
    ("The waiter apologised to the customer because he had brought the wrong dish.",
     "Who had brought the wrong dish?", "waiter", "customer"),
    ("The waiter apologised to the customer because he was upset about the long wait.",
     "Who was upset about the long wait?", "customer", "waiter"),
    ("The candle lit the room, but it burned out before midnight.",
     "What burned out before midnight?", "candle", "room"),
    ("The candle lit the room, but it stayed cold all night.",
     "What stayed cold all night?", "room", "candle"),
    ("Mark sold his bicycle to Paul because he was moving to a city with good buses.",
     "Who was moving to a city with good buses?", "mark", "paul"),
    ("Mark sold his bicycle to Paul because he needed a way to get to work.",
     "Who needed a way to get to work?", "paul", "mark"),
    ("The senator criticised the journalist because she had published false claims.",
     "Who had published false claims?", "journalist", "senator"),
    ("The senator criticised the journalist because she was running for re-election.",
     "Who was running for re-election?", "senator", "journalist"),
    ("The tree fell on the car, and it had to be sawn into logs to be removed.",
     "What had to be sawn into logs?", "tree", "car"),
    ("The tree fell on the car, and it had to be towed to a garage.",
     "What had to be towed to a garage?", "car", "tree"),
    ("The student asked the librarian for help because she could not find the book.",
     "Who could not find the book?", "student", "librarian"),
    ("The student asked the librarian for help because she knew where every book was kept.",
     "Who knew where every book was kept?", "librarian", "student"),
    ("The parrot annoyed the cat because it kept repeating the same word.",
     "What kept repeating the same word?", "parrot", "cat"),
    ("The parrot annoyed the cat because it was trying to sleep.",
     "What was trying to sleep?", "cat", "parrot"),
    ("Sophie could not hear the radio over the kettle because it was whistling loudly.",
     "What was whistling loudly?", "kettle", "radio"),
    ("Sophie could not hear the radio over the kettle because it was turned down low.",
     "What was turned down low?", "radio", "kettle"),
    ("The manager fired the clerk because he had stolen money from the till.",
     "Who had stolen money from the till?", "clerk", "manager"),
    ("The manager fired the clerk because he needed to cut costs.",
     "Who needed to cut costs?", "manager", "clerk"),
    ("The key did not open the lock because it was rusted shut.",
     "What was rusted shut?", "lock", "key"),
    ("The key did not open the lock because it had been cut badly.",
     "What had been cut badly?", "key", "lock"),
    ("Ben invited Sam to dinner because he had cooked too much food.",
     "Who had cooked too much food?", "ben", "sam"),
    ("Ben invited Sam to dinner because he had just arrived in town and knew nobody.",
     "Who had just arrived in town?", "sam", "ben"),
    ("The ship rescued the fishing boat because it was sinking.",
     "What was sinking?", "fishing boat", "ship"),
    ("The ship rescued the fishing boat because it was the closest vessel.",
     "What was the closest vessel?", "ship", "fishing boat"),
    ("The committee rejected the proposal because it was too expensive.",
     "What was too expensive?", "proposal", "committee"),
    ("The committee rejected the proposal because it was worried about the budget.",
     "What was worried about the budget?", "committee", "proposal"),
    ("Emily paid Rachel back because she had borrowed money last month.",
     "Who had borrowed money last month?", "emily", "rachel"),
    ("Emily paid Rachel back because she had asked for the money twice.",
     "Who had asked for the money twice?", "rachel", "emily"),
    ("The farmer chased the goat out of the garden because it was eating the lettuces.",
     "What was eating the lettuces?", "goat", "garden"),
    ("The farmer chased the goat out of the garden because it had just been planted.",
     "What had just been planted?", "garden", "goat"),
    ("Kate gave the last biscuit to Helen because she was still hungry.",
     "Who was still hungry?", "helen", "kate"),
    ("Kate gave the last biscuit to Helen because she was already full.",
     "Who was already full?", "kate", "helen"),
    ("The detective questioned the neighbour because he suspected him of lying.",
     "Who suspected someone of lying?", "detective", "neighbour"),
    ("The detective questioned the neighbour because he had seen the burglar.",
     "Who had seen the burglar?", "neighbour", "detective"),
    ("The bird could not open the seed because it was too hard.",
     "What was too hard?", "seed", "bird"),
    ("The bird could not open the seed because it was too young.",
     "What was too young?", "bird", "seed"),
)
# fmt: on


def question_text(row: tuple[str, str, str, str]) -> str:
    """Return the distractor question of a row: the sentence followed by its question."""
    return f"{row[0]} {row[1]}"


BY_QUESTION: dict[str, int] = {question_text(row): index for index, row in enumerate(SENTENCES)}


def mentions(text: str, phrase: str) -> bool:
    """Return whether ``phrase`` occurs in ``text`` as whole words, ignoring case."""
    return re.search(rf"\b{re.escape(phrase)}\b", text, flags=re.IGNORECASE) is not None


def check_row(index: int) -> str | None:
    """Return None if row ``index`` is consistent (both candidates named in the sentence and
    distinct, a question mark, its twin row shares the candidates and answers the other one),
    else the reason."""
    sentence, question, answer, other = SENTENCES[index]
    if answer == other or answer != answer.lower() or other != other.lower():
        return f"candidates {answer!r} and {other!r} must differ and be lower-case"
    for phrase in (answer, other):
        if not mentions(sentence, phrase):
            return f"candidate {phrase!r} does not occur in the sentence"
    if not question.endswith("?"):
        return "the question does not end with a question mark"
    twin = SENTENCES[index ^ 1]  # rows 2k and 2k+1 form a schema
    if (twin[2], twin[3]) != (other, answer):
        return f"its twin sentence does not point at the other candidate {other!r}"
    return None
