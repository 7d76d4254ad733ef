"""A long conversation opens with its newest messages built (ui/chat/earlier.py): the earlier
ones are built a page at a time as it is scrolled to its top, or down to one that is asked for
(a run's source, a search hit); the engine is always sent the whole conversation."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt

from draftlight.ui.chat import branches
from draftlight.ui.chat.earlier import PAGE_CHARS
from tests.support.origin_engine import OriginFactory, visible
from tests.support.window import run_point, send_and_wait

QUESTION = "The quick brown fox jumps over the lazy dog"

PAIRS = 30
ANSWER = "An answer of some length, so that the conversation is long. " * 8


def plain(messages):
    return [("Sure.", "target", 0, None)]


def long_conversation(window) -> int:
    history = window.history
    conversation = history.create_conversation("a long one")
    for i in range(PAIRS):
        history.add_message(conversation, "user", QUESTION if i == 0 else f"Question {i}?")
        history.add_message(conversation, "assistant", f"Answer {i}. {ANSWER}")
    window.conversations.refresh()
    window.session.open_conversation(conversation)
    return conversation


def test_only_the_newest_messages_are_built_and_the_engine_gets_them_all(qtbot, open_window):
    def copy_of_the_first_message(messages):  # " quick brown fox" of message 0
        first = {"kind": "message", "message": 0, "start": 3, "end": 19}
        return [("Sure:", "target", 0, None), (" quick brown fox", "draft", 1, first),
                (".", "target", 1, None)]

    factory = OriginFactory(copy_of_the_first_message)
    window = open_window(factory)
    window.resize(800, 600)
    long_conversation(window)
    chat = window.chat
    built = len(chat.messages)
    assert 4 <= built < 2 * PAIRS and len(chat.earlier) == 2 * PAIRS - built
    assert sum(len(v.text) for v in chat.messages[1:]) < PAGE_CHARS  # a page, not more
    assert chat.earlier_button.isVisibleTo(window)
    assert f"{2 * PAIRS - built:,} more" in chat.earlier_button.text()

    reply = send_and_wait(qtbot, window, "Copy the fox.")
    sent, _mode = factory.calls[-1]
    assert [m["content"] for m in sent[:2]] == [QUESTION, f"Answer 0. {ANSWER}"]
    assert len(sent) == 2 * PAIRS + 1  # every message, built or not
    # The run names its source without building it ...
    source = chat.origin_source(reply, reply.run_origins.origin(0))
    assert source.role == "user" and source.number == 1 and source.text == QUESTION
    assert chat.earlier  # still not built
    # ... and a click on it builds the conversation down to it and shows it marked.
    qtbot.mouseClick(reply.body.viewport(), Qt.LeftButton, pos=run_point(reply, 0))
    assert not chat.earlier and not chat.earlier_button.isVisibleTo(window)
    first = chat.messages[0]
    qtbot.wait(600)  # laid out, and past the time a page arriving holds the view in place
    assert first.text == QUESTION and visible(chat, first) and not visible(chat, reply)
    [mark] = first.body.extraSelections()
    assert mark.cursor.selectedText() == " quick brown fox"
    assert first.branches.isHidden()  # one version: ‹ n/m › set when built


def test_scrolling_to_the_top_builds_a_page_above_and_keeps_the_view_in_place(qtbot,
                                                                              open_window):
    window = open_window(OriginFactory(plain))
    window.resize(800, 600)
    long_conversation(window)
    chat = window.chat
    bar = chat.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    top = chat.messages[0]
    before, earlier = len(chat.messages), len(chat.earlier)

    def on_screen() -> int:  # where the first built message is, from the viewport's top
        return top.mapTo(chat.widget(), QPoint(0, 0)).y() - bar.value()

    bar.setValue(0)
    was = on_screen()
    qtbot.waitUntil(lambda: len(chat.messages) > before)
    assert len(chat.earlier) < earlier
    qtbot.wait(200)  # laid out
    assert abs(on_screen() - was) <= 8  # still where it was, the new page above it
    assert bar.value() > 1000


def test_a_search_hit_in_an_earlier_message_is_built_and_shown(qtbot, open_window):
    window = open_window(OriginFactory(plain))
    window.resize(800, 600)
    conversation = long_conversation(window)
    wanted = next(m for m in window.history.messages(conversation)
                  if m.text == "Question 2?")
    assert all(v.text != "Question 2?" for v in window.chat.messages)
    branches.open_at(window.session, conversation, wanted.id)
    view = next(v for v in window.chat.messages if v.text == "Question 2?")
    qtbot.wait(600)
    assert visible(window.chat, view)
    assert len(window.session.engine_messages()) == 2 * PAIRS
