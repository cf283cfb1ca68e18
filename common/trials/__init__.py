"""The shared trials layer: question-and-answer trials, for every suite whose sets are in the
trial format (WorldSense's test set, the canvas sets, the toy suite of docs/suites.md).

``data``: the trial format and its loading (``load_testset``, read fast by ``bzip2`` and
``extract``); ``protocol``: the items a runner asks and the ask-and-re-prompt protocol
(``answer``, with a suite's reader of replies); ``baselines``: the ``random`` and ``oracle``
built-in models (``BASELINES``). A suite builds on this layer and never on another suite.
"""
