"""The report as one standalone HTML page (``render_html``): the layout of ``common.layout``, every
cell escaped, images embedded (base64), inline CSS, no script, no network.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from typing import Any

from common import paths
from common.layout import (
    ABOUT_SUMMARY,
    OPEN_NOTES,
    SET_SUMMARY,
    SUMMARY_FOLDED,
    TITLE,
    Block,
    SuitePart,
    about_parts,
    budget_files,
    checks_failed,
    layout,
    set_blocks,
    suite_checks,
    suite_notes,
    suite_parts,
    top_lines,
)
from common.provenance import (
    BUDGET_ABOUT,
    BUDGET_TITLE,
    provenance_line,
    provenance_tables,
    token_budget_by_suite,
)

# ---- HTML -------------------------------------------------------------------------------------------
CSS = """body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1200px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}h1{border-bottom:2px solid #444}h2{border-bottom:1px solid #bbb;
margin-top:2em}table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.86em}th,td{border:1px solid #ccc;
padding:.25em .55em;text-align:left;vertical-align:top}th{background:#f2f2f2}
tr:nth-child(even) td{background:#fafafa}
td.no{background:#fbe3e3!important}
img.thumb{max-width:160px;border:1px solid #ddd}
figure{margin:1em 0}figure img{max-width:100%;border:1px solid #ddd}
figcaption{font-size:.9em;color:#555}blockquote{border-left:4px solid #e0a800;margin:.5em 0;padding:.2em .8em;
background:#fff8e1}code{background:#f4f4f4;padding:0 .2em}.wide{overflow-x:auto}nav a{margin-right:1em}
details{margin:.3em 0 .3em .2em}summary{cursor:pointer;color:#234;padding:.15em 0}
details[open]>summary{font-weight:600}details>div,details>p,details>details,details>figure{margin-left:1.1em}
table.example td{max-width:28em;font-size:.95em}p.example{margin:.5em 0 0;font-size:.9em}
blockquote.failed{border-left-color:#c62828;background:#fdecea}p.few{font-size:.9em;color:#8a4b00}p.checks{font-size:.9em;color:#33691e}
figure.headline img{max-height:720px;max-width:100%;width:auto}"""


def render_html(sections: Sequence[dict[str, Any]], prov: dict[str, Any], title: str = TITLE) -> str:
    """Return the report as one self-contained HTML page (images embedded as base64 PNG, inline
    CSS, no script, no network)."""
    esc = html.escape
    parts = suite_parts(sections)
    body = [
        f"<h1>{esc(title)}</h1>",
        f"<p>Built {esc(prov['date'])} from commit <code>{esc(prov['commit'])}</code>"
        + (" (with uncommitted changes)" if prov["uncommitted_changes"] else "")
        + ".</p>",
        "<nav>"
        + "".join(_nav_links(parts))
        + ('<a href="#token-budget">Token budget</a>' if token_budget_by_suite(prov) else "")
        + '<a href="#provenance">Provenance</a></nav>',
        "<h2>Summary</h2>" + _html_summary(*top_lines(sections, prov)),
    ]
    for part in parts:
        body += _html_suite(part)
    if budget := token_budget_by_suite(prov):
        body += [
            f'<h2 id="token-budget">{esc(BUDGET_TITLE)}</h2>',
            f"<p>{_inline_markdown(BUDGET_ABOUT)}</p>",
            f"<h3>{esc(budget['title'])}</h3>{html_table(budget)}",
            _html_block(budget_files(prov)),
        ]
    body += ['<h2 id="provenance">Provenance</h2>', f"<p>{esc(provenance_line(prov))}</p>"]
    for table_title, table in provenance_tables(prov):  # long lists: folded
        body.append(_html_block(Block("table", {"title": table_title, **table}, True)))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def _html_summary(shown: Sequence[str], folded: Sequence[str]) -> str:
    """Return the summary's HTML: the lines shown as a list, the rest folded."""
    esc = html.escape
    items = "".join(f"<li>{esc(line)}</li>" for line in shown)
    rest = "".join(f"<li>{esc(line)}</li>" for line in folded)
    return (
        f"<ul>{items}</ul>" if items else ""
    ) + f"<details><summary>{SUMMARY_FOLDED}</summary><ul>{rest}</ul></details>"


def _nav_links(parts: Sequence[SuitePart]) -> list[str]:
    """Return the page's links to its suites (to each section, where a suite shows them whole)."""
    esc = html.escape
    if all(part.table for part in parts):
        return [f'<a href="#{_anchor(part)}">{esc(part.title)}</a>' for part in parts]
    shown = [s for part in parts for s in (part.sections if not part.table else [part])]
    return [
        f'<a href="#{_anchor(s)}">{esc(s["title"] if isinstance(s, dict) else s.title)}</a>' for s in shown
    ]


def _html_suite(part: SuitePart) -> list[str]:
    """Return the HTML of one suite (module docstring): heading, failed checks, the first sentence of
    what it measures and the rest folded, notes, the headline table, the figure, then every set's
    section folded whole. Without a headline table, its sections one by one."""
    if part.table is None:
        return [line for section in part.sections for line in _html_section(section)]
    esc = html.escape
    first, rest = about_parts(part.sections[0]["about"])
    failed, notes = suite_notes(part.sections)
    body = [f'<h2 id="{_anchor(part)}">{esc(part.title)}</h2>', *map(_failed_html, failed)]
    body.append(f"<p>{_inline_markdown(first)}</p>")
    if rest:
        body.append(f"<details><summary>{ABOUT_SUMMARY}</summary><p>{_inline_markdown(rest)}</p></details>")
    body += [f'<p class="checks">{esc(line)}</p>' for line in suite_checks(part.sections)]
    quotes = "".join(f"<blockquote>{esc(note)}</blockquote>" for note in notes)
    if notes:
        body.append(
            quotes
            if len(notes) <= OPEN_NOTES
            else f"<details><summary>Notes ({len(notes)})</summary>{quotes}</details>"
        )
    body.append(f"<h3>{esc(part.table['title'])}</h3>{html_table(part.table)}")
    if part.rest:
        body.append(_html_block(Block("table", part.rest, True)))
    if part.figure:
        body.append(
            _html_block(Block("figure", part.figure, False)).replace(
                "<figure>", '<figure class="headline">', 1
            )
        )
    if part.few:
        body.append(f'<p class="few">{esc(part.few)}</p>')
    for section in part.sections:
        inner = "".join(_html_block(block) for block in set_blocks(section, part))
        summary = f"{section['title']}: {SET_SUMMARY}"
        body.append(
            f'<details id="{_anchor(section)}-set"><summary>{esc(summary)}</summary>{inner}</details>'
        )
    return body


def _html_section(section: dict[str, Any]) -> list[str]:
    """Return the HTML of a section record: heading, failed checks, what it measures, notes, then its
    ``layout``."""
    esc = html.escape
    body = [
        f'<h2 id="{_anchor(section)}">{esc(section["title"])}</h2>',
        *map(_failed_html, checks_failed(section)),
    ]
    body.append(f"<p>{_inline_markdown(section['about'])}</p>")
    body += [f"<blockquote>{esc(note)}</blockquote>" for note in section["notes"]]
    return body + [_html_block(block) for block in layout(section)]


def _failed_html(line: str) -> str:
    """Return a failed validity check as the page shows it, first under its suite's heading."""
    return f'<blockquote class="failed"><strong>Failed check</strong>: {html.escape(line)}</blockquote>'


def _html_block(block: Block) -> str:
    """Return the HTML of one block: a titled table, an embedded figure, or example tables; a
    folded one inside <details> with its title as the summary."""
    esc, content = html.escape, block.content
    if block.kind == "figure":
        data = base64.b64encode((paths.ROOT / content["path"]).read_bytes()).decode("ascii")
        title = content["caption"]
        body = (
            f'<figure><img alt="{esc(title)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{esc(title)}</figcaption></figure>"
        )
        if not block.folded:
            return body
    elif block.kind == "examples":
        title = content["summary"]
        body = "".join(
            (f'<p class="example">{esc(t["title"])}</p>' if t["title"] else "")
            + (html_table(t) if t["rows"] else "")
            for t in content["tables"]
        )
        body += "".join(_html_block(Block("examples", child, True)) for child in content.get("children", []))
    else:
        title, body = content["title"], html_table(content)
        if not block.folded:
            return f"<h3>{esc(title)}</h3>{body}"
    return f"<details><summary>{esc(title)}</summary>{body}</details>"


def _anchor(section: dict[str, Any] | SuitePart) -> str:
    """Return the HTML id of a section or a suite: its title in lower case, runs of other
    characters as "-" (titles differ where a suite has several sections, e.g. two blocks-world
    sets)."""
    title = section.title if isinstance(section, SuitePart) else section["title"]
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def html_table(table: dict[str, Any]) -> str:
    """Return a flat table as HTML, every cell escaped; a ``same`` column's False cells are
    highlighted; a table of model text (``untrusted``) has the class ``example``."""
    esc = html.escape
    same = table["columns"].index("same") if "same" in table["columns"] else None
    pictures = table.get("pictures")
    head = ("<th>picture</th>" if pictures else "") + "".join(f"<th>{esc(c)}</th>" for c in table["columns"])
    rows = []
    for index, row in enumerate(table["rows"]):
        cells = _picture_cell(pictures[index]) if pictures else ""
        cells += "".join(
            f"<td{' class=no' if i == same and v == 'False' else ''}>{esc(str(v))}</td>"
            for i, v in enumerate(row)
        )
        rows.append(f"<tr>{cells}</tr>")
    kind = (
        ' class="headline"' if table.get("headline") else ' class="example"' if table.get("untrusted") else ""
    )
    table_html = f"<table{kind}><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    return f'<div class="wide">{table_html}</div>'


def _picture_cell(data: str) -> str:
    """Return the table cell of an item's thumbnail (base64 PNG; "" for none): an embedded image,
    taken only when ``data`` is base64 text (nothing else can reach the page)."""
    if not data or not _BASE64.fullmatch(data):
        return "<td></td>"
    return f'<td><img class="thumb" alt="the item as a picture" src="data:image/png;base64,{data}"></td>'


_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")


def _inline_markdown(text: str) -> str:
    """Return a paragraph of Markdown as HTML: escaped, with `code`, **bold** and *italic* spans
    (no emphasis is read inside a code span)."""
    parts = re.split(r"(`[^`]+`)", " ".join(text.split()))
    out = []
    for part in parts:
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            out.append(f"<code>{html.escape(part[1:-1])}</code>")
            continue
        part = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", html.escape(part))
        out.append(re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<em>\1</em>", part))
    return "".join(out)
