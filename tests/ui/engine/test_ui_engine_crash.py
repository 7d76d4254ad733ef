"""The window's engine runs in a process of its own (engine/host/hosted.py): a crash or a hang in
llama.cpp mid-reply ends that process, never the window. The conversation and the reply's text
so far stay (saved as a stopped reply), the banner names what happened in one line and offers
Restart, and the next message is answered. The crash and the hang are the host's hidden debug
requests (DRAFTLIGHT_HOST_DEBUG), on the real bundled model."""

from __future__ import annotations

import time

import pytest

from draftlight.settings import load_settings
from tests.support.real_window import (cost_cache_file, real_window,  # noqa: F401
                                       send_and_wait_real, shared_cost_cache)
from tests.support.waiting import wait_until, window_state
from tests.support.window import wait_ready

pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.slow

QUESTION = "Name three colours of the rainbow and say one thing about each."


def greedy_settings():
    settings = load_settings()[0]
    settings.temperature = 0.0
    settings.max_tokens = 48
    return settings


def stored_reply(window):
    """(text, status) of the conversation's last message, as the history keeps it."""
    conversation = window.session.conversation
    messages = window.history.messages(conversation.id)
    return messages[-1].text, messages[-1].status, [m.role for m in messages]


def test_a_segfault_mid_reply_keeps_the_conversation_and_restart_answers(
        qtbot, monkeypatch, real_window):
    monkeypatch.setenv("DRAFTLIGHT_HOST_DEBUG", "segfault@6")
    window = real_window(greedy_settings())
    wait_ready(qtbot, window)
    host = window.engine.worker.engine.pid

    view = send_and_wait_real(qtbot, window, QUESTION)
    line = window.banner.label.text()
    assert "SIGSEGV: a crash in llama.cpp" in line and "\n" not in line
    assert window.banner.isVisible() and window.banner.action_button.text() == "Restart"
    text, status, roles = stored_reply(window)
    assert view.text and text == view.text and status == "interrupted"  # the text so far
    assert roles == ["user", "assistant"]

    window.banner.action_button.click()  # Restart: the same models, loaded again
    wait_ready(qtbot, window)
    assert window.engine.worker.engine.pid not in (None, host)
    again = send_and_wait_real(qtbot, window, "And one more colour?")
    assert again.text and again.figures.stats.stop_reason in ("eos", "max_tokens")
    _, status, roles = stored_reply(window)
    assert status == "complete" and roles == ["user", "assistant", "user", "assistant"]


def test_a_hang_mid_reply_is_one_line_and_the_next_message_starts_it_again(
        qtbot, monkeypatch, real_window):
    monkeypatch.setenv("DRAFTLIGHT_HOST_DEBUG", "hang@6")
    monkeypatch.setenv("DRAFTLIGHT_HOST_SILENCE", "3")
    window = real_window(greedy_settings())
    wait_ready(qtbot, window)

    view = send_and_wait_real(qtbot, window, QUESTION)
    assert "stopped answering for 3 s" in window.banner.label.text()
    assert view.text and stored_reply(window)[1] == "interrupted"
    again = send_and_wait_real(qtbot, window, "And one more colour?")  # no Restart clicked
    assert again.text and again.figures.stats.stop_reason in ("eos", "max_tokens")
    # the engine is back: the banner no longer says it stopped, nor offers a Restart
    assert window.banner.isHidden() or "stopped answering" not in window.banner.label.text()


def start_reply_into_hang(qtbot, monkeypatch, real_window):
    """A window whose reply has shown its first pieces and whose host then hangs in a native
    call (silent for the default 300 s)."""
    monkeypatch.setenv("DRAFTLIGHT_HOST_DEBUG", "hang@6")
    window = real_window(greedy_settings())
    wait_ready(qtbot, window)
    window.send(QUESTION)
    wait_until(qtbot, lambda: window.session.stream is not None
               and bool(window.session.stream.builder.text), "the reply's first pieces", 60_000,
               lambda: window_state(window))
    time.sleep(0.5)  # the host is inside its hung call now
    return window


def test_stop_never_waits_for_a_hung_native_call(qtbot, monkeypatch, real_window):
    window = start_reply_into_hang(qtbot, monkeypatch, real_window)
    began = time.monotonic()
    window.session.stop()
    wait_until(qtbot, lambda: window.session.stream is None, "Stop to end the reply", 20_000,
               lambda: window_state(window))
    assert time.monotonic() - began < 10  # host_waits.STOP_SECONDS, not the 300 s of silence
    assert stored_reply(window)[1] == "interrupted" and not window.banner.isVisible()
    again = send_and_wait_real(qtbot, window, "And one more colour?")  # a fresh host answers
    assert again.text and again.figures.stats.stop_reason in ("eos", "max_tokens")


def test_closing_the_window_never_waits_for_a_hung_native_call(qtbot, monkeypatch,
                                                              real_window):
    window = start_reply_into_hang(qtbot, monkeypatch, real_window)
    host = window.engine.worker.engine.pid
    began = time.monotonic()
    window.close()
    assert time.monotonic() - began < 10 and not window.engine.thread.isRunning()
    wait_until(qtbot, lambda: not _alive(host), "the host to end", 10_000)


def _alive(pid: int) -> bool:
    import psutil
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_where_the_extra_buffers_crash_the_window_answers_and_says_why(qtbot, monkeypatch,
                                                                      tmp_path, real_window):
    """A CPU whose llama.cpp AMX kernels crash (simulated): the host's first batched request
    (the background measurement, or the reply) dies of SIGILL; the window never shows a crash,
    the reply is answered, and the one-time note is said."""
    from draftlight.engine.llama import cpu_check
    monkeypatch.setenv(cpu_check.SIMULATE_VARIABLE, "1")
    monkeypatch.setenv(cpu_check.FILE_VARIABLE, str(tmp_path / "cpu_check.json"))
    window = real_window(greedy_settings())
    said = []
    window.session.info.connect(said.append)
    wait_ready(qtbot, window)
    view = send_and_wait_real(qtbot, window, QUESTION)
    assert view.text and view.figures.stats.stop_reason in ("eos", "max_tokens")
    assert "stopped" not in window.banner.label.text()
    assert any("AMX kernels crash on this CPU" in line for line in said)
    assert window.engine.worker.engine.restarts == 1
