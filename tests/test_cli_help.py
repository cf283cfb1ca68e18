"""Script help shows each useful default once, and a script run outside .venv says how to fix it."""

import re
import subprocess
import sys

from common.paths import ROOT
from tests.conftest import run_script, write_unreachable_source
from tests.timing import timeout


def option_entries(help_text: str) -> list[str]:
    """Return the text of each option of an argparse help, its wrapped lines joined."""
    body = help_text.split("options:", 1)[1]
    return [" ".join(entry.split()) for entry in re.split(r"\n(?=  -)", body) if entry.strip()]


def check_help_defaults(help_text: str) -> None:
    """Assert that every option of a --help shows its default at most once, never "None", and
    no path of this machine (tests/test_scripts.py::test_help calls it for every script)."""
    for entry in option_entries(help_text):
        assert "(default: None)" not in entry, entry
        assert entry.count("default") <= 1, entry
        assert str(ROOT) not in entry, entry  # paths inside the project are shown relative


def test_required_options_show_no_default():
    result = run_script("scripts/generate_prompts.py", "--help")
    entries = {entry.split()[0]: entry for entry in option_entries(result.stdout)}
    assert "default" not in entries["--view"] and "default" not in entries["--output"]
    assert "(default: paper)" in entries["--prompting"]


def test_a_script_outside_the_venv_says_how_to_fix_it():
    # -S: no site-packages and no venv, as `python3 scripts/...` with a bare interpreter
    result = subprocess.run(
        [sys.executable, "-S", "scripts/lm_plan.py", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout(60),
    )
    assert result.returncode == 1
    assert "No module named 'common'" not in result.stderr and "Traceback" not in result.stderr
    assert "run `make env`" in result.stderr and ".venv/bin/python scripts/lm_plan.py" in result.stderr


def test_offline_fetch_prints_the_clear_error_without_urllib3_retry_noise(tmp_path):
    result = run_script(
        "scripts/fetch_data.py",
        str(write_unreachable_source(tmp_path)),
        "--retries",
        "2",
        env={"DATA_MIRROR": ""},
    )
    assert result.returncode == 2
    assert "Retrying" not in result.stderr and "urllib3" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("error: could not download a.jsonl") and len(lines) <= 2, lines


# make runs this one with the system's python3 while it reads the Makefile, before .venv exists
STANDARD_LIBRARY_ONLY = {"scripts/make_suites.py"}


def test_every_script_imports_the_project_env_before_anything_else():
    import ast

    from tests.test_scripts import SCRIPTS

    for script in SCRIPTS:
        if script in STANDARD_LIBRARY_ONLY:
            continue
        body = ast.parse((ROOT / script).read_text(encoding="utf-8")).body
        first = body[1] if isinstance(body[0], ast.Expr) else body[0]  # after the docstring
        assert isinstance(first, ast.Try) and isinstance(first.body[0], ast.Import), script
        assert first.body[0].names[0].name == "_project_env", script
