"""Well-known locations of the project, computed from this file so scripts run from anywhere."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"
DATA = ROOT / "data"
RESULTS = ROOT / "results"
CACHE = ROOT / ".cache"
