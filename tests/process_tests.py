"""A pytest plugin that finds the tests which start processes or servers (``-p tests.process_tests``).

Which tests must hold under load is a property of what they do, not a list kept by hand: while
``PROCESS_TESTS_OUT`` names a file, every test that starts a process (``subprocess``, ``os.fork``,
``os.posix_spawn``, ``multiprocessing``) or listens on or connects to a socket (a stub server, an engine) is
noted, and at the end of the session their node ids are written to that file, one per line, in
the order they ran. ``tests/stress.py`` runs those tests again and again beside a CPU load.
"""

import os
import socket
import subprocess
from pathlib import Path

import pytest

_current: list[str] = []  # the node id of the test being run, if any
_found: dict[str, None] = {}  # node ids noted, in the order they were first noted


def _note() -> None:
    if _current:
        _found.setdefault(_current[0], None)


def _wrap(owner, name: str) -> None:
    original = getattr(owner, name)

    def noting(*args, **kwargs):
        _note()
        return original(*args, **kwargs)

    setattr(owner, name, noting)


def pytest_configure(config) -> None:
    """Start noting, when ``PROCESS_TESTS_OUT`` is set (the plugin does nothing otherwise)."""
    if not os.environ.get("PROCESS_TESTS_OUT"):
        return
    _wrap(subprocess.Popen, "_execute_child")  # subprocess.run, check_output, Popen and friends
    _wrap(os, "fork")  # multiprocessing's fork start method
    _wrap(os, "posix_spawn")
    _wrap(socket.socket, "listen")  # a server of any kind, in this process
    _wrap(socket.socket, "connect")  # a client of one (a stub API, an engine, a browser's driver)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Remember which test is running while pytest runs its setup, call and teardown."""
    _current[:] = [item.nodeid]
    try:
        return (yield)
    finally:
        _current.clear()


def pytest_sessionfinish(session) -> None:
    """Write the node ids noted to ``PROCESS_TESTS_OUT``."""
    out = os.environ.get("PROCESS_TESTS_OUT")
    if out:
        Path(out).write_text("".join(f"{nodeid}\n" for nodeid in _found))
