"""The report as it is used: one part per suite whatever is added (a headline table of runs by
sets, one figure, each set folded), cells on a handful of units said as such, no table of
nothing (token budget), each run's own chance line, a check that fails named with what to do,
and the explorer's long cells folded and escaped."""

import html

import pandas as pd

from common import render, report
from common.analysis import Section
from common.canvas.analysis import chance_lines
from common.canvas.report import check_lines, shortcut_misses
from common.explore import CUT, cell_html
from common.provenance import no_token_runs, token_budget_by_suite, token_budget_table
from tests.test_report import _section

NASTY = "<script>alert(1)</script>"


def _suite_sections(tmp_path) -> list[dict]:
    """Two sets of one suite, a model named with markup among their runs, saved and loaded."""
    records = []
    for name, cells in (
        ("one", [("oracle", "100.0 [96.3, 100.0]", 100), (NASTY, "50.0, 1 item: no interval", 1)]),
        ("two", [("oracle", "99.0 [94.6, 99.8]", 100)]),
    ):
        section = _section(tmp_path)
        section.title, section.suite = f"Toy suite: {name}", "toy"
        section.about = "Measures nothing at all. Then a long second sentence that is folded."
        section.headline_tables = 1
        section.headline = report.headline("accuracy %", "item", [(r, name, c, n) for r, c, n in cells])
        report.save_section(section, tmp_path / f"{name}.json")
        records.append(report.load_section(tmp_path / f"{name}.json"))
    return records


def _prov() -> dict:
    return {"date": "d", "commit": "c", "uncommitted_changes": False, "pinned_data": [], "inputs": []} | {
        "models": [],
        "configs": [],
    }


def test_a_suite_opens_with_runs_by_sets_and_one_figure_and_folds_each_set(tmp_path):
    records = _suite_sections(tmp_path)
    (part,) = render.suite_parts(records)
    assert part.table["columns"] == ["run", "one", "two"]
    assert part.table["rows"] == [
        ["oracle", "100.0 [96.3, 100.0]", "99.0 [94.6, 99.8]"],
        [NASTY, "50.0, 1 item: no interval", "-"],
    ]
    page = render.render_html(records, _prov())
    top = page[page.index('<h2 id="toy-suite">') : page.index('<details id="toy-suite-one-set">')]
    assert top.count("<h2") == 1 and top.count("Measures nothing at all.") == 1
    assert top.count('<figure class="headline">') == 1 and top.count("<table") == 1  # its table, its figure
    assert page.count("Measures nothing at all.") == 1  # the introduction once per suite
    assert '<details id="toy-suite-two-set">' in page
    assert (
        f"Cells resting on fewer than {report.FEW} items (wide intervals, or none): one, 1 run on 1 item."
        in page
    )
    assert NASTY not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    markdown = render.render_markdown(records, _prov(), {})
    assert markdown.count("\n## Toy suite\n") == 1 and "| run | one | two |" in markdown
    assert NASTY not in markdown and "&lt;script&gt;" in markdown


def test_a_cell_on_a_handful_of_units_says_so_and_has_no_interval_it_cannot():
    assert report.headline_cell(0.571, 0.45, 0.684, 200, "items") == "57.1 [45.0, 68.4]"
    assert report.headline_cell(0.5, 0.1, 0.9, 2, "tuples") == "50.0 [10.0, 90.0], 2 tuples"
    assert report.headline_cell(0.5, 0.5, 0.5, 1, "tuples") == "50.0, 1 tuple: no interval"
    assert report.headline_cell(0.5, 0.5, 0.5, 5, "tuples") == "50.0, 5 tuples: no interval"
    assert (
        report.headline_cell(0.5, -0.193, 1.193, 2, "tuples") == "50.0, 2 tuples: no interval"
    )  # not a rate's
    assert report.headline_cell(float("nan"), 0, 0, 0, "items") == "-"


def test_each_suite_s_headline_cells_give_their_measure_s_interval():
    from common.already_said_that.report import headline_cells as turns
    from common.blocks.report import headline_cells as success

    tidy = pd.DataFrame({"model": ["m"], "set": ["s"], "avg_num_turns": [2.0], "n": [500]})
    cells = turns(tidy.assign(avg_num_turns_lo=1.8, avg_num_turns_hi=2.2))["cells"]
    assert cells == [["m", "s", "2.0 [1.8, 2.2]", 500]]  # turns: no rate's bounds
    pooled = pd.DataFrame(
        {"method": ["plan"], "prompting": ["paper"], "model": ["m"], "problems": [300]}
        | {"lenient_rate": [21.0], "lenient_lo": [16.8], "lenient_hi": [26.0]}
    )
    assert success(pooled, "s")["cells"][0][2:] == ["21.0 [16.8, 26.0]", 300]  # percent: 0 to 100


def test_the_token_budget_shows_only_runs_that_report_tokens_and_names_the_others_in_one_line():
    def model(name: str, **use: int) -> dict:
        counts = {"replies": 30, "cut": 0, "reasoning_tokens": 0, "answer_tokens": 0} | use
        return {"suite": "s", "results": f"{name}.jsonl", "settings": {"name": name}, "use": counts} | {
            "runs": 1,
            "tokens": 0,
            "cost_usd": 0,
        }

    prov = {"models": [model("file-model"), model("file-model"), model("server", answer_tokens=300)]}
    table = token_budget_table(prov)
    assert [row[1] for row in table["rows"]] == ["server"]
    assert no_token_runs(prov) == (
        "No token counts reported (a model file, or a server that counts none): file-model (2 results files)."
    )
    nothing = {"models": [model("file-model")]}
    assert token_budget_table(nothing) is None and token_budget_by_suite(nothing) is None
    page = render.render_html([], _prov() | nothing)
    assert "Token budget of the model runs" not in page and "file-model (1 results file)" in page


def test_the_token_budget_is_one_table_of_models_by_suite_however_many_files():
    def model(name: str, suite: str, limit: int, **use: int) -> dict:
        counts = {"replies": 30, "cut": 0, "reasoning_tokens": 0, "answer_tokens": 60} | use
        settings = {"name": name, "max_tokens": limit}
        found = {"suite": suite, "results": f"{name}.jsonl", "settings": settings, "use": counts}
        return found | {"runs": 1, "tokens": 0, "cost_usd": 0}

    files = [model(f"server{i}", suite, 16) for i in range(5) for suite in ("a", "a", "a", "b")]
    files += [model("thinker", "b", 512, cut=3, reasoning_tokens=3000), model("thinker", "b", 1024)]
    files += [model("<b>x</b>", "c", 8)]
    table = token_budget_by_suite({"models": files})
    assert table["columns"] == ["model", "a", "b", "c"] and len(table["rows"]) == 7  # of 23 files
    assert table["rows"][0] == ["server0", "0.0% of 90 at 16; 2.0", "0.0% of 30 at 16; 2.0", "-"]
    assert table["rows"][5] == ["thinker", "-", "5.0% of 60 at 512/1024; 50 + 2.0", "-"]
    page = render.render_html([], _prov() | {"models": files})
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    budget = page[page.index('<h2 id="token-budget">') : page.index('<h2 id="provenance">')]
    assert 'class="headline"' not in budget  # a suite's headline table is a suite's alone
    shown, folded = budget.split("<details>")  # each file's row folded
    assert shown.count("<tr>") == 1 + 7 and folded.count("<tr>") == 1 + len(files)


def test_a_uniformly_guessing_run_gets_its_own_chance_line_where_it_differs():
    index = pd.MultiIndex.from_tuples([("transitivity", 4), ("count", 4)], names=["task", "num_shapes"])
    chances = pd.Series([0.5, 0.25], index=index)
    uniform = pd.Series([0.25, 0.25], index=index)  # four directions; count: the same either way
    lines = chance_lines(["oracle", "random"], chances, uniform)
    assert list(lines) == ["chance", "chance of random"]
    assert lines["chance of random"][("transitivity", 4)] == 0.25
    assert list(chance_lines(["oracle"], chances, uniform)) == ["chance"]
    assert list(chance_lines(["random"], chances, chances)) == ["chance"]


def _shortcuts() -> pd.DataFrame:
    """Two shortcut baselines' checks: the first off chance on its task, the second at chance."""
    return pd.DataFrame(
        {
            "shortcut": ["shortcut-a", "shortcut-b"],
            "task": ["count", "transitivity"],
            "score": [0.31, 0.52],
            "lo": [0.27, 0.45],
            "hi": [0.35, 0.59],
            "chance": [0.25, 0.5],
            "at_chance": [False, True],
        }
    )


def test_a_check_that_is_not_met_names_the_check_the_task_and_what_to_do():
    shortcuts = _shortcuts()
    audited = pd.DataFrame(
        {
            "task": ["count", "count"],
            "view": ["subject", "all"],
            "learner": ["logit", "trees"],
            "accuracy": [0.30, 0.9],
            "chance": [0.25, 0.25],
            "gated": [True, False],
            "at_chance": [True, None],
        }
    )
    counts, message = check_lines(shortcuts, audited)
    assert counts == "canvas shortcut baselines at chance: 1 of 2; audit views at chance (the gate): 1 of 1"
    assert "check 'shortcut at chance' not met on task count: shortcut-a scores 31.0%" in message
    assert "another seed" in message and "common/canvas/tasks/" in message
    failed = check_lines(shortcuts.iloc[1:], audited.assign(at_chance=[False, None]))
    assert (
        failed[1].startswith("canvas audit FAILED on task count, view 'subject'")
        and "regenerate" in failed[1]
    )


def test_the_explorer_folds_long_text_with_every_character_escaped():
    assert cell_html("short") is None and cell_html(42) is None
    long = NASTY + "x" * CUT
    shown = cell_html(long)
    assert shown.startswith("<details") and "<summary" in shown and "<script>" not in shown
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" + "x" * CUT in shown  # the whole text, one click away
    prompt = cell_html("y" * CUT + "the question?", "prompt")  # a prompt: its end, the question, shown
    assert "<summary" in prompt and "the question?</summary>" in prompt
    # a run's failures (the runs query: a row with a run_id) open with a click; nothing else links
    assert cell_html(1234, "failures", {"run_id": 7}) == '<a href="failures?run=7">1,234 failures</a>'
    assert cell_html(0, "failures", {"run_id": 7}) is None and cell_html(3, "failures", {"run": 7}) is None
    assert cell_html(3, "answers", {"run_id": 7}) is None


def test_a_section_without_a_headline_is_shown_whole_as_before(tmp_path):
    section: Section = _section(tmp_path)
    report.save_section(section, tmp_path / "s.json")
    record = report.load_section(tmp_path / "s.json")
    page = render.render_html([record], _prov())
    assert '<h2 id="toy-suite">Toy suite</h2>' in page and "<h3>Accuracy</h3>" in page
    assert "-set" not in page and "Cells resting on" not in page


def test_a_failed_check_opens_its_suite_naming_the_check_the_task_and_what_to_do(tmp_path):
    # planted: any suite's section may carry a gate that failed and a check not met (the suite's
    # analysis writes each line: which check, which task, what to do); both open the suite
    gate = "toy gate failed on task count: the learner scores 90% against chance 25%; fix the generator"
    check = f"toy check 'shortcut at chance' not met on task {NASTY}: regenerate with another seed"
    records = _suite_sections(tmp_path)
    records[1] |= {"failed": [gate], "missed": [check]}
    page = render.render_html(records, _prov())
    top = page[page.index('<h2 id="toy-suite">') : page.index("Measures nothing at all.")]
    assert top.count('<blockquote class="failed">') == 2 and "<details" not in top  # first, open
    assert f"two: {gate}" in top and f"two: {html.escape(check)}" in top  # each line escaped
    assert NASTY not in page
    summary = page[page.index("<h2>Summary</h2>") : page.index("<details>")]
    assert gate in summary and "shortcut at chance" in summary  # and at the top of the page
    markdown = render.render_markdown(records, _prov(), {})
    part = markdown[markdown.index("\n## Toy suite\n") :]
    assert part.index(f"> **two: {gate}**") < part.index("Measures nothing at all.")
    # a suite shown section by section opens each section with its failed checks too
    whole = report.section_record(_section(tmp_path)) | {"missed": [check]}
    shown = render.render_html([whole], _prov())
    after = shown[shown.index('<h2 id="toy-suite">') :]
    assert after.index('<blockquote class="failed">') < after.index("<p>Measures")


def test_a_canvas_shortcut_off_chance_is_a_check_the_section_carries():
    shortcuts = _shortcuts()
    (line,) = shortcut_misses(shortcuts)
    assert line.startswith("canvas check 'shortcut at chance' not met on task count: shortcut-a scores 31.0%")
    assert shortcut_misses(shortcuts.iloc[1:]) == [] and shortcut_misses(shortcuts.iloc[:0]) == []
