"""`draftlight engine build-server`'s build (app/draftlight/engine/server/build.py): a clear line when the
tools are missing, a cancel that stops the build and leaves nothing behind, sources that must
match the checksum pinned here, and a built server that must match the record of its build."""

from __future__ import annotations

import hashlib
import json
import os
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psutil
import pytest

from draftlight.engine.server import build, sdist


@pytest.fixture
def empty_server_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(build.SERVER_DIR_VARIABLE, str(tmp_path / "servers"))
    return tmp_path / "servers"


def test_no_compiler_is_one_line_saying_what_to_install(tmp_path, monkeypatch, empty_server_dir):
    monkeypatch.setenv("PATH", str(tmp_path))  # no cmake, no c++
    with pytest.raises(build.ServerBuildError) as caught:
        build.build_server()
    message = str(caught.value)
    assert message.startswith("building llama-server needs cmake and c++")
    assert "apt install build-essential cmake" in message and "\n" not in message


def test_find_server_prefers_the_settings_path_and_checks_it(tmp_path, llama_server_binary):
    assert build.find_server(str(llama_server_binary)) == llama_server_binary
    not_a_server = tmp_path / "llama-server"
    not_a_server.write_text("#!/bin/sh\necho hello\n")
    not_a_server.chmod(0o755)
    with pytest.raises(build.ServerBuildError, match="is not llama.cpp's llama-server"):
        build.find_server(str(not_a_server))


@pytest.mark.slow
def test_a_cancelled_build_stops_its_compilers_and_leaves_nothing(empty_server_dir, tmp_path,
                                                                 monkeypatch):
    monkeypatch.setenv("PIP_CACHE_DIR", str(tmp_path / "pip"))  # if it falls back to pip
    steps = []

    def report(what, percent):
        steps.append((what, percent))

    with pytest.raises(build.ServerBuildError, match="cancelled"):
        # cancel as soon as CMake is configuring (after the sources were fetched and unpacked)
        build.build_server(report, should_cancel=lambda: any(p == 0 for _, p in steps))
    assert any("downloading the sources" in what for what, _ in steps)
    assert not build.built_server_path().exists()
    assert not [p for p in build.built_server_path().parent.glob("*") if p.is_dir()]  # no scratch
    assert not [p for p in psutil.Process().children(recursive=True)
                if p.name() in ("cmake", "make", "cc1plus", "c++")]


# --- what is built from, and what is run: checked ------------------------------------------

# The real sdist of the installed llama-cpp-python 0.3.36 (PyPI's simple index and pip agree)
GENUINE_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
FAKE_BINARY = '#!/bin/sh\necho "version: 1 (fake)"\necho "built with sh for a test"\n'


@pytest.fixture
def fake_cmake(tmp_path, monkeypatch):
    """cmake and c++ on PATH. This cmake notes each run in the returned file; `--build` writes
    a llama-server (one that passes check_server_binary), an rpc-server and the RPC module."""
    tools = tmp_path / "tools"
    tools.mkdir()
    ran = tmp_path / "cmake-runs"
    outputs = f"{build.BINARY} {build.RPC_BINARY} {build.RPC_MODULE}"
    (tools / "cmake").write_text(
        f'#!/bin/sh\necho "$*" >> "{ran}"\n'
        f'if [ "$1" = --build ]; then\n  mkdir -p "$2/bin"\n'
        f'  for name in {outputs}; do\n'
        f"    printf '%s' '{FAKE_BINARY}' > \"$2/bin/$name\"; chmod +x \"$2/bin/$name\"\n"
        f"  done\nfi\n")
    (tools / "c++").write_text("#!/bin/sh\nexit 0\n")
    for tool in tools.iterdir():
        tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    return ran


def source_tree(folder: Path) -> Path:
    (folder / "tools" / "server").mkdir(parents=True)
    return folder


def other_sdist(path: Path) -> bytes:
    """An sdist-shaped archive (a vendored llama.cpp tree) that is not the genuine one."""
    tree = source_tree(path.parent / "llama_cpp_python-0.3.36" / "vendor" / "llama.cpp")
    (tree / "CMakeLists.txt").write_text("# not llama.cpp\n")
    with tarfile.open(path, "w:gz") as tar:
        tar.add(tree.parents[1], arcname="llama_cpp_python-0.3.36")
    return path.read_bytes()


class LoopbackIndex:
    """PyPI's JSON page for llama-cpp-python and one sdist, stating `stated_sha256` for it."""

    def __init__(self, data: bytes, stated_sha256: str) -> None:
        index = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path.endswith("/json"):
                    body = json.dumps({"releases": {"0.3.36": [{
                        "packagetype": "sdist", "filename": "llama_cpp_python-0.3.36.tar.gz",
                        "url": f"{index.url}/files/llama_cpp_python-0.3.36.tar.gz",
                        "digests": {"sha256": stated_sha256}}]}}).encode()
                else:
                    body = data
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("stated", ["its own checksum", "the genuine checksum"])
def test_sources_that_do_not_match_the_pinned_checksum_stop_the_build(
        stated, empty_server_dir, fake_cmake, tmp_path, monkeypatch):
    # Whoever answers for PyPI sends other sources: with a checksum that matches them (a mirror
    # or a proxy that changed both), or with the genuine one (only the file was changed).
    data = other_sdist(tmp_path / "made" / "llama_cpp_python-0.3.36.tar.gz")
    got = hashlib.sha256(data).hexdigest()
    index = LoopbackIndex(data, got if stated == "its own checksum" else GENUINE_SHA256)
    monkeypatch.setattr(sdist, "PYPI_JSON", f"{index.url}/pypi/llama-cpp-python/json")
    for name, value in (("PIP_CONFIG_FILE", os.devnull), ("PIP_NO_INDEX", "1")):
        monkeypatch.setenv(name, value)  # pip, if asked, finds nothing (and fast)
    try:
        with pytest.raises(build.ServerBuildError) as caught:
            build.build_server()
    finally:
        index.close()
    message = str(caught.value)
    assert f"expected sha256 {GENUINE_SHA256}, got {got}" in message and "\n" not in message
    assert not fake_cmake.exists()  # nothing of it was compiled
    assert not list(empty_server_dir.rglob("*.tar.gz"))  # nor kept
    assert not build.built_server_path().exists()


def test_a_built_server_changed_since_its_build_is_never_run(empty_server_dir, fake_cmake,
                                                            tmp_path):
    built = build.build_server(sources=source_tree(tmp_path / "llama.cpp"))
    assert build.find_server() == built
    assert len(fake_cmake.read_text().splitlines()) == 2  # configure, build
    changed = FAKE_BINARY.replace("fake", "evil")  # the same size, other bytes
    built.write_text(changed)
    with pytest.raises(build.ServerBuildError) as caught:
        build.find_server()
    assert "changed since it was built" in str(caught.value) and "\n" not in str(caught.value)
    assert build.build_server(sources=source_tree(tmp_path / "again")) == built  # built again
    assert len(fake_cmake.read_text().splitlines()) == 4
    assert built.read_text() == FAKE_BINARY and build.find_server() == built


def test_the_installed_llama_cpp_python_has_a_pinned_checksum():
    # a new llama-cpp-python in pyproject.toml needs its sdist's line in sdist.py, or no user
    # of the llama-server engine can build it
    assert len(sdist.SDIST_SHA256[build.llama_version()]) == 64
