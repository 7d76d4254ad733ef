"""The empty chat's card (issue 36, first ten minutes): what the colours mean, Try it sends the
demo prompt, Get a real model opens the picker, and a note while the bundled toy model is the
one loaded."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt

from draftlight.settings import Settings
from draftlight.ui.chat.welcome_card import DEMO_PROMPT
from tests.support.scripted_engine import ScriptedFactory


def test_try_it_sends_the_demo_and_the_card_gives_way_to_the_chat(qtbot, open_window):
    window = open_window(ScriptedFactory())
    card = window.chat.welcome
    assert card.isVisible() and card.try_button.isEnabled()
    assert len(card.legend.swatches) == 4  # the colours' key, as in the toolbar
    with qtbot.waitSignal(window.session.reply_finished, timeout=10_000):
        qtbot.mouseClick(card.try_button, Qt.LeftButton)
    assert window.chat.messages[0].text == DEMO_PROMPT
    assert not card.isVisible()
    window.new_conversation()  # an empty chat again: the card again
    assert card.isVisible()


def test_try_it_waits_for_the_model(qtbot, open_window):
    window = open_window(ScriptedFactory(), wait=False)
    card = window.chat.welcome
    assert not window.ready and not card.try_button.isEnabled()
    qtbot.waitUntil(lambda: window.ready, timeout=10_000)
    assert card.try_button.isEnabled()


def test_the_toy_note_shows_only_while_the_bundled_model_is_loaded(qtbot, open_window, tmp_path):
    window = open_window(ScriptedFactory())
    card = window.chat.welcome
    assert card.toy_note.isVisible() and "SmolLM2-135M" in card.toy_note.text()
    own = tmp_path / "own.gguf"
    own.write_bytes(b"GGUF")
    other = open_window(ScriptedFactory(), settings=Settings(target_path=str(own)))
    assert other.chat.welcome.isVisible() and not other.chat.welcome.toy_note.isVisible()


def test_get_a_real_model_opens_the_picker(qtbot, open_window, monkeypatch):
    from draftlight.ui.picker.dialog import PickerDialog
    window = open_window(ScriptedFactory())
    opened = []
    monkeypatch.setattr(PickerDialog, "exec", lambda dialog: opened.append(dialog) or 0)
    qtbot.mouseClick(window.chat.welcome.model_button, Qt.LeftButton)
    assert len(opened) == 1 and opened[0].parent() is window
    opened[0].done(0)
    assert window.chat.welcome.model_button.isVisible() == window.models_action.isVisible()


def test_a_slow_load_shows_its_steps_with_their_times(qtbot, open_window):
    from tests.support.scripted_engine import HeldLoadFactory
    factory = HeldLoadFactory()
    window = open_window(factory, wait=False)
    card = window.chat.welcome
    qtbot.waitUntil(lambda: card.steps.isVisible(), timeout=5000)
    def so_far() -> float:  # the running step's time, as shown
        found = re.search(r"· ([0-9.]+) s so far$", card.steps.text())
        return float(found.group(1)) if found else 0.0

    qtbot.waitUntil(lambda: so_far() >= 1.0, timeout=5000)  # it counts while it runs
    assert "Loading default-model.gguf" in card.steps.text().splitlines()[-1]
    assert re.search(r"\(\d+ s\)$", window.status_label.text())
    factory.release()
    qtbot.waitUntil(lambda: window.ready, timeout=10_000)
    assert not card.steps.isVisible() and window.status_label.text().startswith("Ready")
