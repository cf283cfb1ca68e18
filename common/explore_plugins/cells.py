"""Datasette plugin of the explorer (``make explore`` passes ``--plugins-dir common/explore_plugins``):
long text cells folded with the full text one click away, a run's failures count a link to them
(``common.explore.cell_html``)."""

import sys
from pathlib import Path
from urllib.parse import quote

from datasette import hookimpl
from markupsafe import Markup

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout's common/, not another's
from common.explore import CSS, cell_html


@hookimpl
def render_cell(row, value, column):
    """Return a long text cell as a folded, escaped ``<details>``, a count as a link to what it
    counts; None leaves a cell to Datasette."""
    shown = cell_html(
        value, column, dict(zip(row.keys(), row, strict=True)) if hasattr(row, "keys") else None
    )
    return Markup(shown) if shown is not None else None  # cell_html escaped every character


@hookimpl
def extra_css_urls():
    """Return the explorer's style sheet (``common.explore.CSS``): every cell wraps."""
    return [{"url": "data:text/css," + quote(CSS)}]
