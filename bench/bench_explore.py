"""Time every canned query of the explorer as a reader meets it: the page Datasette serves for it
(``make explore``'s command line: the database read-only, the checkout's plugins and settings),
fetched over HTTP from 127.0.0.1, and the query alone in SQLite.

For this checkout and, with --anchor <checkout> (the code before a change), for that one on the
same database: its canned queries written out as Datasette metadata (``datasette_metadata``),
Datasette started on a free port, then each query's page fetched --runs times. Printed per
query: the page's median time with its spread (``measure.spread``), its ratio to the anchor page
of the same server (Datasette's page of the ``runs`` table: what serving any page costs on this
machine just now), the page's size, and the query alone in SQLite; the machine's load before
and after. The parameters are the database's first paired test (``pairs``) and its run_a. The
target: every page under 2 s on `make all`'s database (docs/database.md).

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


def time_checkout(checkout: Path, database: Path, runs: int, work: Path) -> dict:
    """Return, for ``checkout``'s explorer on ``database``: the anchor page's times and each
    canned query's page times, sizes and SQLite-only time."""
    server, url = serve(checkout, database, work)
    try:
        queries = json.loads((work / f"{checkout.name}.metadata.json").read_text())
        queries = queries["databases"][database.stem]["queries"]
        values = parameters(database)
        found = {"anchor": [fetch(f"{url}/{ANCHOR_PAGE}")[0] for _ in range(runs)], "queries": {}}
        with closing(sqlite3.connect(f"file:{database}?immutable=1", uri=True)) as conn:
            for name, query in queries.items():
                names = dict.fromkeys(re.findall(r"(?<![:\w]):(\w+)", query["sql"]))
                given = {n: values.get(n, "") for n in names}
                page = f"{url}/{name}?" + urllib.parse.urlencode(given)
                times = [fetch(page) for _ in range(runs)]
                start = time.perf_counter()
                conn.execute(query["sql"], given).fetchmany(1001)
                found["queries"][name] = {
                    "page": [t for t, _ in times],
                    "bytes": times[0][1],
                    "sql": time.perf_counter() - start,
                }
        return found
    finally:
        server.terminate()
        server.wait()


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
    with tempfile.TemporaryDirectory() as work:
        timings = {"this checkout": time_checkout(paths.ROOT, database, args.runs, Path(work))}
        if args.anchor:
            timings["anchor checkout"] = time_checkout(args.anchor.resolve(), database, args.runs, Path(work))
    print(load_line())
    for label, found in timings.items():
        anchor = sorted(found["anchor"])[len(found["anchor"]) // 2]
        print(f"\n{label}: anchor page (the runs table) {spread(found['anchor'])} s")
        for name, q in found["queries"].items():
            middle = sorted(q["page"])[len(q["page"]) // 2]
            print(
                f"  {name:32} page {spread(q['page'])} s = {middle / anchor:5.1f} x the anchor; "
                f"{q['bytes'] / 1e3:,.0f} kB; SQL alone {q['sql']:.2f} s{'  OVER 2 s' if middle >= 2 else ''}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
