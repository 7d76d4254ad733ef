"""Closing the window while a real reply streams or a download runs: every thread is joined,
the engine is closed on its own thread, and no temporary file is left behind."""

from __future__ import annotations

import threading
import time

import pytest

from draftlight import paths
from draftlight.settings import Settings
from draftlight.store.history import INTERRUPTED, History
from tests.support.hub_server import FakeHub, synthetic_gguf
from tests.support.real_window import cost_cache_file, real_window, shared_cost_cache  # noqa: F401
from tests.support.waiting import wait_until, window_state
from draftlight.modes import OFF

pytestmark = pytest.mark.slow


def test_closing_during_a_real_reply_joins_the_engine_thread(qtbot, real_window):
    window = real_window(Settings(max_tokens=2000, mode=OFF))
    wait_until(qtbot, lambda: window.ready, "the models to load", 120_000,
               lambda: window_state(window))
    window.send("Write a long story about a lighthouse keeper.")
    view = window.chat.messages[-1]
    qtbot.waitUntil(lambda: len(view.text) > 20, timeout=60_000)
    started = time.perf_counter()
    window.close()
    closing = time.perf_counter() - started
    assert not window.engine.thread.isRunning() and window.engine.worker.engine is None
    assert closing < 2.0, closing  # one token, then the models are freed
    history = History()
    [conversation] = history.conversations()
    reply = history.messages(conversation.id)[-1]
    assert reply.status == INTERRUPTED and reply.text == view.text
    history.close()


def test_closing_during_a_download_cancels_and_joins_it(qtbot, clean_env):
    from draftlight.store.downloads import DownloadJob, JobState
    from draftlight.store.hub import HubClient
    from draftlight.ui.picker import dialog as picker
    from draftlight.ui.chat.main_window import MainWindow
    from tests.support.scripted_engine import ScriptedFactory

    hub = FakeHub()
    hub.add_repo("org/Slow-GGUF", {"slow-Q4_0.gguf": synthetic_gguf(4 << 20)})
    hub.delay_per_chunk = 0.05
    hub.start()
    history = History()
    try:
        window = MainWindow(Settings(), history, factory=ScriptedFactory())
        qtbot.addWidget(window)
        window.show()
        job = picker.shared_download_queue().submit(
            DownloadJob(HubClient(hub.url), "org/Slow-GGUF", "slow-Q4_0.gguf"))
        qtbot.waitUntil(lambda: job.state == JobState.DOWNLOADING, timeout=10_000)
        window.close()
        assert job.state == JobState.CANCELLED
        assert not [t for t in threading.enumerate() if t.name.startswith("download-")]
        assert picker._shared_queue is None
        files = sorted(p.name for p in paths.models_dir().rglob("*") if p.is_file())
        # Only the resumable partial download and its sidecar: nothing installed, no temp files.
        assert files == ["slow-Q4_0.gguf.part", "slow-Q4_0.gguf.part.json"]
    finally:
        history.close()
        hub.stop()
