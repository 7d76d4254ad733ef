"""No jump at the end: a reply is rendered as Markdown while it streams, so the text above the
block still being written stays where it is when the finished reply is rendered whole.

Measured in pixels on the scripted engine (test_ui_window): the reply is held just before its
last piece, the chat is grabbed, the last piece is let through, and the chat is grabbed again.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QTextCursor

from draftlight.settings import Settings
from draftlight.ui.flash import highlight, markdown_render
from tests.support.scripted_engine import HeldScript, ScriptedFactory
from tests.support.waiting import scaled

HEAD = [("# Flash notes\n\n", "target", 0),
        ("The first paragraph says that accepted drafts", "target", 1),
        (" light up", "draft", 2), (" in colour", "draft", 2), (".\n\n", "target", 2),
        ("- one item\n- two **items**\n\n", "target", 3),
        ("```python\nprint(1)\n```\n\n", "target", 4),
        ("The last words are", "target", 5)]
LAST = (" still **coming**.", "target", 6)


def place(window, view, needle: str) -> QRect:
    """Where the first character of `needle` is drawn, in the chat's coordinates."""
    doc = view.document
    position = doc.toPlainText().index(needle)
    cursor = QTextCursor(doc)
    cursor.setPosition(position + 1)
    rect = view.body.cursorRect(cursor)
    top_left = view.body.viewport().mapTo(window.chat.widget(), rect.topLeft())
    return QRect(top_left, rect.size())


def grab_above(window, view, needle: str):
    """The chat's pixels from the top of the reply's body down to the line of `needle`."""
    top = view.body.viewport().mapTo(window.chat.widget(), QPoint(0, 0)).y()
    bottom = place(window, view, needle).top()
    return window.chat.widget().grab(QRect(0, top, window.chat.widget().width(),
                                           bottom - top)).toImage()


def test_text_above_the_last_block_does_not_move_when_the_reply_finishes(qtbot, open_window):
    script = HeldScript(HEAD, LAST)
    window = open_window(ScriptedFactory(script), settings=Settings(flash_drafts=False))
    window.resize(900, 900)
    try:
        window.send("go")
        view = window.chat.messages[-1]
        qtbot.waitUntil(lambda: view.text.endswith("The last words are"), timeout=5000)
        # The complete blocks are Markdown already: no "#" or fence shows while streaming.
        qtbot.waitUntil(lambda: "```" not in view.document.toPlainText(), timeout=5000)
        assert view.streaming and "# Flash" not in view.document.toPlainText()
        qtbot.wait(50)
        first = place(window, view, "The first paragraph")
        code = place(window, view, "print(1)")
        last = place(window, view, "The last words")
        before = grab_above(window, view, "The last words")
        with qtbot.waitSignal(window.session.reply_finished, timeout=5000):
            script.release()
    finally:
        script.release()
    qtbot.wait(50)
    assert not view.streaming and view.text.endswith("still **coming**.")
    after = grab_above(window, view, "The last words")
    assert abs(place(window, view, "The first paragraph").top() - first.top()) <= 2
    assert abs(place(window, view, "print(1)").top() - code.top()) <= 2
    assert abs(place(window, view, "The last words").top() - last.top()) <= 2
    assert place(window, view, "The first paragraph").height() == first.height()
    # Pixel for pixel: heading, paragraph (with its highlighted run), list and code are
    # drawn the same before and after (a few pixels of antialiasing allowed).
    assert before.size() == after.size() and before.height() > 60
    changed = sum(before.pixel(x, y) != after.pixel(x, y)
                  for x in range(before.width()) for y in range(before.height()))
    assert changed <= 0.002 * before.width() * before.height(), changed
    # The run is still lit after the final render.
    lit = [text for text in _lit_texts(view)]
    assert "light up in colour" in "".join(lit)


def _lit_texts(view):
    doc = view.document
    for start, end, _tokens, coloured in highlight.highlighted_ranges(doc):
        cursor = QTextCursor(doc)
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.KeepAnchor)
        if coloured:
            yield cursor.selectedText()


def test_complete_blocks_end_stops_before_an_open_fence_and_the_block_being_written():
    text = "# T\n\npara\n\n```py\nx = 1\n\ny = 2\n"
    assert markdown_render.complete_blocks_end(text) == text.index("```")
    text += "```\nmore"
    assert markdown_render.complete_blocks_end(text) == text.index("more")
    assert markdown_render.complete_blocks_end(text, text.index("para")) == text.index("more")
    assert markdown_render.complete_blocks_end("one line, no newline") == 0


def test_flash_spans_follow_runs_into_rendered_blocks_and_the_plain_tail(qtbot, open_window):
    script = HeldScript(HEAD, LAST)
    script_pieces = [("## Head\n\nSome **", "target", 0), ("quick words", "draft", 1),
                     ("** here.\n\nThen ", "target", 1), ("more words", "draft", 2),
                     (" follow", "target", 2)]
    def pieces(_mode):
        yield from script_pieces
        script.gate.wait(10)
        yield (".", "target", 3)

    window = open_window(ScriptedFactory(pieces))
    try:
        window.send("go")
        view = window.chat.messages[-1]
        qtbot.waitUntil(lambda: view.text.endswith("follow"), timeout=5000)
        qtbot.waitUntil(lambda: "##" not in view.document.toPlainText(), timeout=5000)
        assert view.streaming

        def shown(index):
            spans = view.run_spans(index)
            cursor = QTextCursor(view.document)
            cursor.setPosition(spans[0][0])
            cursor.setPosition(spans[-1][1], QTextCursor.KeepAnchor)
            return cursor.selectedText()

        assert shown(0) == "quick words"  # inside a block rendered as Markdown (bold)
        assert shown(1) == "more words"  # in the plain tail
        with qtbot.waitSignal(window.session.reply_finished, timeout=5000):
            script.release()
    finally:
        script.release()
    assert shown(0) == "quick words" and shown(1) == "more words"


def test_gui_stays_responsive_while_a_long_reply_of_many_paragraphs_is_rendered(qtbot,
                                                                              open_window):
    # Every 40 tokens a paragraph ends: the complete blocks are re-rendered again and again,
    # at most RERENDER_SHARE of the time, each time a longer document.
    from tests.support.window import TickRecorder
    script = [(f" w{i}" + ("\n\n" if i % 40 == 39 else ""), "draft" if i % 3 else "target",
               i // 3) for i in range(3000)]
    window = open_window(ScriptedFactory(script, delay=0.0005))
    ticks = TickRecorder()
    try:
        ticks.longest = 0.0
        with qtbot.waitSignal(window.session.reply_finished, timeout=60_000):
            window.send("go")
        print(f"longest GUI stall: {ticks.longest * 1000:.0f} ms")
        assert ticks.longest < scaled(400) / 1000
    finally:
        ticks.stop()
    view = window.chat.messages[-1]
    assert view.document.blockCount() >= 75 and "w2999" in view.document.toPlainText()
