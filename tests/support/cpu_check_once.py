"""The CPU check (draftlight.engine.llama.cpu_check) once for the whole run, as a user's machine has it
once: the controller asks it before the workers start, in a file every test and every process a
test starts reads (DRAFTLIGHT_CPU_CHECK_FILE), and takes its one-time note. So on a CPU whose
AMX kernels crash, no test loads with them and none sees the note unless it asks for a fresh
check (DRAFTLIGHT_SIMULATE_AMX_CRASH=1 and a file of its own walks that path on any CPU).
`DRAFTLIGHT_SIMULATE_AMX_CRASH=1 python -m pytest` runs the whole suite as such a CPU would."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from draftlight.engine.llama import cpu_check

_folder: str | None = None


def pytest_configure(config: pytest.Config) -> None:
    """In the controller (or the only process), before xdist starts its workers."""
    global _folder
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    _folder = tempfile.mkdtemp(prefix="draftlight-cpu-check-")
    os.environ[cpu_check.FILE_VARIABLE] = str(Path(_folder) / "cpu_check.json")
    from draftlight.paths import bundled_model_path
    model = bundled_model_path()
    if model is not None and cpu_check.has_amx():
        cpu_check.answer(model, cpu_check.cache_file())
        cpu_check.untold_note(cpu_check.cache_file())


def pytest_report_header(config: pytest.Config) -> str:
    from draftlight.paths import bundled_model_path
    model = bundled_model_path()
    if model is None or not cpu_check.has_amx():
        return "llama.cpp: built without AMX kernels (no CPU check)"
    simulated = " (simulated)" if os.environ.get(cpu_check.SIMULATE_VARIABLE) == "1" else ""
    return (f"llama.cpp: built with AMX kernels{simulated}; the CPU check says "
            f"{cpu_check.answer(model, cpu_check.cache_file())!r} "
            "(extra: they run; plain: models load without extra buffers)")


def pytest_unconfigure(config: pytest.Config) -> None:
    if _folder is not None:
        shutil.rmtree(_folder, ignore_errors=True)
