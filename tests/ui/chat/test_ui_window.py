"""The window with a scripted engine (fast, exact): streaming, highlight formats, modes, Stop,
coalesced repaints, restart, clean shutdown. The real-model versions are in test_ui_model.py.

The scripted engine (tests/support/scripted_engine.py) stands in for llama.cpp only; everything
under test (worker thread, session, views, history, settings) is the real code.
"""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QGuiApplication, QTextCursor
from PySide6.QtWidgets import QLabel

from draftlight.settings import Settings, load_settings
from draftlight.store.history import INTERRUPTED, History
from draftlight.ui.flash import highlight, markdown_render
from draftlight.ui.chat.settings_dialog import SettingsDialog
from draftlight.ui.engine.loaded import Stopped
from tests.support.scripted_engine import ScriptedFactory
from tests.support.window import send_and_wait
from tests.support.waiting import wait_until, window_state
from draftlight.modes import AUTO, DRAFT, NGRAM, OFF


def spans_with_text(view):
    doc = view.document
    out = []
    for start, end, tokens, coloured in highlight.highlighted_ranges(doc):
        cursor = QTextCursor(doc)
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.KeepAnchor)
        out.append((cursor.selectedText(), tokens, coloured))
    return out


def test_reply_streams_in_with_highlight_formats_on_the_accepted_runs(qtbot, open_window):
    window = open_window()
    view = send_and_wait(qtbot, window)
    assert view.text == "Hello world! Bye."
    assert view.runs == [[5, 11, 2], [12, 16, 1]]
    # Fragments carrying the run property are exactly the draft runs, coloured; the rest plain.
    assert spans_with_text(view) == [(" world", 2, True), (" Bye", 1, True)]
    doc = view.document
    for position in (1, 11):  # inside "Hello", on "!"
        cursor = QTextCursor(doc)
        cursor.setPosition(position + 1)
        fmt = cursor.charFormat()
        assert not fmt.hasProperty(highlight.RUN_TOKENS)
        assert fmt.background().style() == Qt.NoBrush
    # Longer runs are painted stronger.
    assert highlight.run_colour(2).alpha() > highlight.run_colour(1).alpha()
    assert "accepted 3 of 3 drafted tokens" in view.footer.text()


def test_highlights_are_there_while_streaming_not_only_at_the_end(qtbot, open_window):
    script = [("a", "target", 0)] + [(f" d{i}", "draft", 1) for i in range(5)] + [
        (" t", "target", 1)] + [(" x", "target", i) for i in range(2, 60)]
    window = open_window(ScriptedFactory(script, delay=0.01))
    window.send("go")
    view = window.chat.messages[-1]
    qtbot.waitUntil(lambda: len(view.text) > 20, timeout=5000)
    assert window.session.streaming
    assert (" d0 d1 d2 d3 d4", 5, True) in spans_with_text(view)
    with qtbot.waitSignal(window.session.reply_finished, timeout=5000):
        pass


def test_markdown_code_block_keeps_highlights_and_has_a_copy_link(qtbot, open_window):
    script = [("Use **this**:\n\n```python\n", "target", 0), ("print(", "draft", 1),
              ("1)", "draft", 1), ("\n```\n", "target", 1)]
    window = open_window(ScriptedFactory(script))
    view = send_and_wait(qtbot, window)
    doc = view.document
    assert "**" not in doc.toPlainText() and "this" in doc.toPlainText()
    assert ("print(1)", 2, True) in spans_with_text(view)
    code = next(b for b in _blocks(doc) if b.text() == "print(1)")
    assert markdown_render.is_code_block(code)
    assert code.begin().fragment().charFormat().fontFixedPitch()
    assert view.code_blocks == ["print(1)"]
    view.body.anchorClicked.emit(QUrl("copy-code:0"))
    assert QGuiApplication.clipboard().text() == "print(1)"


def _blocks(doc):
    block = doc.begin()
    while block.isValid():
        yield block
        block = block.next()


def test_modes_switch_between_messages_without_reloading(qtbot, open_window):
    factory = ScriptedFactory(modes=(OFF, DRAFT, NGRAM, AUTO))
    window = open_window(factory)
    labels = [window.toolbar.mode_box.itemText(i) for i in range(window.toolbar.mode_box.count())]
    assert labels == ["Off", "Draft model", "N-gram", "Auto"]
    assert window.current_mode() == AUTO  # the default
    draft_item = window.toolbar.mode_box.model().item(window.toolbar.mode_box.index_of(DRAFT))
    assert not draft_item.isEnabled()  # no draft model
    send_and_wait(qtbot, window, "one")
    window.set_mode(OFF)
    send_and_wait(qtbot, window, "two")
    window.set_mode(NGRAM)
    view = send_and_wait(qtbot, window, "three")
    assert [mode for _, mode in factory.calls] == [AUTO, OFF, NGRAM]
    assert len(factory.loads) == 1
    assert "N-gram" in view.title.text()
    # The conversation so far goes to the engine each time.
    messages, _ = factory.calls[-1]
    assert [m["role"] for m in messages] == ["user", "assistant"] * 2 + ["user"]


def test_stop_ends_generation_within_250_ms_and_keeps_the_partial_reply(qtbot, open_window):
    script = [(f" w{i}", "draft" if i % 4 else "target", i // 4) for i in range(2000)]
    window = open_window(ScriptedFactory(script, delay=0.02))
    window.send("long please")
    view = window.chat.messages[-1]
    qtbot.waitUntil(lambda: len(view.text) > 30, timeout=5000)
    with qtbot.waitSignal(window.engine.worker.reply, timeout=2000,
                           check_params_cb=lambda _, event: isinstance(event, Stopped)):
        started = time.perf_counter()
        qtbot.mouseClick(window.stop_button, Qt.LeftButton)
    assert time.perf_counter() - started < 0.25
    qtbot.waitUntil(lambda: not window.session.streaming, timeout=1000)
    assert view.status == INTERRUPTED and "interrupted" in view.title.text()
    stored = window.history.messages(window.session.conversation_id)[-1]
    assert stored.status == INTERRUPTED
    assert stored.text == view.text and 0 < len(stored.text) < len("".join(s[0] for s in script))
    assert window.send_button.isEnabled()


def test_repaints_are_coalesced_to_about_30_per_second(qtbot, open_window):
    script = [(" x", "draft" if i % 2 else "target", i // 2) for i in range(3000)]
    window = open_window(ScriptedFactory(script, delay=0.0002))
    started = time.perf_counter()
    send_and_wait(qtbot, window, timeout=30_000)
    elapsed = time.perf_counter() - started
    assert window.session.flush_count <= elapsed * 31 + 2
    assert window.chat.messages[-1].text == " x" * 3000


def test_close_and_reopen_brings_back_conversation_highlights_and_settings(qtbot, open_window):
    window = open_window()
    send_and_wait(qtbot, window, "remember me")
    window.set_mode(OFF)
    window.toolbar.highlight_action.setChecked(False)
    window.close()
    assert not window.engine.thread.isRunning()

    settings, message = load_settings()
    assert message is None and settings.mode == OFF and settings.show_highlights is False
    window = open_window(settings=settings)
    assert window.current_mode() == OFF
    assert not window.toolbar.highlight_action.isChecked()
    items = window.conversations.list
    assert items.count() == 1 and items.item(0).text() == "remember me"
    qtbot.mouseClick(items.viewport(), Qt.LeftButton,
                     pos=items.visualItemRect(items.item(0)).center())
    assert [v.role for v in window.chat.messages] == ["user", "assistant"]
    reply = window.chat.messages[1]
    assert spans_with_text(reply) == [(" world", 2, False), (" Bye", 1, False)]
    window.toolbar.highlight_action.setChecked(True)
    assert spans_with_text(reply) == [(" world", 2, True), (" Bye", 1, True)]
    assert "accepted 3 of 3 drafted tokens" in reply.footer.text()


def test_closing_during_a_reply_shuts_the_worker_down_cleanly(qtbot, open_window):
    script = [(f" w{i}", "target", i) for i in range(5000)]
    factory = ScriptedFactory(script, delay=0.01)
    window = open_window(factory)
    window.send("go on")
    qtbot.waitUntil(lambda: len(window.chat.messages[-1].text) > 10, timeout=5000)
    gui_thread = threading.get_ident()
    started = time.perf_counter()
    window.close()
    assert time.perf_counter() - started < 1.0
    assert not window.engine.thread.isRunning()
    assert factory.engines[0].closed
    assert factory.closed_on and factory.closed_on[0] != gui_thread
    with _history() as history:
        [conversation] = history.conversations()
        reply = history.messages(conversation.id)[-1]
        assert reply.status == INTERRUPTED and reply.text.startswith(" w0 w1")


class _history:
    def __enter__(self):
        self.h = History()
        return self.h

    def __exit__(self, *exc):
        self.h.close()


def test_load_failure_is_one_line_in_the_window_and_settings_still_work(qtbot, open_window):
    factory = ScriptedFactory(fail_load=True)
    window = open_window(factory, settings=Settings(target_path="/nowhere/model.gguf"),
                         wait=False)
    qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=5000)
    assert "model file not found: /nowhere/model.gguf" in window.banner.label.text()
    assert not window.send_button.isEnabled() and window.progress.isHidden()
    factory.fail_load = False
    window.apply_settings(Settings(target_path="/elsewhere/model.gguf"))
    wait_until(qtbot, lambda: window.ready, "the models to load", 5000,
               lambda: window_state(window))
    assert factory.loads[-1].target_path == "/elsewhere/model.gguf"
    assert window.send_button.isEnabled()


def test_changing_the_draft_swaps_it_without_reloading_the_target(qtbot, open_window):
    factory = ScriptedFactory()
    window = open_window(factory)
    current = window.settings
    window.apply_settings(Settings(**{**current.__dict__, "draft_path": "/m/draft.gguf"}))
    qtbot.waitUntil(lambda: window.draft_name == "draft.gguf", timeout=5000)
    assert factory.drafts == ["/m/draft.gguf"] and len(factory.loads) == 1
    assert window.toolbar.mode_box.model().item(window.toolbar.mode_box.index_of(DRAFT)).isEnabled()
    window.set_mode(DRAFT)
    send_and_wait(qtbot, window)
    assert factory.calls[-1][1] == DRAFT


def test_enter_sends_and_shift_enter_adds_a_line(qtbot, open_window):
    window = open_window()
    qtbot.keyClicks(window.composer, "line one")
    qtbot.keyClick(window.composer, Qt.Key_Return, Qt.ShiftModifier)
    qtbot.keyClicks(window.composer, "line two")
    assert window.composer.toPlainText() == "line one\nline two"
    with qtbot.waitSignal(window.session.reply_finished, timeout=5000):
        qtbot.keyClick(window.composer, Qt.Key_Return)
    assert window.chat.messages[0].text == "line one\nline two"
    assert window.composer.toPlainText() == ""


def test_regenerate_replaces_the_last_reply_and_keeps_the_old_one_as_a_branch(qtbot,
                                                                              open_window):
    factory = ScriptedFactory()
    window = open_window(factory)
    send_and_wait(qtbot, window)
    with qtbot.waitSignal(window.session.reply_finished, timeout=5000):
        qtbot.mouseClick(window.regenerate_button, Qt.LeftButton)
    assert [v.role for v in window.chat.messages] == ["user", "assistant"]
    shown = window.history.messages(window.session.conversation_id)
    assert [m.role for m in shown] == ["user", "assistant"]
    assert factory.calls[0][0] == factory.calls[1][0]
    # the replaced reply is kept, a sibling of the new one (issue 40, part 1)
    old, new = window.history.siblings(shown[1].id)
    assert new == shown[1].id and old < new


def test_regenerate_is_off_where_there_is_nothing_to_regenerate(qtbot, open_window):
    window = open_window()
    assert not window.regenerate_button.isEnabled()  # an empty chat
    send_and_wait(qtbot, window)
    assert window.regenerate_button.isEnabled()
    window.new_conversation()  # a new, empty conversation: nothing to regenerate again
    assert not window.regenerate_button.isEnabled()
    window.session.open_conversation(window.history.conversations()[0].id)
    assert window.regenerate_button.isEnabled()


def test_gpu_layers_are_disabled_with_a_note_on_cpu_builds(qtbot):
    dialog = SettingsDialog(Settings(), gpu_offload=False)
    qtbot.addWidget(dialog)
    assert not dialog.target_gpu.isEnabled() and not dialog.draft_gpu.isEnabled()
    assert dialog.findChild(QLabel, "gpu-note") is not None
    dialog.temperature.setValue(0.8)
    dialog.random_seed.setChecked(False)
    dialog.seed.setValue(42)
    result = dialog.result_settings()
    assert (result.temperature, result.seed) == (0.8, 42)
    gpu_dialog = SettingsDialog(Settings(), gpu_offload=True)
    qtbot.addWidget(gpu_dialog)
    assert gpu_dialog.target_gpu.isEnabled()
