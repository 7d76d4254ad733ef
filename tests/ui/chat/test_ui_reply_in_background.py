"""A reply keeps running when you look elsewhere (issue 54, part 5): opening another
conversation, or a new one, while a reply streams lets it finish in its own conversation (the
list says it is writing); opened again, it shows what it has written and goes on; only Stop
stops it, and deleting its conversation."""

from __future__ import annotations

from draftlight.store.history import COMPLETE
from tests.support.scripted_engine import ScriptedFactory
from tests.support.window import send_and_wait

SCRIPT = [(f" w{i}", "draft" if i % 4 else "target", i // 4) for i in range(120)]
WHOLE = "".join(piece[0] for piece in SCRIPT)


def row_text(window, conversation_id: int) -> str:
    rows = window.conversations.list
    for i in range(rows.count()):
        item = rows.item(i)
        if item.data(0x0100) == conversation_id:  # Qt.UserRole
            from draftlight.ui.chat.conversation_list import WHEN_ROLE
            return item.data(WHEN_ROLE)
    raise AssertionError(f"no row for conversation {conversation_id}")


def test_a_reply_goes_on_in_its_conversation_while_another_is_open(qtbot, open_window):
    factory = ScriptedFactory(SCRIPT[:3])
    window = open_window(factory)
    send_and_wait(qtbot, window, "A first, short question")
    first = window.session.conversation_id
    window.new_conversation()
    factory.script, factory.delay = SCRIPT, 0.02
    window.send("A long answer, please")
    second = window.session.conversation_id
    view = window.chat.messages[-1]
    qtbot.waitUntil(lambda: len(view.text) > 20, timeout=5000)

    window.session.open_conversation(first)  # look elsewhere while it writes
    assert window.session.streaming
    qtbot.waitUntil(lambda: window.session.writes.flush() or True, timeout=1000)
    assert row_text(window, second) == "writing a reply…"
    qtbot.wait(300)
    window.session.open_conversation(second)  # back: it shows what it wrote, and goes on
    again = window.chat.messages[-1]
    assert again.streaming and again.text and WHOLE.startswith(again.text)
    qtbot.waitUntil(lambda: not window.session.streaming, timeout=20_000)
    assert again.text == WHOLE and again.status == COMPLETE
    window.session.writes.flush()
    stored = window.history.messages(second)[-1]
    assert stored.text == WHOLE and stored.status == COMPLETE
    assert row_text(window, second) != "writing a reply…"


def test_a_reply_finishes_unseen_and_is_kept_whole(qtbot, open_window):
    factory = ScriptedFactory(SCRIPT, delay=0.01)
    window = open_window(factory)
    window.send("A long answer, please")
    conversation = window.session.conversation_id
    qtbot.waitUntil(lambda: len(window.chat.messages[-1].text) > 10, timeout=5000)
    window.new_conversation()
    assert window.session.streaming and window.chat.messages == []
    qtbot.waitUntil(lambda: not window.session.streaming, timeout=20_000)
    window.session.writes.flush()
    stored = window.history.messages(conversation)[-1]
    assert stored.text == WHOLE and stored.status == COMPLETE
    assert window.chat.messages == []  # the new conversation stays as it was
