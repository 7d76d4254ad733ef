"""SIGKILL in the middle of a reply and of a download, then a restart: completed messages are
intact, the cut reply is marked interrupted, and no half-written model is installed."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from draftlight import paths
from draftlight.settings import Settings, save_settings
from draftlight.store.history import COMPLETE, INTERRUPTED, History, history_path
from tests.support.hub_server import FakeHub, synthetic_gguf
from tests.support.real_window import cost_cache_file  # noqa: F401

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
    save_settings(Settings(max_tokens=4000, mode="off"))

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
    save_settings(Settings(max_tokens=4, mode="off"))
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
