"""The report as a researcher sees it after using it: in a throw-away copy of the repository,
`make all`, then the README's steps (a model file copied from the template, REPORT_MODELS of them,
default 1, and five models behind a server, configs pointing at a stub that counts tokens, all
run through every suite in one `make -j2 all MODEL="..."`; one new set per suite from a copied
config), then `make all` again; the page opened in headless Chromium at 1,280 px: every image
loaded, every table there, no console error, no horizontal scrolling, under 12,000 px tall, each
suite's headline table with a row per model, the token budget one row per server model, and a
screenshot saved as results/report_screenshot.png.

Run by `make check-report` and `make test-all` (which install Debian's chromium and
chromium-driver and selenium: `make browser`). It never reads the user's results: the copy
builds its own (several minutes: the copy's `make all` builds every default set).
"""

import os
import re

import pytest
import yaml

from common import paths, report
from common.models.stub_server import StubServer
from tests.sandbox import make_sandbox, run
from tests.test_make_sets import TINY_BLOCKS

pytestmark = pytest.mark.integration
SCREENSHOT = paths.RESULTS / "report_screenshot.png"
MAX_HEIGHT = 12_000  # px at 1,280 px wide: each suite one screen at its top, the rest folded
WIDTH = 1280
MODELS = int(os.environ.get("REPORT_MODELS", "1"))  # model files added
SERVERS = 5  # models behind a server (a stub counting tokens): each adds a row to the token budget
NEW_SETS = {  # the README's and the suite pages' commands: one new set per suite
    "blocks/mine": None,
    "canvas/mine": "cp configs/canvas/standard.yaml configs/canvas/mine.yaml && "
    "sed -i 's/^seed: .*/seed: 7/' configs/canvas/mine.yaml",
    "already_said_that/mixed_seed7": "sed 's/^seed: 0/seed: 7/' configs/already_said_that/mixed.yaml "
    "> configs/already_said_that/mixed_seed7.yaml",
}


def _step(repo, command: str) -> None:
    """Run a command in the copy; fail naming it and the end of its error output."""
    done = run(repo, command, timeout=3600)
    assert done.returncode == 0, (command, done.stderr[-3000:])


@pytest.fixture(scope="module")
def used_report(tmp_path_factory):
    """The copy's report and sections after the README's steps (module docstring), and the
    models added."""
    repo = make_sandbox(tmp_path_factory.mktemp("report"))
    _step(repo, "make all")
    template = (repo / "scripts/test_random_model.py").read_text()
    files = [f"mine{i}" for i in range(1, MODELS + 1)]
    for model in files:
        (repo / f"scripts/test_{model}_model.py").write_text(template)
    servers = [f"server{i}" for i in range(1, SERVERS + 1)]
    with StubServer() as server:
        for name in servers:
            config = {"base_url": server.url, "model": "stub-model", "temperature": 0, "max_tokens": 16}
            (repo / f"configs/models/{name}.yaml").write_text(yaml.safe_dump(config))
        listed = " ".join([*servers, *(f"scripts/test_{model}_model.py" for model in files)])
        _step(repo, f"make -j2 all MODEL='{listed}' LIMIT=3")
    models = [*files, *servers]
    (repo / "configs/blocks/mine.yaml").write_text(TINY_BLOCKS)
    for name, prepare in NEW_SETS.items():
        _step(repo, f"{prepare + ' && ' if prepare else ''}make {name}")
    _step(repo, "make all")
    sections = sorted((repo / "results" / "sections").rglob("*.json"))
    return (
        repo / "results" / "report.html",
        [report.load_section(path) for path in sections],
        (models, servers),
    )


def test_the_report_after_a_model_and_new_sets_stays_one_screen_per_suite(browser, used_report):
    path, sections, (models, servers) = used_report
    browser.set_window_size(WIDTH, 900)
    browser.get(path.resolve().as_uri())
    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.alt, i.complete, i.naturalWidth, i.naturalHeight])"
    )
    assert images and all(done and width > 0 and height > 0 for _, done, width, height in images), images
    shown = browser.execute_script(
        "return Array.from(document.querySelectorAll('figure img')).map(i => i.alt)"
    )
    figures = {figure["caption"] for section in sections for figure in section["figures"]}
    assert set(shown) == figures  # every figure: a suite's first at its top, the others in its sets
    at_top = browser.find_elements("css selector", "figure.headline")
    assert len(at_top) == len({s["suite"] for s in sections})  # one figure open per suite
    suites = list(dict.fromkeys(s["title"].split(":")[0] for s in sections))
    headings = [h.text for h in browser.find_elements("tag name", "h2")]
    assert headings[0] == "Summary" and headings[-1] == "Provenance"
    assert sorted(h for h in headings if h in suites) == sorted(suites)  # one part per suite
    headline = browser.find_elements("css selector", "table.headline")
    assert len(headline) == len(suites)
    for table in headline:  # a row per run, the added models among them
        rows = [r.text for r in table.find_elements("css selector", "tbody tr")]
        assert all(any(re.match(rf"{model}\b", row) for row in rows) for model in models), rows
    budget = browser.find_element("xpath", "//h2[@id='token-budget']/following::table[1]")
    rows = [r.text for r in budget.find_elements("css selector", "tbody tr")]
    assert sorted(r.split()[0] for r in rows) == servers, rows  # a row per server model, not per file
    details = browser.find_elements("css selector", "details[id$='-set']")
    assert len(details) == len(sections)  # every set folded under its suite
    assert {"Blocks world: mine", "Canvas: mine"} <= {s["title"] for s in sections}
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not errors, errors
    height = browser.execute_script("return document.documentElement.scrollHeight")
    width = browser.execute_script("return document.documentElement.scrollWidth")
    print(
        f"\nreport after {len(models) - len(servers)} model file(s), {len(servers)} server models and 3 new "
        f"sets: {height:,} px tall, {width} px wide"
    )
    assert width <= WIDTH, f"the report is {width} px wide at a {WIDTH} px window: a table overflows"
    assert height < MAX_HEIGHT, f"the report is {height} px tall: fold what is not a suite's headline"
    browser.set_window_size(WIDTH, min(height, 20_000))
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(SCREENSHOT)) and SCREENSHOT.stat().st_size > 10_000
