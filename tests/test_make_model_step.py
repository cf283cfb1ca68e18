"""A model step under make (`make all MODEL=...`): it runs again when what it asks changes and
only then, a rerun with nothing new to ask changes no file, batches out end the run with a line
saying so (exit 0, as docs/models.md states), and a second make in one checkout stops at once.

In a sandbox copy (tests/sandbox.py) whose WorldSense test set is replaced by six trials, so that
each step takes seconds; the model is a config pointing at a stub server in this process."""

import os
import re
import subprocess
import threading
import time
from pathlib import Path

import pytest
import yaml

from common.models.stub_batch import BatchStore
from common.models.stub_server import StubServer
from common.results import read_results
from tests.sandbox import copied_model, make_sandbox, run
from tests.timing import timeout, wait_for
from tests.worldsense.fixtures import compl_tuple, tf_tuple
from tests.worldsense.fixtures import write_testset as write_worldsense

RESULTS = "data/worldsense/test_set/results/basic___stubby___results.jsonl"


def six_trials(tmp_path: Path) -> Path:
    """Return a sandbox in ``tmp_path`` whose WorldSense test set holds six trials (its data stamp
    kept newer)."""
    repo = make_sandbox(tmp_path)
    testset = repo / "data/worldsense/test_set"
    (testset / "trials.jsonl.bz2").unlink()
    write_worldsense(testset, tf_tuple("t1", "Infer.trivial", 3) + compl_tuple("c1"), {}, compressed=True)
    stamp = repo / "data/worldsense/.fetched-core"
    stamp.touch()
    return repo


@pytest.fixture
def sandbox(tmp_path) -> Path:
    """A sandbox whose WorldSense test set holds six trials."""
    return six_trials(tmp_path)


def configure(repo: Path, server: StubServer, **settings) -> None:
    """Write configs/models/stubby.yaml: the stub server, greedy, quick retries, and ``settings``."""
    config = {"base_url": server.url, "model": "stub-model", "temperature": 0, "max_tokens": 16, **settings}
    (repo / "configs/models/stubby.yaml").write_text(yaml.safe_dump(config))


def stamp_of(repo: Path, options: str) -> str:
    """Return the WorldSense model step's stamp for ``options`` (from make's database, nothing run)."""
    database = run(repo, f"make -pn help {options}")
    assert database.returncode == 0, database.stderr
    return f"results/runs/worldsense/{re.search(r'^MODEL_TAG := (.+)$', database.stdout, re.M).group(1)}.done"


def step(repo: Path, options: str) -> subprocess.CompletedProcess:
    """Run the WorldSense model step alone (its stamp as the goal) with ``options``."""
    return run(repo, f"make {stamp_of(repo, options)} {options}")


def snapshot(repo: Path) -> dict[str, float]:
    """Return every file under results/ and the test set's results/ with its modification time."""
    places = [repo / "results", repo / "data/worldsense/test_set/results"]
    return {str(p): p.stat().st_mtime_ns for place in places for p in place.rglob("*") if p.is_file()}


def completions(server: StubServer) -> int:
    """Return how many completion requests ``server`` has seen."""
    return sum(1 for r in server.requests if r["path"].endswith("/completions"))


def test_a_model_step_reruns_when_its_requests_change_and_only_then(sandbox):
    base = "MODEL=stubby LIMIT=4"
    with StubServer() as server:
        configure(sandbox, server)
        first = step(sandbox, base)
        assert first.returncode == 0, first.stderr[-2000:]
        asked = completions(server)
        assert asked >= 4 and (sandbox / RESULTS).read_text().count("\n") == 4

        # the same command again: up to date, nothing asked, no file touched
        before = snapshot(sandbox)
        assert run(sandbox, f"make -q {stamp_of(sandbox, base)} {base}").returncode == 0
        again = step(sandbox, base)
        assert again.returncode == 0, again.stderr[-2000:]
        assert completions(server) == asked and snapshot(sandbox) == before

        # what changes the requests makes a new step: samples (asked: the second draws) ...
        samples = step(sandbox, f"{base} SET=samples=2")
        assert samples.returncode == 0, samples.stderr[-2000:]
        assert completions(server) >= asked + 4 and (sandbox / RESULTS).read_text().count("\n") == 8
        asked = completions(server)
        stamps = {stamp_of(sandbox, base), stamp_of(sandbox, f"{base} SET=samples=2")}
        # ... the limit, and the config's temperature, max tokens or any other of its content
        stamps.add(stamp_of(sandbox, "MODEL=stubby LIMIT=3"))
        for settings in ({"temperature": 0.7}, {"max_tokens": 8}, {"stop": ["\n"]}):
            configure(sandbox, server, **settings)
            stamps.add(stamp_of(sandbox, base))
            assert run(sandbox, f"make -q {stamp_of(sandbox, base)} {base}").returncode == 1, settings
        assert len(stamps) == 6

        # the step runs again for new settings; every item is answered, so it asks nothing, and
        # the warning says that a new model or prompt needs a new results file
        results_before = (sandbox / RESULTS).stat().st_mtime_ns
        rerun = step(sandbox, base)
        assert rerun.returncode == 0, rerun.stderr[-2000:]
        assert "every item is already answered" in rerun.stderr
        assert completions(server) == asked and (sandbox / RESULTS).stat().st_mtime_ns == results_before
        # its stamp takes the time of the newest answers, not now: nothing downstream (scoring,
        # analyses, the report) is older than it, so nothing is redone
        assert (sandbox / stamp_of(sandbox, base)).stat().st_mtime_ns == results_before

        # only then: the config written again as it was (its content names the step, not its
        # time), other models' configs and the analysis code change nothing here
        configure(sandbox, server)
        (sandbox / "configs/models/other.yaml").write_text("model: other\n")
        os.utime(sandbox / "scripts/analyse_results.py")
        assert run(sandbox, f"make -q {stamp_of(sandbox, base)} {base}").returncode == 0


def test_batches_out_end_the_run_with_a_line_saying_so_and_exit_0(sandbox):
    base = "MODEL=stubby LIMIT=4 BATCH=1"
    store = BatchStore(polls=10_000)  # in progress until told otherwise
    with StubServer(batches=store) as server:
        configure(sandbox, server, batch_poll_s=0.05)
        stamp = sandbox / stamp_of(sandbox, base)
        out = step(sandbox, base)
        assert out.returncode == 0, out.stderr[-2000:]  # docs/models.md: exit status 0
        assert "Error" not in out.stderr and "batches are out for worldsense" in out.stdout
        assert "run the same make command again to collect them" in out.stdout
        assert stamp.with_suffix(".pending").is_file() and not stamp.is_file()
        again = step(sandbox, base)  # still out: the same line, still no stamp
        assert again.returncode == 0 and "batches are out" in again.stdout, again.stderr[-2000:]
        store.polls = 0  # the batches complete; WAIT=1 polls them, round after round, to the end
        out = step(sandbox, f"{base} WAIT=1")
        assert out.returncode == 0, out.stderr[-2000:]
        assert stamp.is_file() and not stamp.with_suffix(".pending").exists()
        assert "batches are out" not in out.stdout + out.stderr
        assert (sandbox / RESULTS).read_text().count("\n") == 4


def test_a_second_make_in_one_checkout_stops_at_once_saying_what_to_do(sandbox):
    holder = subprocess.Popen(["sleep", "600"])  # stands for a first make, holding the checkout's lock
    try:
        lock = ["scripts/make_lock.sh", ".make/lock", str(holder.pid)]
        took = subprocess.run(lock, cwd=sandbox, capture_output=True, text=True)
        assert took.stdout.strip() == "ok"
        start = time.monotonic()
        second = run(sandbox, "make data")
        assert second.returncode != 0 and time.monotonic() - start < timeout(60)
        said = f"another make is running in this checkout (pid {holder.pid}): wait for it to finish"
        assert said in second.stderr
        for unlocked in ("make help", "make -n all"):  # what reads only takes no lock
            assert run(sandbox, unlocked).returncode == 0, unlocked
    finally:
        holder.kill()
        holder.wait()
    # the lock goes with the make that held it (its watcher looks every second), and a make right
    # after another waits for that second rather than refusing
    wait_for(lambda: run(sandbox, "make .make/suites.mk").returncode == 0, 30, "the lock to go with its make")
    for _ in range(3):
        after = run(sandbox, "make .make/suites.mk")
        assert after.returncode == 0, after.stderr


def test_forget_rebuilds_the_report_without_running_the_forgotten_model_again(sandbox):
    # `make forget MODEL=x` rebuilds the report in a sub-make, which inherited MODEL=x and so
    # planned x's model step again (a name that is no model any more: "unknown model", exit 2)
    plan = run(sandbox, "make -n forget MODEL=nosuch")  # -n still runs the sub-make's plan
    assert plan.returncode == 0, plan.stderr[-2000:]
    assert "forget_model.py nosuch" in plan.stdout and "build_report.py" in plan.stdout
    assert "--model nosuch" not in plan.stdout and "runs/worldsense/nosuch" not in plan.stdout


def test_a_set_config_removed_is_no_set_any_more(sandbox):
    config = sandbox / "configs/canvas/extra.yaml"
    config.write_text("seed: 3\ndefault: false\n")
    (sandbox / "results/canvas/extra").mkdir(parents=True)
    (sandbox / "results/canvas/extra/report.txt").write_text("")  # built: `make canvas/extra`
    assert "canvas/extra" in run(sandbox, "make help").stdout
    listed = sandbox / ".make/sections.list"
    assert "results/sections/canvas/extra.json\n" in listed.read_text()
    os.utime(listed, ns=(0, 0))
    config.unlink()
    after = run(sandbox, "make help")
    assert after.returncode == 0 and "canvas/extra" not in after.stdout, after.stderr[-2000:]
    # the report is made of a list of sections that changed: it is rebuilt without the set, and the
    # database (make's report step) forgets the set, though its results are still there
    assert "extra" not in listed.read_text() and listed.stat().st_mtime_ns > 0
    dry = run(sandbox, "make -n all")
    assert dry.returncode == 0 and "extra" not in dry.stdout, dry.stderr[-2000:]
    rule = re.search(r"^results/report.html:(.*)$", run(sandbox, "make -pn help").stdout, re.M)
    assert ".make/sections.list" in rule.group(1).split()
    assert "score_results.py --prune" in dry.stdout.split("build_report.py")[0]


BAD_VARIABLES = {  # make command line -> what the one line must name
    "all MODEL=oracle LIMIT=abc": "LIMIT=abc: LIMIT takes a whole number of 1 or more",
    "all MODEL=oracle LIMIT=0": "LIMIT=0: LIMIT takes a whole number",
    "all LIMIT=3": "LIMIT=3: LIMIT caps what MODEL is asked: name the model too",
    "all MODEL=oracle SET=samples": "SET=samples: SET takes settings of MODEL's config as key=value words",
    "all SET=samples=3": "SET=samples=3: SET sets what MODEL is asked: name the model too",
    "all MODEL=nosuch": "MODEL=nosuch: no such model; MODEL takes built-in models",
    "all MODEL=scripts/test_nosuch_model.py": "MODEL=scripts/test_nosuch_model.py: no such file",
    "all MODEL=noop": "MODEL=noop: a built-in that answers only part of blocks",
    "all MODEL=shortcut-count-most": "MODEL=shortcut-count-most: a built-in of canvas only",
    "all 'MODEL=oracle configs/models/oracle.yaml'": "more than one model named oracle",
    "forget SET=canvas": "SET=canvas: make forget takes sets as <suite>/<set>",
}


def test_a_bad_make_variable_gets_one_line_naming_it_and_what_it_takes(sandbox):
    (sandbox / "configs/models/oracle.yaml").write_text("model: stub-model\n")  # named like a built-in
    before = snapshot(sandbox)
    for command, said in BAD_VARIABLES.items():
        made = run(sandbox, f"make {command}")
        assert made.returncode == 2 and made.stdout == "", (command, made.stdout)
        (line,) = made.stderr.splitlines()  # one line: make's `Makefile:N: *** <ours>.  Stop.`
        assert said in line and line.endswith("Stop."), (command, line)
    assert snapshot(sandbox) == before  # nothing ran
    # what is right passes: a suite's own built-in on its suite, every model of a list on every suite
    plan = run(sandbox, "make -n canvas-model MODEL=shortcut-count-most LIMIT=1")
    assert plan.returncode == 0 and "--model shortcut-count-most --limit 1" in plan.stdout, plan.stderr


def test_several_models_plan_a_step_each_on_every_suite(sandbox):
    models = "oracle scripts/test_random_model.py llamacpp"
    plan = run(sandbox, f"make -n all MODEL='{models}' LIMIT=2 SET=samples=2")
    assert plan.returncode == 0 and "warning" not in plan.stderr, plan.stderr
    for suite in ("worldsense", "blocks", "canvas", "already_said_that"):
        for model in models.split():
            steps = [line for line in plan.stdout.splitlines() if f"-t {suite}/$set --model {model} " in line]
            assert len(steps) == 1, (suite, model)  # one step of its own (make -j runs them side by side)
            assert f"--model {model} --limit 2 --set samples=2 " in steps[0]
    # a step's stamp bears the model's whole name, dots and all (not "openai-gpt-3")
    plan = run(sandbox, "make -n all MODEL='openai-gpt-3.5-turbo-0125 configs/models/vllm.yaml' LIMIT=2")
    assert "results/runs/canvas/openai-gpt-3.5-turbo-0125.limit2-" in plan.stdout
    assert "results/runs/canvas/vllm.limit2-" in plan.stdout


def _meeting_servers(names: tuple[str, ...], patience: float) -> list[StubServer]:
    """One stub server per name; each answers its first request only once every other has had one
    (or after ``patience`` s): the runs meet only when they ask at the same time."""
    asked = {name: threading.Event() for name in names}

    def answer_of(name: str):
        def answer(prompt: str) -> str:
            asked[name].set()
            for other in asked.values():
                other.wait(patience)
            return "TRUE"

        return answer

    return [StubServer(answer=answer_of(name)) for name in names]


def test_several_models_run_side_by_side_and_write_what_one_at_a_time_writes(sandbox, tmp_path):
    alone = six_trials(tmp_path / "alone")  # the same six trials, each model run in turn
    models = "stub_a stub_b scripts/test_first_model.py oracle"
    servers = _meeting_servers(("stub_a", "stub_b"), patience=timeout(120))
    for server in servers:
        server.start()
    try:
        for repo in (sandbox, alone):
            copied_model(repo, "first")
            for name, server in zip(("stub_a", "stub_b"), servers, strict=True):
                config = {
                    "base_url": server.url,
                    "model": "stub-model",
                    "temperature": 0,
                    "timeout_s": [10, 900],
                }
                (repo / f"configs/models/{name}.yaml").write_text(yaml.safe_dump(config))
        start = time.monotonic()
        together = run(sandbox, f"make -j4 worldsense-model MODEL='{models}' LIMIT=4")
        assert together.returncode == 0, together.stderr[-3000:]
        assert time.monotonic() - start < timeout(120) / 2  # the two servers' runs met: side by side
        for model in models.split():
            made = step(alone, f"MODEL={model} LIMIT=4")  # its model step alone: no analysis
            assert made.returncode == 0, made.stderr[-3000:]
    finally:
        for server in servers:
            server.stop()
    results = "data/worldsense/test_set/results"
    names = [f"basic___{name}___results.jsonl" for name in ("stub_a", "stub_b", "first", "oracle")]
    for name in names:
        assert (sandbox / results / name).is_file(), name
        assert _records(sandbox / results / name) == _records(alone / results / name), name

    # make forget takes the same list (its report step, which would build every suite here, left out)
    plan = run(sandbox, f"make -n forget MODEL='{models}'")
    assert plan.returncode == 0 and f"forget_model.py {models}\n" in plan.stdout, plan.stderr[-2000:]
    forgot = run(sandbox, f".venv/bin/python scripts/forget_model.py {models}")
    assert forgot.returncode == 0, forgot.stderr[-3000:]
    assert not any((sandbox / results / name).exists() for name in names)
    assert (sandbox / results / "basic___random___results.jsonl").is_file()  # the others' stay


def _records(path: Path) -> list[dict]:
    """Return a results file's records by Key and draw (a run asking several items at once writes
    them as they come), without what differs between two runs of the same requests (the time, and
    the run record of each run's first record)."""
    records = [
        {k: v for k, v in r.items() if k not in ("latency_s", "run")}
        for r in read_results(path, all_draws=True)
    ]
    return sorted(records, key=lambda r: (r["Key"], r.get("draw", 0)))
