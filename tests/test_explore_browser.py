"""The explorer as a person uses it: `make explore` serves the results database with Datasette, a
headless Chromium runs the canned disagreements query on the first paired test the report
prints, and the count it reads equals the report's; a screenshot is saved as
results/explore_screenshot.png.

Run by `make test-all` and `make check-explore` (which install Datasette, selenium and Debian's
chromium: `make explore`'s and `make browser`'s extras). The report and database checked are
results/report.html and results/results.sqlite when `make all` built them, else ones built here
from a small WorldSense set.
"""

import os
import signal
import socket
import sqlite3
import subprocess
import urllib.request
from contextlib import closing
from pathlib import Path

import pytest

from common import paths
from tests.conftest import run_script
from tests.timing import timeout, wait_for
from tests.worldsense.fixtures import answers_for, tf_tuple, write_testset

pytestmark = pytest.mark.integration
SCREENSHOT = paths.RESULTS / "explore_screenshot.png"
PAIRED = "PAIRED"  # the WorldSense paired table's title starts so


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """The report and the database it was built with: the project's if `make all` made both, else
    a report and a database of a small WorldSense set (two models, one paired test)."""
    report, database = paths.RESULTS / "report.html", paths.RESULTS / "results.sqlite"
    if report.is_file() and database.is_file() and database.with_suffix(".metadata.json").is_file():
        return report, database
    work = tmp_path_factory.mktemp("explore")
    trials = [t for i in range(6) for t in tf_tuple(f"t{i}", "Infer.normal", 3)]
    answers = {"A": answers_for(trials, [1, 1, 1, 0, 1, 1]), "B": answers_for(trials, [0, 1, 0, 0, 1, 0])}
    write_testset(work / "data" / "worldsense" / "test_set", trials, answers)
    database = work / "results.sqlite"
    steps = [
        ("scripts/score_results.py", "-t", str(work / "data" / "worldsense" / "test_set"),
         "--database", str(database), "--metadata", str(work / "results.metadata.json")),
        ("scripts/analyse_results.py", "-t", str(work / "data" / "worldsense" / "test_set"),
         "--database", str(database), "--quiet", "--section", str(work / "ws.json"),
         "--figures", str(work / "figures")),
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
    """Open the report, unfold its first paired-test table, and return that table's first row as
    the reader sees it (column name -> cell)."""
    browser.get(report.resolve().as_uri())
    summary = browser.find_element("xpath", f"//summary[starts-with(normalize-space(.), '{PAIRED}')]")
    summary.click()  # unfold it as a reader would
    table = summary.find_element("xpath", "following::table[1]")
    head = [th.text for th in table.find_elements("css selector", "thead th")]
    cells = [
        td.text for td in table.find_elements("css selector", "tbody tr")[0].find_elements("tag name", "td")
    ]
    return dict(zip(head, cells, strict=True))


def test_the_canned_disagreements_query_counts_what_the_report_shows(browser, built, explorer):
    shown = _first_paired_row(browser, built[0])
    a_better, b_better = int(shown["a better"].replace(",", "")), int(shown["b better"].replace(",", ""))
    with closing(sqlite3.connect(built[1])) as conn:
        run_a, run_b = conn.execute(
            "SELECT run_a, run_b FROM paired WHERE suite = 'worldsense' AND a = ? AND b = ?",
            (shown["a"], shown["b"]),
        ).fetchone()
    browser.get(f"{explorer}/results/disagreements?run_a={run_a}&run_b={run_b}&rule=&_hide_sql=1")
    rows = browser.find_elements("css selector", "table.rows-and-columns tbody tr")
    assert rows, browser.page_source[:2000]

    def first(column: str) -> int:
        return int(rows[0].find_element("css selector", f"td.col-{column}").text.replace(",", ""))

    assert (first("discordant"), first("a_better"), first("b_better")) == (
        a_better + b_better,
        a_better,
        b_better,
    )
    assert len(rows) == min(a_better + b_better, 1000)  # Datasette shows up to 1,000 rows
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not errors, errors
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    browser.set_window_size(1280, 1100)
    assert browser.save_screenshot(str(SCREENSHOT)) and SCREENSHOT.stat().st_size > 10_000
