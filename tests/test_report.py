"""The one report: sections saved and loaded, provenance, self-contained HTML, Markdown, the script."""

import json
import re

import pandas as pd
import pytest

from common import database, dbfile, paths, render, report, run_identity
from common.analysis import Section
from common.errors import DataError
from common.jsonl import sha256_file, write_json
from common.provenance import provenance
from common.results import read_results
from common.scored import reply_fields
from tests.conftest import run_script
from tests.worldsense.fixtures import answers_for, tf_tuple, write_testset

SENTINEL = "sk-SENTINEL-never-in-a-report-77"


def _section(tmp_path, results=None) -> Section:
    """A hand-made section with one table (a named index), one figure and one results input."""
    figure = tmp_path / "fig.png"
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [0, 1])
    fig.savefig(figure)
    plt.close(fig)
    table = pd.DataFrame(
        {"acc": ["50.0 [40.0, 60.0]", "75.0 [65.1, 82.8]"]},
        index=pd.Index(["random", "oracle | x"], name="model"),
    )
    paper = pd.DataFrame({"view": ["one"], "codex": ["99 ✓"]})
    about = "Measures **nothing**, *italic*, 2 * 3, with `code *x*`."
    return Section(
        suite="toy",
        title="Toy suite",
        about=about,
        heading="TOY RESULTS",
        tables=[("Accuracy", table)],
        figures=[("A line", figure)],
        summary=["oracle: 75.0%"],
        paper=paper,
        notes=["1 trial refused by the server"],
        inputs=[results] if results else [],
    )


def _recorded(tmp_path, results):
    """Return a connection to a database that holds the toy suite's ``results`` file as the score
    stage records a run (what the provenance reads): its ``runs`` row (``run_identity.recorded``),
    an answers row per record (its finish reasons and tokens) and their counts (``run_counts``)."""
    conn = dbfile.connect(tmp_path / "recorded.sqlite")
    set_id = conn.execute("INSERT INTO sets (suite, set_name, fingerprint) VALUES ('toy', 's', '')").lastrowid
    found = run_identity.recorded(results)
    columns = (
        "set_id, results_file, sha256, bytes, mtime_ns, checked_ns, scorer, prompting, model, label, records"
    )
    run_id = conn.execute(
        f"INSERT INTO runs ({columns}, settings, run_count, tokens, cost_usd) "
        "VALUES (?, ?, '', 0, 0, 0, '', 'basic', 'm', 'm', 0, ?, ?, ?, ?)",
        (
            set_id,
            paths.shown(results),
            found["settings"],
            found["run_count"],
            found["tokens"],
            found["cost_usd"],
        ),
    ).lastrowid
    for record in read_results(results):
        fields = reply_fields(record)
        counts = [fields[f] for f in ("truncated", "completion_tokens", "reasoning_tokens", "finish_reason")]
        conn.execute(
            "INSERT INTO answers (run_id, Key, draw, turn, scored, truncated, completion_tokens, "
            "reasoning_tokens, finish_reason) VALUES (?, ?, 0, 0, 1, ?, ?, ?, ?)",
            (run_id, record["Key"], *counts),
        )
    conn.execute(database.RUN_COUNTS, (run_id,))  # what the score stage counts of them
    return conn


def test_a_saved_section_loads_with_flat_tables_and_input_hashes(tmp_path):
    results = tmp_path / "basic___m___results.jsonl"
    results.write_text('{"Key": 1, "resp": "a"}\n')
    report.save_section(_section(tmp_path, results), tmp_path / "s.json")
    loaded = report.load_section(tmp_path / "s.json")
    rows = [["random", "50.0 [40.0, 60.0]"], ["oracle | x", "75.0 [65.1, 82.8]"]]
    assert loaded["tables"][0] == {"title": "Accuracy", "columns": ["model", "acc"], "rows": rows}
    assert loaded["inputs"][0]["sha256"] == sha256_file(results) and loaded["inputs"][0]["bytes"] == 24
    assert loaded["paper"]["rows"] == [["one", "99 ✓"]]


def test_a_file_that_is_not_a_section_is_named(tmp_path):
    (tmp_path / "x.json").write_text('{"schema": 0}')
    with pytest.raises(DataError, match=r"x.json: not a section saved by this version"):
        report.load_section(tmp_path / "x.json")
    (tmp_path / "y.json").write_text("{")
    with pytest.raises(DataError, match=r"y.json: not a saved section"):
        report.load_section(tmp_path / "y.json")


def test_html_stands_alone_and_shows_every_table_and_figure(tmp_path):
    results = tmp_path / "basic___m___results.jsonl"
    results.write_text('{"Key": 1, "resp": "a"}\n')
    write_json(
        tmp_path / "basic___m___results.meta.json",
        {
            "runs": [
                {
                    "model": {
                        "name": "m",
                        "base_url": "http://127.0.0.1:9/v1",
                        "model": "m",
                        "api_key_env": "M_KEY",
                    },
                    "prompt_tokens": 10,
                    "completion_tokens": 2,
                    "cost_usd": 0.5,
                }
            ]
        },
    )
    report.save_section(_section(tmp_path, results), tmp_path / "s.json")
    sections = [report.load_section(tmp_path / "s.json")]
    prov = provenance(sections, _recorded(tmp_path, results))
    page = render.render_html(sections, prov)
    assert page.count("<table>") == 2 + 3  # the section's table and paper table, three provenance tables
    assert page.count('src="data:image/png;base64,') == 1
    assert not re.search(r'(src|href)="(https?:)?//', page)  # nothing fetched from a network
    assert "<strong>nothing</strong>" in page and "<em>italic</em>, 2 * 3" in page
    assert "<code>code *x*</code>" in page and "oracle | x" in page and "refused by the server" in page
    assert "api_key_env=M_KEY" in page and "12" in page and SENTINEL not in page
    assert re.fullmatch(r"[0-9a-f]{40}|unknown", prov["commit"])
    assert any(c["path"] == "configs/papers/worldsense.yaml" for c in prov["configs"])
    markdown = render.render_markdown(sections, prov, {sections[0]["figures"][0]["path"]: "fig.png"})
    assert "| oracle \\| x | 75.0 [65.1, 82.8] |" in markdown and "![A line](fig.png)" in markdown


def test_build_report_writes_html_and_markdown_and_prints_a_short_summary(tmp_path):
    trials = tf_tuple("t1", "Infer.normal", 3) + tf_tuple("t2", "Infer.trivial", 3)
    testset = write_testset(tmp_path / "ts", trials, {"A": answers_for(trials, [1, 0])})
    section = tmp_path / "sections" / "worldsense.json"
    analysed = run_script(
        "scripts/analyse_results.py",
        "-t",
        str(testset),
        "--quiet",
        "--section",
        str(section),
        "--figures",
        str(tmp_path / "figures"),
    )
    assert analysed.returncode == 0, analysed.stderr
    assert analysed.stdout == "" and json.loads(section.read_text())["suite"] == "worldsense"
    built = run_script(
        "scripts/build_report.py",
        str(section),
        "--html",
        str(tmp_path / "r.html"),
        "--markdown",
        str(tmp_path / "r.md"),
    )
    assert built.returncode == 0, built.stderr
    assert built.stdout.splitlines()[0].startswith("Report: ") and len(built.stdout.splitlines()) == 2
    assert "WorldSense: A (basic): 50.0, 2 tuples: no interval" in built.stdout
    assert "worldsense_accuracy.png" in (tmp_path / "r.md").read_text()
    assert (tmp_path / "r.html").read_text().count('src="data:image/png;base64,') == 1


def test_section_without_figures_dir_is_a_usage_error(tmp_path):
    run = run_script("scripts/analyse_results.py", "--section", str(tmp_path / "s.json"))
    assert run.returncode == 2 and "--section needs --figures" in run.stderr


def test_every_section_prints_the_same_way_banner_notes_paper_tables(tmp_path):
    text = report.section_text(_section(tmp_path))
    lines = text.splitlines()
    assert lines[:5] == ["*" * 74, "*", "*  TOY RESULTS", "*", "*" * 74]
    assert all(len(line) == 74 for line in lines if line and set(line) == {"-"})  # the release's rules
    assert text.index("NOTES") < text.index("Paper vs reproduced") < text.index("    Accuracy")
    assert "\n  1 trial refused by the server\n" in text and "oracle | x  75.0 [65.1, 82.8]" in text
    assert not any(line != line.rstrip() for line in lines)


def test_one_section_as_markdown_has_the_report_layout(tmp_path):
    markdown = render.section_markdown(_section(tmp_path))
    assert markdown.startswith("# Toy suite\n") and "> 1 trial refused by the server" in markdown
    assert markdown.index("## Paper vs reproduced") < markdown.index("## Accuracy")
    assert "| model | acc |\n|---|---|\n| random | 50.0 [40.0, 60.0] |" in markdown


def test_cells_share_one_interval_format_and_one_p_format():
    assert report.interval_text(0.571, 0.45, 0.684, scale=100) == "57.1 [45.0, 68.4]"
    assert report.interval_text(43.0, 33.7, 52.8, width=5) == " 43.0 [ 33.7,  52.8]"
    assert report.interval_text(3, 1, 4, digits=0) == "3 [1, 4]" and report.interval_text(None, 0, 1) == "-"
    assert [report.p_text(p) for p in (0.01234, 0.0, float("nan"), 1.0)] == ["0.012", "< 1e-300", "-", "1"]
    tests = pd.DataFrame({"a_better": [3], "b_better": [0], "p": [0.25], "strict_a_better": [1]})
    assert report.paired_cells(tests) == {"a better": [3], "b better": [0], "p": ["0.25"]}


def test_the_token_budget_of_model_runs_shows_what_was_cut_at_the_top_and_its_table_after(tmp_path):
    results = tmp_path / "basic___m___results.jsonl"
    records = [
        {"Key": 1, "resp": "a", "finish_reason": ["stop"], "completion_tokens": 40, "reasoning_tokens": 30},
        {"Key": 2, "resp": "", "finish_reason": ["length"], "completion_tokens": 64, "reasoning_tokens": 64},
        {"Key": 3, "resp": "b", "finish_reason": ["stop", "stop"], "completion_tokens": 20},
    ]
    results.write_text("".join(json.dumps(r) + "\n" for r in records))
    settings = {
        "name": "<script>m</script>",
        "base_url": "http://127.0.0.1:9/v1",
        "model": "m",
        "max_tokens": 64,
    }
    write_json(tmp_path / "basic___m___results.meta.json", {"runs": [{"model": settings}]})
    report.save_section(_section(tmp_path, results), tmp_path / "s.json")
    sections = [report.load_section(tmp_path / "s.json")]
    prov = provenance(sections, _recorded(tmp_path, results))
    page = render.render_html(sections, prov)
    markdown = render.render_markdown(sections, prov, {})
    # 4 replies, 1 cut; 94 reasoning and 30 answer tokens: a row per model, a column per suite, open
    assert (
        "| model | toy |\n|---|---|\n| &lt;script&gt;m&lt;/script&gt; | 25.0% of 4 at 64; 24 + 7.5 |"
        in markdown
    )
    row = (
        "| toy | &lt;script&gt;m&lt;/script&gt; | "
        + prov["models"][0]["results"]
        + " | 64 | 4 | 25.0% (1) | 23.5 | 7.5 |"
    )
    assert row in markdown.split("<summary>Each results file")[1]  # each file's, folded
    assert "<script>m</script>: 1 of 4 replies cut at max_tokens=64 (toy 1/4)" in markdown
    assert "--retry-truncated" in markdown
    # the replies cut are said at the top; the table of every run with tokens after the suites
    assert (
        page.index("1 of 4 replies cut")
        < page.index("Toy suite</h2>")
        < page.index("Token budget of the model")
    )
    assert "<script>m" not in page and "&lt;script&gt;m&lt;/script&gt;" in page


def test_a_section_with_a_headline_opens_with_it_and_folds_the_rest(tmp_path):
    section = _section(tmp_path)
    section.tables.append(("Detail", pd.DataFrame({"n": [1]})))
    section.figures.append(("A second line", section.figures[0][1]))
    section.headline_tables = 1
    report.save_section(section, tmp_path / "s.json")
    record = report.load_section(tmp_path / "s.json")
    assert [(b.kind, b.folded) for b in render.layout(record)] == [
        ("table", False),
        ("figure", False),
        ("table", True),  # the paper's
        ("table", True),
        ("figure", True),
    ]
    page = render.render_html([record], provenance([record]))
    assert "<h3>Accuracy</h3>" in page and "<details><summary>Detail</summary>" in page
    assert (
        page.index("<h3>Accuracy</h3>")
        < page.index('alt="A line"')
        < page.index("<summary>Paper vs reproduced")
    )
    assert "<details><summary>A second line</summary><figure>" in page
    markdown = render.render_markdown([record], provenance([record]), {})
    assert "### Accuracy\n" in markdown and "<details><summary>Detail</summary>\n\n| n |" in markdown
    record["headline_tables"] = None  # a suite that marks no headline: every part open, as before
    assert not any(block.folded for block in render.layout(record))
