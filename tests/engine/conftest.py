"""Fixtures of the engine's tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def simulated_amx_crash(monkeypatch, tmp_path):
    """A CPU whose llama.cpp AMX kernels crash with extra buffers, on any CPU (no child
    process), checked afresh in a file of this test's own (engine/llama/cpu_check.py)."""
    from draftlight.engine.llama import cpu_check
    monkeypatch.setenv(cpu_check.SIMULATE_VARIABLE, "1")
    monkeypatch.setenv(cpu_check.FILE_VARIABLE, str(tmp_path / "cpu_check.json"))
    monkeypatch.setattr(cpu_check, "_known", {})
