"""Well-known locations of the project, computed from this file so scripts run from anywhere."""

from pathlib import Path

from common.errors import UserError

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


def set_dir(suite: str, name_or_dir: str | Path, marker: str, build: str) -> Path:
    """Return the directory of the problem set ``-t`` names: ``name_or_dir`` itself when it holds
    ``marker`` (a file or directory every built set of the suite has), else data/<suite>/<name>.

    Raises UserError naming both places, the sets built, and ``build`` (how to build one)."""
    for path in (Path(name_or_dir), DATA / suite / str(name_or_dir)):
        if (path / marker).exists():
            return path
    built = sorted(p.parent.relative_to(DATA / suite).as_posix() for p in (DATA / suite).glob(f"*/{marker}"))
    raise UserError(
        f"no {suite} set {str(name_or_dir)!r}: neither {name_or_dir} nor "
        f"{shown(DATA / suite / str(name_or_dir))} holds {marker}; sets built: {', '.join(built) or 'none'} "
        f"({build})"
    )
