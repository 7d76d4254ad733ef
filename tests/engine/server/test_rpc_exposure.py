"""`draftlight engine rpc-server` lends this machine to whoever reaches its port, with no
authentication (llama.cpp's RPC README: never on an open network). So an address other machines
can reach needs a flag that says so, the devices and memory lent are named, and the binary run is
checked to be llama.cpp's rpc-server. A shell script plays rpc-server (nothing binds a port)."""

from __future__ import annotations

import os

import pytest

from draftlight.cli import main
from draftlight.engine.server.build import find_rpc_server

# Answers as llama.cpp's rpc-server (tools/rpc/rpc-server.cpp): its usage on stderr for --help, its
# devices on stdout for an unknown --device (exit 1); started (with --host), it says how.
FAKE_RPC_SERVER = """#!/bin/sh
case "$*" in
  --help)
    echo "Usage: rpc-server [options]" >&2
    echo "  -d, --device <dev1,dev2,...>     comma-separated list of devices" >&2
    echo "  -H, --host HOST                  host to bind to (default: 127.0.0.1)" >&2
    exit 0 ;;
  *--host*) echo "started: $*"; exit 0 ;;
  --device*)
    echo "error: unknown device: $2" >&2
    echo "available devices:" >&2
    echo "  CPU: Test CPU (1000 MiB, 900 MiB free)"
    echo "  CUDA0: Test GPU (8000 MiB, 7000 MiB free)"
    exit 1 ;;
esac
exit 3
"""


def on_path(monkeypatch, folder, name, script):
    folder.mkdir(exist_ok=True)
    binary = folder / name
    binary.write_text(script)
    binary.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return binary


@pytest.fixture
def no_built_server(tmp_path, monkeypatch):
    monkeypatch.setenv("DRAFTLIGHT_SERVER_DIR", str(tmp_path / "no-builds"))


def test_an_open_address_is_refused_without_the_flag_that_names_the_risk(
        tmp_path, monkeypatch, capfd, no_built_server):
    on_path(monkeypatch, tmp_path / "bin", "rpc-server", FAKE_RPC_SERVER)
    assert main(["engine", "rpc-server", "--host", "0.0.0.0"]) == 2
    out, err = capfd.readouterr()
    assert "started" not in out
    [line] = err.strip().splitlines()
    assert line.startswith("draftlight: error: ") and "--expose-unauthenticated" in line
    assert "no authentication" in line


def test_with_the_flag_it_names_the_devices_and_memory_it_lends(
        tmp_path, monkeypatch, capfd, no_built_server):
    on_path(monkeypatch, tmp_path / "bin", "rpc-server", FAKE_RPC_SERVER)
    assert main(["engine", "rpc-server", "--host", "192.0.2.7", "--port", "50100",
                 "--expose-unauthenticated"]) == 0
    out, err = capfd.readouterr()
    # rpc-server lends its accelerators, else its CPU: asked for exactly the devices named
    assert out.strip() == "started: --host 192.0.2.7 --port 50100 --device CUDA0"
    warning = next(line for line in err.splitlines() if "warning" in line)
    assert "192.0.2.7:50100" in warning and "CUDA0 (Test GPU, 8000 MiB)" in warning
    assert "Test CPU" not in err


def test_find_rpc_server_checks_that_it_found_rpc_server(tmp_path, monkeypatch, no_built_server):
    on_path(monkeypatch, tmp_path / "other", "rpc-server", "#!/bin/sh\necho 'some other tool'\n")
    assert find_rpc_server() is None
    real = on_path(monkeypatch, tmp_path / "bin", "rpc-server", FAKE_RPC_SERVER)
    assert find_rpc_server() == real
