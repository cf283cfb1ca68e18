"""The one renderer of every suite's analysis, and the one report (``results/report.html`` / ``.md``).

A suite's analysis is a ``common.analysis.Section``; this module turns it into text three ways,
the same for every suite:

- terminal text (``section_text``; what ``scripts/analyse_results.py`` prints): a banner with the
  section's heading, its notes, the paper's table if any, then every table under its title
  between 74-wide rules (the layout of the WorldSense release's script);
- Markdown and HTML, from the section's record (``section_record``: tables as rows of display
  strings), which ``scripts/analyse_results.py --section`` saves as JSON (with the SHA-256 of
  every input file) and ``scripts/build_report.py`` assembles with the provenance
  (``common.provenance``). The HTML embeds its images (base64) and needs no network; the
  Markdown links them.

Table cells are written by the suites with the helpers here, so that every suite shows an
interval as ``x [lo, hi]`` (``interval_text``), a p-value with two significant digits
(``p_text``) and an exact paired test as the same three columns (``paired_cells``).
"""

import base64
import html
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from common import paths
from common.analysis import Section
from common.errors import DataError
from common.jsonl import sha256_file, write_json
from common.provenance import provenance_line, provenance_tables, token_budget_lines, token_budget_table

SCHEMA = 1  # version of the saved section format
WIDTH = 74  # of the banner and the rules, as in the WorldSense release's report
RULE = "-" * WIDTH
PAPER_TITLE = "Paper vs reproduced"


# ---- table cells --------------------------------------------------------------------------------
def interval_text(
    value: float, lo: float, hi: float, scale: float = 1.0, digits: int = 1, width: int = 0
) -> str:
    """Return ``"value [lo, hi]"``, each multiplied by ``scale`` with ``digits`` decimals (and
    right-aligned in ``width`` characters), or ``"-"`` for a missing value."""
    if value is None or pd.isna(value):
        return "-"

    def number(x: float) -> str:
        return f"{scale * x:{width}.{digits}f}"

    return f"{number(value)} [{number(lo)}, {number(hi)}]"


def p_text(p: float) -> str:
    """Return a p-value for display: two significant digits, "< 1e-300" when it underflowed to
    0, "-" when there is none (NaN)."""
    return "-" if pd.isna(p) else "< 1e-300" if p == 0 else f"{p:.2g}"


def paired_cells(tests: pd.DataFrame, prefix: str = "", label: str = "") -> dict[str, list[Any]]:
    """Return the display columns of exact paired tests (``common.stats.pairwise_exact_tests``
    columns, read as ``<prefix>a_better`` etc.): ``<label>a better``, ``<label>b better`` and
    ``<label>p`` (``p_text``)."""
    return {
        f"{label}a better": tests[f"{prefix}a_better"].tolist(),
        f"{label}b better": tests[f"{prefix}b_better"].tolist(),
        f"{label}p": [p_text(p) for p in tests[f"{prefix}p"]],
    }


# ---- terminal text --------------------------------------------------------------------------------
def section_text(section: Section) -> str:
    """Return the terminal text of ``section``: a banner with its heading (default: the title in
    capitals), its notes, the paper's table if any, then every table under its title."""
    tables = [(PAPER_TITLE, section.paper)] if section.paper is not None else []
    return render_text(section.heading or section.title.upper(), [*tables, *section.tables], section.notes)


def render_text(heading: str, tables: Sequence[tuple[str, pd.DataFrame]], notes: Sequence[str] = ()) -> str:
    """Return a banner naming ``heading``, then a NOTES block when there are ``notes``, then each
    (title, table) between rules, the table as pandas prints it (trailing spaces removed)."""
    stars = "*" * WIDTH
    parts = [f"{stars}\n*\n*  {heading}\n*\n{stars}\n"]
    if notes:
        parts.append(f"{RULE}\n    NOTES\n{RULE}\n" + "".join(f"  {note}\n" for note in notes))
    for title, table in tables:
        rows = "\n".join(line.rstrip() for line in table.to_string().splitlines())
        parts.append(f"{RULE}\n    {title}\n{RULE}\n{rows}\n")
    return "\n".join(parts)


# ---- the section record: what is saved, and what Markdown and HTML are made of ---------------------
def section_record(section: Section) -> dict[str, Any]:
    """Return ``section`` as plain data: its texts, display tables as rows of strings (``_flat``),
    figure paths relative to the project root, and the terminal text. Its inputs are left to
    ``save_section`` (hashing them takes a while)."""
    return {
        "schema": SCHEMA,
        "suite": section.suite,
        "title": section.title,
        "about": section.about,
        "text": section_text(section),
        "summary": section.summary,
        "notes": section.notes,
        "tables": [{"title": title, **_flat(table)} for title, table in section.tables],
        "paper": _flat(section.paper) if section.paper is not None else None,
        "figures": [{"caption": caption, "path": paths.shown(figure)} for caption, figure in section.figures],
    }


def save_section(section: Section, path: str | Path) -> None:
    """Write ``section_record(section)`` as JSON to ``path`` (atomically), with the SHA-256 and
    size of every input file."""
    inputs = [
        {"path": paths.shown(p), "sha256": sha256_file(p), "bytes": Path(p).stat().st_size}
        for p in section.inputs
    ]
    write_json(path, {**section_record(section), "inputs": inputs})


def load_section(path: str | Path) -> dict[str, Any]:
    """Return a saved section; raise DataError naming the file when it is not one."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise DataError(f"{path}: not a saved section ({exc})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise DataError(
            f"{path}: not a section saved by this version (schema {SCHEMA}); "
            "rebuild it with scripts/analyse_results.py --section"
        )
    return data


def _flat(table: pd.DataFrame) -> dict[str, Any]:
    """Return a display table as ``{"columns": [...], "rows": [[str, ...], ...]}``: named index
    levels become the first columns, multi-level column names are joined with " / ", empty
    cells (None, NaN) are ""."""
    flat = table.reset_index() if any(name is not None for name in table.index.names) else table
    columns = [" / ".join(map(str, c)).strip(" /") if isinstance(c, tuple) else str(c) for c in flat.columns]
    rows = [
        ["" if value is None or value != value else str(value) for value in row]
        for row in flat.itertuples(index=False)
    ]
    return {"columns": [c or "value" for c in columns], "rows": rows}


# ---- Markdown ---------------------------------------------------------------------------------------
def section_markdown(section: Section) -> str:
    """Return one section as a Markdown document (``scripts/analyse_results.py --markdown``): as in
    the report, with its figures linked by their paths relative to the project root."""
    return "\n".join(_markdown_section(section_record(section), 1, {})) + "\n"


BUDGET_TITLE = "Token budget of the model runs"
BUDGET_ABOUT = (
    "How each model run's replies used `max_tokens`: a reply cut at the limit (finish_reason "
    "`length`) while the model was still thinking has no answer and is scored wrong. A share above "
    "a few percent means the budget was too small: raise it and rerun with `--retry-truncated`. "
    "Reasoning tokens are the server's count, or the reasoning's share of the characters when it "
    "reports none; answer tokens are the rest of the completion tokens."
)


def render_markdown(
    sections: Sequence[dict[str, Any]],
    prov: dict[str, Any],
    figure_links: dict[str, str],
    title: str = "Grounded reasoning benchmarks: report",
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
        parts += [f"## {BUDGET_TITLE}\n", BUDGET_ABOUT + "\n", _markdown_table(budget), ""]
    for section in sections:
        parts += _markdown_section(section, 2, figure_links)
    parts += ["## Provenance\n", provenance_line(prov), ""]
    for table_title, table in provenance_tables(prov):
        parts += [f"### {table_title}\n", _markdown_table(table), ""]
    return "\n".join(parts) + "\n"


def _markdown_section(section: dict[str, Any], level: int, figure_links: dict[str, str]) -> list[str]:
    """Return the Markdown lines of a section record under a heading of ``level``: what it
    measures, notes as quotes, the paper's table, every table, the figures (``figure_links``
    maps a figure's path to its link; the path itself otherwise)."""
    hashes = "#" * level
    parts = [f"{hashes} {section['title']}\n", section["about"].strip() + "\n"]
    parts += [f"> {note}\n" for note in section["notes"]]
    titled = [{"title": PAPER_TITLE, **section["paper"]}] if section["paper"] else []
    for table in [*titled, *section["tables"]]:
        parts += [f"{hashes}# {table['title']}\n", _markdown_table(table), ""]
    for figure in section["figures"]:
        link = figure_links.get(figure["path"], figure["path"])
        parts += [f"![{figure['caption']}]({link})\n", f"*{figure['caption']}*\n"]
    return parts


def _markdown_table(table: dict[str, Any]) -> str:
    """Return a flat table (``{"columns", "rows"}``) as Markdown, pipes in cells escaped."""

    def cells(values: Sequence[str]) -> str:
        return "| " + " | ".join(str(v).replace("|", "\\|") for v in values) + " |"

    return "\n".join(
        [cells(table["columns"]), "|" + "---|" * len(table["columns"]), *map(cells, table["rows"])]
    )


# ---- HTML -------------------------------------------------------------------------------------------
CSS = """body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1200px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}h1{border-bottom:2px solid #444}h2{border-bottom:1px solid #bbb;
margin-top:2em}table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.86em}th,td{border:1px solid #ccc;
padding:.25em .55em;text-align:left;vertical-align:top}th{background:#f2f2f2}
tr:nth-child(even) td{background:#fafafa}
td.no{background:#fbe3e3!important}figure{margin:1em 0}figure img{max-width:100%;border:1px solid #ddd}
figcaption{font-size:.9em;color:#555}blockquote{border-left:4px solid #e0a800;margin:.5em 0;padding:.2em .8em;
background:#fff8e1}code{background:#f4f4f4;padding:0 .2em}.wide{overflow-x:auto}nav a{margin-right:1em}"""


def render_html(
    sections: Sequence[dict[str, Any]],
    prov: dict[str, Any],
    title: str = "Grounded reasoning benchmarks: report",
) -> str:
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
            _html_table(budget),
        ]
    for section in sections:
        body += _html_section(section)
    body += ['<h2 id="provenance">Provenance</h2>', f"<p>{esc(provenance_line(prov))}</p>"]
    for table_title, table in provenance_tables(prov):
        body += [f"<h3>{esc(table_title)}</h3>", _html_table(table)]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def _html_section(section: dict[str, Any]) -> list[str]:
    """Return the HTML of a section record: heading, what it measures, notes, the paper's table,
    every table, the figures embedded."""
    esc = html.escape
    body = [f'<h2 id="{_anchor(section)}">{esc(section["title"])}</h2>']
    body.append(f"<p>{_inline_markdown(section['about'])}</p>")
    body += [f"<blockquote>{esc(note)}</blockquote>" for note in section["notes"]]
    titled = [{"title": PAPER_TITLE, **section["paper"]}] if section["paper"] else []
    for table in [*titled, *section["tables"]]:
        body += [f"<h3>{esc(table['title'])}</h3>", _html_table(table)]
    for figure in section["figures"]:
        data = base64.b64encode((paths.ROOT / figure["path"]).read_bytes()).decode("ascii")
        body.append(
            f'<figure><img alt="{esc(figure["caption"])}" src="data:image/png;base64,{data}">'
            f"<figcaption>{esc(figure['caption'])}</figcaption></figure>"
        )
    return body


def _anchor(section: dict[str, Any]) -> str:
    """Return the HTML id of a section: its title in lower case, runs of other characters as "-"
    (titles differ where a suite has several sections, e.g. two blocks-world sets)."""
    return re.sub(r"[^a-z0-9]+", "-", section["title"].lower()).strip("-")


def _html_table(table: dict[str, Any]) -> str:
    """Return a flat table as HTML; a ``same`` column's False cells are highlighted."""
    esc = html.escape
    same = table["columns"].index("same") if "same" in table["columns"] else None
    head = "".join(f"<th>{esc(c)}</th>" for c in table["columns"])
    rows = []
    for row in table["rows"]:
        cells = "".join(
            f"<td{' class=no' if i == same and v == 'False' else ''}>{esc(v)}</td>" for i, v in enumerate(row)
        )
        rows.append(f"<tr>{cells}</tr>")
    body = "".join(rows)
    return f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


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


# ---- the rest of the report ---------------------------------------------------------------------------
def summary_lines(sections: Sequence[dict[str, Any]], per_section: int = 4) -> list[str]:
    """Return the short terminal summary: one line per section with its first summary lines."""
    lines = []
    for section in sections:
        shown = section["summary"][:per_section]
        more = len(section["summary"]) - len(shown)
        tail = f"; ... ({more} more)" if more > 0 else ""
        lines.append(f"{section['title']}: " + "; ".join(shown) + tail)
    return lines


def figure_copies(sections: Sequence[dict[str, Any]], directory: str | Path) -> dict[str, str]:
    """Return, for the Markdown report, each figure's link relative to ``directory`` (figures stay
    where the sections wrote them)."""
    links = {}
    for section in sections:
        for figure in section["figures"]:
            links[figure["path"]] = os.path.relpath(paths.ROOT / figure["path"], directory)
    return links
