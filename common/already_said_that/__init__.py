"""Already Said That: a multi-turn memory suite. The model is shown words one by one (``MAIN
TASK - <word>``) and must say whether each was shown before, while unrelated distractor
questions are mixed into the same conversation; a conversation ends at the first wrong or
malformed main-task answer. The data side (``config``, ``wordnet``, ``samples``,
``distractors``, ``winograd``, ``original``, ``dataset``) builds set directories of word samples
and distractor pools from ``configs/already_said_that/*.yaml``; the runner side plays the
conversations and analyses them. The contract between the two is the set directory layout
(``manifest.json``, ``samples.jsonl``, ``distractors.jsonl``) described in the README.
"""
