"""A test that crashes its pytest-xdist worker fails, the rest of the run still runs, and the
run ends (issue 59: after worker crashes a run of the suite waited for ever, idle). Runs pytest
on small suites of its own with the scheduler of tests/support/crashed_workers.py, as the
project's own run does (-n 2 --dist loadfile)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CRASH = "import os, signal\n\ndef test_crash():\n    os.kill(os.getpid(), signal.SIGSEGV)\n"
PASS = "def test_pass():\n    pass\n"


def run_suite(folder: Path, files: dict[str, str], *options: str) -> subprocess.CompletedProcess:
    for name, text in files.items():
        (folder / name).write_text(text)
    (folder / "pytest.ini").write_text("[pytest]\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("PYTEST_XDIST_WORKER_COUNT", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.support.crashed_workers", "-p",
         "no:cacheprovider", "-v", "--dist", "loadfile", *options, str(folder)],
        cwd=folder, env=env, capture_output=True, text=True, timeout=240)


def outcomes(output: str) -> dict[str, str]:
    """{test id: PASSED/FAILED} from a -v run's lines."""
    found = {}
    for line in output.splitlines():
        match = re.search(r"\b(PASSED|FAILED)\s+(test_\w+\.py::test_\w+)", line)
        if match:
            found[match[2]] = match[1]
    return found


@pytest.mark.parametrize("workers", ["1", "2"])
def test_after_a_crash_the_other_files_and_the_rest_of_its_file_run_and_the_run_ends(
        tmp_path, workers):
    files = {"test_a.py": PASS + "\ndef test_pass_2():\n    pass\n",
             "test_b.py": CRASH + "\ndef test_after():\n    pass\n",
             "test_c.py": PASS, "test_d.py": CRASH, "test_e.py": PASS}
    proc = run_suite(tmp_path, files, "-n", workers)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output[-3000:]
    assert "crashed while running 'test_b.py::test_crash'" in output, output[-3000:]
    assert "crashed while running 'test_d.py::test_crash'" in output, output[-3000:]
    assert outcomes(output) == {
        "test_a.py::test_pass": "PASSED", "test_a.py::test_pass_2": "PASSED",
        "test_b.py::test_crash": "FAILED", "test_b.py::test_after": "PASSED",
        "test_c.py::test_pass": "PASSED", "test_d.py::test_crash": "FAILED",
        "test_e.py::test_pass": "PASSED"}, output[-3000:]
    assert "2 failed, 5 passed" in output


def test_the_project_run_uses_this_scheduler():
    """The root conftest registers it, and the project's options ask for loadfile."""
    conftest = (ROOT / "tests" / "conftest.py").read_text()
    assert '"tests.support.crashed_workers"' in conftest
    assert "--dist loadfile" in (ROOT / "pyproject.toml").read_text()
