"""Edit and branches in the window (issue 40, parts 1 and 2): editing a sent message makes a
new version of it and keeps the first, ‹ › switches between them, the conversation reopens on
the version shown last; the first version's answer drafts the new one (a Predicted Output)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.support.scripted_engine import ScriptedFactory
from tests.support.window import send_and_wait


def texts(window) -> list[str]:
    return [v.text for v in window.chat.messages]


def test_an_edit_is_a_new_version_and_the_arrows_switch_back(qtbot, open_window):
    factory = ScriptedFactory()
    window = open_window(factory)
    send_and_wait(qtbot, window, "Capital of France?")
    send_and_wait(qtbot, window, "And of Italy?")
    first_answer = window.chat.messages[1].text
    question = window.chat.messages[0]
    qtbot.mouseClick(question.edit_button, Qt.LeftButton)
    assert window.composer.toPlainText() == "Capital of France?"
    assert "Editing your message 1" in window.banner.label.text()
    with qtbot.waitSignal(window.session.reply_finished, timeout=5000):
        window.composer.setPlainText("Capital of Spain?")
        qtbot.keyClick(window.composer, Qt.Key_Return)
    assert texts(window) == ["Capital of Spain?", "Hello world! Bye."]
    assert factory.predictions[-1] == first_answer  # the first version's answer drafts
    edited = window.chat.messages[0]
    assert edited.branches.isVisible() and edited.branches.label.text() == "2/2"

    qtbot.mouseClick(edited.branches.back, Qt.LeftButton)  # ‹: the first version, as it went
    assert texts(window)[::2] == ["Capital of France?", "And of Italy?"]
    assert window.chat.messages[0].branches.label.text() == "1/2"

    conversation = window.session.conversation_id
    window.new_conversation()
    window.session.open_conversation(conversation)  # reopens on the version shown last
    assert texts(window)[::2] == ["Capital of France?", "And of Italy?"]
    qtbot.mouseClick(window.chat.messages[0].branches.forward, Qt.LeftButton)
    assert texts(window) == ["Capital of Spain?", "Hello world! Bye."]


def test_regenerate_and_up_in_an_empty_box(qtbot, open_window):
    window = open_window(ScriptedFactory())
    send_and_wait(qtbot, window, "Hi")
    with qtbot.waitSignal(window.session.reply_finished, timeout=5000):
        qtbot.mouseClick(window.regenerate_button, Qt.LeftButton)
    reply = window.chat.messages[1]
    assert reply.branches.label.text() == "2/2"  # the replaced reply is version 1
    qtbot.mouseClick(reply.branches.back, Qt.LeftButton)
    assert window.chat.messages[1].branches.label.text() == "1/2"
    window.composer.clear()
    qtbot.keyClick(window.composer, Qt.Key_Up)  # edits the last message sent
    assert window.composer.toPlainText() == "Hi"
    window.banner.action_button.click()  # Cancel
    assert window.composer.toPlainText() == "" and window.message_edit.view is None


def test_search_finds_a_word_in_an_old_branch_and_opens_it_there(qtbot, open_window):
    """Search (issue 40, part 4) runs off the GUI thread and shows the matching line; a hit in
    a version no longer shown opens the conversation in that version, at that message."""
    window = open_window(ScriptedFactory())
    send_and_wait(qtbot, window, "Tell me about the albatross over the sea")
    question = window.chat.messages[0]
    qtbot.mouseClick(question.edit_button, Qt.LeftButton)
    with qtbot.waitSignal(window.session.reply_finished, timeout=5000):
        window.composer.setPlainText("Tell me about penguins")
        qtbot.keyClick(window.composer, Qt.Key_Return)
    window.new_conversation()
    rows = window.conversations
    with qtbot.waitSignal(rows.searched, timeout=5000):
        rows.search.setText("albatross")
    item = rows.list.item(0)
    assert rows.list.count() == 1
    from draftlight.ui.chat.conversation_list import MATCH_ROLE, WHEN_ROLE
    line = item.data(WHEN_ROLE)
    start, end = item.data(MATCH_ROLE)
    assert line[start:end] == "albatross"
    rows.list.itemClicked.emit(item)
    assert texts(window)[0] == "Tell me about the albatross over the sea"
    assert window.chat.messages[0].branches.label.text() == "1/2"


def test_a_click_on_a_run_the_first_version_drafted_shows_that_version_there(qtbot, open_window):
    """Issue 40, part 2: hover names the earlier answer, and a click shows it, in its branch,
    with the copied words marked."""
    from tests.support.window import run_point
    copied = {"kind": "prediction", "start": 6, "end": 11}  # "world" of "Hello world! Bye."
    factory = ScriptedFactory(script=lambda mode: [
        ("Hello ", "target", 0), ("wor", "draft", 1, copied), ("ld", "draft", 1, copied),
        ("!", "target", 1)])
    window = open_window(factory)
    send_and_wait(qtbot, window, "Hi")
    first = window.chat.messages[1]
    first_id = first.message_id.id
    with qtbot.waitSignal(window.session.reply_finished, timeout=5000):
        qtbot.mouseClick(window.regenerate_button, Qt.LeftButton)
    again = window.chat.messages[1]
    assert again.branches.label.text() == "2/2"
    assert again.run_origins.tip(0) == "copied from your earlier answer (version 1)"
    assert again.run_origins.has_source(0)

    qtbot.mouseClick(again.body.viewport(), Qt.LeftButton, pos=run_point(again, 0))
    shown = window.chat.messages[1]
    assert shown.message_id.id == first_id and shown.branches.label.text() == "1/2"
    [mark] = shown.body.extraSelections()
    assert mark.cursor.selectedText() == "world"
