"""The report as Markdown and as one standalone HTML page, from saved sections (``common.report``).

Both formats lay a section out the same way (``layout``); the provenance's long tables (models,
inputs, configs) are folded under its first sentence. A section whose suite marks its
headline (``Section.headline_tables``) opens with that compact comparison of the runs and its
main figure; the paper's table, the detail tables and the other figures follow folded
(``<details>``: in the page, and in the Markdown, which GitHub renders the same way). Under the
table of paired tests (``Section.paired_table``) come a few examples of each test's discordant
units, and at the end of the section a few failures of each run (``section["examples"]``, from
the results database: ``common.examples``); their cells are model text, escaped in both formats.
A section that marks no headline is shown whole, as before: paper, tables, figures.

The HTML embeds its images (base64), has inline CSS, no script and needs no network; the
Markdown links the figures.
"""

import base64
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from common import paths
from common.analysis import Section
from common.provenance import provenance_line, provenance_tables, token_budget_lines, token_budget_table
from common.report import PAPER_TITLE, section_record, summary_lines

TITLE = "Grounded reasoning benchmarks: report"
BUDGET_TITLE = "Token budget of the model runs"
BUDGET_ABOUT = (
    "How each model run's replies used `max_tokens`: a reply cut at the limit (finish_reason "
    "`length`) while the model was still thinking has no answer and is scored wrong. A share above "
    "a few percent means the budget was too small: raise it and rerun with `--retry-truncated`. "
    "Reasoning tokens are the server's count, or the reasoning's share of the characters when it "
    "reports none; answer tokens are the rest of the completion tokens."
)


@dataclass
class Block:
    """One part of a section as shown: a table, a figure or a group of example tables."""

    kind: str  # "table" | "figure" | "examples"
    # a flat table with its title, a figure record, or examples: {"summary", "tables", "children"},
    # children being examples too (the paired tests' examples, one group under the paired table)
    content: dict[str, Any]
    folded: bool  # inside <details>


def layout(section: dict[str, Any]) -> list[Block]:
    """Return the parts of a section record in the order shown, each open or folded (module
    docstring). ``section`` is not modified."""
    tables, figures = section["tables"], section["figures"]
    headline = section.get("headline_tables")
    paper = [{"title": PAPER_TITLE, **section["paper"]}] if section["paper"] else []
    examples = section.get("examples") or {}
    if headline is None:
        blocks = [Block("table", t, False) for t in [*paper, *tables]]
        blocks += [Block("figure", f, False) for f in figures]
    else:
        blocks = [Block("table", t, False) for t in tables[:headline]]
        blocks += [Block("figure", f, False) for f in figures[:1]]
        blocks += [Block("table", t, True) for t in [*paper, *tables[headline:]]]
        blocks += [Block("figure", f, True) for f in figures[1:]]
    at = next(
        (i + 1 for i, b in enumerate(blocks) if b.content.get("title") == section.get("paired_table")), None
    )
    pairs = examples.get("pairs", [])
    tests = "the paired test" if len(pairs) == 1 else f"the {len(pairs)} paired tests"
    summary = f"Examples behind {tests}: a few units where each run did better"
    group = [Block("examples", {"summary": summary, "tables": [], "children": pairs}, True)] if pairs else []
    blocks = blocks[:at] + group + blocks[at:] if at is not None else blocks + group
    return blocks + ([Block("examples", examples["failures"], True)] if examples.get("failures") else [])


# ---- Markdown ---------------------------------------------------------------------------------------
def section_markdown(section: Section) -> str:
    """Return one section as a Markdown document (``scripts/analyse_results.py --markdown``): as in
    the report, with its figures linked by their paths relative to the project root."""
    return "\n".join(_markdown_section(section_record(section), 1, {})) + "\n"


def render_markdown(
    sections: Sequence[dict[str, Any]], prov: dict[str, Any], figure_links: dict[str, str], title: str = TITLE
) -> str:
    """Return the report as Markdown; ``figure_links`` maps a figure's path to the link to use."""
    parts = [
        f"# {title}\n",
        f"Built {prov['date']} from commit `{prov['commit']}`"
        + (" (with uncommitted changes)" if prov["uncommitted_changes"] else "")
        + ".\n",
        "## Summary\n",
        *[f"- {line}" for line in summary_lines(sections, per_section=99) + token_budget_lines(prov)],
        "",
    ]
    if budget := token_budget_table(prov):
        parts += [f"## {BUDGET_TITLE}\n", BUDGET_ABOUT + "\n", markdown_table(budget), ""]
    for section in sections:
        parts += _markdown_section(section, 2, figure_links)
    parts += ["## Provenance\n", provenance_line(prov), ""]
    for table_title, table in provenance_tables(prov):  # long lists: folded
        parts += _markdown_block(Block("table", {"title": table_title, **table}, True), "###", {})
    return "\n".join(parts) + "\n"


def _markdown_section(section: dict[str, Any], level: int, figure_links: dict[str, str]) -> list[str]:
    """Return the Markdown lines of a section record under a heading of ``level``: what it
    measures, notes as quotes, then its ``layout`` (``figure_links`` maps a figure's path to its
    link; the path itself otherwise)."""
    hashes = "#" * level
    parts = [f"{hashes} {section['title']}\n", section["about"].strip() + "\n"]
    parts += [f"> {note}\n" for note in section["notes"]]
    for block in layout(section):
        parts += _markdown_block(block, hashes + "#", figure_links)
    return parts


def _markdown_block(block: Block, hashes: str, figure_links: dict[str, str]) -> list[str]:
    """Return the Markdown lines of one block: a titled table, a figure, or example tables; a
    folded one inside <details> with its title as the summary."""
    content = block.content
    if block.kind == "figure":
        link = figure_links.get(content["path"], content["path"])
        body, title = [f"![{content['caption']}]({link})\n"], content["caption"]
        if not block.folded:
            return [*body, f"*{content['caption']}*\n"]
    elif block.kind == "examples":
        body, title = [], content["summary"]
        for table in content["tables"]:
            shown = [markdown_table(table), ""] if table["rows"] else []
            body += [*([f"**{table['title']}**\n"] if table["title"] else []), *shown]
        for child in content.get("children", []):
            body += _markdown_block(Block("examples", child, True), hashes, figure_links)
    else:
        body, title = [markdown_table(content), ""], content["title"]
        if not block.folded:
            return [f"{hashes} {title}\n", *body]
    return [f"<details><summary>{html.escape(title)}</summary>\n", *body, "</details>\n"]


def markdown_table(table: dict[str, Any]) -> str:
    """Return a flat table (``{"columns", "rows"}``) as Markdown, pipes in cells escaped; a table
    marked ``untrusted`` (model text) has ``&``, ``<`` and ``>`` escaped too, so that no reply
    becomes markup."""

    def cell(value: Any) -> str:
        text = str(value).replace("|", "\\|")
        return html.escape(text, quote=False) if table.get("untrusted") else text

    def cells(values: Sequence[Any]) -> str:
        return "| " + " | ".join(map(cell, values)) + " |"

    return "\n".join(
        [cells(table["columns"]), "|" + "---|" * len(table["columns"]), *map(cells, table["rows"])]
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
table.example td{max-width:28em;font-size:.95em}p.example{margin:.5em 0 0;font-size:.9em}"""


def render_html(sections: Sequence[dict[str, Any]], prov: dict[str, Any], title: str = TITLE) -> str:
    """Return the report as one self-contained HTML page (images embedded as base64 PNG, inline
    CSS, no script, no network)."""
    esc = html.escape
    body = [
        f"<h1>{esc(title)}</h1>",
        f"<p>Built {esc(prov['date'])} from commit <code>{esc(prov['commit'])}</code>"
        + (" (with uncommitted changes)" if prov["uncommitted_changes"] else "")
        + ".</p>",
        "<nav>"
        + "".join(f'<a href="#{_anchor(s)}">{esc(s["title"])}</a>' for s in sections)
        + '<a href="#provenance">Provenance</a></nav>',
        "<h2>Summary</h2><ul>"
        + "".join(f"<li>{esc(line)}</li>" for line in summary_lines(sections, 99) + token_budget_lines(prov))
        + "</ul>",
    ]
    if budget := token_budget_table(prov):
        body += [
            f"<h2>{esc(BUDGET_TITLE)}</h2>",
            f"<p>{_inline_markdown(BUDGET_ABOUT)}</p>",
            html_table(budget),
        ]
    for section in sections:
        body += _html_section(section)
    body += ['<h2 id="provenance">Provenance</h2>', f"<p>{esc(provenance_line(prov))}</p>"]
    for table_title, table in provenance_tables(prov):  # long lists: folded
        body.append(_html_block(Block("table", {"title": table_title, **table}, True)))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def _html_section(section: dict[str, Any]) -> list[str]:
    """Return the HTML of a section record: heading, what it measures, notes, then its ``layout``."""
    esc = html.escape
    body = [f'<h2 id="{_anchor(section)}">{esc(section["title"])}</h2>']
    body.append(f"<p>{_inline_markdown(section['about'])}</p>")
    body += [f"<blockquote>{esc(note)}</blockquote>" for note in section["notes"]]
    return body + [_html_block(block) for block in layout(section)]


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


def _anchor(section: dict[str, Any]) -> str:
    """Return the HTML id of a section: its title in lower case, runs of other characters as "-"
    (titles differ where a suite has several sections, e.g. two blocks-world sets)."""
    return re.sub(r"[^a-z0-9]+", "-", section["title"].lower()).strip("-")


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
    kind = ' class="example"' if table.get("untrusted") else ""
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
