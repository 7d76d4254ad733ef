"""Fixtures shared by the server engines' tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def stub():
    """start(behaviour) -> a running StubServer (tests/support/openai_stub.py); every one
    started is closed afterwards."""
    from tests.support.openai_stub import StubServer
    servers = []

    def start(behaviour: str):
        servers.append(StubServer(behaviour))
        return servers[-1]

    yield start
    for server in servers:
        server.close()
