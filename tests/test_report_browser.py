"""The report as a person sees it: opened in headless Chromium, every image loaded, every table
there, no console error, and a screenshot saved as results/report_screenshot.png.

Run by `make test-all` and `make check-report` (which install Debian's chromium and
chromium-driver and selenium: `make browser`). The report checked is results/report.html when
`make all` built it, else one built here from the WorldSense section.
"""

import pytest

from common import paths, report
from tests.conftest import run_script

pytestmark = pytest.mark.integration
SCREENSHOT = paths.RESULTS / "report_screenshot.png"


@pytest.fixture(scope="module")
def report_html(tmp_path_factory, worldsense_test_set):
    """The report to check and its sections: results/report.html if it exists, else a fresh one."""
    built = paths.RESULTS / "report.html"
    sections = sorted((paths.RESULTS / "sections").glob("*.json"))
    if built.is_file() and sections:  # in the report's order (that of `make all`'s SECTIONS)
        markdown = built.with_suffix(".md").read_text(encoding="utf-8")
        loaded = [report.load_section(path) for path in sections]
        where = {s["title"]: markdown.find(f"\n## {s['title']}\n") for s in loaded}
        assert all(at >= 0 for at in where.values()), f"a section is not in report.md: {where}"
        return built, sorted(loaded, key=lambda s: where[s["title"]])
    work = tmp_path_factory.mktemp("report")
    section = work / "worldsense.json"
    run = run_script(
        "scripts/analyse_results.py",
        "-t",
        str(worldsense_test_set),
        "--quiet",
        "--section",
        str(section),
        "--figures",
        str(work / "figures"),
    )
    assert run.returncode == 0, run.stderr
    run = run_script(
        "scripts/build_report.py",
        str(section),
        "--html",
        str(work / "report.html"),
        "--markdown",
        str(work / "report.md"),
    )
    assert run.returncode == 0, run.stderr
    return work / "report.html", [report.load_section(section)]


def test_the_report_renders_with_every_image_and_table_and_no_console_error(browser, report_html):
    path, sections = report_html
    browser.get(path.resolve().as_uri())
    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.alt, i.complete, i.naturalWidth, i.naturalHeight])"
    )
    figures = [figure["caption"] for section in sections for figure in section["figures"]]
    assert [alt for alt, *_ in images] == figures
    assert all(complete and width > 0 and height > 0 for _, complete, width, height in images), images
    expected_tables = sum(len(s["tables"]) + (s["paper"] is not None) for s in sections) + 3  # + provenance
    budget = int("Token budget of the model runs" in browser.page_source)
    shown = browser.find_elements("css selector", "table:not(.example)")  # examples: model text, apart
    assert len(shown) == expected_tables + budget
    height = browser.execute_script("return document.documentElement.scrollHeight")
    assert height < 12_000, f"the report is {height} px tall: fold what is not the headline"
    headings = [h.text for h in browser.find_elements("tag name", "h2")]
    assert headings == ["Summary", *[s["title"] for s in sections], "Provenance"]
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not errors, errors
    browser.set_window_size(1280, min(height, 20000))
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(SCREENSHOT)) and SCREENSHOT.stat().st_size > 10_000
