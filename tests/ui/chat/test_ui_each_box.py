"""Each conversation keeps its own message box (issue 75, point 4), and a banner goes when what
it says stops being true (point 5): Enter where a reply runs says why and loses nothing; a long
paste's offer goes with the paste; an edit's banner goes with its conversation."""

from __future__ import annotations

from PySide6.QtCore import QMimeData, Qt

from tests.support.scripted_engine import ScriptedFactory
from tests.support.waiting import wait_until
from tests.support.window import send_and_wait


def test_a_reply_in_one_chat_leaves_anothers_box_its_own_and_enter_says_why(qtbot,
                                                                            open_window):
    factory = ScriptedFactory()
    window = open_window(factory)
    send_and_wait(qtbot, window, "First chat")
    first = window.session.conversation_id
    window.new_conversation()
    send_and_wait(qtbot, window, "Second chat")
    second = window.session.conversation_id

    factory.delay = 0.2  # the next reply takes a few seconds
    window.session.open_conversation(first)
    window.composer.setPlainText("More about the first")
    qtbot.keyClick(window.composer, Qt.Key_Return)
    wait_until(qtbot, lambda: window.session.streaming, "the reply to start", 5_000)

    window.session.open_conversation(second)  # the reply goes on in the first
    assert window.composer.toPlainText() == ""
    window.composer.setPlainText("A question for the second")
    qtbot.keyClick(window.composer, Qt.Key_Return)
    line = window.banner.label.text()
    assert window.banner.isVisible() and "being written in another conversation" in line
    assert window.banner.action_button.text() == "Stop the reply"
    assert window.composer.toPlainText() == "A question for the second"  # nothing lost

    window.session.open_conversation(first)  # the second's words stay with it
    assert window.composer.toPlainText() == ""
    window.composer.setPlainText("half a thought")
    window.session.open_conversation(second)
    assert window.composer.toPlainText() == "A question for the second"
    window.session.open_conversation(first)
    assert window.composer.toPlainText() == "half a thought"

    wait_until(qtbot, lambda: not window.session.streaming, "the reply to end", 20_000)
    assert "being written" not in window.banner.label.text() or window.banner.isHidden()
    assert window.banner.action_button.isHidden() or window.banner.isHidden()
    window.session.open_conversation(second)
    qtbot.keyClick(window.composer, Qt.Key_Return)  # now it is sent, in the second
    wait_until(qtbot, lambda: not window.session.streaming
               and window.chat.messages[-1].role == "assistant", "the second's reply", 20_000)
    assert [v.text for v in window.chat.messages if v.role == "user"][-1] == (
        "A question for the second")


def test_a_long_pastes_offer_goes_when_the_paste_is_sent_or_another_chat_shown(qtbot,
                                                                                open_window):
    window = open_window(ScriptedFactory())
    paste = "All work and no play makes Jack a dull boy.\n" * 120
    data = QMimeData()
    data.setText(paste)
    window.composer.insertFromMimeData(data)
    assert window.banner.isVisible() and "You pasted" in window.banner.label.text()
    send_and_wait(qtbot, window, window.composer.toPlainText())  # sent as it is
    assert window.banner.isHidden()

    window.new_conversation()
    window.composer.insertFromMimeData(data)
    assert window.banner.isVisible()
    window.composer.setPlainText("changed my mind")  # the paste is gone from the box
    assert window.banner.isHidden()


def test_an_edits_banner_goes_with_its_conversation_and_leaves_other_lines(qtbot, open_window):
    window = open_window(ScriptedFactory())
    send_and_wait(qtbot, window, "Hello there")
    first = window.session.conversation_id
    window.new_conversation()
    send_and_wait(qtbot, window, "Another chat")
    window.banner.show_message("Settings could not be saved: disk full")
    window.message_edit.start_last()
    assert "Editing your message 1" in window.banner.label.text()
    window.session.open_conversation(first)  # the message being edited is not on screen
    assert window.message_edit.view is None and window.composer.toPlainText() == ""
    assert "Editing" not in window.banner.label.text()
    assert window.banner.isVisible() and "disk full" in window.banner.label.text()
    assert window.banner.action_button.isHidden()  # Cancel went with its line
