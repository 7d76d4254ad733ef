"""Driving a shown MainWindow in the window's tests: send a message and wait for the reply,
read back what is highlighted, and time how long the GUI thread was blocked."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from draftlight.ui.flash import highlight

from tests.support.waiting import wait_until, waiting_for, window_state


def send_and_wait(qtbot, window, text="Hi", timeout=10_000):
    """Type `text`, press Return, wait for the reply to end (`timeout`: ms on the reference
    machine, waiting.scaled); its MessageView."""
    with waiting_for(qtbot, window.session.reply_finished, f"the reply to {text[:40]!r}",
                     timeout, lambda: window_state(window)) as blocker:
        window.composer.setPlainText(text)
        qtbot.keyClick(window.composer, Qt.Key_Return)
    return blocker.args[0]


def wait_ready(qtbot, window, timeout=120_000) -> None:
    """Wait until the window's models are loaded (`timeout` as in send_and_wait)."""
    wait_until(qtbot, lambda: window.ready and not window.loading, "the models to load",
               timeout, lambda: window_state(window))


def highlighted_text(view) -> list[tuple[str, bool]]:
    out = []
    for start, end, _tokens, coloured in highlight.highlighted_ranges(view.document):
        cursor = QTextCursor(view.document)
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.KeepAnchor)
        out.append((cursor.selectedText(), coloured))
    return out


def assert_spans_are_run_text(spans: list[str], run_texts: list[str]) -> None:
    """Each highlighted span with text lies inside a run, runs taken in order; a span of
    whitespace alone is allowed only when some run is whitespace alone (a newline token)."""
    run = 0
    for text in spans:
        if not text.strip():
            assert any(not r.strip() for r in run_texts), f"whitespace highlighted: {text!r}"
            continue
        while run < len(run_texts) and text.strip() not in run_texts[run]:
            run += 1
        assert run < len(run_texts), f"{text!r} is not in any run after the previous span"


class TickRecorder:
    """A 5 ms timer on the GUI thread; the longest gap between ticks is how long the event
    loop was blocked (repaints, input) while the worker loaded and generated.

    What the suite's process holds (hundreds of thousands of objects, from every test before)
    is frozen while it records, as the app freezes what it built at start-up
    (draftlight.ui.desktop): a full collection of that heap takes 130-180 ms here, and landing
    inside a measured render it made these bounds flaky. `stop()` unfreezes it."""

    def __init__(self) -> None:
        import gc
        from PySide6.QtCore import QTimer
        gc.collect()
        gc.freeze()
        self.last = time.perf_counter()
        self.longest = 0.0
        self.timer = QTimer()
        self.timer.setInterval(5)
        self.timer.timeout.connect(self._tick)
        self.timer.start()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.longest = max(self.longest, now - self.last)
        self.last = now

    def stop(self) -> None:
        import gc
        self.timer.stop()
        gc.unfreeze()


def files_read(qtbot, window, timeout: int = 30_000) -> None:
    """Wait until the files given to the window's attachment tray are read (in the background)."""
    qtbot.waitUntil(lambda: not window.attachments.reading, timeout=timeout)


def run_point(view, index: int):
    """The middle of run `index`'s first span of a reply's view, in its text's viewport (a
    QPoint to hover or click)."""
    start, end = view.run_spans(index)[0]
    cursor = QTextCursor(view.document)
    cursor.setPosition((start + end) // 2)
    return view.body.cursorRect(cursor).center()
