"""A long read shows its progress in the reply's card (issue 75, point 2): a bar, "Reading what
was sent: 3,950 of 7,900 tokens", the time left; after Stop, how much was read and that it is
kept; once the first token comes, the bar goes. The engine's Reading events are scripted here
(tests/engine/llama/test_stop_reading.py has the real read tell them)."""

from __future__ import annotations

from tests.support.scripted_engine import ScriptedFactory
from tests.support.waiting import wait_until
from tests.support.window import send_and_wait


def test_a_long_read_shows_its_progress_and_a_stopped_one_says_what_is_kept(qtbot,
                                                                             open_window):
    factory = ScriptedFactory()
    factory.reading, factory.delay = 4, 0.3
    window = open_window(factory)
    window.composer.setPlainText("Summarise this long paper")
    window.composer.submit()
    view = window.chat.messages[-1]
    wait_until(qtbot, lambda: view.reading_bar.isVisible() and view.reading_bar.value() > 0,
               "the read's progress", 5_000)
    assert "reading…" in view.title.text()
    assert "Reading what was sent:" in view.footer.text() and "of 7,900 tokens" in (
        view.footer.text())
    assert "left" in view.footer.text()
    read = view.reading_bar.value()
    window.session.stop()
    wait_until(qtbot, lambda: not window.session.streaming, "the reply to stop", 5_000)
    assert view.reading_bar.isHidden() and "interrupted" in view.title.text()
    assert "Stopped while reading:" in view.footer.text() and "are kept" in view.footer.text()
    assert f"{read:,} of 7,900" in view.footer.text() or "of 7,900 tokens were read" in (
        view.footer.text())

    factory.reading, factory.delay = 2, 0.01
    done = send_and_wait(qtbot, window, "And now?")
    assert done.reading_bar.isHidden() and done.text and "Stopped" not in done.footer.text()
    assert "writing…" not in done.title.text() and "reading…" not in done.title.text()
