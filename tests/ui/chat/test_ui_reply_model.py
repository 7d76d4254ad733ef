"""A reply names the model that wrote it (issue 75, point 8c): its card's title says
"default-model  ·  N-gram", not "Draftlight  ·  N-gram", while it is written, once it is done and
when its conversation is opened again (the name is kept with the reply's figures in the
history); a reply kept before names stay as it was. Scripted engine."""

from __future__ import annotations

from draftlight.modes import NGRAM
from draftlight.store.history import COMPLETE
from draftlight.ui.flash.reply_figures import ReplyFigures
from tests.support.scripted_engine import HeldScript, ScriptedFactory, SCRIPT
from tests.support.window import send_and_wait

TITLE = "default-model  ·  N-gram"  # the scripted factory's target is default-model.gguf


def test_a_reply_names_its_model_while_written_when_done_and_when_opened_again(qtbot,
                                                                              open_window):
    script = HeldScript(SCRIPT[:-1], SCRIPT[-1])
    window = open_window(ScriptedFactory(script))
    window.set_mode(NGRAM)
    try:
        window.send("hello")
        view = window.chat.messages[-1]
        qtbot.waitUntil(lambda: view.title.text() == TITLE + "  ·  writing…", timeout=5000)
        with qtbot.waitSignal(window.session.reply_finished, timeout=5000):
            script.release()
    finally:
        script.release()
    assert view.title.text() == TITLE
    conversation = window.session.conversation_id
    stored = window.history.messages(conversation)[-1].stats
    assert stored["model"] == "default-model"
    assert ReplyFigures.from_record(stored).model == "default-model"
    window.new_conversation()
    window.session.open_conversation(conversation)
    assert window.chat.messages[-1].title.text() == TITLE


def test_a_reply_kept_without_its_model_shows_as_before(qtbot, open_window):
    window = open_window()
    send_and_wait(qtbot, window)  # a conversation in the history
    conversation = window.session.conversation_id
    old = {"new_tokens": 3, "accepted": 1, "drafted": 2, "target_passes": 2, "mode": "ngram"}
    window.history.add_message(conversation, "user", "again")
    window.history.add_message(conversation, "assistant", "Old words.", stats=old,
                               status=COMPLETE, mode=str(NGRAM))
    window.new_conversation()
    window.session.open_conversation(conversation)
    assert window.chat.messages[-1].title.text() == "Draftlight  ·  N-gram"


def test_a_long_model_name_is_cut_in_the_middle_at_800x600(qtbot, open_window):
    from PySide6.QtWidgets import QLabel
    window = open_window()
    window.resize(800, 600)
    long_name = "ollama:hf.co/bartowski/Qwen2.5-Coder-7B-Instruct-GGUF-with-a-long-tail:Q4_K_M"
    window.session.model = long_name
    window.set_mode(NGRAM)
    view = send_and_wait(qtbot, window)
    qtbot.wait(50)
    shown = QLabel.text(view.title)  # what it draws (text() is the whole title)
    assert view.title.text() == f"{long_name}  ·  N-gram"
    assert shown.startswith("ollama:hf.co") and shown.endswith("N-gram") and "…" in shown
    assert view.title.toolTip() == view.title.text()
    assert view.width() <= window.chat.viewport().width()  # the card does not widen the chat
    assert QLabel.text(window.chat.messages[0].title) == "You"  # bold, and measured bold
    window.grab().save("/tmp/polish-reply-model-800x600.png")
