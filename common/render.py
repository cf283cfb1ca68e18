"""The report as Markdown and as one standalone HTML page, from saved sections (``common.report``).

The page has one part per suite (``suite_parts``), whatever number of sets and models it holds:
first any failed validity check (``checks_failed``: which check, which task, what to do), then
what the suite measures (said once, folded), the notes, one headline table with a row per run
and a column per set (``suite_table``: the suite's main measure with its interval, from each
section's ``headline``), the suite's first figure with the runs that rest on few units named
under it, then each set's whole section folded. A suite whose sections carry no headline is
shown section by section as below.

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
from common.provenance import (
    BUDGET_ABOUT,
    BUDGET_FILES,
    BUDGET_TITLE,
    no_token_runs,
    provenance_line,
    provenance_tables,
    token_budget_by_suite,
    token_budget_lines,
    token_budget_table,
)
from common.report import FEW, PAPER_TITLE, section_record, summary_lines

TITLE = "Grounded reasoning benchmarks: report"
ABOUT_SUMMARY = "What it measures and how it is scored"
SUMMARY_FOLDED = "Every set's summary, as make all prints it (the numbers of the suites' tables below)"
SET_SUMMARY = "every table and figure, paired tests, examples"
OPEN_NOTES = 2  # a suite's notes are shown open up to this many, else folded


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


@dataclass
class SuitePart:
    """One suite as the page shows it: its sections (one per set, or one for all its sets), and
    the parts shown open at its top."""

    title: str  # "Canvas", "Blocks world": the sections' titles before ":"
    sections: list[dict[str, Any]]
    table: dict[str, Any] | None  # the headline table (``suite_table``); None: sections shown whole
    figure: dict[str, Any] | None  # the suite's first figure
    few: str  # the runs resting on few units (under the figure), or ""


def suite_parts(sections: Sequence[dict[str, Any]]) -> list[SuitePart]:
    """Return the sections grouped by suite, in the order their suites first appear."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for section in sections:
        groups.setdefault(section["suite"], []).append(section)
    parts = []
    for group in groups.values():
        figures = [f for s in group for f in s["figures"]]
        table = suite_table(group)
        parts.append(
            SuitePart(
                title=group[0]["title"].split(":")[0],
                sections=group,
                table=table,
                figure=figures[0] if figures and table else None,
                few=_few_line(group) if table else "",
            )
        )
    return parts


def suite_table(sections: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """Return a suite's headline table from its sections' ``headline`` cells: a row per run (in
    first-appearance order), a column per set, "-" where a run has no results on a set; titled
    with the measure. None when no section has a headline."""
    heads = [s["headline"] for s in sections if s.get("headline")]
    if not heads:
        return None
    runs: dict[str, dict[str, str]] = {}
    sets: dict[str, None] = {}
    for head in heads:
        for run, set_name, cell, _ in head["cells"]:
            runs.setdefault(run, {})[set_name] = cell
            sets[set_name] = None
    rows = [[run, *(cells.get(name, "-") for name in sets)] for run, cells in runs.items()]
    title = f"{heads[0]['measure']}: a row per run, a column per set"
    return {"title": title, "columns": ["run", *sets], "rows": rows, "untrusted": True, "headline": True}


def _few_line(sections: Sequence[dict[str, Any]]) -> str:
    """Return the line under a suite's figure saying which cells rest on fewer than FEW units
    (their intervals are wide or absent): per set and number of units, how many runs; or ""."""
    few: dict[tuple[str, int], int] = {}
    for s in sections:
        for _, set_name, _, n in (s.get("headline") or {}).get("cells", []):
            if n < FEW:
                few[(set_name, n)] = few.get((set_name, n), 0) + 1
    if not few:
        return ""
    unit = next(s["headline"]["unit"] for s in sections if s.get("headline"))
    parts = [
        f"{set_name}, {runs} run{'s' * (runs != 1)} on {n:,} {unit}{'s' * (n != 1)}"
        for (set_name, n), runs in few.items()
    ]
    return f"Cells resting on fewer than {FEW} {unit}s (wide intervals, or none): " + "; ".join(parts) + "."


def _set_blocks(section: dict[str, Any], part: SuitePart) -> list[Block]:
    """Return a set's blocks as folded under its suite: its ``layout``, all folded, without the
    figure the suite shows open at its top (embedded once)."""
    return [
        Block(b.kind, b.content, True)
        for b in layout(section)
        if not (b.kind == "figure" and b.content == part.figure)
    ]


def _about_parts(about: str) -> tuple[str, str]:
    """Return a suite's introduction as its first sentence (shown) and the rest (folded)."""
    text = " ".join(about.split())
    match = re.search(r"(?<=[.:])\s+(?=[A-Z*(])", text)
    return (text[: match.start()], text[match.end() :]) if match else (text, "")


def _checks(sections: Sequence[dict[str, Any]]) -> list[str]:
    """Return what a suite's sections say their validity checks ran on (``Section.checks``), each
    line once, prefixed by its set where the sets' lines differ."""
    lines: dict[str, None] = {}
    several = len({tuple(s.get("checks") or []) for s in sections}) > 1
    for s in sections:
        where = f"{s['title'].split(':', 1)[1].strip()}: " if several and ":" in s["title"] else ""
        lines.update({f"{where}{line}": None for line in s.get("checks") or []})
    return list(lines)


def _notes(sections: Sequence[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """Return a suite's failed validity checks (each section's ``failed`` and ``missed``: what opens
    the suite) and its other notes (folded), each said once and prefixed by its set when the suite
    has several sections."""
    failed: dict[str, None] = {}
    notes: dict[str, None] = {}
    for s in sections:
        where = f"{s['title'].split(':', 1)[1].strip()}: " if len(sections) > 1 and ":" in s["title"] else ""
        failed.update({f"{where}{line}": None for line in checks_failed(s)})
        notes.update({f"{where}{line}": None for line in s["notes"]})
    return list(failed), list(notes)


def checks_failed(section: dict[str, Any]) -> list[str]:
    """Return a section record's validity checks that failed: its gates (``failed``), then the
    checks not met that did not stop its analysis (``missed``)."""
    return [*(section.get("failed") or []), *(section.get("missed") or [])]


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
        *[f"- {line}" for line in top_lines(sections, prov)[0]],
        "",
        f"<details><summary>{SUMMARY_FOLDED}</summary>\n",
        *[f"- {line}" for line in top_lines(sections, prov)[1]],
        "\n</details>\n",
    ]
    for part in suite_parts(sections):
        parts += _markdown_suite(part, figure_links)
    if budget := token_budget_by_suite(prov):
        parts += [
            f"## {BUDGET_TITLE}\n",
            BUDGET_ABOUT + "\n",
            f"### {budget['title']}\n",
            markdown_table(budget),
            "",
        ]
        parts += _markdown_block(_budget_files(prov), "###", {})
    parts += ["## Provenance\n", provenance_line(prov), ""]
    for table_title, table in provenance_tables(prov):  # long lists: folded
        parts += _markdown_block(Block("table", {"title": table_title, **table}, True), "###", {})
    return "\n".join(parts) + "\n"


def _markdown_suite(part: SuitePart, figure_links: dict[str, str]) -> list[str]:
    """Return the Markdown lines of one suite, laid out as in the page (``_html_suite``)."""
    if part.table is None:
        return [line for section in part.sections for line in _markdown_section(section, 2, figure_links)]
    first, rest = _about_parts(part.sections[0]["about"])
    failed, notes = _notes(part.sections)
    lines = [f"## {part.title}\n", *[f"> **{html.escape(line, quote=False)}**\n" for line in failed]]
    lines.append(first + "\n")
    if rest:
        lines += [f"<details><summary>{ABOUT_SUMMARY}</summary>\n", rest + "\n", "</details>\n"]
    lines += [f"*{html.escape(line, quote=False)}*\n" for line in _checks(part.sections)]
    quotes = [f"> {note}\n" for note in notes]
    if len(notes) > OPEN_NOTES:
        quotes = [f"<details><summary>Notes ({len(notes)})</summary>\n", *quotes, "</details>\n"]
    lines += [*quotes, f"### {part.table['title']}\n", markdown_table(part.table), ""]
    if part.figure:
        lines += _markdown_block(Block("figure", part.figure, False), "###", figure_links)
    lines += [f"*{html.escape(part.few, quote=False)}*\n"] if part.few else []
    for section in part.sections:
        lines.append(f"<details><summary>{html.escape(section['title'])}: {SET_SUMMARY}</summary>\n")
        for block in _set_blocks(section, part):
            lines += _markdown_block(block, "###", figure_links)
        lines.append("</details>\n")
    return lines


def _markdown_section(section: dict[str, Any], level: int, figure_links: dict[str, str]) -> list[str]:
    """Return the Markdown lines of a section record under a heading of ``level``: what it
    measures, notes as quotes, then its ``layout`` (``figure_links`` maps a figure's path to its
    link; the path itself otherwise)."""
    hashes = "#" * level
    parts = [f"{hashes} {section['title']}\n"]
    parts += [f"> **{html.escape(line, quote=False)}**\n" for line in checks_failed(section)]
    parts.append(section["about"].strip() + "\n")
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
            _html_block(_budget_files(prov)),
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


def _budget_files(prov: dict[str, Any]) -> Block:
    """Return the token budget's table of every results file, folded under the table by suite."""
    files = token_budget_table(prov) or {"columns": [], "rows": []}
    return Block("table", {"title": BUDGET_FILES, **files, "untrusted": True}, True)


def top_lines(sections: Sequence[dict[str, Any]], prov: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Return the summary at the top of the report: the lines shown (validity checks that failed,
    replies cut at the token limit, the one line naming the runs that report no tokens) and the
    lines folded (every section's summary, as `make all` prints it: the suites' tables below
    show the same numbers)."""
    shown = [line for s in sections for line in checks_failed(s)] + token_budget_lines(prov)
    shown += [line] if (line := no_token_runs(prov)) else []
    return shown, summary_lines(sections, per_section=99)


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
    first, rest = _about_parts(part.sections[0]["about"])
    failed, notes = _notes(part.sections)
    body = [f'<h2 id="{_anchor(part)}">{esc(part.title)}</h2>', *map(_failed_html, failed)]
    body.append(f"<p>{_inline_markdown(first)}</p>")
    if rest:
        body.append(f"<details><summary>{ABOUT_SUMMARY}</summary><p>{_inline_markdown(rest)}</p></details>")
    body += [f'<p class="checks">{esc(line)}</p>' for line in _checks(part.sections)]
    quotes = "".join(f"<blockquote>{esc(note)}</blockquote>" for note in notes)
    if notes:
        body.append(
            quotes
            if len(notes) <= OPEN_NOTES
            else f"<details><summary>Notes ({len(notes)})</summary>{quotes}</details>"
        )
    body.append(f"<h3>{esc(part.table['title'])}</h3>{html_table(part.table)}")
    if part.figure:
        body.append(
            _html_block(Block("figure", part.figure, False)).replace(
                "<figure>", '<figure class="headline">', 1
            )
        )
    if part.few:
        body.append(f'<p class="few">{esc(part.few)}</p>')
    for section in part.sections:
        inner = "".join(_html_block(block) for block in _set_blocks(section, part))
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
