"""Closing the window keeps the conversation's read prompt (engine/llama/kept_prompt.py), and
the next window's first turn in that conversation reads only the new message; on the real
bundled model, in the engine's own process.

The close that lost it: after a reply the engine times its passes in the background
(engine/auto/measuring.py), and the timing's first step reads hundreds of tokens after the
conversation in one llama.cpp call (seconds). The window waits a few seconds for its engine to
stop, then kills the host, which then keeps nothing."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from draftlight import paths
from draftlight.engine.auto.measuring import PASS_COSTS
from draftlight.engine.llama import kept_prompt
from draftlight.engine.reply.events import Done
from draftlight.settings import load_settings
from draftlight.store.history import History
from draftlight.ui.engine import engine_thread
from draftlight.ui.engine.loaded import Measuring
from tests.support.real_window import send_and_wait_real, window_opener
from tests.support.waiting import wait_until, window_state
from tests.support.window import wait_ready

pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.slow

LOG = "Read this log.\n\n" + " ".join(
    f"Paragraph {i}: the lighthouse keeper wrote down the tide, the wind and the ships that "
    f"passed the cape on day {i}." for i in range(24))  # about 700 tokens


def settings_on(model):
    settings = load_settings()[0]
    settings.target_path = str(model)  # the file itself: no faster copy made and swapped in
    settings.temperature = 0.0
    settings.max_tokens = 16
    return settings


def worker_events(worker) -> list:
    """The worker's Measuring events and "done" for each reply's end, in the order it sent
    them (recorded on its own thread)."""
    seen: list = []
    worker.load_event.connect(lambda event: seen.append(event) if isinstance(
        event, Measuring) else None, Qt.DirectConnection)
    worker.reply.connect(lambda _request, event: seen.append("done") if isinstance(
        event, Done) else None, Qt.DirectConnection)
    return seen


def test_closing_the_window_mid_timing_keeps_the_prompt_for_the_next_window(
        qtbot, monkeypatch, bundled_model):
    # The timing's read after this conversation lasts seconds here; the window's grace is cut
    # to one so that it outlasts the grace on a faster machine too. A host that stops when
    # asked needs a fraction of it.
    monkeypatch.setattr(engine_thread, "SHUTDOWN_GRACE_MS", 1000)
    history = History()
    with window_opener(qtbot) as open_window:
        window = open_window(settings_on(bundled_model), history)
        wait_ready(qtbot, window)
        seen = worker_events(window.engine.worker)
        first = send_and_wait_real(qtbot, window, LOG)
        read = first.figures.stats.prompt_tokens
        assert read > kept_prompt.MIN_TOKENS
        conversation = window.session.conversation.id

        # the pass timing starts after the reply (a fresh home: nothing is timed yet)
        wait_until(qtbot, lambda: "done" in seen and Measuring(PASS_COSTS) in seen[seen.index("done"):],
                   "the pass timing to start after the reply", 120_000,
                   lambda: window_state(window))
        window.close()  # while the timing reads its probe after the conversation

        kept = sorted((paths.cache_dir() / kept_prompt.FOLDER).glob("*"))
        assert [f.suffix for f in kept] == [kept_prompt.STATE, kept_prompt.TOKENS], kept

        again = open_window(settings_on(bundled_model), history)
        wait_ready(qtbot, again)
        again.session.open_conversation(conversation)
        later = send_and_wait_real(qtbot, again, "Which cape was it?")
    stats = later.figures.stats
    # everything before the new question came from the kept file
    assert stats.reused_prompt_tokens >= read - 8, stats
    assert stats.prompt_tokens - stats.reused_prompt_tokens <= 40, stats
