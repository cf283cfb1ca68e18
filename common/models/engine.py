"""An inference engine the run starts and stops itself, named by a model config's ``engine``.

``engine: llama.cpp`` serves the config's ``gguf`` (a GGUF file, or the installed package that
holds one: ``gguf_path``) with llama-cpp-python's OpenAI-compatible server on this machine's
CPU; ``engine: vllm`` serves the config's ``model`` with ``vllm serve`` on a GPU machine. Either
listens on 127.0.0.1 at a free port, and the run sends its requests there
(``client.HTTPModel`` starts it at the first request the response cache cannot answer, so a
run with every answer cached starts nothing).

``parallel`` is the engine's slots. llama.cpp's Python server answers one request at a time
and reuses the longest common prefix of the prompt it evaluated last, so a slot is a server
process of its own (``threads`` CPU threads each; the weights are mapped once, shared by all)
and the client keeps each worker thread, hence each conversation, on its slot
(``endpoints.Endpoints.pick``): a conversation's next turn finds its whole history evaluated.
vLLM batches on its own: one server, ``--max-num-seqs parallel``, prefix caching on.

The engine stops when the run ends (``stop``: the model's ``close``), on Ctrl-C (the
KeyboardInterrupt closes the model), when the Python process dies however it dies (each server
is started with PR_SET_PDEATHSIG, through ``_LAUNCH``), and when make ends, even by ``kill
-9``: the processes named in ``$ENGINE_OWNERS`` (the Makefile puts every make's pid there) are
watched, and when one is gone the engine is stopped and the run ends (SIGTERM to itself), and
a run started after it is gone starts no engine. Each server runs in a process group of its
own (Ctrl-C at the terminal reaches the run, which stops it) and is stopped as a group.
"""

import contextlib
import importlib
import importlib.metadata
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import requests

from common import paths
from common.models.base import ModelError

log = logging.getLogger(__name__)

ENGINES = ("llama.cpp", "vllm")
OWNERS_ENV = "ENGINE_OWNERS"  # pids whose end ends the run (the Makefile: every make's)
LOG_DIR = paths.CACHE / "engine"  # the servers' logs while they run (kept when a start fails)
GGUF_DIR = Path(sys.prefix) / "share" / "gguf"  # a package's GGUF assembled from its parts
START_TIMEOUT_S = 600.0  # a server that does not answer by then has failed to start
STOP_TIMEOUT_S = 10.0  # SIGTERM, then SIGKILL after this
WATCH_EVERY_S = 0.25  # how often the owners and the servers are looked at
# Starts a server with PR_SET_PDEATHSIG (Linux): it is killed when the thread that started it
# ends, i.e. when the run's process dies, however; a parent already gone means no start.
_LAUNCH = (
    "import ctypes, os, signal, sys\n"
    "try:\n    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)\n"
    "except (AttributeError, OSError):\n    pass\n"
    "if os.getppid() != int(sys.argv[1]):\n    sys.exit(70)\n"
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)


def gguf_path(spec: str) -> Path:
    """Return the GGUF file ``spec`` names: a path (ending in ``.gguf``, relative to the project
    root unless absolute), or the name of an installed package that holds one (its ``.gguf``
    file, or the file its module's ``assemble(output_path)`` writes from its parts, once, into
    the environment). Raises ModelError saying what to install or fix."""
    if spec.endswith(".gguf"):
        path = Path(spec) if Path(spec).is_absolute() else paths.ROOT / spec
        if not path.is_file():
            raise ModelError(f"gguf: no file {spec} (a path is read from the project root)")
        return path
    try:
        dist = importlib.metadata.distribution(spec)
    except importlib.metadata.PackageNotFoundError:
        raise ModelError(
            f"gguf: the package {spec!r} is not installed: `make models` installs the shipped "
            "models' packages (requirements-models.txt); another one: add it there"
        ) from None
    files = [f for f in dist.files or [] if f.name.endswith(".gguf")]
    if len(files) == 1:
        return Path(str(dist.locate_file(files[0])))
    module = importlib.import_module((dist.read_text("top_level.txt") or "").split()[0])
    if not files and hasattr(module, "assemble"):
        target = GGUF_DIR / f"{spec}-{dist.version}.gguf"
        if not target.is_file():  # assembled and checked (SHA-256) by the package, then renamed
            log.warning("assembling the GGUF of %s (once) into %s", spec, target)
            part = target.with_name(f"{target.name}.{os.getpid()}.part")
            try:
                module.assemble(output_path=part, overwrite=True)
                part.replace(target)
            finally:
                part.unlink(missing_ok=True)
        return target
    raise ModelError(f"gguf: the package {spec!r} holds {len(files)} .gguf files: name the file")


def identity(config: Any) -> str:
    """Return what names an engine config's requests in the response cache in place of a URL
    (its port changes every run): the engine, the served name, and what it serves (a package
    with its installed version, or a file) with the options that change replies."""
    served = config.model
    if config.engine == "llama.cpp" and config.gguf:
        spec = config.gguf
        if not spec.endswith(".gguf"):
            with contextlib.suppress(importlib.metadata.PackageNotFoundError):
                spec = f"{spec}=={importlib.metadata.version(spec)}"
        served = f"{served}/{spec}/{config.chat_format or 'template'}"
    return f"http://{config.engine}.engine/{served}"


def command(config: Any, port: int, gguf: Path | None = None) -> list[str]:
    """Return the command line of one server of ``config``'s engine listening on 127.0.0.1:``port``
    (llama.cpp: one slot, serving ``gguf``; vLLM: every slot), ``engine_args`` last."""
    if config.engine == "vllm":
        return [
            shutil.which("vllm") or "vllm",
            "serve",
            config.model,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--served-model-name",
            config.model,
            "--max-model-len",
            str(config.context),
            "--max-num-seqs",
            str(config.parallel),
            "--enable-prefix-caching",
            "--seed",
            str(config.seed or 0),
            *config.engine_args,
        ]
    options = {
        "model": str(gguf),
        "model_alias": config.model,
        "host": "127.0.0.1",
        "port": port,
        "n_ctx": config.context,
        "n_threads": config.threads,
        "n_threads_batch": config.threads,
        "logits_all": False,  # only the last position's logits: the sampler needs no more
        "chat_format": config.chat_format,
    }
    flags = [f"--{name}={value}" for name, value in options.items() if value is not None]
    return [sys.executable, "-m", "llama_cpp.server", *flags, *config.engine_args]


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _started(pid: int) -> str | None:
    """Return the start time of process ``pid`` (from /proc), or None when it is gone or a zombie;
    "" where /proc is missing (the process exists)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        if Path("/proc/self/stat").exists():
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return ""
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return None if fields[0] in ("Z", "X") else fields[19]


def owners() -> dict[int, str | None]:
    """Return the processes ``$ENGINE_OWNERS`` names, each with its start time (None: gone)."""
    pids = [int(word) for word in os.environ.get(OWNERS_ENV, "").split() if word.isdigit()]
    return {pid: _started(pid) for pid in pids}


class Engine:
    """The servers of one engine config: ``start`` (once, thread-safe) returns their base URLs,
    ``stop`` ends them. ``logs`` are their log files (stdout and stderr)."""

    def __init__(
        self,
        config: Any,
        log_dir: Path | None = None,
        keep_logs: bool = False,
        command_of: Any = None,
    ):
        self.config = config
        self.command_of = command_of  # (config, port, gguf) -> argv; None: ``command`` (tests serve a stub)
        self.log_dir = Path(log_dir or LOG_DIR)
        self.keep_logs = keep_logs
        self.base_urls: list[str] = []
        self.logs: list[Path] = []
        self._servers: list[subprocess.Popen] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._keeper: threading.Thread | None = None
        self._failed = False
        self.stopped_because = ""  # why the engine stopped before the run did ("" while it serves)

    def __repr__(self) -> str:
        where = ", ".join(self.base_urls) or "not started"
        return f"<Engine {self.config.engine} {self.config.model}: {where}>"

    @property
    def started(self) -> bool:
        """Whether the servers are up (``start`` returned)."""
        return bool(self.base_urls)

    def check(self) -> None:
        """Raise ModelError when the engine cannot start (its program or its model is missing);
        cheap: nothing starts."""
        if self.command_of is not None:
            return
        if self.config.engine == "vllm":
            if shutil.which("vllm") is None:
                raise ModelError("engine: vllm: no `vllm` program here: install vLLM (a GPU machine)")
            return
        try:
            importlib.import_module("llama_cpp.server.settings")
        except ImportError:
            raise ModelError(
                "engine: llama.cpp needs llama-cpp-python[server]: `make engine` installs it"
            ) from None
        gguf_path(self.config.gguf)

    def start(self) -> list[str]:
        """Start the servers unless they are up, wait until each answers, and return their base
        URLs. Raises ModelError (with the end of its log) when one exits or does not answer in
        time, or when make (``$ENGINE_OWNERS``) is already gone."""
        with self._lock:
            if self.base_urls:
                return self.base_urls
            if self._stopping.is_set():
                raise ModelError(f"the engine was stopped: {self.stopped_because or 'the run is over'}")
            watched = owners()
            gone = [pid for pid, start in watched.items() if start is None]
            if gone:
                raise ModelError(f"the make that started this run (pid {gone[0]}) is gone: no engine started")
            llama = self.config.engine == "llama.cpp" and self.command_of is None
            gguf = gguf_path(self.config.gguf) if llama else None
            slots = 1 if self.config.engine == "vllm" else self.config.parallel
            ports = [free_port() for _ in range(slots)]
            self.log_dir.mkdir(parents=True, exist_ok=True)
            stem = f"{self.config.name}-{os.getpid()}"
            self.logs = [self.log_dir / f"{stem}-{slot}.log" for slot in range(slots)]
            commands = [(self.command_of or command)(self.config, port, gguf) for port in ports]
            ready = threading.Event()
            self._keeper = threading.Thread(
                target=self._keep, args=(commands, watched, ready), name="engine", daemon=True
            )
            self._keeper.start()
            ready.wait()
            urls = [f"http://127.0.0.1:{port}/v1" for port in ports]
            try:
                if len(self._servers) < len(commands):  # a program that could not even be run
                    raise ModelError(f"engine: could not run {commands[len(self._servers)][0]}")
                for server, url, log_file in zip(self._servers, urls, self.logs, strict=True):
                    self._wait_until_answering(server, url, log_file)
            except BaseException:
                self._failed = True
                self._stop()
                raise
            log.info("%s serves %s at %s", self.config.engine, self.config.model, ", ".join(urls))
            self.base_urls = urls
            return urls

    def _keep(
        self, commands: list[list[str]], watched: dict[int, str | None], ready: threading.Event
    ) -> None:
        """Start the servers from this thread (their PR_SET_PDEATHSIG follows it: it lives until
        ``stop``), then watch them and make's processes until the engine is stopped."""
        try:
            for cmd, log_file in zip(commands, self.logs, strict=True):
                with open(log_file, "wb") as out:
                    self._servers.append(
                        subprocess.Popen(
                            [sys.executable, "-c", _LAUNCH, str(os.getpid()), *cmd],
                            stdin=subprocess.DEVNULL,
                            stdout=out,
                            stderr=subprocess.STDOUT,
                            start_new_session=True,
                        )
                    )
        except OSError as exc:
            log.error("engine: %s", exc)
        finally:
            ready.set()
        while not self._stopping.wait(WATCH_EVERY_S):
            gone = [pid for pid, start in watched.items() if _started(pid) != start]
            if gone:
                self.stopped_because = f"the make that started this run (pid {gone[0]}) ended"
                log.error("%s: stopping the engine and this run", self.stopped_because)
                self._stop()
                os.kill(os.getpid(), signal.SIGTERM)
                return

    def _wait_until_answering(self, server: subprocess.Popen, url: str, log_file: Path) -> None:
        """Return once ``url``/models answers; raise ModelError when the server exits first or
        ``START_TIMEOUT_S`` passes."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if server.poll() is not None:
                raise ModelError(
                    f"engine: the {self.config.engine} server exited ({server.returncode}) before "
                    f"answering; its log ({paths.shown(log_file)}) ends:\n{tail(log_file)}"
                )
            try:
                if requests.get(url + "/models", timeout=(1, 5)).ok:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
        raise ModelError(
            f"engine: the {self.config.engine} server did not answer within {START_TIMEOUT_S:.0f} s; "
            f"its log ({paths.shown(log_file)}) ends:\n{tail(log_file)}"
        )

    def stop(self) -> None:
        """Stop the servers (SIGTERM to each one's group, SIGKILL after ``STOP_TIMEOUT_S``) and
        remove their logs (kept when a start failed, or ``keep_logs``); safe to call twice."""
        with self._lock:
            self._stop()

    def _stop(self) -> None:
        self._stopping.set()
        for server in self._servers:
            _signal_group(server, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for server in self._servers:
            try:
                server.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(server, signal.SIGKILL)
                server.wait()
            _signal_group(server, signal.SIGKILL)  # what the server left behind in its group
        self._servers.clear()
        self.base_urls = []
        if not (self._failed or self.keep_logs):
            for log_file in self.logs:
                log_file.unlink(missing_ok=True)


def _signal_group(server: subprocess.Popen, sig: int) -> None:
    """Send ``sig`` to the process group of ``server`` (its own session: its pid), if any is left."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(server.pid, sig)


def tail(path: Path, lines: int = 15) -> str:
    """Return the last ``lines`` lines of a log (empty when it is missing)."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
