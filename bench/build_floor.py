"""The floor of a full build of the results database: the CPU time of the work no implementation
in Python with the standard library's json, bz2 and sqlite3 can skip, with no scoring at all.

Two steps, each given what the real build read and wrote:

- ``--inputs LIST``: every file the build opened under data/ and results/ (the list comes from an
  audit hook on the build, ``bench_database.py``) is read and, for JSON lines, parsed at once (as
  ``common.jsonl.parse_lines`` does), bzip2-decompressed first when it is compressed;
- ``--database DB``: every row of the built database is inserted into an empty database of the
  same schema (the rows are read out of DB before the clock starts), one executemany per table.

Prints the CPU seconds of each step and their sum, on one line each. A ratio target whose time
is below this floor cannot be met by tuning the Python: it would take other libraries (a compiled
parser) or a smaller database.

$ python bench/build_floor.py --inputs opened.txt --database results/results.sqlite
"""

import argparse
import bz2
import json
import sqlite3
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path


def read_inputs(files: list[Path]) -> None:
    """Read, decompress (.bz2) and parse (JSON lines, JSON) each of ``files``."""
    for file in files:
        data = file.read_bytes()
        name = file.name
        if name.endswith(".bz2"):
            data = bz2.decompress(data)
            name = name[:-4]
        if name.endswith(".jsonl"):
            json.loads(b"[" + b",".join(line for line in data.split(b"\n") if line.strip()) + b"]")
        elif name.endswith(".json"):
            json.loads(data)


def insert_rows(database: Path, target: Path) -> float:
    """Return the CPU seconds of inserting every row of ``database`` into ``target``, a new
    database of the same schema."""
    with closing(sqlite3.connect(database)) as source:
        schema = source.execute(
            "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' "
            "ORDER BY rowid"
        ).fetchall()
        tables = [name for name, sql in schema if sql.startswith("CREATE TABLE")]
        rows = {table: source.execute(f"SELECT * FROM {table}").fetchall() for table in tables}
    with closing(sqlite3.connect(target)) as conn:
        for _, sql in schema:
            conn.execute(sql)
        conn.commit()
        start = time.process_time()
        with conn:
            for table in tables:
                if rows[table]:
                    marks = ", ".join("?" * len(rows[table][0]))
                    conn.executemany(f"INSERT INTO {table} VALUES ({marks})", rows[table])
        return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--inputs", type=Path, required=True, help="a file naming one input file per line")
    parser.add_argument("--database", type=Path, required=True, help="the database the build wrote")
    args = parser.parse_args(argv)
    files = [Path(line) for line in args.inputs.read_text(encoding="utf-8").splitlines() if line]
    start = time.process_time()
    read_inputs(files)
    reading = time.process_time() - start
    with tempfile.TemporaryDirectory() as scratch:
        inserting = insert_rows(args.database, Path(scratch) / "floor.sqlite")
    print(f"read {reading:.3f}")
    print(f"insert {inserting:.3f}")
    print(f"floor {reading + inserting:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
