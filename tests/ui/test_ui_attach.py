"""Attaching files in the window (issue 39, part 1): Attach… or a drop on the message box adds a
chip; the files go with the next message under a header naming each, and the reply can copy
from them; a file that is not text gets one line in the banner and the typed message stays."""

from __future__ import annotations

from PySide6.QtCore import QMimeData, QUrl
from PySide6.QtWidgets import QFileDialog

from tests.support.scripted_engine import ScriptedFactory
from tests.support.window import send_and_wait


def dropped(*paths) -> QMimeData:
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    return data


def test_dropped_and_chosen_files_go_with_the_next_message(qtbot, open_window, tmp_path,
                                                           monkeypatch):
    factory = ScriptedFactory()
    window = open_window(factory)
    notes = tmp_path / "notes.md"
    notes.write_text("# Plan\n\nShip on Friday.\n")
    code = tmp_path / "tool.py"
    code.write_text("print('hi')\n")
    window.composer.setPlainText("What is the plan?")
    window.composer.insertFromMimeData(dropped(notes))
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *a, **k: ([str(code)], ""))
    window.attachments.ask()
    tray = window.attachments
    assert [c.text() for c in tray.chips] == ["notes.md · 3 lines  ×",
                                              "tool.py · 1 line  ×"]
    assert window.composer.toPlainText() == "What is the plan?"  # not the dropped path
    send_and_wait(qtbot, window, "What is the plan?")
    sent = factory.calls[-1][0][-1]["content"]
    assert sent.startswith("Attached file: notes.md\n```\n# Plan\n\nShip on Friday.\n```\n\n"
                           "Attached file: tool.py\n")
    assert sent.endswith("What is the plan?")
    assert tray.attachments == [] and not tray.isVisible()


def test_a_file_that_is_not_text_is_said_and_nothing_is_lost(qtbot, open_window, tmp_path):
    window = open_window(ScriptedFactory())
    image = tmp_path / "photo.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n\0\0")
    window.composer.setPlainText("keep this")
    window.composer.insertFromMimeData(dropped(image))
    assert "Cannot attach photo.png is a PNG image, not text" in window.banner.label.text()
    assert window.composer.toPlainText() == "keep this" and window.attachments.attachments == []
    chip_file = tmp_path / "a.txt"
    chip_file.write_text("alpha\n")
    window.attachments.add_paths([str(chip_file)])
    window.attachments.chips[0].click()  # × removes it
    assert window.attachments.attachments == []
