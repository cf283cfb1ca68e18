"""Shared fixtures: paths of the project and of the fetched data."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from common.fetch import read_checksums
from common.paths import DATA, ROOT
from common.suite import SetRef
from tests.timing import timeout

WORLDSENSE_TEST_SET = DATA / "worldsense" / "test_set"
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
# `make` exports LOGLEVEL=WARNING for quiet runs; the scripts the tests start log at their default
os.environ.pop("LOGLEVEL", None)


@pytest.fixture(autouse=True)
def results_database(tmp_path_factory, monkeypatch) -> Path:
    """A results database of the test's own (RESULTS_DATABASE, which the scripts it starts inherit):
    a test never reads or writes the user's results/results.sqlite."""
    path = tmp_path_factory.mktemp("database") / "results.sqlite"
    monkeypatch.setenv("RESULTS_DATABASE", str(path))
    return path


@pytest.fixture(scope="session")
def worldsense_test_set(tmp_path_factory) -> Path:
    """The official WorldSense test set as released: a temporary directory of links to its trials
    and to the results files the release pins (configs/data/worldsense.sha256), never the results
    of a user's runs beside them; fails (not skips) when it was not fetched."""
    if not (WORLDSENSE_TEST_SET / "trials.jsonl.bz2").is_file():
        pytest.fail("data/worldsense/test_set is missing: run `make data` (DATA_MIRROR=../shared offline)")
    copy = tmp_path_factory.mktemp("worldsense") / "test_set"
    (copy / "results").mkdir(parents=True)
    (copy / "trials.jsonl.bz2").symlink_to(WORLDSENSE_TEST_SET / "trials.jsonl.bz2")
    for path in read_checksums(ROOT / "configs" / "data" / "worldsense.sha256"):
        if path.startswith("test_set/results/"):
            (copy / "results" / Path(path).name).symlink_to(WORLDSENSE_TEST_SET.parent / path)
    return copy


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium driven by selenium (no network traffic of its own): the browser tests'
    (make browser installs it)."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium: make browser")
    from selenium.webdriver.chrome.service import Service

    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        pytest.fail("Debian's chromium and chromium-driver are not installed: make browser")
    options = webdriver.ChromeOptions()
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1280,900",
    ):
        options.add_argument(flag)
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    yield driver
    driver.quit()


def run_script(
    *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess:
    """Run ``python scripts/<args>`` in a subprocess and return the completed process (text mode)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout(300)
    )


def first_request_images(server) -> list[dict]:
    """Return the ``image_url`` objects of the stub ``server``'s first chat request, in order."""
    (request, *_) = [r for r in server.requests if r["path"].endswith("/chat/completions")]
    parts = [p for m in request["body"]["messages"] if isinstance(m["content"], list) for p in m["content"]]
    return [p["image_url"] for p in parts if p["type"] == "image_url"]


def assert_text_only_model_refused(
    server, script: str, args: list[str], config: Path, prompting: str
) -> None:
    """Assert that ``script`` run with ``args``, ``--prompting prompting`` and a text-only config of
    the stub ``server`` (``vision`` left at its default, false) stops with exit 2 naming
    ``vision: true``, and sends no completion request."""
    sent = len(server.requests)
    config.write_text(f"base_url: {server.url}\nmodel: stub-model\n")
    refused = run_script(script, *args, "--model", str(config), "--no-cache", "--prompting", prompting)
    assert refused.returncode == 2 and "vision: true" in refused.stderr, refused.stderr
    assert not [r for r in server.requests[sent:] if r["path"].endswith("/completions")]


def write_unreachable_source(tmp_path: Path) -> Path:
    """Write a data source config (and its checksums) whose URL is a local port nobody listens
    on, so that fetching it fails as offline; return the config's path."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    (tmp_path / "source.sha256").write_text(f"{'0' * 64}  sub/a.jsonl\n")
    (tmp_path / "source.yaml").write_text(
        f"name: demo\nurl: http://127.0.0.1:{port}/rel\nmirror: demo\ndest: {tmp_path / 'data'}\n"
        "checksums: source.sha256\n"
    )
    return tmp_path / "source.yaml"


# ---- blocks: the CogSci 2022 release ----------------------------------------------------------
@pytest.fixture(scope="session")
def release() -> Path:
    """The CogSci 2022 blocks-world release directory; fails (not skips) when it was not fetched."""
    from common.blocks.release import RELEASE

    if not (RELEASE / ".fetched").is_file():
        pytest.fail("data/cogsci22_blocks is missing: run `make data` (DATA_MIRROR=../shared offline)")
    return RELEASE


@pytest.fixture(scope="session")
def released_problems(release):
    """The 103 released blocks-world problems by id."""
    from common.blocks.problems import load_problems
    from common.blocks.release import problems_dir

    return {p.id: p for p in load_problems(problems_dir(release))}


@pytest.fixture(scope="session")
def blocks_tiny(tmp_path_factory) -> tuple[Path, SetRef]:
    """A throw-away repository copy (tests/sandbox.py) holding the blocks set ``tiny`` of
    tests/blocks/fixtures.py (data/blocks/tiny, results/blocks/tiny): ``(repo, its SetRef)``."""
    from common.blocks import SUITE
    from tests.blocks.fixtures import build_tiny_set
    from tests.sandbox import make_sandbox

    repo = make_sandbox(tmp_path_factory.mktemp("blocks_tiny"))
    data = build_tiny_set(repo / "data" / "blocks", repo / "results" / "blocks", repo)
    return repo, SUITE.ref("tiny", data=data, results_root=repo / "results" / "blocks")


def comparable(path: Path) -> list[dict]:
    """Return the records of a results file (every draw) without the timing field ``latency_s`` and
    the run record (``run``: which run wrote it, when), sorted by Key and draw: what a batch run and
    a live run of the same model must share."""
    from common.results import RUN_FIELD, read_results

    records = [
        {k: v for k, v in r.items() if k not in ("latency_s", RUN_FIELD)}
        for r in read_results(path, all_draws=True)
    ]
    return sorted(records, key=lambda r: (str(r["Key"]), r.get("draw", 0)))


def live_then_batch(directory: Path) -> list[tuple[str, list[str], int]]:
    """Return (name, options, exit code) of the runs a suite's batch test makes of a script that
    asks a model: a live run; a batch run that submits its first batch and stops (exit 75: a batch
    is out); the same command with ``--wait``, which picks that batch up and goes on to the end.
    Each name has its own response cache and results directory under ``directory``."""
    runs = []
    for name, batch, code in (
        ("live", [], 0),
        ("batch", ["--batch"], 75),
        ("batch", ["--batch", "--wait"], 0),
    ):
        own = ["--cache-file", str(directory / f"{name}.sqlite"), "--results-dir", str(directory / name)]
        runs.append((name, [*own, *batch], code))
    return runs
