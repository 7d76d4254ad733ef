"""A test that hangs fails, and the run goes on (issue 41: one hang in CI held the suite until
CI's limit, 86 minutes, and said nothing of where).

pytest-timeout (`timeout` in pyproject.toml) fails a test that runs longer, with the stack of
every thread, from a signal handler: that needs the main thread to get back to Python. A hang
inside native code (llama.cpp, Qt) never does, so a backstop: faulthandler's own watchdog thread
writes every thread's stack and ends the process BACKSTOP seconds after the limit. Under
pytest-xdist the worker's stderr is lost, so the worker writes the stack to a file the
controller prints at the end of the run; xdist reports the test as a crashed worker's and starts
another worker for the rest.
"""

from __future__ import annotations

import faulthandler
import os
import sys
import tempfile
from pathlib import Path

import pytest

BACKSTOP = 120  # seconds after pytest-timeout's limit: its failure and the teardown get that long
FOLDER_VARIABLE = "DRAFTLIGHT_TEST_HANG_STACKS"


def pytest_configure(config: pytest.Config) -> None:
    """In the controller, before xdist starts its workers: the folder their stacks go to."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        os.environ[FOLDER_VARIABLE] = tempfile.mkdtemp(prefix="draftlight-hangs-")


RUNNING = "running "  # a file's line before each test: the test that hung is its last


def _files() -> list[Path]:
    folder = os.environ.get(FOLDER_VARIABLE)
    return sorted(Path(folder).glob("*.txt")) if folder and Path(folder).is_dir() else []


def _hangs() -> dict[str, str]:
    """{a test that hung in native code earlier in this run: the stacks its worker wrote}"""
    hangs = {}
    for path in _files():
        lines = path.read_text(errors="replace").splitlines()
        tests = [i for i, line in enumerate(lines) if line.startswith(RUNNING)]
        if tests and tests[-1] + 1 < len(lines):
            hangs[lines[tests[-1]][len(RUNNING):]] = "\n".join(lines[tests[-1] + 1:])
    return hangs


def _stack_file():
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    folder = os.environ.get(FOLDER_VARIABLE)
    if not worker or not folder:
        return sys.__stderr__
    return open(Path(folder) / f"{worker}-{os.getpid()}.txt", "a")  # noqa: SIM115 (kept open)


_file = None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Arms the backstop for the test's setup, call and teardown."""
    global _file
    limit = float(item.config.getini("timeout") or 0)
    if limit <= 0:
        yield
        return
    if _file is None:
        _file = _stack_file()
    if _file is not sys.__stderr__:
        print(RUNNING + item.nodeid, file=_file, flush=True)
    faulthandler.dump_traceback_later(limit + BACKSTOP, exit=True, file=_file)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """xdist gives a crashed worker's test to the next worker again: it fails at once there."""
    if item.nodeid in _hangs():
        pytest.fail("hung in native code earlier in this run; its stacks are printed at the end",
                    pytrace=False)


def pytest_sessionfinish(session: pytest.Session, exitstatus) -> None:
    """In the controller at the end of the run: the stacks of workers that hung in native code."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    for test, stacks in _hangs().items():
        print(f"\n{test} hung where pytest-timeout could not stop it; the stack of each thread"
              f" of its worker:\n{stacks[-20000:]}", file=sys.stderr)
    for path in _files():
        path.unlink()
    folder = os.environ.get(FOLDER_VARIABLE)
    if folder and Path(folder).is_dir():
        Path(folder).rmdir()
