"""The explorer as a person uses it: `make explore` serves the results database with Datasette, a
headless Chromium runs the canned disagreements query on the first paired test the report
prints, and the count it reads equals the report's, a page of PAGE units with both runs named,
a long reply folded and opening whole on a click; from the start page to a failure's reason in
three clicks (the runs, a run's failures, its reason opened); every canned query's page fits a
1,280 px window; a screenshot is saved as results/explore_screenshot.png.

Run by `make test-all` and `make check-explore` (which install Datasette, selenium and Debian's
chromium: `make explore`'s and `make browser`'s extras). The report and database checked are
built here from a small WorldSense set (never the user's results).
"""

import os
import signal
import socket
import sqlite3
import subprocess
import urllib.parse
import urllib.request
from contextlib import closing
from pathlib import Path

import pytest

from common import paths, queries
from common.explore import CUT
from common.jsonl import write_jsonl
from common.queries import PAGE
from tests.conftest import run_script
from tests.timing import timeout, wait_for
from tests.worldsense.fixtures import answers_for, tf_tuple, write_testset

pytestmark = pytest.mark.integration
SCREENSHOT = paths.RESULTS / "explore_screenshot.png"
PAIRED = "PAIRED"  # the WorldSense paired table's title starts so
LONG = "<b>bold</b> " + "a very long explanation " * 20  # a reply's tail
REASON = "<i>This model's maximum context length is 8 tokens</i>: you requested 4,096 tokens. " * 3


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """The report and the database of a small WorldSense set (two models, one paired test; one
    model's replies long, with markup in them)."""
    work = tmp_path_factory.mktemp("explore")
    trials = [t for i in range(6) for t in tf_tuple(f"t{i}", "Infer.normal", 3)]
    answers = {"A": answers_for(trials, [1, 1, 1, 0, 1, 1]), "B": answers_for(trials, [0, 1, 0, 0, 1, 0])}
    answers["B"] = [f"{resp} {LONG}" for resp in answers["B"]]  # long, with markup: folded, escaped
    write_testset(work / "data" / "worldsense" / "test_set", trials, answers)
    # a third model whose first answer the server refused, saying why at length (with markup)
    refused = {"Key": 100, "resp": "", "refused": "context_length_exceeded", "error": REASON}
    wrong = [{"Key": 100 + i, "resp": r} for i, r in enumerate(answers_for(trials, [0] * 6)) if i]
    write_jsonl(
        work / "data" / "worldsense" / "test_set" / "results" / "basic___C___results.jsonl", [refused, *wrong]
    )
    database = work / "results.sqlite"
    testset = str(work / "data" / "worldsense" / "test_set")
    steps = [
        ("scripts/score_results.py", "-t", testset, "--database", str(database),
         "--metadata", str(work / "results.metadata.json")),
        ("scripts/analyse_results.py", "-t", testset, "--database", str(database),
         "--quiet", "--section", str(work / "ws.json"), "--figures", str(work / "figures")),
        ("scripts/build_report.py", str(work / "ws.json"), "--database", str(database),
         "--html", str(work / "report.html"), "--markdown", str(work / "report.md")),
    ]  # fmt: skip
    for step in steps:
        done = run_script(*step)
        assert done.returncode == 0, done.stderr
    return work / "report.html", database


@pytest.fixture(scope="module")
def explorer(built):
    """The URL of `make explore` serving the database (on a free port of 127.0.0.1); stopped after."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = ["make", "-s", "explore", f"EXPLORE_DB={built[1]}", f"EXPLORE_PORT={port}"]
    server = subprocess.Popen(command, cwd=paths.ROOT, start_new_session=True, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _answers(f"{url}/-/versions.json", server), 60, "make explore to serve")
        yield url
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # make and the Datasette it started: their own group
        server.wait(timeout=timeout(30))


def _answers(url: str, server: subprocess.Popen) -> bool:
    """Return whether ``url`` answers; fail at once when ``server`` (make explore) has stopped."""
    try:
        urllib.request.urlopen(url, timeout=timeout(1)).close()
        return True
    except OSError:
        assert server.poll() is None, "make explore stopped"
        return False


def _first_paired_row(browser, report: Path) -> dict[str, str]:
    """Open the report, unfold its first paired-test table (and the set it is folded in), and
    return that table's first row as the reader sees it (column name -> cell)."""
    browser.get(report.resolve().as_uri())
    summary = browser.find_element("xpath", f"//summary[starts-with(normalize-space(.), '{PAIRED}')]")
    browser.execute_script(  # the set's details around it, as a reader opens them first
        "for (let d = arguments[0].parentElement.parentElement.closest('details'); d;"
        " d = d.parentElement.closest('details')) d.open = true;",
        summary,
    )
    summary.click()  # unfold it as a reader would
    table = summary.find_element("xpath", "following::table[1]")
    head = [th.text for th in table.find_elements("css selector", "thead th")]
    cells = [
        td.text for td in table.find_elements("css selector", "tbody tr")[0].find_elements("tag name", "td")
    ]
    return dict(zip(head, cells, strict=True))


def _width(browser) -> int:
    """Return how wide the page and its results table are laid out (more than the window: the
    page or the table scrolls sideways)."""
    return browser.execute_script(
        "const t = document.querySelector('table.rows-and-columns');"
        "const right = t ? Math.ceil(t.getBoundingClientRect().right) : 0;"
        "return Math.max(document.documentElement.scrollWidth, right)"
    )


def test_the_canned_disagreements_query_counts_what_the_report_shows(browser, built, explorer):
    shown = _first_paired_row(browser, built[0])
    a_better, b_better = int(shown["a better"].replace(",", "")), int(shown["b better"].replace(",", ""))
    with closing(sqlite3.connect(built[1])) as conn:
        run_a, run_b = conn.execute(
            "SELECT run_a, run_b FROM paired WHERE suite = 'worldsense' AND a = ? AND b = ?",
            (shown["a"], shown["b"]),
        ).fetchone()
    browser.set_window_size(1280, 1100)
    browser.get(f"{explorer}/results/disagreements?run_a={run_a}&run_b={run_b}&rule=&page=")
    rows = browser.find_elements("css selector", "table.rows-and-columns tbody tr")
    assert rows, browser.page_source[:2000]

    def first(column: str) -> str:
        return rows[0].find_element("css selector", f"td.col-{column}").text

    counts = tuple(int(first(c).replace(",", "")) for c in ("discordant", "a_better", "b_better"))
    assert counts == (a_better + b_better, a_better, b_better)
    assert len(rows) == min(a_better + b_better, PAGE)
    runs = rows[0].find_element("css selector", "td.col-runs")
    for folded in runs.find_elements("tag name", "summary"):  # a long text: opened with a click
        folded.click()
    assert f"a: A (basic) on test_set [run {run_a}]; b: B (basic) on test_set [run {run_b}]" in runs.text
    reply = rows[0].find_element("css selector", "td.col-reply_b details")
    summary = reply.find_element("tag name", "summary")
    assert not reply.get_property("open") and len(summary.text) <= CUT + 1  # folded: its start shown
    summary.click()
    assert reply.get_property("open") and LONG.strip() in reply.text  # whole, one click away
    assert not reply.find_elements("tag name", "b")  # escaped: the reply's markup is text
    assert _width(browser) <= 1280
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not errors, errors
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(SCREENSHOT)) and SCREENSHOT.stat().st_size > 10_000


def test_every_canned_query_fits_the_window(browser, built, explorer):
    browser.set_window_size(1280, 1100)
    with closing(sqlite3.connect(built[1])) as conn:
        run_a, run_b, rule = conn.execute("SELECT run_a, run_b, rule FROM pairs LIMIT 1").fetchone()
    given = urllib.parse.urlencode({"run_a": run_a, "run_b": run_b, "rule": rule, "run": run_a, "page": ""})
    for name in queries.all_queries():
        browser.get(f"{explorer}/results/{name}?{given}")
        assert "rows-and-columns" in browser.page_source or "returned no results" in browser.page_source, name
        assert _width(browser) <= 1280, f"{name} is {_width(browser)} px wide"


def test_from_the_start_page_to_a_failure_s_reason_in_three_clicks(browser, explorer):
    browser.set_window_size(1280, 1100)
    browser.get(f"{explorer}/")  # the start page
    browser.find_element("link text", "Start from the runs").click()  # 1: every run
    rows = {
        row.find_element("css selector", "td.col-model").text: row
        for row in browser.find_elements("css selector", "table.rows-and-columns tbody tr")
    }
    assert set(rows) == {"A", "B", "C"}, set(rows)
    cells = {c: rows["C"].find_element("css selector", f"td.col-{c}").text for c in ("prompting", "set")}
    assert cells == {"prompting": "basic", "set": "worldsense/test_set"}
    assert rows["C"].find_element("css selector", "td.col-correct_pct").text == "0.0"
    rows["C"].find_element("css selector", "td.col-failures a").click()  # 2: its failures
    assert "/results/failures?run=" in browser.current_url
    first = browser.find_elements("css selector", "table.rows-and-columns tbody tr")[0]
    reason = first.find_element("css selector", "td.col-error details")
    assert not reason.get_property("open")
    reason.find_element("tag name", "summary").click()  # 3: why it failed, whole
    assert reason.get_property("open") and REASON.strip() in reason.text
    assert not reason.find_elements("tag name", "i")  # escaped: the server's markup is text
    assert first.find_element("css selector", "td.col-refused").text == "context_length_exceeded"
    assert first.find_elements("css selector", "td.col-reply")  # and the reply beside it
    assert _width(browser) <= 1280
