"""Attaching files in the window (issue 39, part 1): Attach… or a drop on the message box adds a
chip; the files go with the next message under a header naming each, and the reply can copy
from them; a file that is not text gets one line in the banner and the typed message stays."""

from __future__ import annotations

from PySide6.QtCore import QMimeData, QUrl
from PySide6.QtWidgets import QFileDialog

from tests.support.scripted_engine import ScriptedFactory
from tests.support.window import files_read, send_and_wait


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
    files_read(qtbot, window)
    tray = window.attachments
    assert [c.name.text() for c in tray.chips] == ["notes.md · 3 lines · ~6 tokens",
                                                   "tool.py · 1 line · ~3 tokens"]
    viewer = tray.chips[0].name.click() or tray.viewer  # the text that will be sent
    assert viewer.text.toPlainText() == "# Plan\n\nShip on Friday.\n"
    assert viewer.text.isReadOnly()
    viewer.close()
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
    files_read(qtbot, window)
    assert "Cannot attach photo.png is a PNG image, not text" in window.banner.label.text()
    assert window.composer.toPlainText() == "keep this" and window.attachments.attachments == []
    chip_file = tmp_path / "a.txt"
    chip_file.write_text("alpha\n")
    window.attachments.add_paths([str(chip_file)])
    files_read(qtbot, window)
    window.attachments.chips[0].remove.click()  # × removes it
    assert window.attachments.attachments == []


def test_edit_makes_the_file_the_replys_predicted_output(qtbot, open_window, tmp_path):
    """A chip's Edit (issue 39, part 6): the file goes with the message and its text is the
    reply's Predicted Output; one file at a time; the footer and the hover name the file."""
    reply = 'def greet(name):\n    return "Hi, " + name\n'
    drafted = {"kind": "prediction", "start": 0, "end": 4}
    script = [(reply[:4], "draft", 0, drafted), (reply[4:9], "draft", 0, drafted),
              (reply[9:17], "draft", 0, drafted), (reply[17:], "target", 0)]
    factory = ScriptedFactory(script=script)
    window = open_window(factory)
    code, other = tmp_path / "greet.py", tmp_path / "other.py"
    code.write_text('def greet(name):\n    return "Hello, " + name\n')
    other.write_text("x = 1\n")
    tray = window.attachments
    tray.add_paths([str(code), str(other)])
    files_read(qtbot, window)
    tray.chips[1].edit.click()
    tray.chips[0].edit.click()  # one file at a time: the other is no longer edited
    assert [c.edit.isChecked() for c in tray.chips] == [True, False]
    view = send_and_wait(qtbot, window, "Say Hi instead of Hello.")
    assert factory.predictions[-1] == code.read_text()
    assert "Attached file: greet.py" in factory.calls[-1][0][-1]["content"]
    assert "3 of them copied from greet.py" in view.footer.text()
    assert view.figures.origins[0].source == "greet.py"
    assert tray.editing is None and tray.attachments == []


def test_a_long_paste_is_offered_as_an_attachment_and_nothing_is_lost(qtbot, open_window):
    """A paste of thousands of characters (issue 39, part 1): the banner offers to make it an
    attachment; taking the offer moves it out of the message box into a chip, and the rest of
    the message stays as it was typed."""
    from PySide6.QtCore import QMimeData
    window = open_window(ScriptedFactory())
    window.composer.setPlainText("Summarise: ")
    window.composer.moveCursor(window.composer.textCursor().MoveOperation.End)
    paste = "All work and no play makes Jack a dull boy.\n" * 120  # 5,280 characters
    data = QMimeData()
    data.setText(paste)
    window.composer.insertFromMimeData(data)
    banner = window.banner
    assert banner.isVisible() and "You pasted 5,280 characters" in banner.label.text()
    banner.action_button.click()
    files_read(qtbot, window)
    assert window.composer.toPlainText() == "Summarise: "
    [attached] = window.attachments.attachments
    assert attached.name == "pasted text.txt" and attached.text == paste


def test_files_dropped_on_the_chat_and_file_attach_add_chips(qtbot, open_window, tmp_path,
                                                             monkeypatch):
    from PySide6.QtCore import QPointF, Qt
    from PySide6.QtGui import QDropEvent
    window = open_window(ScriptedFactory())
    notes = tmp_path / "notes.md"
    notes.write_text("# Plan\n")
    pane = window.chat.parentWidget()
    while not hasattr(pane, "attachments"):
        pane = pane.parentWidget()
    data = dropped(notes)  # kept: the event only points at it
    drop = QDropEvent(QPointF(10, 10), Qt.CopyAction, data, Qt.LeftButton, Qt.NoModifier)
    pane.dropEvent(drop)
    files_read(qtbot, window)
    assert [a.name for a in window.attachments.attachments] == ["notes.md"]
    code = tmp_path / "tool.py"
    code.write_text("print(1)\n")
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *a, **k: ([str(code)], ""))
    [attach] = [a for a in window.menuBar().actions()[0].menu().actions()
                if a.text() == "Attach files…"]
    attach.trigger()
    files_read(qtbot, window)
    assert [a.name for a in window.attachments.attachments] == ["notes.md", "tool.py"]


def test_a_sent_messages_files_are_chips_and_a_copied_run_opens_its_file_at_the_span(
        qtbot, open_window, tmp_path):
    """Kept with the conversation (issue 39, parts 4 and 5): the message shows its files as
    chips, not a wall of text, also when reopened; a reply's run copied from a file opens that
    file at the span, marked, and its hover names the file and line."""
    from tests.support.documents import pdf_bytes
    notes = tmp_path / "notes.md"
    notes.write_text("# Plan\n\nShip on Friday.\n")
    report = tmp_path / "report.pdf"
    report.write_bytes(pdf_bytes([["Sales rose."], ["The plant reopened."]]))

    def script(_mode):
        sent = factory.calls[-1][0][-1]["content"]
        at = sent.index("Ship on Friday")
        yield ("Ship on", "draft", 0, {"kind": "message", "message": 0, "start": at,
                                       "end": at + 7})
        yield (" Friday.", "target", 0)

    factory = ScriptedFactory(script=script)
    window = open_window(factory)
    window.attachments.add_paths([str(notes), str(report)])
    files_read(qtbot, window)
    reply = send_and_wait(qtbot, window, "When do we ship?")
    question = window.chat.messages[0]
    assert [c.text() for c in question.files.chips] == ["notes.md · 3 lines",
                                                        "report.pdf · 2 pages"]
    assert question.document.toPlainText() == "When do we ship?"
    assert window.history.conversations()[0].title == "When do we ship?"  # not the file
    import hashlib
    kept = window.history.messages(window.session.conversation_id)[0].stats["attachments"]
    assert kept == [{"name": "notes.md", "type": "text", "pages": None,
                     "sha256": hashlib.sha256(notes.read_bytes()).hexdigest()},
                    {"name": "report.pdf", "type": "pdf", "pages": 2,
                     "sha256": hashlib.sha256(report.read_bytes()).hexdigest()}]
    assert reply.run_origins.tip(0).startswith(
        "copied from notes.md, line 3 (attached to your message 1)")
    window.chat.show_origin(reply, 0)
    viewer = question.files.viewer
    assert viewer.isVisible() and viewer.marked() == "Ship on"
    assert viewer.text.toPlainText() == "# Plan\n\nShip on Friday."
    viewer.close()
    question.files.chips[1].click()  # the PDF's text, page by page
    assert question.files.viewer.text.toPlainText().startswith("--- page 1 ---\nSales rose.")
    question.files.viewer.close()

    conversation = window.session.conversation_id
    window.session.writes.flush()
    window.new_conversation()
    window.session.open_conversation(conversation)  # reopened: the chips are back
    reopened = window.chat.messages[0]
    assert [c.text() for c in reopened.files.chips] == ["notes.md · 3 lines",
                                                        "report.pdf · 2 pages"]


def test_a_reply_to_an_edit_is_shown_as_a_diff_copied_and_saved(qtbot, open_window, tmp_path,
                                                                monkeypatch):
    """Edit's reply as a change (issue 39, part 6): the right-click menu of the reply offers a
    diff against the file; Copy takes the new version, Save as… writes it elsewhere."""
    from PySide6.QtGui import QGuiApplication
    reply = 'Here it is:\n\n```python\ndef greet(name):\n    return "Hi, " + name\n```\n'
    factory = ScriptedFactory(script=[(reply, "target", 0)])
    window = open_window(factory)
    code = tmp_path / "greet.py"
    code.write_text('def greet(name):\n    return "Hello, " + name\n')
    window.attachments.add_paths([str(code)])
    files_read(qtbot, window)
    window.attachments.chips[0].edit.click()
    view = send_and_wait(qtbot, window, "Say Hi instead of Hello.")
    view._menu(view.body.rect().center())
    [diff_action] = [a for a in view.menu.actions() if a.text().startswith("Show as a diff")]
    assert diff_action.text() == "Show as a diff against greet.py…"
    view.menu.close()
    diff_action.trigger()
    dialog = window.chat.diff
    shown = dialog.text.toPlainText()
    assert '-    return "Hello, " + name\n+    return "Hi, " + name\n' in shown
    assert dialog.summary.text().startswith("1 line added, 1 removed")
    dialog.copy_button.click()
    assert QGuiApplication.clipboard().text() == 'def greet(name):\n    return "Hi, " + name\n'
    target = tmp_path / "greet-new.py"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    dialog.save_button.click()
    assert target.read_text() == 'def greet(name):\n    return "Hi, " + name\n'
    assert code.read_text().endswith('"Hello, " + name\n')  # the original untouched
    dialog.close()


def test_a_slow_file_is_read_in_the_background_and_the_message_waits_for_it(qtbot, open_window,
                                                                             tmp_path):
    """Files are read off the GUI thread: the window answers while a document that takes
    seconds is read, a chip says so, and a message sent meanwhile stays in the box."""
    import time

    from tests.support.hostile_attachments import docx
    factory = ScriptedFactory()
    window = open_window(factory)
    slow = tmp_path / "slow.docx"  # 900,000 empty paragraphs, then one: seconds of parsing
    slow.write_bytes(docx("<w:p/>" * 900_000 + "<w:p><w:r><w:t>Ship on Friday.</w:t></w:r></w:p>"))
    started = time.monotonic()
    window.attachments.add_paths([str(slow)])
    assert time.monotonic() - started < 0.5  # not read on this thread
    tray = window.attachments
    assert [c.text() for c in tray.reading_chips] == ["Reading slow.docx…"] and tray.isVisible()
    window.composer.setPlainText("What does it say?")
    window.composer.submit()  # too early: it waits for the file, still in the box
    assert factory.calls == [] and window.composer.toPlainText() == "What does it say?"
    assert window.banner.label.text() == ("Reading slow.docx: your message is sent once it is "
                                          "read.")
    assert tray.chips == []
    qtbot.waitUntil(lambda: bool(factory.calls), timeout=30_000)  # ... and goes once it is read
    assert factory.calls[-1][0][-1]["content"].startswith("Attached file: slow.docx\n")
    assert factory.calls[-1][0][-1]["content"].endswith("What does it say?")
    assert window.banner.isHidden() and window.composer.toPlainText() == ""
    assert tray.reading_chips == [] and tray.chips == []  # sent with it


def test_a_message_waiting_for_a_file_that_cannot_be_attached_is_not_sent(qtbot, open_window,
                                                                          tmp_path):
    from tests.support.hostile_attachments import docx
    factory = ScriptedFactory()
    window = open_window(factory)
    empty = tmp_path / "empty.docx"  # seconds of parsing, and no text at the end of it
    empty.write_bytes(docx("<w:p/>" * 900_000))
    window.attachments.add_paths([str(empty)])
    window.composer.setPlainText("Summarise it.")
    window.composer.submit()
    files_read(qtbot, window)
    qtbot.wait(200)
    assert factory.calls == [] and window.composer.toPlainText() == "Summarise it."
    assert "Cannot attach empty.docx: the Word document has no text" in window.banner.label.text()
