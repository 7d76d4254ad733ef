"""File ▸ Export and Import conversation (issue 40, part 4), in the window: the conversation
shown goes out as Markdown or JSON, and an exported JSON comes back as a new conversation with
its replies' highlights, footers and branches; a file that is not an export gets one line,
nothing else."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from tests.support.scripted_engine import ScriptedFactory
from tests.support.window import send_and_wait


def test_export_then_import_brings_the_conversation_back(qtbot, open_window, tmp_path,
                                                         monkeypatch):
    window = open_window(ScriptedFactory())
    reply = send_and_wait(qtbot, window, "hello there")
    out = tmp_path / "chat.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda *a, **k: (str(out), "JSON, all branches, to import again (*.json)"))
    window.export_action.trigger()
    assert out.exists() and "Exported to" in window.statusBar().currentMessage()
    md = tmp_path / "chat"  # no suffix: the filter chosen decides
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(md), "Markdown"))
    window.export_action.trigger()
    markdown = (tmp_path / "chat.md").read_text(encoding="utf-8")
    assert "## You\n\nhello there" in markdown and "tokens" in markdown  # the footer's figures

    before = window.session.conversation_id
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(out), ""))
    window.import_action.trigger()
    assert window.session.conversation_id != before
    back = window.chat.messages
    assert [m.text for m in back] == ["hello there", reply.text]
    assert back[-1].runs == reply.runs and back[-1].footer.text() == reply.footer.text()
    assert window.conversations.list.count() == 2


def test_importing_a_file_that_is_not_an_export_says_so_and_changes_nothing(
        qtbot, open_window, tmp_path, monkeypatch):
    window = open_window(ScriptedFactory())
    send_and_wait(qtbot, window, "keep me")
    bad = tmp_path / "notes.json"
    bad.write_text('{"hello": 1}')
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(bad), ""))
    window.import_action.trigger()
    assert "Not imported: notes.json is not a Draftlight export" in window.banner.label.text()
    assert window.conversations.list.count() == 1
    assert window.chat.messages[0].text == "keep me"
    deep = tmp_path / "deep.json"  # issue 56, item 6: RecursionError reached the window
    deep.write_text("[" * 100_000 + "]" * 100_000)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(deep), ""))
    window.import_action.trigger()
    assert ("Not imported: deep.json is not a Draftlight export (nested more than 64 levels "
            "deep)") in window.banner.label.text()
    assert window.conversations.list.count() == 1


def test_a_regenerated_reply_comes_back_with_both_versions(qtbot, open_window, tmp_path,
                                                           monkeypatch):
    window = open_window(ScriptedFactory())
    send_and_wait(qtbot, window, "Hi")
    with qtbot.waitSignal(window.session.reply_finished, timeout=5000):
        qtbot.mouseClick(window.regenerate_button, Qt.LeftButton)
    qtbot.mouseClick(window.chat.messages[1].branches.back, Qt.LeftButton)  # version 1 shown
    shown = window.chat.messages[1].text
    md, out = tmp_path / "all.md", tmp_path / "all.json"
    for path, chosen in ((md, "Markdown, all branches (*.md)"), (out, "JSON, all branches")):
        monkeypatch.setattr(QFileDialog, "getSaveFileName",
                            lambda *a, p=path, c=chosen, **k: (str(p), c))
        window.export_action.trigger()
    assert "# Branch 1 of 2 (shown)" in md.read_text(encoding="utf-8")

    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(out), ""))
    window.import_action.trigger()
    reply = window.chat.messages[1]
    assert reply.text == shown and reply.branches.label.text() == "1/2"
    qtbot.mouseClick(reply.branches.forward, Qt.LeftButton)
    assert window.chat.messages[1].branches.label.text() == "2/2"
    assert window.chat.messages[1].footer.text()  # the regenerated reply's figures came too
