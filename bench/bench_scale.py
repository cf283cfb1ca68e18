"""Every stage's cost against the number of runs: N content-distinct models in every suite, N = 10 to 100.

Works in a sandbox copy of this checkout after `make all` (code, data, results and make's
stamps copied; .venv linked), never in its own results. For each N of --sizes, each suite gets
N model runs more than its own: copies of its built-in or released runs (a model's every results
file: each set, view and modality), each named `<model>-vNNN`, with --share of its records'
answers (every field but the item's identity) taken from another record of the same file, drawn
with a seed per run, so every run is distinct in content. Then each stage is run as `make all`
runs it, timed:

- scoring: `score_results.py -t <suite>` for each of the four suites, into an empty database;
- analysis: each suite's `analyse_results.py` commands (read from `make -n all`), every set;
- report: `build_report.py` (and `score_results.py --prune` before it);
- queries: every canned query of the explorer (its first page; the two-run queries on the first
  paired test, a run's on the first run), each timed alone;
- add one: one model more in every suite, then `make all`.

`--stages` times only some of them (scoring always: the others read its database).

Per stage: CPU seconds (user + system of the process and every child it waited for, os.wait4),
wall seconds, peak memory (the largest resident set of the process or a child, ru_maxrss), and
the growth exponent in N: the least-squares slope of log(CPU) on log(N) over the sizes run
(1: linear, 2: quadratic). Also the database's bytes per answer at each N. Prints the machine's
load before and after each size.

$ DATA_MIRROR=../shared python bench/bench_scale.py --sizes 10 30 100
$ python bench/bench_scale.py --sizes 5 10 --suites canvas blocks --keep /tmp/scale-sandbox
"""

try:  # first: bench/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside bench/: the installed package serves
    pass

import json
import math
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from measure import load_line  # bench/measure.py

from common import cli, paths

SUITES = ("worldsense", "canvas", "blocks", "already_said_that")
STAGES = ("scoring", "analysis", "report", "queries", "add")  # add: one model more, then make all
SUFFIX = "___results.jsonl"
# a record's fields that say which item (and draw) it answers: kept; every other field is the answer
IDENTITY = {"Key", "id", "view", "sent_as", "sample", "set", "variant", "pairing", "model", "prompting"}
IDENTITY |= {"wording", "draw"}
AUDIT_RUNS = "shortcut-"  # canvas's shortcut baselines: its audit's runs, not models to copy
COPIED = ("___turns.jsonl", "___results.meta.json", "___summary.json")  # a run's other files, as they are


def copy_checkout(target: Path) -> None:
    """Copy this checkout into ``target`` (everything but .git; .venv linked), times kept, so that
    make finds it as built."""
    target.mkdir(parents=True)
    for entry in paths.ROOT.iterdir():
        if entry.name in (".git",):
            continue
        if entry.name == ".venv":
            (target / ".venv").symlink_to(entry.resolve())
        elif entry.is_dir():
            shutil.copytree(entry, target / entry.name, symlinks=True, copy_function=shutil.copy2)
        else:
            shutil.copy2(entry, target / entry.name)


def suite_of(file: Path, root: Path) -> str:
    """Return the suite a results file belongs to (results/<suite>/..., data/worldsense/...)."""
    parts = file.relative_to(root).parts
    return parts[1]


def base_runs(root: Path, suites: list[str]) -> dict[str, dict[str, list[Path]]]:
    """Return, per suite, each model's results files (its own runs: no ``-v`` copies)."""
    found: dict[str, dict[str, list[Path]]] = {s: defaultdict(list) for s in suites}
    files = sorted([*root.glob(f"results/**/*{SUFFIX}"), *root.glob(f"data/worldsense/*/results/*{SUFFIX}")])
    for file in files:
        suite, model = suite_of(file, root), file.name[: -len(SUFFIX)].split("___")[-1]
        if suite in found and "-v" not in model and not model.startswith(AUDIT_RUNS):
            found[suite][model].append(file)
    return {s: dict(sorted(models.items())) for s, models in found.items()}


def changed(lines: list[str], share: float, seed: str) -> list[str]:
    """Return the records ``lines`` with ``share`` of them answered as another record was (every
    field but the item's identity taken from a record drawn at random), seeded by ``seed``."""
    rng = random.Random(seed)
    records = [json.loads(line) for line in lines]
    out = []
    for record in records:
        if rng.random() < share:
            other = records[rng.randrange(len(records))]
            record = {
                **{k: v for k, v in other.items() if k not in IDENTITY},
                **{k: record[k] for k in record if k in IDENTITY},
            }
        out.append(json.dumps(record, ensure_ascii=False))
    return out


def add_model(index: int, bases: dict[str, list[Path]], share: float) -> int:
    """Write run ``index`` of a suite: a copy of base model ``index % len(bases)``'s every results
    file (and its other files) under the name ``<model>-v<index>``, its answers changed
    (``changed``); return how many files it wrote."""
    model = sorted(bases)[index % len(bases)]
    name = f"{model}-v{index:03d}"
    written = 0
    for file in bases[model]:
        prompting = file.name[: -len(SUFFIX)].rsplit("___", 1)[0]
        target = file.with_name(f"{prompting}___{name}{SUFFIX}")
        lines = file.read_text(encoding="utf-8").splitlines()
        target.write_text(
            "\n".join(changed(lines, share, f"{target.parent}/{name}")) + "\n", encoding="utf-8"
        )
        for extra in COPIED:
            source = file.with_name(f"{prompting}___{model}{extra}")
            if source.exists():
                shutil.copy2(source, file.with_name(f"{prompting}___{name}{extra}"))
        written += 1
    return written


def timed(command: str, cwd: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """Run ``command`` (bash) in ``cwd``; return its CPU seconds, wall seconds and peak resident
    memory in MB (of it and every child it waited for). SystemExit with its output's end when it fails."""
    with tempfile.TemporaryFile() as output:
        start = time.perf_counter()
        process = subprocess.Popen(
            ["bash", "-c", command], cwd=cwd, stdout=output, stderr=subprocess.STDOUT, env=env
        )
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status):
            output.seek(0)
            raise SystemExit(f"{command} failed in {cwd}:\n{output.read()[-3000:].decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024


QUERIES = """
import json, sqlite3, sys, time
from common import queries
conn = sqlite3.connect("file:results/results.sqlite?mode=ro", uri=True)
first = conn.execute("SELECT run_a, run_b, rule FROM pairs ORDER BY pair_id LIMIT 1").fetchone()
run = conn.execute("SELECT min(run_id) FROM runs").fetchone()[0]
params = {"run_a": first[0], "run_b": first[1], "rule": first[2], "run": run, "page": ""}
out = {}
for name in queries.all_queries():
    cpu, wall = time.process_time(), time.perf_counter()
    rows = len(queries.run_query(conn, name, **params))
    out[name] = [time.process_time() - cpu, time.perf_counter() - wall, rows]
print(json.dumps(out))
"""


def make_commands(root: Path, env: dict[str, str], *args: str) -> list[str]:
    """Return the commands `make -n <args>` would run in ``root``."""
    done = subprocess.run(
        ["make", "-n", *args], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    commands, partial = [], ""
    for line in done.stdout.splitlines():  # a recipe line ending in a backslash goes on
        partial += line + "\n"
        if not line.endswith("\\"):
            commands.append(partial.rstrip("\n"))
            partial = ""
    return commands


def stage_of(command: str) -> str | None:
    """Return the stage a command of `make all` belongs to (analysis: of which suite), or None."""
    if "scripts/build_report.py" in command or "score_results.py --prune" in command:
        return "report"
    if "scripts/analyse_results.py" in command:
        suite = command.split(" -t ", 1)[1].split()[0].split("/")[0]
        return f"analysis: {suite}"
    return None


def measure(root: Path, env: dict[str, str], wanted: Sequence[str] = STAGES) -> dict[str, list[float]]:
    """Return each stage's [CPU s, wall s, peak MB] at the sandbox's current runs, and the
    queries' too (each, and the slowest as "queries (slowest)"), of the stages ``wanted``
    (scoring always: the others read it); leaves make's stamps up to date."""
    found: dict[str, list[float]] = {}
    for name in ("results.sqlite", "results.sqlite-wal", "results.sqlite-shm"):
        (root / "results" / name).unlink(missing_ok=True)
    python = str(root / ".venv/bin/python")
    for suite in SUITES:  # every suite (the report and the queries read them all)
        found[f"scoring: {suite}"] = list(timed(f"{python} scripts/score_results.py -t {suite}", root, env))
    later = time.time() + 1  # every set rescored: its analysis and the report are out of date
    for stamp in root.glob("results/*/*/.scored"):
        os.utime(stamp, (later, later))
    stages: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    analyses = [c for c in make_commands(root, env, "all") if (stage_of(c) or "").startswith("analysis")]
    for command in analyses if "analysis" in wanted else []:
        stage = stage_of(command)
        cpu, wall, peak = timed(command, root, env)
        total = stages[stage]
        stages[stage] = [total[0] + cpu, total[1] + wall, max(total[2], peak)]
    # the report as make runs it after a section changed (`make -n` alone would not show it)
    section = next(root.glob("results/sections/**/*.json")).relative_to(root)
    for command in make_commands(root, env, "-W", str(section), "results/report.html"):
        if stage_of(command) == "report" and "report" in wanted:
            cpu, wall, peak = timed(command, root, env)
            total = stages["report"]
            stages["report"] = [total[0] + cpu, total[1] + wall, max(total[2], peak)]
    found.update(stages)
    subprocess.run(["make", "-t", "all"], cwd=root, env=env, capture_output=True, check=True)
    if "queries" not in wanted:
        return found
    cpu, wall, peak = timed(f"{python} -c '{QUERIES}' > .bench_queries.json", root, env)
    each = json.loads((root / ".bench_queries.json").read_text())
    for name, (q_cpu, q_wall, _) in each.items():
        found[f"query: {name}"] = [q_cpu, q_wall, peak]
    slowest = max(each.values(), key=lambda v: v[1])
    found["queries (slowest)"] = [slowest[0], slowest[1], peak]
    return found


def bytes_per_answer(root: Path) -> tuple[int, int, float]:
    """Return the database's size in bytes (with its WAL), its answers, and bytes per answer."""
    size = sum(
        (root / "results" / n).stat().st_size
        for n in ("results.sqlite", "results.sqlite-wal")
        if (root / "results" / n).exists()
    )
    with sqlite3.connect(root / "results" / "results.sqlite") as conn:
        answers = conn.execute("SELECT count(*) FROM answers").fetchone()[0]
    return size, answers, size / max(answers, 1)


def exponent(sizes: list[int], values: list[float]) -> float:
    """Return the least-squares slope of log(value) on log(size)."""
    xs, ys = [math.log(s) for s in sizes], [math.log(max(v, 1e-3)) for v in values]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


def table(sizes: list[int], rows: dict[int, dict[str, list[float]]]) -> str:
    """Return the Markdown table: per stage, CPU / wall / peak at each N and the exponents."""
    stages = list(dict.fromkeys(name for n in sizes for name in rows[n]))
    head = "| stage | " + " | ".join(f"N={n}: CPU s / wall s / peak MB" for n in sizes)
    head += " | exponent (CPU) | exponent (wall) |\n|" + " --- |" * (len(sizes) + 3)
    lines = [head]
    for stage in stages:
        cells = [rows[n].get(stage) for n in sizes]
        shown = [f"{c[0]:.2f} / {c[1]:.2f} / {c[2]:.0f}" if c else "-" for c in cells]
        have = [(n, c) for n, c in zip(sizes, cells, strict=True) if c]
        fit = [
            f"{exponent([n for n, _ in have], [c[i] for _, c in have]):.2f}" if len(have) > 1 else "-"
            for i in (0, 1)
        ]
        lines.append(f"| {stage} | " + " | ".join(shown) + f" | {fit[0]} | {fit[1]} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[10, 30, 100], help="the numbers of runs added"
    )
    parser.add_argument(
        "--suites", nargs="+", default=list(SUITES), choices=SUITES, help="the suites given runs"
    )
    parser.add_argument(
        "--stages", nargs="+", default=list(STAGES), choices=STAGES, help="the stages timed (scoring always)"
    )
    parser.add_argument("--share", type=float, default=0.15, help="share of a run's answers changed")
    parser.add_argument(
        "--keep", type=Path, help="make the sandbox here and keep it (default: a temporary one)"
    )
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    sizes = sorted(args.sizes)
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-scale-")) / "checkout"
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env.pop("RESULTS_DATABASE", None)
    if env.get("DATA_MIRROR"):  # relative to this checkout, not to the sandbox
        env["DATA_MIRROR"] = str(Path(env["DATA_MIRROR"]).resolve())
    print(f"sandbox: {root} (a copy of {paths.ROOT} after make all)", flush=True)
    copy_checkout(root)
    try:
        bases = base_runs(root, args.suites)
        print("base runs: " + "; ".join(f"{s}: {', '.join(m)}" for s, m in bases.items()), flush=True)
        subprocess.run(["make", "-t", "all"], cwd=root, env=env, capture_output=True, check=True)
        rows: dict[int, dict[str, list[float]]] = {}
        added = 0
        for n in sizes:
            while added < n:
                for suite in args.suites:
                    add_model(added, bases[suite], args.share)
                added += 1
            print(load_line(), flush=True)
            found = measure(root, env, args.stages)
            size, answers, per = bytes_per_answer(root)
            print(
                f"N={n}: database {size / 1e6:,.1f} MB, {answers:,} answers, {per:.1f} bytes per answer",
                flush=True,
            )
            for suite in args.suites:
                add_model(added, bases[suite], args.share)
            added += 1
            if "add" in args.stages:
                found["add one model, make all"] = list(timed("make all", root, env))
            rows[n] = found
            print(table([m for m in sizes if m in rows], rows), flush=True)
            print(load_line(), flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(root.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
