"""Continue (issue 40, part 3): a reply cut at its length limit or stopped is written on from
its words. The engine is sent the conversation ending with that reply (it goes on from it);
the reply stays one message, in the window and in the history, with its first part's runs
where they were, and figures that add both parts up."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.support.scripted_engine import SCRIPT, ScriptedFactory
from tests.support.window import send_and_wait

WRITTEN = "".join(piece[0] for piece in SCRIPT)  # "Hello world! Bye."


def test_a_reply_at_its_length_limit_goes_on_from_its_words(qtbot, open_window):
    factory = ScriptedFactory()
    factory.stop_reason = "max_tokens"
    window = open_window(factory)
    first = send_and_wait(qtbot, window, "Tell me a long story")
    assert first.continue_button.isVisibleTo(window) and first.runs == [[5, 11, 2], [12, 16, 1]]

    factory.stop_reason = "eos"
    with qtbot.waitSignal(window.session.reply_finished, timeout=5000) as done:
        qtbot.mouseClick(first.continue_button, Qt.LeftButton)
    reply = done.args[0]
    messages, _mode = factory.calls[-1]
    assert messages[-1] == {"role": "assistant", "content": WRITTEN}  # what it goes on from
    assert [v.text for v in window.chat.messages] == ["Tell me a long story", WRITTEN * 2]
    shift = len(WRITTEN)
    assert reply.runs == [[5, 11, 2], [12, 16, 1], [5 + shift, 11 + shift, 2],
                          [12 + shift, 16 + shift, 1]]
    assert reply.figures.stats.new_tokens == 12 and reply.figures.stats.accepted == 6
    assert len(reply.figures.passes) == 6  # the strip: both parts' passes
    assert not reply.continue_button.isVisibleTo(window)  # it ended of itself this time

    conversation = window.session.conversation_id
    window.session.writes.flush()
    saved = window.history.messages(conversation)
    assert [m.text for m in saved] == ["Tell me a long story", WRITTEN * 2]
    assert saved[1].runs == reply.runs and saved[1].status == "complete"


def test_a_stopped_reply_can_continue_and_only_the_latest(qtbot, open_window):
    factory = ScriptedFactory(delay=0.05)
    window = open_window(factory)
    with qtbot.waitSignal(window.session.reply_finished, timeout=5000) as done:
        window.composer.setPlainText("Count to ten")
        qtbot.keyClick(window.composer, Qt.Key_Return)
        qtbot.waitUntil(lambda: len(window.session.stream.builder.text) >= 5, timeout=5000)
        window.stop_button.click()
    stopped = done.args[0]
    assert stopped.status == "interrupted" and stopped.continue_button.isVisibleTo(window)

    factory.delay = 0.0
    send_and_wait(qtbot, window, "Never mind")  # the stopped reply is no longer the latest
    assert not stopped.continue_button.isVisibleTo(window)
    assert not window.chat.messages[-1].continue_button.isVisibleTo(window)  # complete


def test_a_continuation_stopped_before_its_first_token_keeps_the_figures(qtbot, open_window):
    factory = ScriptedFactory()
    factory.stop_reason = "max_tokens"
    window = open_window(factory)
    first = send_and_wait(qtbot, window, "Tell me a long story")
    figures = first.figures
    factory.delay = 0.5
    with qtbot.waitSignal(window.session.reply_finished, timeout=5000) as done:
        window.continue_reply()
        window.stop_button.click()  # before the first piece arrives
    reply = done.args[0]
    assert reply.text == WRITTEN and reply.status == "interrupted"
    assert reply.figures.stats.new_tokens == figures.stats.new_tokens == 6
    assert reply.figures.passes == figures.passes
