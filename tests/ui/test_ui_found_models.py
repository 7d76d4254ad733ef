"""Models other apps keep, in the window (issue 38): a model Ollama pulled is in the model bar's
Target list and the picker's Installed tab, named as Ollama names it, usable, never deletable
from here."""

from __future__ import annotations

from draftlight.store.found_models import forget_found
from tests.support.other_apps import ollama_pull
from tests.support.scripted_engine import ScriptedFactory


def pulled(root, name: str, tag: str, size: int = 1 << 14, vocab: int = 1000):
    return ollama_pull(root, name, tag, size=size, vocab=vocab)


def test_an_ollama_model_is_a_target_in_the_window_and_in_the_picker(qtbot, open_window,
                                                                     tmp_path, monkeypatch,
                                                                     make_dialog,
                                                                     closed_port_url):
    root = tmp_path / "ollama"
    blob = pulled(root, "qwen2.5", "7b")
    monkeypatch.setenv("OLLAMA_MODELS", str(root))
    forget_found()
    factory = ScriptedFactory()
    window = open_window(factory)
    box = window.model_bar.target_box
    index = box.findText("ollama:qwen2.5:7b")
    assert index > 0 and box.itemData(index) == str(blob)
    box.setCurrentIndex(index)
    box.activated.emit(index)  # as a click on the entry does
    qtbot.waitUntil(lambda: window.ready and factory.loads[-1].target_path == str(blob),
                    timeout=10_000)

    dialog = make_dialog(closed_port_url)
    panel = dialog.installed_panel
    panel.select("ollama:qwen2.5:7b")
    assert panel.selected().source == "Ollama" and panel.target_button.isEnabled()
    assert not panel.delete_button.isEnabled()
    assert "Ollama keeps this model" in panel.delete_button.toolTip()
    assert blob.exists()
    forget_found()


def test_a_target_that_loads_alone_is_offered_the_draft_already_here(qtbot, open_window,
                                                                     tmp_path, monkeypatch):
    from PySide6.QtCore import Qt

    from draftlight.settings import Settings
    root = tmp_path / "ollama"
    target = pulled(root, "qwen2.5", "7b", size=400_000)
    draft = pulled(root, "qwen2.5", "0.5b", size=60_000)
    pulled(root, "other", "tiny", size=50_000, vocab=3000)  # another vocabulary: not offered
    monkeypatch.setenv("OLLAMA_MODELS", str(root))
    forget_found()
    factory = ScriptedFactory()
    window = open_window(factory, settings=Settings(target_path=str(target)))
    banner = window.banner
    qtbot.waitUntil(lambda: banner.isVisible(), timeout=5000)
    assert banner.label.text().startswith("ollama:qwen2.5:0.5b can draft for ollama:qwen2.5:7b")
    assert banner.action_button.text() == "Use it"
    qtbot.mouseClick(banner.action_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: factory.drafts == [str(draft)], timeout=5000)
    assert window.settings.target_path == str(target)  # the target stays
    forget_found()


def test_no_offer_for_the_default_model_or_without_a_fitting_draft(qtbot, open_window, tmp_path,
                                                                   monkeypatch):
    from draftlight.settings import Settings
    root = tmp_path / "ollama"
    target = pulled(root, "qwen2.5", "7b", size=400_000)
    pulled(root, "qwen2.5", "3b", size=200_000)  # same vocabulary, but half its size
    monkeypatch.setenv("OLLAMA_MODELS", str(root))
    forget_found()
    for settings in (Settings(), Settings(target_path=str(target))):
        window = open_window(ScriptedFactory(), settings=settings)
        qtbot.wait(100)
        assert not window.banner.isVisible()
    forget_found()
