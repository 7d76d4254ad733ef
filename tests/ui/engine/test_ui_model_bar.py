"""The model bar: installed models as target and draft choices, a draft of another vocabulary
disabled with the reason, a draft change that keeps the target loaded, load progress named
(the bar itself: test_ui_load_bar.py).
Scripted engine; the installed models are real GGUF files (the bundled one, a copy of it, and
a header-only GGUF of another tokenizer)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from draftlight.store.installed import add_local
from draftlight.ui.engine.model_bar import NGRAM as NGRAM_CHOICE  # the draft box's
from tests.support.scripted_engine import ScriptedFactory
from tests.support.window import send_and_wait
from tests.support.waiting import wait_until, window_state
from draftlight.modes import AUTO, DRAFT, NGRAM, OFF


@pytest.fixture
def installed(tmp_path, bundled_model):
    import gguf
    same = tmp_path / "smol-copy.gguf"
    shutil.copyfile(bundled_model, same)
    other = tmp_path / "other-vocab.gguf"
    writer = gguf.GGUFWriter(str(other), "gemma3")
    writer.add_tokenizer_model("llama")
    writer.add_token_list([f"t{i}" for i in range(300)])
    writer.add_tensor("x", np.zeros(4, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return add_local(same, name="smol-copy"), add_local(other, name="other-vocab")


def items(box) -> list[tuple[str, str, bool]]:
    model = box.model()
    return [(box.itemText(i), box.itemData(i), model.item(i).isEnabled())
            for i in range(box.count())]


def test_draft_choices_list_the_other_vocabulary_as_cross_vocabulary(qtbot, open_window,
                                                                     installed):
    same, other = installed
    window = open_window(ScriptedFactory(modes=(OFF, DRAFT, NGRAM, AUTO)))
    qtbot.waitUntil(lambda: window.model_scan.scanned, timeout=10_000)  # headers read off-thread
    bar = window.model_bar
    targets = [data for _, data, _ in items(bar.target_box)]
    assert "" in targets and str(same.path) in targets and str(other.path) in targets
    drafts = items(bar.draft_box)
    assert drafts[0][1] == "" and drafts[1][1] == NGRAM_CHOICE
    by_path = {data: (text, enabled) for text, data, enabled in drafts}
    assert by_path[str(same.path)] == ("smol-copy", True)
    text, enabled = by_path[str(other.path)]
    assert enabled and text == "other-vocab — cross-vocabulary"
    index = bar.draft_box.findData(str(other.path))
    assert "another tokenizer" in bar.draft_box.model().item(index).toolTip()


def test_choosing_a_draft_swaps_it_in_without_reloading_the_target(qtbot, open_window,
                                                                   installed):
    same, _ = installed
    factory = ScriptedFactory(modes=(OFF, DRAFT, NGRAM, AUTO))
    window = open_window(factory)
    window.set_mode(NGRAM)
    bar = window.model_bar
    bar.draft_box.activated.emit(bar.draft_box.findData(str(same.path)))
    qtbot.waitUntil(lambda: window.draft_name == "smol-copy.gguf", timeout=5000)
    assert factory.drafts == [str(same.path)] and len(factory.loads) == 1
    assert window.current_mode() == DRAFT  # from n-gram, a draft model means draft mode
    assert bar.draft_box.currentData() == str(same.path)
    send_and_wait(qtbot, window)
    assert factory.calls[-1][1] == DRAFT
    bar.draft_box.activated.emit(bar.draft_box.findData(NGRAM_CHOICE))
    qtbot.waitUntil(lambda: window.draft_name is None, timeout=5000)
    assert window.current_mode() == NGRAM and len(factory.loads) == 1


def test_loading_shows_a_progress_bar_with_the_model_name(qtbot, open_window, installed):
    same, _ = installed
    factory = ScriptedFactory()
    window = open_window(factory)
    assert window.progress.isHidden()
    seen = []
    window.models.status.connect(lambda _t: seen.append((window.progress.isVisible(),
                                                         window.progress.words,
                                                         window.progress.toolTip())))
    window.model_bar.target_box.activated.emit(
        window.model_bar.target_box.findData(str(same.path)))
    wait_until(qtbot, lambda: window.ready and not window.loading, "the models to load", 5000,
               lambda: window_state(window))
    whole = "Loading smol-copy.gguf (98.4 MB of weights)…"
    assert (True, whole, whole) in seen
    assert len(factory.loads) == 2 and factory.loads[-1].target_path == str(same.path)
    assert window.progress.isHidden()


def test_auto_stays_auto_when_a_draft_is_chosen(qtbot, open_window, installed):
    """Auto drafts with the model too: choosing one does not switch the mode (issue 36)."""
    same, _ = installed
    window = open_window(ScriptedFactory(modes=(OFF, DRAFT, NGRAM, AUTO)))
    window.set_mode(AUTO)
    window.model_bar.draft_box.activated.emit(window.model_bar.draft_box.findData(str(same.path)))
    qtbot.waitUntil(lambda: window.draft_name == "smol-copy.gguf", timeout=5000)
    assert window.current_mode() == AUTO and window.settings.mode == AUTO


def test_a_saved_draft_mode_is_the_mode_after_a_restart(qtbot, open_window, installed):
    """Draft mode saved with its draft model: the box waits for the draft to load instead of
    settling on n-gram, and replies run in draft mode (issue 36, item 6)."""
    from draftlight.settings import Settings
    same, _ = installed
    factory = ScriptedFactory(modes=(OFF, DRAFT, NGRAM, AUTO))
    window = open_window(factory, settings=Settings(mode=DRAFT, draft_path=str(same.path)),
                         wait=False)
    wait_until(qtbot, lambda: window.ready and window.draft_name == "smol-copy.gguf",
               "the target and its draft to load", 5000, lambda: window_state(window))
    assert window.current_mode() == DRAFT and window.settings.mode == DRAFT
    send_and_wait(qtbot, window)
    assert factory.calls[-1][1] == DRAFT


def test_the_draft_box_says_n_gram_for_n_gram_mode_before_and_after_the_engine_loads(qtbot):
    """It said "None" for n-gram mode before the engine told its modes, and "N-gram (no
    model)" for the same set-up after a restart (issue 54)."""
    from draftlight.ui.engine.model_bar import ModelBar
    bar = ModelBar()
    qtbot.addWidget(bar)
    for modes in ((), (OFF, NGRAM, AUTO)):
        bar.fill(None, None, NGRAM, modes, [], {})
        assert bar.draft_box.currentText() == "N-gram (no model)"
    bar.fill(None, None, AUTO, (OFF, NGRAM, AUTO), [], {})
    assert bar.draft_box.currentText() == "No draft model"  # auto drafts by n-gram without one


def test_a_chosen_model_gets_the_room_to_show_its_whole_name(qtbot):
    """Found models are named like "ollama:qwen2.5-coder:1.5b", what tells them apart last:
    in a wide window the drop-down shows the whole name; in a narrow one it makes do with 14
    characters, and a long name never makes the window wider than its user left it."""
    from PySide6.QtWidgets import QMainWindow
    from draftlight.ui.chat.main_toolbar import model_toolbar
    from draftlight.ui.engine.model_bar import NAME_WIDTH, ModelBar
    from PySide6.QtGui import QAction
    window = QMainWindow()
    qtbot.addWidget(window)
    bar = ModelBar()
    window.addToolBar(model_toolbar(window, bar, QAction("Settings", window)))
    box = bar.target_box
    box.addItem("Default model", "")
    box.fit()
    window.resize(1366, 300)
    window.show()
    qtbot.waitExposed(window)
    narrow, least = box.width(), window.minimumSizeHint().width()
    name = "ollama:qwen2.5-coder:1.5b"
    box.addItem(name, name)
    box.setCurrentIndex(1)
    qtbot.waitUntil(lambda: box.width() > narrow, timeout=2000)
    assert box.width() >= box.fontMetrics().horizontalAdvance(name) + 20  # and its arrow
    assert window.minimumSizeHint().width() == least  # a narrow window still fits the bar
    box.addItem("x" * 200, "long")
    box.setCurrentIndex(2)
    qtbot.waitUntil(lambda: box.width() == NAME_WIDTH, timeout=2000)  # cut, not given the bar
    box.setCurrentIndex(0)
    qtbot.waitUntil(lambda: box.width() == narrow, timeout=2000)
