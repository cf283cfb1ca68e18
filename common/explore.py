"""How the explorer (``make explore``: Datasette) shows the results database's cells, so that every
canned query fits a 1,280 px window and still gives every character one click away.

A text longer than ``CUT`` characters (a prompt, a reply, a pair of run names) is shown as a
``<details>`` element: its first characters as the summary, the whole text inside, every
character escaped (a reply is model text: nothing in it becomes markup); the cell is at most
``WIDTH`` wide and wraps. Shorter values and other types are left to Datasette (None). The
Datasette plugin in ``common/explore_plugins/`` calls ``cell_html`` for every cell it renders.
"""

import html

CUT = 70  # characters of a long text shown before it is opened
WIDTH = "26em"  # the widest a long text's cell gets (a page of several such columns fits 1,280 px)


# the page's tables wrap every cell, long ids and numbers included, so that no column pushes the
# table past the window (served by the plugin as a data: URL)
CSS = ".rows-and-columns td,.rows-and-columns th{overflow-wrap:anywhere;word-break:break-word;min-width:3em}"
END_FIRST = ("prompt", "question")  # columns whose end matters most (the question comes last)


def cell_html(value: object, column: str = "") -> str | None:
    """Return the HTML of a long text cell (module docstring), or None for Datasette's own; a
    prompt (``END_FIRST``) shows its last characters, where its question is."""
    if not isinstance(value, str) or len(value) <= CUT:
        return None
    head = f"…{value[-CUT:].lstrip()}" if column in END_FIRST else f"{value[:CUT].rstrip()}…"
    return (
        f'<details style="max-width:{WIDTH};white-space:pre-wrap;overflow-wrap:anywhere">'
        f'<summary style="cursor:pointer">{html.escape(head)}</summary>{html.escape(value)}</details>'
    )
