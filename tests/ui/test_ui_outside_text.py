"""Outside text is shown as text, never read as HTML (issue 76, the tooltip hole): Qt's HTML
renderer opens the file an <img> names, and a conversation titled with an <img> naming a FIFO
hung the window for ever on hovering its row. Tooltips go through plain_tip, labels that can
show outside text are PlainText (ui/widgets/plain_text.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QHelpEvent, QTextDocument
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtWidgets import QApplication, QToolTip

from draftlight.ui.widgets.plain_text import plain_tip
from tests.support.scripted_engine import ScriptedFactory
from tests.support.window import files_read, send_and_wait

IMAGE_TITLE = '<img src="/nonexistent/x.png">Plan'


def shown(tip: str) -> str:
    """What Qt shows for tooltip text `tip`; where Qt reads it as HTML, it is plain_tip's
    escaped form (no tag of its own but the paragraph)."""
    if not GuiQt.mightBeRichText(tip):
        return tip
    document = QTextDocument()
    document.setHtml(tip)
    text = document.toPlainText()
    assert tip == plain_tip(text), tip
    return text


def test_plain_tip_keeps_plain_text_and_escapes_what_qt_would_read_as_html(qapp):
    for plain in ("Plan for Friday", "x < y and y > z", "a\n<b>bold</b> on line two"):
        assert plain_tip(plain) == plain  # Qt reads these as plain text already
    for outside in (IMAGE_TITLE, "<b>bold</b>.txt: sent  twice\nsecond line",
                    "a &lt; b",  # Qt would show "a < b"
                    "<table><tr><td>cell</td></tr></table>\n\n\tend"):
        tip = plain_tip(outside)
        assert "<img" not in tip and "<b>" not in tip and "<table" not in tip
        assert shown(tip) == outside  # every character, spaces and newlines as typed


def test_outside_text_in_the_window_is_shown_as_typed(qtbot, open_window):
    window = open_window(ScriptedFactory())
    window.history.create_conversation(IMAGE_TITLE)
    window.conversations.refresh()
    view = window.conversations.list
    row = next(view.item(i) for i in range(view.count()) if view.item(i).text() == IMAGE_TITLE)
    assert shown(row.toolTip()) == IMAGE_TITLE
    centre = view.visualItemRect(row).center()  # hovered: the tip worked out then
    QApplication.sendEvent(view.viewport(), QHelpEvent(QEvent.ToolTip, centre,
                                                       view.viewport().mapToGlobal(centre)))
    assert shown(QToolTip.text()).startswith(IMAGE_TITLE + "\nlast message ")
    QToolTip.hideText()

    tray = window.attachments
    tray.add_text("<b>bold</b>.txt", "alpha\n")
    assert tray.reading_chips[0].textFormat() == Qt.PlainText  # "Reading <b>bold</b>.txt…"
    files_read(qtbot, window)
    assert shown(tray.chips[0].name.toolTip()).startswith("<b>bold</b>.txt: sent with")
    send_and_wait(qtbot, window, "What is in it?")
    sent = next(v for v in window.chat.messages if v.files.chips)
    assert shown(sent.files.chips[0].toolTip()).startswith("<b>bold</b>.txt, attached")

    line = 'Cannot open <img src="/nonexistent/y.png">model.gguf'
    window.banner.show_message(line)
    assert window.banner.label.textFormat() == Qt.PlainText
    assert line in window.banner.label.text().split("\n")

    window.show_status('<img src="/nonexistent/z.png"> loaded')
    passing = window.status_line.passing
    assert passing.textFormat() == Qt.PlainText and passing.text().startswith("<img")
    passing.resize(40, passing.height())  # cut: its tooltip is the whole text
    assert shown(passing.toolTip()) == '<img src="/nonexistent/z.png"> loaded'


# Hovers the conversation list's row of a conversation titled argv[1], in a process of its own:
# "row" through the list's own tooltip, "raw" by showing the title as Qt would take it.
HOVER_CHILD = """
import pathlib, sys
from PySide6.QtCore import QEvent
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication, QToolTip
app = QApplication([])
from draftlight.store.history import History
from draftlight.ui.chat.conversation_list import ConversationList
title, how, showing = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
history = History(":memory:")
history.create_conversation(title)
panel = ConversationList(history)
panel.resize(240, 300)
panel.show()
view = panel.list
centre = view.visualRect(view.model().index(0, 0)).center()
showing.write_text("")
if how == "raw":
    QToolTip.showText(view.viewport().mapToGlobal(centre), title, view)
else:
    QApplication.sendEvent(view.viewport(),
                           QHelpEvent(QEvent.ToolTip, centre, view.viewport().mapToGlobal(centre)))
print("shown:", QToolTip.text(), flush=True)
"""
START = 60  # seconds for a child to start and show the tip, on a slow, busy machine
HUNG = 2  # seconds after it began to show the tip: the raw title is still showing then


def hover(title: str, how: str, showing) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-P", "-c", HOVER_CHILD, title, how, str(showing)],
                            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_title_whose_image_is_a_fifo_shows_its_tip_at_once(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    title = f'<img src="{fifo}">Plan'
    child = hover(title, "row", tmp_path / "showing-row")
    try:
        out, err = child.communicate(timeout=START)  # it hung for ever before the fix
    except subprocess.TimeoutExpired:
        pytest.fail(f"hovering the row of a conversation titled {title!r} hung")
    finally:
        child.kill()
    assert child.returncode == 0, err
    assert "&lt;img" in out

    # negative control: the same title, shown as Qt takes it, still hangs on this Qt
    showing = tmp_path / "showing-raw"
    child = hover(title, "raw", showing)
    try:
        deadline = time.monotonic() + START
        while not showing.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert showing.exists(), child.communicate()[1] if child.poll() is not None else ""
        time.sleep(HUNG)
        assert child.poll() is None, "the raw title no longer hangs: is the control still one?"
    finally:
        child.kill()
        child.communicate()
