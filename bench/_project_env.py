"""Imported first by every bench script, as scripts/_project_env.py is by every script, whose
work it does by running that file: the project root on sys.path, and one clear line instead of
a traceback when a module is missing (the script runs outside .venv, or pyperplan is not
installed)."""

import importlib.util
from pathlib import Path

_SHARED = Path(__file__).resolve().parent.parent / "scripts" / "_project_env.py"
_spec = importlib.util.spec_from_file_location("_scripts_project_env", _SHARED)
_spec.loader.exec_module(importlib.util.module_from_spec(_spec))
