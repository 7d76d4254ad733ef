"""SIGKILL in the middle of a reply, a download, a conversion and a llama-server build, then a
restart: completed messages are intact, the cut reply is marked interrupted, no half-written
model is installed, no quantizer or compiler outlives the app, and the restart removes what they
left half-written."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import psutil
import pytest

from draftlight import paths
from draftlight.settings import Settings, save_settings
from draftlight.store.history import COMPLETE, INTERRUPTED, History, history_path
from draftlight.store.convert import conversion_target, converting_path
from tests.support.hub_server import FakeHub, synthetic_gguf
from tests.support.leftovers import descendants
from tests.support.real_window import cost_cache_file  # noqa: F401
from draftlight.modes import OFF

pytestmark = pytest.mark.slow


def start_app(*args: str) -> subprocess.Popen:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.Popen([sys.executable, "-P", "-m", "draftlight", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    proc.stdout.close()
    proc.stderr.close()


def wait_for(condition, proc, timeout=180.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the app exited early: {proc.stderr.read().decode()}")
        result = condition()
        if result:
            return result
        time.sleep(0.1)
    kill(proc)
    raise AssertionError("timed out")


def rows(sql: str, *args) -> list:
    """Read the history as another process would, without writing to it."""
    try:
        db = sqlite3.connect(f"{history_path().as_uri()}?mode=ro", uri=True)
        try:
            return db.execute(sql, args).fetchall()
        finally:
            db.close()
    except sqlite3.OperationalError:  # not created yet, or busy
        return []


def test_sigkill_during_a_reply_keeps_every_completed_message(cost_cache_file):
    if cost_cache_file.exists():  # the bundled model's timings, measured earlier this session
        shutil.copy(cost_cache_file, paths.cache_dir() / "batch_costs.json")
    before = History()
    old = before.create_conversation("before the crash")
    before.add_message(old, "user", "What is 2 + 2?")
    before.add_message(old, "assistant", "4", runs=[[0, 1, 1]], stats={"new_tokens": 1})
    before.close()
    save_settings(Settings(max_tokens=4000, mode=OFF))

    app = start_app("--prompt", "Write a very long story about a lighthouse keeper.")
    # The reply's text is checkpointed every 2 s: kill once some of it is on disk.
    wait_for(lambda: rows("SELECT id FROM messages WHERE role = 'assistant' AND "
                          "conversation_id != ? AND length(text) > 20", old), app)
    kill(app)

    history = History()
    assert history.problem is None
    first, crashed = sorted(history.conversations(), key=lambda c: c.id)
    assert [(m.role, m.text, m.runs, m.status) for m in history.messages(first.id)] == [
        ("user", "What is 2 + 2?", [], COMPLETE), ("assistant", "4", [[0, 1, 1]], COMPLETE)]
    question, reply = history.messages(crashed.id)
    assert question.status == COMPLETE and question.text.startswith("Write a very long story")
    assert reply.status == INTERRUPTED and len(reply.text) > 20
    history.close()

    # Started again, the app works and the history is as it was, plus the new exchange.
    save_settings(Settings(max_tokens=4, mode=OFF))
    app = start_app("--prompt", "Say hi.")
    wait_for(lambda: rows("SELECT id FROM messages WHERE role = 'assistant' AND "
                          "status = 'complete' AND conversation_id > ?", crashed.id), app)
    kill(app)
    history = History()
    assert len(history.conversations()) == 3
    assert history.messages(crashed.id)[1].text == reply.text
    assert history.messages(crashed.id)[1].status == INTERRUPTED
    history.close()


def test_sigkill_during_a_download_installs_nothing_half_written(clean_env):
    repo, name = "org/Crash-GGUF", "crash-Q4_K_M.gguf"
    data = synthetic_gguf(6 << 20, seed=7)
    hub = FakeHub()
    hub.add_repo(repo, {name: data})
    hub.delay_per_chunk = 0.05  # ~1.3 MB/s: the kill lands mid-file
    hub.start()
    try:
        folder = paths.models_dir() / "org" / "Crash-GGUF"
        part = folder / (name + ".part")
        app = start_app("models", "pull", repo, name, "--endpoint", hub.url)
        wait_for(lambda: part.exists() and part.stat().st_size > 256 << 10, app, timeout=60)
        kill(app)
        assert not (folder / name).exists()
        listing = subprocess.run([sys.executable, "-P", "-m", "draftlight", "models", "list"],
                                 capture_output=True, text=True, timeout=60)
        assert "crash-q4_k_m" not in listing.stdout
        kept = part.stat().st_size
        assert 0 < kept < len(data)

        hub.delay_per_chunk = 0.0
        pulled = subprocess.run([sys.executable, "-P", "-m", "draftlight", "models", "pull", repo, name,
                                 "--endpoint", hub.url], capture_output=True, text=True,
                                timeout=120)
        assert pulled.returncode == 0, pulled.stderr
        assert (folder / name).read_bytes() == data
        assert sorted(p.name for p in folder.iterdir()) == [name]  # no .part, no sidecar
        assert hub.file_requests(name)[-1].range_start == kept  # it resumed
    finally:
        hub.stop()


def outlive(app: subprocess.Popen) -> list[psutil.Process]:
    """SIGKILL `app`; its children and theirs still running 10 s later (stopped afterwards)."""
    below = [psutil.Process(pid) for pid in descendants(app.pid)]
    assert below, "the app had started nothing"
    kill(app)
    _, alive = psutil.wait_procs(below, timeout=10)
    names = [" ".join(process.cmdline()[:2]) for process in alive]
    for process in alive:
        process.kill()
    return names


def start_again(env: dict | None = None) -> None:
    """What a user does next: start the app (here its quickest command)."""
    done = subprocess.run([sys.executable, "-P", "-m", "draftlight", "models", "list"],
                          check=False, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr


def test_sigkill_during_a_conversion_stops_the_quantizer_and_a_restart_removes_its_file(
        bundled_model):
    temp = converting_path(conversion_target(bundled_model, "Q8_0"))
    app = start_app("models", "convert", str(bundled_model), "--type", "Q8_0")
    wait_for(lambda: temp.exists() and temp.stat().st_size > 0, app, timeout=120)
    assert outlive(app) == []
    assert temp.exists()  # what the kill left: the app could not delete it
    start_again()
    assert sorted(p.name for p in temp.parent.iterdir()) == []


def test_sigkill_during_a_build_stops_cmake_and_its_children_and_a_restart_removes_the_folder(
        tmp_path):
    tools, started = tmp_path / "tools", tmp_path / "cmake-started"
    tools.mkdir()
    # cmake as a real one runs: with children of its own (make, the compilers)
    (tools / "cmake").write_text(f'#!/bin/sh\nsleep 300 &\ntouch "{started}"\nwait\n')
    (tools / "c++").write_text("#!/bin/sh\nexit 0\n")
    for tool in tools.iterdir():
        tool.chmod(0o755)
    (tmp_path / "llama.cpp" / "tools" / "server").mkdir(parents=True)
    servers = tmp_path / "servers"
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}",
           "DRAFTLIGHT_SERVER_DIR": str(servers)}
    app = subprocess.Popen([sys.executable, "-P", "-m", "draftlight", "engine", "build-server",
                            "--sources", str(tmp_path / "llama.cpp")], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for(started.exists, app, timeout=120)
    assert outlive(app) == []
    assert list(servers.glob("*/build-*"))  # what the kill left: a half-finished build
    start_again(env)
    assert [p.name for p in servers.rglob("*")] == [next(servers.iterdir()).name]  # its folder


def test_sigkill_during_an_rpc_server_session_leaves_no_rpc_server(llama_server_binary):
    """`draftlight engine rpc-server` lends this machine until it is stopped, however that
    happens: a SIGKILL of the command stops the rpc-server it started (issue 37, item 6)."""
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    def listening() -> bool:
        with socket.socket() as client:
            client.settimeout(0.5)
            return client.connect_ex(("127.0.0.1", port)) == 0

    app = start_app("engine", "rpc-server", "--port", str(port))
    wait_for(listening, app, timeout=120)
    assert any("rpc-server" in command for command in descendants(app.pid).values())
    assert outlive(app) == []
    assert not listening()
