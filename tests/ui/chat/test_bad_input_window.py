"""Bad input in the window, on the real engine: each case ends in one clear message (a banner
or the status bar), the window stays usable, and nothing the user had is lost."""

from __future__ import annotations

import sqlite3

import pytest
from PySide6.QtCore import Qt

from draftlight.settings import Settings
from draftlight.store import memory
from draftlight.store.history import History, history_path
from draftlight.ui.chat.window_wiring import EMPTY_MESSAGE
from tests.support.real_window import cost_cache_file, real_window, shared_cost_cache  # noqa: F401
from tests.support.waiting import wait_until, window_state
from draftlight.modes import OFF

pytestmark = pytest.mark.slow
LOAD_MS = 120_000


def banner_text(qtbot, window) -> str:
    qtbot.waitUntil(lambda: not window.banner.isHidden(), timeout=LOAD_MS)
    return window.banner.label.text()


def status_messages(window) -> list[str]:
    seen: list[str] = []
    window.statusBar().messageChanged.connect(lambda text: text and seen.append(text))
    return seen


def send(qtbot, window, text, timeout=LOAD_MS):
    with qtbot.waitSignal(window.session.reply_finished, timeout=timeout) as blocker:
        window.composer.setPlainText(text)
        qtbot.mouseClick(window.send_button, Qt.LeftButton)
    return blocker.args[0]


def test_not_a_gguf_and_a_truncated_gguf(qtbot, real_window, tmp_path, bundled_model):
    bogus = tmp_path / "notes.gguf"
    bogus.write_text("just some text")
    window = real_window(Settings(target_path=str(bogus)))
    assert "Could not load the model: not a GGUF model file" in banner_text(qtbot, window)
    assert not window.send_button.isEnabled()

    cut = tmp_path / "cut.gguf"
    with open(bundled_model, "rb") as stream:
        cut.write_bytes(stream.read(5_000_000))
    window = real_window(Settings(target_path=str(cut)))
    assert "Could not load the model: llama.cpp could not load cut.gguf" in banner_text(
        qtbot, window)
    assert window.banner.action_button.text() == "Settings…"


def test_models_that_disappeared_since_the_last_run(qtbot, real_window, tmp_path):
    window = real_window(Settings(target_path=str(tmp_path / "gone.gguf")))
    assert f"model file not found: {tmp_path / 'gone.gguf'}" in banner_text(qtbot, window)

    # A vanished draft costs only the draft: the target loads and chat works.
    window = real_window(Settings(draft_path=str(tmp_path / "old-draft.gguf"), max_tokens=4))
    wait_until(qtbot, lambda: window.ready, "the models to load", LOAD_MS,
               lambda: window_state(window))
    assert "Could not use the draft model: model file not found" in banner_text(qtbot, window)
    assert window.draft_name is None and window.send_button.isEnabled()


def test_draft_with_another_vocabulary_drafts_through_text(qtbot, real_window, gemma_model):
    """Gemma's vocabulary is not SmolLM2's: it is used as a cross-vocabulary draft (issue 14)."""
    window = real_window(Settings(draft_path=str(gemma_model), n_ctx=512, max_tokens=4))
    wait_until(qtbot, lambda: window.ready, "the models to load", LOAD_MS,
               lambda: window_state(window))
    assert window.draft_name is not None
    assert send(qtbot, window, "Hi").status == "complete"


def test_a_pair_too_big_for_memory_is_refused_with_the_numbers(
        qtbot, real_window, monkeypatch, bundled_model):
    monkeypatch.setattr(memory, "system_memory",
                        lambda: memory.MemoryInfo(total=200 << 20, available=100 << 20))
    window = real_window(Settings(target_path=str(bundled_model), n_ctx=4096))
    text = banner_text(qtbot, window)
    assert "Could not load the model: not enough memory for SmolLM2-135M-Instruct.Q4_1.gguf" in text
    assert "needs about 485.2 MB" in text and "209.7 MB of RAM (104.9 MB available)" in text
    assert not window.ready


def test_empty_message_huge_paste_and_a_conversation_longer_than_the_context(
        qtbot, real_window):
    window = real_window(Settings(n_ctx=512, max_tokens=8, mode=OFF))
    wait_until(qtbot, lambda: window.ready, "the models to load", LOAD_MS,
               lambda: window_state(window))
    seen = status_messages(window)

    window.composer.setPlainText("   \n ")
    qtbot.mouseClick(window.send_button, Qt.LeftButton)
    assert seen == [EMPTY_MESSAGE] and window.chat.messages == []

    paste = "All work and no play makes Jack a dull boy. " * 4546  # 200,024 characters
    reply = send(qtbot, window, paste)
    assert reply.status == "interrupted" and reply.text == ""
    assert "tokens long" in window.banner.label.text()
    assert "does not fit the 512-token context" in window.banner.label.text()
    [conversation] = window.history.conversations()
    user = window.history.messages(conversation.id)[0]
    assert user.text == paste.strip()  # what the user wrote is kept, in full

    # The next message goes through: the huge one is now the oldest turn and is left out.
    reply = send(qtbot, window, "Say hello.")
    assert reply.status == "complete" and reply.text
    assert any("oldest message(s) were left out" in m for m in seen), seen


def test_settings_file_set_aside_is_shown(qtbot, shared_cost_cache):
    from draftlight.settings import load_settings, settings_path
    from draftlight.ui.chat.main_window import MainWindow
    settings_path().write_text("max_tokens = -5\n")
    settings, message = load_settings()
    history = History()
    window = MainWindow(settings, history, settings_message=message)
    qtbot.addWidget(window)
    window.show()
    try:
        text = banner_text(qtbot, window)
        assert "Settings file could not be used (max_tokens must be >= 1)" in text
        assert "renamed to settings.toml.bad-" in text
    finally:
        window.close()
        history.close()


def _damage_database(path, conversations=30):
    h = History(path)
    for i in range(conversations):
        cid = h.create_conversation(f"chat {i}")
        h.add_message(cid, "user", f"question {i} " + "x" * 2000)
        h.add_message(cid, "assistant", f"answer {i}")
    h.close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    index_root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = "
                            "'messages_by_conversation'").fetchone()[0]
    db.close()
    with open(path, "r+b") as stream:  # scribble over the index's root page
        stream.seek((index_root - 1) * page_size + 8)
        stream.write(b"\xff" * 64)


def test_damaged_history_is_shown_read_only_and_never_overwritten(qtbot, real_window):
    """Opened as the desktop opens it: checked in the background, the banner once it answers."""
    path = history_path()
    _damage_database(path)
    before = path.read_bytes()
    history = History(check_in_background=True)
    window = real_window(Settings(max_tokens=4), history)
    text = banner_text(qtbot, window)
    assert text.startswith("History is read-only: history.sqlite3 is damaged")
    assert window.banner.action_button.text() == "Start a new history"
    qtbot.waitUntil(lambda: window.conversations.list.count() == 30)  # what can be read
    wait_until(qtbot, lambda: window.ready, "the models to load", LOAD_MS,
               lambda: window_state(window))
    send(qtbot, window, "Hi")  # chatting works; nothing is written to the damaged file
    window.close()
    history.close()
    assert path.read_bytes() == before
