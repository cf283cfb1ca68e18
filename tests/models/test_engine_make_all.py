"""`make all MODEL=... LIMIT=...` against a real llama.cpp server, end to end, in a copy of the repo.

Run by `make test-engine` and `make test-all`. The tiny random-weight model answers nonsense and its
context is 2,048 tokens (the common case for local models): the point is that every suite's
request, refusal, parsing, scoring and reporting path works against a real server, that the
report holds the model's rows in every suite, and that a second `make all` asks nothing again.
"""

import json

import pytest
import yaml
from engine_server import llama_server

from tests.sandbox import make_sandbox, run

pytestmark = pytest.mark.integration
LIMIT = 2
SUITES = ("blocks", "canvas", "already_said_that", "worldsense")
SECTIONS = 8  # the report's: one per suite, and the blocks and canvas scaling and pictures sets


def posts(log) -> int:
    """Return how many completion requests the server has answered (its access log lines)."""
    return sum("POST /v1/" in line for line in log.read_text().splitlines())


def test_make_all_runs_a_real_model_through_every_suite_into_the_report(tmp_path):
    with llama_server(tmp_path, n_ctx=2048) as (url, log):
        repo = make_sandbox(tmp_path)
        (repo / "configs" / "models" / "tiny.yaml").write_text(
            yaml.safe_dump(
                {
                    "base_url": url,
                    "model": "tiny-llama",
                    "max_tokens": 16,
                    "concurrency": 1,
                    "timeout_s": [5, 300],
                    "backoff_s": 0.1,
                }
            )
        )
        first = run(repo, f"make all MODEL=tiny LIMIT={LIMIT}", timeout=3600)
        assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-5000:]
        asked = posts(log)
        assert asked > 0
        again = run(repo, f"make all MODEL=tiny LIMIT={LIMIT}", timeout=900)
        assert again.returncode == 0, again.stderr[-3000:]
        assert posts(log) == asked, "the second make all asked the server again"

    lines = first.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Report: results/report.html"))
    summary = lines[start:]
    assert len([line for line in summary[1:] if not line.startswith("  tiny: ")]) == SECTIONS, summary
    assert len(summary) <= 2 + SECTIONS  # at most one line on the model's replies cut at max_tokens
    markdown = (repo / "results" / "report.md").read_text()
    sections = repo / "results" / "sections"
    for suite in SUITES:  # the model runs on each suite's default sets: a section per set (or per suite)
        files = sorted(sections.glob(f"{suite}/*.json")) or [sections / f"{suite}.json"]
        found = [json.loads(path.read_text()) for path in files]
        cells = json.dumps([table["rows"] for section in found for table in section["tables"]])
        assert "tiny" in cells, f"{suite}: no row of the model in its tables"
        assert all(section["title"] in markdown for section in found)
    print(f"\n{asked} requests; report summary:\n" + "\n".join(summary))
