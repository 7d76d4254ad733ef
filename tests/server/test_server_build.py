"""`draftlight engine build-server`'s build (app/draftlight/engine/server/build.py): a clear line when the
tools are missing, and a cancel that stops the build and leaves nothing behind."""

from __future__ import annotations

import psutil
import pytest

from draftlight.engine.server import build


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
