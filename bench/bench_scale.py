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
- add one: one model more in every suite (a copy of the base model with the most results files,
  the same at every N: `widest`), then `make all`.

Per stage: CPU seconds (user + system of the process and every child it waited for, os.wait4),
wall seconds, peak memory (the largest resident set of the process or a child, ru_maxrss), and
the growth exponent in N: the least-squares slope of log(CPU) on log(N) over the sizes run
(1: linear, 2: quadratic). Also the database's bytes per answer at each N. Prints the machine's
load before and after each size.

--stages times only some stages (a stage not timed is brought up to date by `make all` when a
later one needs it, untimed); --reps times each stage that many times, and the table (Markdown,
as docs/benchmarks.md shows it) gives the median with the range, the exponents fitted on the
medians. --keep keeps the sandbox; given a kept one, it is reused: this checkout's code is copied
over it (the runs it has are kept, and more added as --sizes asks), so that an N = 100 sandbox,
built once, measures a change of the code.

$ DATA_MIRROR=../shared python bench/bench_scale.py --sizes 10 30 100
$ python bench/bench_scale.py --sizes 5 10 --suites canvas blocks --keep /tmp/scale-sandbox
$ python bench/bench_scale.py --sizes 100 --suites worldsense --stages report queries --reps 3 --keep /tmp/ws
"""

try:  # first: bench/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside bench/: the installed package serves
    pass

import json
import math
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from measure import load_line  # bench/measure.py

from common import cli, paths

SUITES = ("worldsense", "canvas", "blocks", "already_said_that")
# --stages: what is timed (add: one model more, then make all)
STAGES = ("scoring", "analysis", "report", "queries", "add")
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


def widest(bases: dict[str, list[Path]]) -> str:
    """Return the base model with the most results files (the first in name order of those): the
    model the stage "add one" copies at every N, a model of every set of its suite (blocks' released
    runs are of one set only: a copy of those leaves the suite's analyses as they were)."""
    return max(sorted(bases), key=lambda model: len(bases[model]))


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


def add_model(index: int, bases: dict[str, list[Path]], share: float, model: str | None = None) -> int:
    """Write run ``index`` of a suite: a copy of base model ``model``'s (default: model ``index %
    len(bases)``) every results file (and its other files) under the name ``<model>-v<index>``, its
    answers changed (``changed``); return how many files it wrote."""
    model = model or sorted(bases)[index % len(bases)]
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


RELEASED = "data/blocks/released"  # blocks' set of the CogSci release's runs (make scores it too)


def _scoring(root: Path, env: dict[str, str]) -> dict[str, list[float]]:
    """Return each suite's scoring [CPU s, wall s, peak MB], into an empty database; the sets'
    stamps are then made newer, so that their analyses and the report are out of date."""
    found = {}
    for name in ("results.sqlite", "results.sqlite-wal", "results.sqlite-shm"):
        (root / "results" / name).unlink(missing_ok=True)
    python = str(root / ".venv/bin/python")
    for suite in SUITES:  # every suite (the report and the queries read them all)
        sets = f"-t {suite}"
        if suite == "blocks" and (root / RELEASED).is_dir():  # the release's runs, a set of no config
            sets += f" -t {RELEASED}"
        found[f"scoring: {suite}"] = list(timed(f"{python} scripts/score_results.py {sets}", root, env))
    _outdate(root)
    return found


def _outdate(root: Path) -> None:
    """Make every set's scoring stamp newer than its analysis: make takes them all as out of date."""
    later = time.time() + 1
    for stamp in root.glob("results/*/*/.scored"):
        os.utime(stamp, (later, later))


def _commands(root: Path, env: dict[str, str], prefix: str, *args: str) -> dict[str, list[float]]:
    """Run the commands of `make -n <args>` whose stage (``stage_of``) starts with ``prefix``;
    return per stage the sum of their CPU and wall seconds and their largest peak."""
    stages: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for command in make_commands(root, env, *args):
        stage = stage_of(command) or ""
        if stage.startswith(prefix):
            cpu, wall, peak = timed(command, root, env)
            total = stages[stage]
            stages[stage] = [total[0] + cpu, total[1] + wall, max(total[2], peak)]
    return dict(stages)


def _analysis(root: Path, env: dict[str, str]) -> dict[str, list[float]]:
    """Return each suite's analyses, every set's (all out of date: ``_outdate``), timed."""
    _outdate(root)
    return _commands(root, env, "analysis", "all")


def _report(root: Path, env: dict[str, str]) -> dict[str, list[float]]:
    """Return the report's cost as make runs it after a section changed (`make -n` alone would not
    show it): `score_results.py --prune` and `build_report.py`."""
    section = next(root.glob("results/sections/**/*.json")).relative_to(root)
    return _commands(root, env, "report", "-W", str(section), "results/report.html")


def _queries(root: Path, env: dict[str, str]) -> dict[str, list[float]]:
    """Return each canned query's [CPU s, wall s, peak MB of the process that ran them all], and
    the slowest's (by wall) as "queries (slowest)"."""
    python = str(root / ".venv/bin/python")
    _, _, peak = timed(f"{python} -c '{QUERIES}' > .bench_queries.json", root, env)
    each = json.loads((root / ".bench_queries.json").read_text())
    found = {f"query: {name}": [cpu, wall, peak] for name, (cpu, wall, _) in each.items()}
    slowest = max(each.values(), key=lambda v: v[1])
    found["queries (slowest)"] = [slowest[0], slowest[1], peak]
    return found


def measure(root: Path, env: dict[str, str], stages: list[str], reps: int) -> dict[str, list[list[float]]]:
    """Return each stage's [CPU s, wall s, peak MB] of every repetition (``reps``) at the sandbox's
    current runs, for the ``stages`` chosen (``STAGES`` but "add"). A stage not chosen is brought
    up to date untimed when a chosen one needs it (`make all`, incremental); leaves make's stamps
    up to date."""
    found: dict[str, list[list[float]]] = defaultdict(list)

    def run(stage: str, how: Any) -> None:
        for _ in range(reps if stage in stages else 0):
            for name, figures in how(root, env).items():
                found[name].append(figures)

    if "scoring" not in stages:  # the database and the sections as make leaves them, untimed
        subprocess.run(["make", "all"], cwd=root, env=env, capture_output=True, check=True)
    run("scoring", _scoring)
    if "scoring" in stages and "analysis" not in stages:  # the sections of these runs, untimed
        _commands(root, env, "analysis", "all")
    run("analysis", _analysis)
    run("report", _report)
    subprocess.run(["make", "-t", "all"], cwd=root, env=env, capture_output=True, check=True)
    run("queries", _queries)
    return dict(found)


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


def _cell(figures: list[list[float]] | None) -> str:
    """Return a table cell: the median CPU s (with min-max over the repetitions), median wall s
    and the largest peak MB of a stage's repetitions ``figures``; "-" for none."""
    if not figures:
        return "-"
    cpu, wall = [f[0] for f in figures], [f[1] for f in figures]
    spread = f" ({min(cpu):.2f}-{max(cpu):.2f})" if len(figures) > 1 else ""
    peak = max(f[2] for f in figures)
    return f"{statistics.median(cpu):.2f}{spread} / {statistics.median(wall):.2f} / {peak:,.0f}"


def table(sizes: list[int], rows: dict[int, dict[str, list[list[float]]]], reps: int) -> str:
    """Return the Markdown table (as docs/benchmarks.md shows it): per stage, at each N the median
    CPU s (min-max) / median wall s / peak MB of its repetitions, and the exponents in N fitted
    on the medians (CPU, wall)."""
    stages = list(dict.fromkeys(name for n in sizes for name in rows[n]))
    head = f"| stage ({reps} repetitions: median CPU s (min-max) / median wall s / peak MB) | "
    head += " | ".join(f"N = {n}" for n in sizes)
    head += " | exponent (CPU) | exponent (wall) |\n|" + " --- |" * (len(sizes) + 3)
    lines = [head]
    for stage in stages:
        cells = [rows[n].get(stage) for n in sizes]
        have = [(n, c) for n, c in zip(sizes, cells, strict=True) if c]
        fit = [
            f"{exponent([n for n, _ in have], [statistics.median(f[i] for f in c) for _, c in have]):.2f}"
            if len(have) > 1
            else "-"
            for i in (0, 1)
        ]
        lines.append(f"| {stage} | " + " | ".join(_cell(c) for c in cells) + f" | {fit[0]} | {fit[1]} |")
    return "\n".join(lines)


def added_runs(root: Path) -> int:
    """Return how many runs a kept sandbox was given already (one past its highest ``-vNNN``)."""
    files = [*root.glob(f"results/**/*{SUFFIX}"), *root.glob(f"data/worldsense/*/results/*{SUFFIX}")]
    found = [int(m) for f in files for m in re.findall(r"-v(\d{3})" + SUFFIX + "$", f.name)]
    return max(found, default=-1) + 1


def sandbox(root: Path) -> int:
    """Make the sandbox ``root``: a copy of this checkout, or when ``root`` is one already (a kept
    one), this checkout's code copied over it (times kept: what did not change stays built); return
    how many runs it was given already."""
    if not root.exists():
        copy_checkout(root)
        return 0
    for part in ("common", "scripts", "bench"):
        shutil.copytree(paths.ROOT / part, root / part, dirs_exist_ok=True, copy_function=shutil.copy2)
    shutil.copy2(paths.ROOT / "Makefile", root / "Makefile")
    return added_runs(root)


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[10, 30, 100], help="the numbers of runs added"
    )
    parser.add_argument(
        "--suites", nargs="+", default=list(SUITES), choices=SUITES, help="the suites given runs"
    )
    parser.add_argument("--share", type=float, default=0.15, help="share of a run's answers changed")
    parser.add_argument(
        "--keep", type=Path, help="make the sandbox here and keep it, or reuse it (default: a temporary one)"
    )
    parser.add_argument("--stages", nargs="+", default=list(STAGES), choices=STAGES, help="the stages timed")
    parser.add_argument("--reps", type=int, default=1, help="repetitions of each stage timed (median shown)")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)
    sizes = sorted(args.sizes)
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-scale-")) / "checkout"
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env.pop("RESULTS_DATABASE", None)
    if env.get("DATA_MIRROR"):  # relative to this checkout, not to the sandbox
        env["DATA_MIRROR"] = str(Path(env["DATA_MIRROR"]).resolve())
    print(f"sandbox: {root} (a copy of {paths.ROOT} after make all)", flush=True)
    added = sandbox(root)
    try:
        bases = base_runs(root, args.suites)
        print("base runs: " + "; ".join(f"{s}: {', '.join(m)}" for s, m in bases.items()), flush=True)
        if not added:
            subprocess.run(["make", "-t", "all"], cwd=root, env=env, capture_output=True, check=True)
        rows: dict[int, dict[str, list[list[float]]]] = {}
        for n in sizes:
            while added < n:
                for suite in args.suites:
                    add_model(added, bases[suite], args.share)
                added += 1
            print(f"N={n} ({added} runs added)", load_line(), flush=True)
            found = measure(root, env, args.stages, args.reps)
            size, answers, per = bytes_per_answer(root)
            print(
                f"N={n}: database {size / 1e6:,.1f} MB, {answers:,} answers, {per:.1f} bytes per answer",
                flush=True,
            )
            for _ in range(args.reps if "add" in args.stages else 0):
                for suite in args.suites:
                    add_model(added, bases[suite], args.share, widest(bases[suite]))
                added += 1
                found.setdefault("add one model, make all", []).append(list(timed("make all", root, env)))
            rows[n] = found
            print(table([m for m in sizes if m in rows], rows, args.reps), flush=True)
            print(load_line(), flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(root.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))
