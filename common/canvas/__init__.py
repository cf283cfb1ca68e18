"""The canvas suite: questions about shapes on a 2-D canvas, in the WorldSense trial format.

The rooms every suite has: ``generate`` (a trial set from its config), ``tasks/`` (what is
asked), ``baselines`` (``BASELINES``: random, oracle, the shortcuts of ``shortcuts``), ``run``
(the WorldSense protocol on canvas sets), ``scoring`` (the strict reader), ``analysis``,
``report``. Beside them the geometry and text: ``shapes``, ``relations``, ``describe``,
``reading``, ``draw``. The suite's page is docs/canvas.md; its conventions are in this
package's README.md.
"""
