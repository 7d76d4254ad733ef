"""A reply's single newlines are line breaks, as in every chat app (issue 36, item 1): a haiku
or a list typed line by line keeps its lines while it streams and after it is rendered whole,
and nothing moves between the two (in CommonMark they would be "soft" breaks, joined into one
paragraph when the finished reply is rendered)."""

from __future__ import annotations

import re

from PySide6.QtGui import QTextCursor

from draftlight.settings import Settings
from draftlight.ui.flash import markdown_render
from tests.support.scripted_engine import HeldScript, ScriptedFactory

HAIKU = [("An old silent pond\n", "target", 0), ("A frog jumps", "draft", 1),
         (" into the pond\n", "target", 1), ("Splash! Silence again.", "target", 2)]
LIST_LINES = ("\n\nthen:\n", "target", 3)
LAST = ("- eggs\n- milk", "target", 4)


def top(view, needle: str) -> int:
    """The y of the line that holds `needle`, in the reply body's viewport."""
    cursor = QTextCursor(view.document)
    cursor.setPosition(view.document.toPlainText().index(needle) + 1)
    return view.body.cursorRect(cursor).top()


def test_lines_stay_lines_while_streaming_and_after(qtbot, open_window):
    script = HeldScript([*HAIKU, LIST_LINES], LAST)
    window = open_window(ScriptedFactory(script), settings=Settings(flash_drafts=False))
    window.resize(900, 800)
    try:
        window.send("a haiku, please")
        view = window.chat.messages[-1]
        qtbot.waitUntil(lambda: view.text.endswith("then:\n"), timeout=5000)
        qtbot.wait(50)
        streaming = {line: top(view, line) for line in ("An old", "A frog", "Splash")}
        assert streaming["An old"] < streaming["A frog"] < streaming["Splash"]
        with qtbot.waitSignal(window.session.reply_finished, timeout=5000):
            script.release()
    finally:
        script.release()
    qtbot.wait(50)
    shown = view.document.toRawText()  # toPlainText() shows line breaks as newlines
    assert re.search("An old silent pond[\u2028\u2029]A frog jumps into the pond[\u2028\u2029]"
                     "Splash!", shown), shown
    assert "eggs" in shown and "milk" in shown and "- eggs" not in shown  # still a list
    for line, y in streaming.items():  # rendered whole, the lines stay where they were
        assert abs(top(view, line) - y) <= 2, (line, y, top(view, line))
    # the drafted run is still lit where it landed
    assert view.run_spans(0) and all(end > start for start, end in view.run_spans(0))


def test_only_newlines_inside_paragraphs_become_breaks():
    raw = ("one\ntwo\n\n```py\na = 1\nb = 2\n```\n| a | b |\n|---|---|\n| 1 | 2 |\n"
           "para\n    code after para\n")
    out = markdown_render.with_line_breaks(raw)
    assert out.startswith("one  \ntwo\n\n```py\na = 1\nb = 2\n```\n")  # code kept verbatim
    assert "| a | b |\n|---|---|\n" in out  # table rows untouched
    assert "para\n    code" in out  # before indented text: no break added
    assert markdown_render.with_line_breaks("") == "" and with_breaks_idempotent("x\ny")


def with_breaks_idempotent(text: str) -> bool:
    once = markdown_render.with_line_breaks(text)
    return markdown_render.with_line_breaks(once) == once


def test_a_reply_rendered_from_history_keeps_its_lines(qtbot, open_window):
    window = open_window(ScriptedFactory(lambda _mode: iter([("roses\nviolets", "target", 0)])))
    view = window.chat.add_message("assistant", streaming=False)
    view.finish("roses are red\nviolets are blue", [], None, "complete")
    assert re.search("roses are red[\u2028\u2029]violets are blue", view.document.toRawText())
