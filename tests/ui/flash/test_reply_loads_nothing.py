"""Trust, third round (issue 56, item 1): a reply's Markdown can name images; the reply view
loads none of them, local or remote (a path to /dev/zero grew the process to 2 GB; a FIFO froze
the window). Links are left to a click."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

from draftlight.ui.flash.message_view import MessageView


def height_of(qtbot, text: str) -> int:
    view = MessageView("assistant", text)
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    return round(view.body.document().size().height())


def test_an_image_a_reply_names_is_never_read(qtbot, tmp_path):
    tall = tmp_path / "tall.png"
    image = QImage(20, 900, QImage.Format_RGB32)
    image.fill(Qt.red)
    assert image.save(str(tall))
    missing = height_of(qtbot, f"Look: ![x]({tmp_path / 'missing.png'})")
    # read, the 900-pixel image would make the reply 900 pixels tall; unread, it is a missing one
    assert height_of(qtbot, f"Look: ![x]({tall})") == missing < 300
    assert height_of(qtbot, f"Look: ![x](file://{tall})") == missing
    assert height_of(qtbot, f'<img src="{tall}">') < 300


def test_a_fifo_named_as_an_image_does_not_block(qtbot, tmp_path):
    import os
    fifo = tmp_path / "pipe.png"
    os.mkfifo(fifo)  # opened for reading, it would wait for a writer for ever
    assert height_of(qtbot, f"![x]({fifo})") < 300
