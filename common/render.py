"""The report as Markdown (``render_markdown``) and as one standalone HTML page (``render_html``,
made in ``common.html_page``), from saved sections (``common.report``), both laid out by
``common.layout``.

The HTML embeds its images (base64), has inline CSS, no script and needs no network; the
Markdown links the figures.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from common.analysis import Section
from common.html_page import html_table as html_table
from common.html_page import render_html as render_html
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
    set_blocks,
    suite_checks,
    suite_notes,
    top_lines,
)
from common.layout import layout as layout
from common.layout import suite_parts as suite_parts
from common.provenance import (
    BUDGET_ABOUT,
    BUDGET_TITLE,
    provenance_line,
    provenance_tables,
    token_budget_by_suite,
)
from common.report import section_record


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
        parts += _markdown_block(budget_files(prov), "###", {})
    parts += ["## Provenance\n", provenance_line(prov), ""]
    for table_title, table in provenance_tables(prov):  # long lists: folded
        parts += _markdown_block(Block("table", {"title": table_title, **table}, True), "###", {})
    return "\n".join(parts) + "\n"


def _markdown_suite(part: SuitePart, figure_links: dict[str, str]) -> list[str]:
    """Return the Markdown lines of one suite, laid out as in the page (``_html_suite``)."""
    if part.table is None:
        return [line for section in part.sections for line in _markdown_section(section, 2, figure_links)]
    first, rest = about_parts(part.sections[0]["about"])
    failed, notes = suite_notes(part.sections)
    lines = [f"## {part.title}\n", *[f"> **{html.escape(line, quote=False)}**\n" for line in failed]]
    lines.append(first + "\n")
    if rest:
        lines += [f"<details><summary>{ABOUT_SUMMARY}</summary>\n", rest + "\n", "</details>\n"]
    lines += [f"*{html.escape(line, quote=False)}*\n" for line in suite_checks(part.sections)]
    quotes = [f"> {note}\n" for note in notes]
    if len(notes) > OPEN_NOTES:
        quotes = [f"<details><summary>Notes ({len(notes)})</summary>\n", *quotes, "</details>\n"]
    lines += [*quotes, f"### {part.table['title']}\n", markdown_table(part.table), ""]
    if part.rest:
        lines += _markdown_block(Block("table", part.rest, True), "###", figure_links)
    if part.figure:
        lines += _markdown_block(Block("figure", part.figure, False), "###", figure_links)
    lines += [f"*{html.escape(part.few, quote=False)}*\n"] if part.few else []
    for section in part.sections:
        lines.append(f"<details><summary>{html.escape(section['title'])}: {SET_SUMMARY}</summary>\n")
        for block in set_blocks(section, part):
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
