"""How the explorer (``make explore``: Datasette) shows the results database's cells, so that every
canned query fits a 1,280 px window and still gives every character one click away, and a run's
failures are one click from the list of runs.

A text longer than ``CUT`` characters (a prompt, a reply, a pair of run names) is shown as a
``<details>`` element: its first characters as the summary, the whole text inside, every
character escaped (a reply is model text: nothing in it becomes markup); the cell is at most
``FOLDED_WIDTH`` wide, ``WIDTH`` once opened, and wraps. A count that another canned query lists
(``LINKS``: a run's failures in the ``runs`` query) is a link to it. Shorter values and other
types are left to Datasette (None). The Datasette plugin in ``common/explore_plugins/`` calls
``cell_html`` for every cell it renders.
"""

import html
from collections.abc import Mapping

CUT = 70  # characters of a long text shown before it is opened
WIDTH = "26em"  # the widest an opened long text's cell gets
FOLDED_WIDTH = "13em"  # the widest a folded one's: a page of five such columns (a failure's) fits 1,280 px


# the page's tables wrap every cell, long ids and numbers included, so that no column pushes the
# table past the window (served by the plugin as a data: URL)
CSS = (
    ".rows-and-columns td,.rows-and-columns th{overflow-wrap:anywhere;word-break:break-word;min-width:3em}"
    f"details.long{{max-width:{WIDTH}}}details.long:not([open]){{max-width:{FOLDED_WIDTH}}}"
)
END_FIRST = ("prompt", "question")  # columns whose end matters most (the question comes last)


# a count that opens the canned query listing what it counts: its column -> (the column of the row
# holding the query's parameter, the link); only the ``runs`` query has a failures count beside a
# run_id (failures_by_group counts a group's, which the failures query does not list apart)
LINKS = {"failures": ("run_id", "failures?run={}")}


def cell_html(value: object, column: str = "", row: Mapping[str, object] | None = None) -> str | None:
    """Return the HTML of a long text cell (module docstring), or of a count that links to what it
    counts (``LINKS``, when ``row``, its row as a mapping or an ``sqlite3.Row``, has the column it
    needs), or None for Datasette's own; a prompt (``END_FIRST``) shows its last characters,
    where its question is."""
    if column in LINKS and row is not None and isinstance(value, int) and value > 0:
        key, link = LINKS[column]
        if key in row.keys() and isinstance(row[key], int):  # noqa: SIM118 (an sqlite3.Row: in looks at values)
            return f'<a href="{html.escape(link.format(row[key]))}">{value:,} {column}</a>'
    if not isinstance(value, str) or len(value) <= CUT:
        return None
    head = f"…{value[-CUT:].lstrip()}" if column in END_FIRST else f"{value[:CUT].rstrip()}…"
    return (
        '<details class="long" style="white-space:pre-wrap;overflow-wrap:anywhere">'
        f'<summary style="cursor:pointer">{html.escape(head)}</summary>{html.escape(value)}</details>'
    )
