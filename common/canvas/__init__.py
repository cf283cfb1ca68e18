"""The canvas suite: questions about shapes on a 2-D canvas, in the trial format
(``common.trials``).

The rooms every suite has: ``generate`` (a trial set from its config), ``tasks/`` (what is
asked), ``baselines`` (``BASELINES``: random, oracle, the shortcuts of ``shortcuts``), ``run``
(the trials protocol with the strict reader), ``scoring`` (the strict reader), ``analysis``,
``report``. Beside them the geometry and text: ``shapes``, ``relations``, ``describe``,
``reading``, ``draw``. The suite's page is docs/canvas.md; its conventions are in this
package's README.md.
"""

from common.suite import Suite

SUITE = Suite(
    name="canvas",
    title="Canvas",
    unit="item (its variants share a canvas and a question)",
    headline="strict: the one answer read is gold",
    answer_row="trial",
    rules=("contains",),
    run_scripts=("scripts/ask_model.py",),
    record_fields=("resp",),
    ask="common.trials.ask:ask_set",  # the trials layer's: every trial asked with the suite's protocol
    item_texts=True,
    extra={"audit": "common.canvas.audit:write_audit", "power": "common.canvas.power:write_power"},
)
