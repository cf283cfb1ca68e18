"""Imported first by every script, so `python scripts/<name>.py` works from anywhere.

It puts the project root on sys.path (the `common` package is found without installing it),
and when a module is still missing (the script runs outside the project's .venv, or an
optional extra is not installed) replaces the bare ModuleNotFoundError traceback by what to do.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

_default_hook = sys.excepthook


def _missing_module_hint(kind, exc, tb) -> None:
    """Print one clear line for a missing module (exit status 1 as for any error); else the traceback."""
    if not issubclass(kind, ModuleNotFoundError):
        _default_hook(kind, exc, tb)
        return
    venv = ROOT / ".venv" / "bin" / "python"
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path("scripts/<script>.py")
    script = f"{script.resolve().parent.name}/{script.name}"  # scripts/ or bench/
    in_venv = Path(sys.prefix).resolve() == (ROOT / ".venv").resolve()
    if not in_venv:
        fix = (
            f"this script needs the project's environment: run `make env` in {ROOT}, then "
            f"`.venv/bin/python {script} ...` there (or `source .venv/bin/activate` first)"
        )
        if not venv.exists():
            fix += "; .venv does not exist yet"
    else:
        fix = (
            "the project's .venv lacks it: run `make env` (or the Make target that installs this "
            "extra, e.g. `make test-engine` for llama_cpp; `make help` lists them)"
        )
    print(f"error: no module named {exc.name!r}: {fix}", file=sys.stderr)


sys.excepthook = _missing_module_hint
