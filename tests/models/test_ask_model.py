"""scripts/ask_model.py as a real process: kill -9 and resume, cache across processes, key hygiene."""

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml
from model_helpers import FAST, SENTINEL_KEY, SHORT_READ_S, TOO_SLOW, write_testset

from common.paths import ROOT
from common.results import read_results
from tests.timing import timeout, wait_for

SCRIPT = str(ROOT / "scripts" / "ask_model.py")


def write_config(directory: Path, server, **settings) -> Path:
    path = directory / "stubmodel.yaml"
    path.write_text(yaml.safe_dump({"base_url": server.url, "model": "stub-model", **FAST, **settings}))
    return path


def ask(testset: Path, config: Path, *args: str, env: dict | None = None, wait: bool = True):
    """Run ask_model.py on ``testset``; return the CompletedProcess (or the Popen when not waiting)."""
    command = [
        sys.executable,
        SCRIPT,
        "-t",
        str(testset),
        "--model",
        str(config),
        "--cache-file",
        str(testset / "cache.sqlite"),
        *args,
    ]
    environment = {**os.environ, **(env or {})}
    if not wait:
        return subprocess.Popen(command, env=environment, stderr=subprocess.DEVNULL)
    return subprocess.run(command, env=environment, capture_output=True, text=True, timeout=timeout(120))


def results_of(testset: Path, prompting: str = "basic") -> Path:
    return testset / "results" / f"{prompting}___stubmodel___results.jsonl"


def test_kill_9_mid_run_then_resume_answers_every_key_once(server, tmp_path):
    testset = write_testset(tmp_path / "set", 150)
    config = write_config(tmp_path, server, concurrency=4)
    out = results_of(testset)
    server.default = "slow:0.05"
    process = ask(testset, config, wait=False)
    wait_for(lambda: out.exists() and out.read_text().count("\n") >= 12, 60, "12 answers written")
    process.kill()  # SIGKILL: no cleanup, no flush beyond what was already written
    process.wait()
    before = len(read_results(out))
    assert 12 <= before < 150, "the run should have been killed mid-way"
    server.default = "ok"
    done = ask(testset, config)
    assert done.returncode == 0, done.stderr
    lines = out.read_text(encoding="utf-8").splitlines()
    assert sorted(json.loads(line)["Key"] for line in lines) == list(range(150))  # all parse, none twice
    runs = json.loads(out.with_name("basic___stubmodel___results.meta.json").read_text())["runs"]
    assert runs[-1]["already_done"] == before and runs[-1]["status"] == "complete"


def test_cache_is_shared_by_processes_and_can_be_turned_off(server, tmp_path):
    testset = write_testset(tmp_path / "set", 20)
    config = write_config(tmp_path, server, concurrency=4)
    assert ask(testset, config, "--prompting", "p1").returncode == 0
    assert len(server.requests) == 20
    second = ask(testset, config, "--prompting", "p2")
    assert second.returncode == 0 and len(server.requests) == 20  # all from the cache
    records = read_results(results_of(testset, "p2"))
    assert all(record["cached"] and record["attempts"] == 0 for record in records)
    assert "20 cache hits" in second.stderr
    assert ask(testset, config, "--prompting", "p3", "--no-cache").returncode == 0
    assert len(server.requests) == 40


def test_the_key_never_reaches_results_metadata_cache_or_logs(server, tmp_path):
    testset = write_testset(tmp_path / "set", 5)
    config = write_config(tmp_path, server, api_key_env="STUB_KEY")
    env = {"STUB_KEY": SENTINEL_KEY}
    server.script("500")
    run = ask(testset, config, "--loglevel", "DEBUG", env=env)
    assert run.returncode == 0, run.stderr
    assert server.requests[0]["headers"]["Authorization"] == f"Bearer {SENTINEL_KEY}"
    server.script("401")  # the stub echoes the Authorization header in its error message
    refused = ask(testset, config, "--prompting", "other", "--no-cache", "--loglevel", "DEBUG", env=env)
    assert refused.returncode == 2 and "error: " in refused.stderr and "HTTP 401" in refused.stderr
    written = [path.read_bytes() for path in sorted(testset.rglob("*")) if path.is_file()]
    for text in [run.stderr.encode(), refused.stderr.encode(), *written]:
        assert SENTINEL_KEY.encode() not in text and b"4f1c9a7e2b" not in text


def test_missing_key_variable_and_unknown_model_exit_2(server, tmp_path):
    testset = write_testset(tmp_path / "set", 3)
    env = {key: value for key, value in os.environ.items() if key != "STUB_KEY"}
    config = write_config(tmp_path, server, api_key_env="STUB_KEY")
    run = subprocess.run(
        [sys.executable, SCRIPT, "-t", str(testset), "--model", str(config)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout(60),
    )
    assert run.returncode == 2 and "STUB_KEY, which is not set" in run.stderr
    unknown = ask(testset, Path("no-such-model"))
    assert unknown.returncode == 2 and "error: unknown model 'no-such-model'" in unknown.stderr
    typo = ask(testset, config, "--set", "temprature=0")
    assert typo.returncode == 2 and "unknown config key: temprature" in typo.stderr


def test_random_builtin_matches_the_offline_template(tmp_path):
    testset = write_testset(tmp_path / "set", 30)
    template = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "test_random_model.py"), "-t", str(testset), "--seed", "4"],
        capture_output=True,
        text=True,
        timeout=timeout(60),
    )
    assert template.returncode == 0, template.stderr
    runner = subprocess.run(
        [
            sys.executable,
            SCRIPT,
            "-t",
            str(testset),
            "--model",
            "random",
            "--seed",
            "4",
            "--prompting",
            "runner",
        ],
        capture_output=True,
        text=True,
        timeout=timeout(60),
    )
    assert runner.returncode == 0, runner.stderr
    expected = {r["Key"]: r["resp"] for r in read_results(testset / "results/basic___random___results.jsonl")}
    got = {r["Key"]: r["resp"] for r in read_results(testset / "results/runner___random___results.jsonl")}
    assert got == expected and len(got) == 30 and set(got.values()) == {"TRUE", "FALSE"}


def test_a_second_run_on_the_same_results_file_is_refused_at_once(server, tmp_path):
    testset = write_testset(tmp_path / "set", 300)
    config = write_config(tmp_path, server, concurrency=2)
    server.default = "slow:0.2"  # the first run would take 30 s ...
    first = ask(testset, config, wait=False)
    wait_for(results_of(testset).exists, 30, "the first run's results file")
    second = ask(testset, config)  # started while the first one writes
    server.default = "ok"  # ... and ends at once now
    assert second.returncode == 2, second.stderr
    assert f"being written by another run (process {first.pid})" in second.stderr
    assert first.wait(timeout=timeout(60)) == 0
    keys = [json.loads(line)["Key"] for line in results_of(testset).read_text().splitlines()]
    assert sorted(keys) == list(range(300))  # one writer: every Key once
    assert ask(testset, config).returncode == 0  # the lock went with the first process


def test_a_killed_run_leaves_a_metadata_entry_that_the_next_run_corrects(server, tmp_path):
    testset = write_testset(tmp_path / "set", 200)
    config = write_config(tmp_path, server, concurrency=2)
    out = results_of(testset)
    meta = out.with_name("basic___stubmodel___results.meta.json")
    server.default = "slow:0.02"
    process = ask(testset, config, wait=False)
    wait_for(lambda: out.exists() and out.read_text().count("\n") >= 10, 60, "10 answers written")
    process.kill()
    process.wait()
    entry = json.loads(meta.read_text())["runs"][-1]
    assert entry["status"] == "running"  # written when the run started: a SIGKILL leaves it
    written = len(read_results(out))
    server.default = "ok"
    assert ask(testset, config).returncode == 0
    killed, finished = json.loads(meta.read_text())["runs"]
    assert killed["status"] == "killed" and killed["answered"] == written  # counted from the file
    assert finished["already_done"] == written and finished["answered"] == 200 - written


def test_timed_out_attempts_count_as_requests(server, tmp_path):
    testset = write_testset(tmp_path / "set", 2)
    config = write_config(tmp_path, server, concurrency=1, timeout_s=[timeout(2), SHORT_READ_S])
    server.script(TOO_SLOW, "ok", "ok")
    run = ask(testset, config)
    assert run.returncode == 0, run.stderr
    entry = json.loads(results_of(testset).with_name("basic___stubmodel___results.meta.json").read_text())
    assert (entry["runs"][-1]["requests"], entry["runs"][-1]["retries"]) == (3, 1)


def test_a_missing_config_file_is_named(tmp_path):
    testset = write_testset(tmp_path / "set", 2)
    run = ask(testset, tmp_path / "nope.yaml")
    assert run.returncode == 2 and f"no model config file {tmp_path / 'nope.yaml'}" in run.stderr


def test_a_copied_template_names_its_model_after_its_file(tmp_path):
    testset = write_testset(tmp_path / "set", 5)
    template = (ROOT / "scripts" / "test_random_model.py").read_text()
    copy = tmp_path / "test_mine_model.py"
    copy.write_text(template)
    first = subprocess.run(
        [sys.executable, str(copy), "-t", str(testset)], capture_output=True, text=True, timeout=timeout(60)
    )
    again = subprocess.run(
        [sys.executable, str(copy), "-t", str(testset)], capture_output=True, text=True, timeout=timeout(60)
    )
    assert first.returncode == 0 and (testset / "results" / "basic___mine___results.jsonl").is_file()
    assert "wrote 5 new answers" in first.stderr
    assert again.returncode == 0 and "INFO every trial is already answered" in again.stderr  # its own file
    # a name given by hand whose file another program wrote: warned (make shows warnings only)
    assert (
        subprocess.run(
            [sys.executable, SCRIPT, "-t", str(testset), "--model", "oracle"],
            capture_output=True,
            timeout=timeout(60),
        ).returncode
        == 0
    )
    taken = subprocess.run(
        [sys.executable, str(copy), "-t", str(testset), "--modelname", "oracle", "--loglevel", "WARNING"],
        capture_output=True,
        text=True,
        timeout=timeout(60),
    )
    assert taken.returncode == 0 and "WARNING every trial is already answered" in taken.stderr


def test_a_copy_named_like_the_template_or_a_built_in_is_refused(tmp_path):
    # its answers would go into the results of the template's runs or of the built-in, and count
    # there as already given: the copy would never be asked
    testset = write_testset(tmp_path / "set", 3)
    template = (ROOT / "scripts" / "test_random_model.py").read_text()
    for name, owner in (
        ("random", "the built-in baseline 'random'"),
        ("oracle", "the built-in baseline 'oracle'"),
    ):
        copy = tmp_path / name / f"test_{name}_model.py"
        copy.parent.mkdir()
        copy.write_text(template)
        run = ask(testset, copy)
        assert run.returncode == 2 and "Traceback" not in run.stderr
        assert (
            f"{copy}: a model file named test_{name}_model.py would write into the results files of {owner}"
            in (run.stderr)
        )
        assert not list((testset / "results").glob(f"*___{name}___*"))
    assert ask(testset, ROOT / "scripts" / "test_random_model.py").returncode == 0  # the template itself


def test_a_second_writer_is_refused_before_the_test_set_is_read(tmp_path):
    # the trials file is unreadable: a script that read it before taking the lock would say so
    testset = tmp_path / "set"
    testset.mkdir()
    (testset / "trials.jsonl.bz2").write_bytes(b"not bzip2")
    for script, model in (("test_random_model.py", "random"), ("ask_model.py", "oracle")):
        out = testset / "results" / f"basic___{model}___results.jsonl"
        holder = subprocess.Popen(
            [
                sys.executable,
                "-c",
                (
                    "import sys, time; from common.results import ResultsWriter; "
                    "w = ResultsWriter(sys.argv[1]); print('ok', flush=True); "
                    "time.sleep(3600)"  # killed by the test
                ),
                str(out),
            ],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        try:
            assert holder.stdout.readline().strip() == "ok"
            second = subprocess.run(
                [
                    sys.executable,
                    str(ROOT / "scripts" / script),
                    "-t",
                    str(testset),
                    *(["--model", model] if script == "ask_model.py" else []),
                ],
                capture_output=True,
                text=True,
                timeout=timeout(60),
            )
        finally:
            holder.kill()
            holder.wait()
        assert second.returncode == 2, second.stderr
        assert f"being written by another run (process {holder.pid})" in second.stderr
        assert "bzip2" not in second.stderr


def test_a_canvas_shortcut_is_no_model_on_a_worldsense_set_and_leaves_no_file(tmp_path):
    testset = write_testset(tmp_path / "set", 5)
    done = subprocess.run(
        [sys.executable, SCRIPT, "-t", str(testset), "--model", "shortcut-count-most"],
        capture_output=True,
        text=True,
        timeout=timeout(60),
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "unknown model 'shortcut-count-most'" in done.stderr  # the set's suite has its own built-ins
    assert "built-in of this suite (random, oracle)" in done.stderr
    assert not list((testset / "results").glob("basic___*"))  # no empty results or metadata file
