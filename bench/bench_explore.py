"""Time every canned query of the explorer as a reader meets it: the page Datasette serves for it
(``make explore``'s command line: the database read-only, the checkout's plugins and settings),
fetched over HTTP from 127.0.0.1, and the query alone in SQLite.

For this checkout and, with --anchor <checkout> (the code before a change), for that one on the
same database: its canned queries written out as Datasette metadata (``datasette_metadata``),
Datasette started on a free port; then --runs repetitions, in each every query's page fetched
from each server in turn (which first alternates). Printed per query: the page's median time
with its spread (``measure.spread``), its ratio to the anchor page of the same server
(Datasette's page of the ``runs`` table: what serving any page costs on this machine just now),
the page's size, and the query alone in SQLite; with --anchor, the ratio of the two checkouts'
times per repetition; the machine's load before and after. The parameters are the database's
first paired test (``pairs``) and its run_a. The target: every page under 2 s on `make all`'s
database (docs/database.md).

$ python bench/bench_explore.py
$ python bench/bench_explore.py --anchor ../before --runs 5
"""

try:  # first: bench/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside bench/: the installed package serves
    pass

import json
import re
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from contextlib import closing
from pathlib import Path

from measure import load_line, spread  # bench/measure.py

from common import cli, paths

# run with a checkout's own code: its canned queries as Datasette metadata, printed as JSON
METADATA = (
    "import json, sqlite3, sys; sys.path.insert(0, sys.argv[1]); "
    "from common.queries import datasette_metadata; "
    "print(json.dumps(datasette_metadata(sqlite3.connect(sys.argv[2]), sys.argv[3])))"
)
ANCHOR_PAGE = "runs"  # a table page of every database: what any page costs


def free_port() -> int:
    """Return a TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(checkout: Path, database: Path, work: Path) -> tuple[subprocess.Popen, str]:
    """Start Datasette on ``database`` with ``checkout``'s canned queries, plugins and settings
    (those of `make explore`); return the process and its base URL once it answers."""
    python = checkout / ".venv" / "bin" / "python"
    python = python if python.exists() else Path(sys.executable)
    metadata = work / f"{checkout.name}.metadata.json"
    made = subprocess.run(
        [str(python), "-c", METADATA, str(checkout), str(database), database.stem],
        capture_output=True,
        text=True,
        cwd=checkout,
    )
    if made.returncode:
        raise SystemExit(f"the canned queries of {checkout} failed:\n{made.stderr}")
    metadata.write_text(made.stdout)
    port = free_port()
    command = [str(python.parent / "datasette"), "serve", "-i", str(database), "--metadata", str(metadata)]
    if (checkout / "common" / "explore_plugins").is_dir():
        command += ["--plugins-dir", str(checkout / "common" / "explore_plugins")]
    command += ["--host", "127.0.0.1", "--port", str(port), "--setting", "sql_time_limit_ms", "30000"]
    command += ["--setting", "default_page_size", "50", "--setting", "truncate_cells_html", "120"]
    server = subprocess.Popen(command, cwd=checkout, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/{database.stem}"
    for _ in range(600):
        try:
            urllib.request.urlopen(f"{url}.json", timeout=5).close()
            return server, url
        except OSError:
            if server.poll() is not None:
                raise SystemExit(f"Datasette stopped: {' '.join(command)}") from None
            time.sleep(0.2)
    server.terminate()
    raise SystemExit("Datasette did not answer within 2 minutes")


def fetch(url: str) -> tuple[float, int]:
    """Return the seconds a page took to arrive whole, and its bytes."""
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=600) as page:
        size = len(page.read())
    return time.perf_counter() - start, size


def parameters(database: Path) -> dict[str, str]:
    """Return the parameters given to every query: the first paired test's runs and rule."""
    with closing(sqlite3.connect(f"file:{database}?immutable=1", uri=True)) as conn:
        run_a, run_b, rule = conn.execute(
            "SELECT run_a, run_b, rule FROM pairs ORDER BY pair_id LIMIT 1"
        ).fetchone()
    return {"run_a": str(run_a), "run_b": str(run_b), "rule": rule, "run": str(run_a), "page": ""}


def explorer(checkout: Path, database: Path, work: Path) -> dict:
    """Return a started explorer of ``checkout`` on ``database``: its process, URL and queries."""
    server, url = serve(checkout, database, work)
    metadata = json.loads((work / f"{checkout.name}.metadata.json").read_text())
    return {"server": server, "url": url, "queries": metadata["databases"][database.stem]["queries"]}


def page_url(found: dict, name: str, values: dict[str, str]) -> str:
    """Return the URL of query ``name``'s first page on an ``explorer``, its parameters given."""
    names = dict.fromkeys(re.findall(r"(?<![:\w]):(\w+)", found["queries"][name]["sql"]))
    return f"{found['url']}/{name}?" + urllib.parse.urlencode({n: values.get(n, "") for n in names})


def measure(explorers: dict[str, dict], database: Path, runs: int) -> dict:
    """Return per checkout the anchor page's times and each query's page times and size, the
    checkouts' pages fetched in turn (which first alternates with each repetition)."""
    values = parameters(database)
    found = {label: {"anchor": [], "queries": {}} for label in explorers}
    for run in range(runs):
        order = list(explorers) if run % 2 == 0 else list(reversed(explorers))
        for label in order:
            found[label]["anchor"].append(fetch(f"{explorers[label]['url']}/{ANCHOR_PAGE}")[0])
        names = dict.fromkeys(name for e in explorers.values() for name in e["queries"])
        for name in names:
            for label in order:
                if name in explorers[label]["queries"]:
                    seconds, size = fetch(page_url(explorers[label], name, values))
                    entry = found[label]["queries"].setdefault(name, {"page": [], "bytes": size})
                    entry["page"].append(seconds)
    with closing(sqlite3.connect(f"file:{database}?immutable=1", uri=True)) as conn:
        for label, timing in found.items():
            for name, entry in timing["queries"].items():
                sql = explorers[label]["queries"][name]["sql"]
                names = dict.fromkeys(re.findall(r"(?<![:\w]):(\w+)", sql))
                start = time.perf_counter()
                conn.execute(sql, {n: values.get(n, "") for n in names}).fetchmany(1001)
                entry["sql"] = time.perf_counter() - start
    return found


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("--database", type=Path, default=paths.RESULTS / "results.sqlite")
    parser.add_argument("--runs", type=int, default=5, help="times each page is fetched (default 5)")
    parser.add_argument("--anchor", type=Path, help="a checkout of the code before, timed beside this one")
    args = parser.parse_args(argv)
    database = args.database.resolve()
    if not database.is_file():
        raise SystemExit(f"{database}: no results database; build it with `make db` (or `make all`)")
    print(load_line())
    checkouts = {"this checkout": paths.ROOT} | (
        {"anchor checkout": args.anchor.resolve()} if args.anchor else {}
    )
    with tempfile.TemporaryDirectory() as work:
        explorers = {label: explorer(path, database, Path(work)) for label, path in checkouts.items()}
        try:
            timings = measure(explorers, database, args.runs)
        finally:
            for found in explorers.values():
                found["server"].terminate()
                found["server"].wait()
    print(load_line())
    for label, found in timings.items():
        anchor = statistics.median(found["anchor"])
        print(f"\n{label}: anchor page (the runs table) {spread(found['anchor'])} s")
        for name, q in found["queries"].items():
            middle = statistics.median(q["page"])
            print(
                f"  {name:32} page {spread(q['page'])} s = {middle / anchor:5.1f} x the anchor page; "
                f"{q['bytes'] / 1e3:,.0f} kB; SQL alone {q['sql']:.2f} s{'  OVER 2 s' if middle >= 2 else ''}"
            )
    if args.anchor:
        mine, before = timings["this checkout"]["queries"], timings["anchor checkout"]["queries"]
        print("\nthis checkout / anchor checkout, per repetition (same query, fetched in turn):")
        for name in [n for n in mine if n in before]:
            ratios = [a / b for a, b in zip(mine[name]["page"], before[name]["page"], strict=True)]
            print(f"  {name:32} {spread(ratios)}")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
