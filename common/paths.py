"""Well-known locations of the project, computed from this file so scripts run from anywhere."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"
DATA = ROOT / "data"
RESULTS = ROOT / "results"
CACHE = ROOT / ".cache"


def shown(path: str | Path) -> str:
    """Return ``path`` relative to the project root when it is inside it, else as given: how
    messages and reports name files (short, and free of this machine's directories)."""
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)
