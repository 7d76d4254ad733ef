"""Models other apps keep, in the window (issue 38): a model Ollama pulled is in the model bar's
Target list and the picker's Installed tab, named as Ollama names it, usable, never deletable
from here."""

from __future__ import annotations

import hashlib

from draftlight.store.found_models import forget_found
from tests.support.other_apps import ollama_pull
from tests.support.real_window import cost_cache_file, real_window, shared_cost_cache  # noqa: F401
from tests.support.scripted_engine import ScriptedFactory
from tests.support.window import send_and_wait, wait_ready
from draftlight.modes import DRAFT


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
    qtbot.waitUntil(lambda: window.model_scan.scanned, timeout=10_000)  # found off the GUI thread
    box = window.model_bar.target_box
    index = box.findText("ollama:qwen2.5:7b")
    assert index > 0 and box.itemData(index) == "ollama:qwen2.5:7b"  # kept by its reference
    box.setCurrentIndex(index)
    box.activated.emit(index)  # as a click on the entry does
    qtbot.waitUntil(lambda: window.ready and factory.loads[-1].target_path == str(blob),
                    timeout=10_000)
    assert window.settings.target_path == "ollama:qwen2.5:7b"
    assert window.windowTitle() == "Draftlight — ollama:qwen2.5:7b"  # not sha256-…
    assert "ollama:qwen2.5:7b" in window.status_label.text()

    dialog = make_dialog(closed_port_url)
    panel = dialog.installed_panel
    panel.select("ollama:qwen2.5:7b")
    assert panel.selected().source == "Ollama" and panel.target_button.isEnabled()
    from draftlight.ui.picker.rows import CHIPS_ROLE
    chips = [text for text, _ in panel.list.currentItem().data(CHIPS_ROLE)]
    assert chips == ["Ollama", "fits"]  # a 16 kB model fits anywhere
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
        qtbot.waitUntil(lambda: window.model_scan.scanned, timeout=10_000)
        qtbot.wait(100)
        assert not window.banner.isVisible()
    forget_found()


def test_a_pair_found_in_ollama_is_used_in_one_click_and_drafts_a_real_reply(
        qtbot, real_window, bundled_model, tmp_path_factory, tmp_path, monkeypatch):
    """Issue 38's window check, on llama.cpp: Ollama holds the bundled SmolLM2 and a tiny model
    of its vocabulary (random weights, ~9 MB); the window offers the tiny one as the draft, one
    click loads it, and the reply is drafted by it; neither file changes."""
    from PySide6.QtCore import Qt

    from draftlight.settings import Settings
    from tests.support.synthetic_models import cached_model
    tiny = cached_model("qwen3", "small", tmp_path_factory.mktemp("tiny-draft"))
    root = tmp_path / "ollama"
    target = ollama_pull(root, "smollm2", "135m", data=bundled_model.read_bytes())
    draft = ollama_pull(root, "tiny-drafter", "latest", data=tiny.read_bytes())
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (target, draft)}
    monkeypatch.setenv("OLLAMA_MODELS", str(root))
    forget_found()
    window = real_window(Settings(target_path=str(target), n_ctx=512, n_threads=1,
                                  max_tokens=12, temperature=0.0))
    wait_ready(qtbot, window)
    banner = window.banner
    qtbot.waitUntil(banner.isVisible, timeout=30_000)
    assert banner.label.text().startswith(
        "ollama:tiny-drafter:latest can draft for ollama:smollm2:135m"), banner.label.text()
    qtbot.mouseClick(banner.action_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: window.draft_name is not None and not window.loading,
                    timeout=60_000)
    window.set_mode(DRAFT)
    view = send_and_wait(qtbot, window, "Say hello.", timeout=120_000)
    assert view.text.strip() and view.figures.stats.drafted > 0, view.stats
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in before} == before
    forget_found()


def test_a_model_pulled_while_the_window_is_open_shows_up_on_return_and_on_refresh(
        qtbot, open_window, tmp_path, monkeypatch, make_dialog, closed_port_url):
    """Found off the GUI thread (issue 38, part 5): a model pulled in Ollama while Draftlight
    runs is listed when the window comes back to the front, and at once by the picker's
    Refresh; a models folder that is missing is silent."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication

    from draftlight.ui.chat import model_scan
    root = tmp_path / "ollama"
    pulled(root, "qwen2.5", "7b")
    monkeypatch.setenv("OLLAMA_MODELS", str(root))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "not-mounted"))
    monkeypatch.setattr(model_scan, "RESCAN_SECONDS", 0.0)
    forget_found()
    window = open_window()
    qtbot.waitUntil(lambda: window.model_scan.scanned, timeout=10_000)
    box = window.model_bar.target_box
    assert box.findText("ollama:qwen2.5:7b") > 0 and box.findText("ollama:gemma3:1b") < 0
    pulled(root, "gemma3", "1b")  # `ollama pull gemma3:1b` in a terminal meanwhile
    QGuiApplication.instance().applicationStateChanged.emit(Qt.ApplicationActive)
    qtbot.waitUntil(lambda: box.findText("ollama:gemma3:1b") > 0, timeout=10_000)
    assert not window.banner.isVisible()

    dialog = make_dialog(closed_port_url)
    panel = dialog.installed_panel
    pulled(root, "llama3.2", "1b")
    assert "ollama:llama3.2:1b" not in [m.name for m in panel.models_shown()]
    qtbot.mouseClick(panel.refresh_button, Qt.LeftButton)
    assert "ollama:llama3.2:1b" in [m.name for m in panel.models_shown()]
    forget_found()


def test_a_folder_added_in_settings_is_listed_and_removed_again(qtbot, open_window, tmp_path):
    """Settings ▸ Models ▸ Model folders (issue 38, part 1): the folder's GGUF files join the
    model bar's lists when the settings are applied, and leave with the folder."""
    from draftlight.ui.chat.settings_dialog import SettingsDialog
    from tests.support.hub_server import synthetic_gguf
    folder = tmp_path / "my-models"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "mine-Q4_0.gguf").write_bytes(synthetic_gguf(1 << 12))
    window = open_window()
    qtbot.waitUntil(lambda: window.model_scan.scanned, timeout=10_000)
    box = window.model_bar.target_box
    name = "folder:my-models/sub/mine-Q4_0.gguf"
    assert box.findText(name) < 0
    dialog = SettingsDialog(window.settings, gpu_offload=False, parent=window)
    assert dialog.model_folders.add(folder) and not dialog.model_folders.add(folder)
    window.apply_settings(dialog.result_settings())
    assert window.settings.added_model_folders() == [folder]
    qtbot.waitUntil(lambda: box.findText(name) > 0, timeout=10_000)

    dialog = SettingsDialog(window.settings, gpu_offload=False, parent=window)
    dialog.model_folders.list.setCurrentRow(0)
    dialog.model_folders.remove_selected()
    window.apply_settings(dialog.result_settings())
    qtbot.waitUntil(lambda: box.findText(name) < 0, timeout=10_000)
    assert (folder / "sub" / "mine-Q4_0.gguf").exists()
    forget_found()


def test_settings_take_a_found_model_by_its_name(qtbot, open_window, tmp_path, monkeypatch):
    """A reference typed in Settings (as `models list` shows it) loads that model's file."""
    from draftlight.settings import Settings
    root = tmp_path / "ollama"
    target = pulled(root, "qwen2.5", "7b", size=400_000)
    draft = pulled(root, "qwen2.5", "0.5b", size=60_000)
    monkeypatch.setenv("OLLAMA_MODELS", str(root))
    forget_found()
    factory = ScriptedFactory()
    open_window(factory, settings=Settings(target_path="ollama:qwen2.5:7b",
                                           draft_path="ollama:qwen2.5:0.5b"))
    assert factory.loads[-1].target_path == str(target)
    assert factory.drafts == [str(draft)]
    forget_found()


def test_a_found_target_is_restored_by_its_reference_and_follows_its_tag(qtbot, open_window,
                                                                         tmp_path, monkeypatch):
    """Settings keep "ollama:qwen2.5:7b", not the blob: when Ollama updates the tag (a new blob,
    the old one removed), the next start loads the new file; a reference that names nothing
    any more says so by its name (issue 54, part 2)."""
    from draftlight.settings import Settings
    root = tmp_path / "ollama"
    old = pulled(root, "qwen2.5", "7b")
    monkeypatch.setenv("OLLAMA_MODELS", str(root))
    forget_found()
    factory = ScriptedFactory()
    window = open_window(factory, settings=Settings(target_path="ollama:qwen2.5:7b"))
    assert factory.loads[-1].target_path == str(old)
    assert window.model_bar.target_box.currentText() == "ollama:qwen2.5:7b"
    window.close()

    old.unlink()  # `ollama pull` again: the tag names another blob now
    new = ollama_pull(root, "qwen2.5", "7b", size=1 << 15)
    assert new != old
    forget_found()
    window = open_window(factory, settings=Settings(target_path="ollama:qwen2.5:7b"))
    assert factory.loads[-1].target_path == str(new)
    assert window.windowTitle() == "Draftlight — ollama:qwen2.5:7b"

    new.unlink()
    (root / "manifests").rename(tmp_path / "gone")  # removed from Ollama
    forget_found()
    factory.fail_load = True  # as loading a missing file does: the error names the reference
    window = open_window(factory, settings=Settings(target_path="ollama:qwen2.5:7b"), wait=False)
    qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=5000)
    assert "ollama:qwen2.5:7b" in window.banner.label.text()
    forget_found()
