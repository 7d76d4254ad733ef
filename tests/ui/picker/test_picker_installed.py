"""The picker's Installed tab: facts per model, role buttons that reach the window, delete with
confirmation (never the bundled model), and convert on a worker thread with progress."""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QMessageBox  # noqa: E402

from draftlight import paths  # noqa: E402
from draftlight.store.installed import BUNDLED_NAME, list_installed, register_download  # noqa: E402
from draftlight.ui.picker.rows import CHIPS_ROLE, SECONDARY_ROLE  # noqa: E402
from tests.support.hub_server import synthetic_gguf  # noqa: E402
from tests.support.picker import TIMEOUT_MS  # noqa: E402
from draftlight.modes import AUTO, DRAFT, NGRAM, OFF


@pytest.fixture
def downloaded():
    """A model as a finished download leaves it (a small valid GGUF, Q4_K_M)."""
    path = paths.models_dir() / "org" / "Tiny-GGUF" / "tiny-Q4_K_M.gguf"
    path.parent.mkdir(parents=True)
    path.write_bytes(synthetic_gguf(1 << 16, file_type=15))
    return register_download(repo="org/Tiny-GGUF", file=path.name, path=path, sha256=None,
                             commit=None)


@pytest.fixture
def panel(make_dialog, closed_port_url, downloaded):
    dialog = make_dialog(closed_port_url)
    dialog.show()
    dialog.tabs.setCurrentWidget(dialog.installed_panel)
    return dialog.installed_panel


def row(panel, name):
    return next(panel.list.item(i) for i in range(panel.list.count())
                if panel.list.item(i).text() == name)


def test_each_model_shows_size_weight_type_verify_and_path(panel, downloaded, bundled_model):
    tiny = row(panel, downloaded.name).data(SECONDARY_ROLE)
    assert tiny.startswith("65.5 kB  ·  Q4_K_M  ·  fast verify  ·  ")
    assert str(downloaded.path) in tiny
    assert row(panel, downloaded.name).data(CHIPS_ROLE)[0][0] == "hub"
    bundled = row(panel, BUNDLED_NAME)
    assert "Q4_1  ·  slow verify" in bundled.data(SECONDARY_ROLE)
    assert str(bundled_model) in bundled.data(SECONDARY_ROLE)
    assert bundled.data(CHIPS_ROLE)[0][0] == "bundled"


def test_role_buttons_ask_the_window_to_load_the_model(qtbot, panel, downloaded):
    dialog = panel.window()
    panel.select(downloaded.name)
    with qtbot.waitSignal(dialog.target_chosen) as target:
        qtbot.mouseClick(panel.target_button, Qt.LeftButton)
    assert target.args == [str(downloaded.path)]
    with qtbot.waitSignal(dialog.draft_chosen) as draft:
        qtbot.mouseClick(panel.draft_button, Qt.LeftButton)
    assert draft.args == [str(downloaded.path)]


def test_the_bundled_model_cannot_be_deleted(qtbot, panel, monkeypatch, bundled_model):
    monkeypatch.setattr(QMessageBox, "question", lambda *a: pytest.fail("asked to delete it"))
    panel.select(BUNDLED_NAME)
    assert not panel.delete_button.isEnabled()
    with qtbot.waitSignal(panel.message) as told:
        assert panel.delete_selected() is False  # even when called directly
    assert "bundled with the app" in told.args[0]
    assert bundled_model.exists() and BUNDLED_NAME in {m.name for m in list_installed()}


def test_delete_asks_first_and_removes_the_file(qtbot, panel, monkeypatch, downloaded):
    asked = []

    def answer(reply):
        def question(_parent, _title, text):
            asked.append(text)
            return reply
        return question

    panel.select(downloaded.name)
    assert panel.delete_button.isEnabled()
    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.No))
    assert panel.delete_selected() is False and downloaded.path.exists()
    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.Yes))
    with qtbot.waitSignal(panel.window().installed_changed):
        assert panel.delete_selected() is True
    assert "delete its file" in asked[0] and str(downloaded.path) in asked[0]
    assert not downloaded.path.exists()
    assert downloaded.name not in {m.name for m in panel.models_shown()}


def test_convert_runs_off_the_gui_thread_with_progress(qtbot, panel, monkeypatch, downloaded):
    from draftlight.store.convert import ConvertProgress
    from draftlight.store.installed import register_conversion
    seen = {"values": []}
    release = threading.Event()

    def fake_convert(model, type_name, *, on_progress, should_cancel):
        seen["thread"] = threading.current_thread()
        for done in range(1, 5):
            on_progress(ConvertProgress(done, 4, "quantizing"))
            time.sleep(0.05)
            if done == 2:
                release.wait(10)  # hold at 2 of 4 until the test has seen the bar
        dest = model.path.with_name(f"tiny.{type_name}.gguf")
        dest.write_bytes(model.path.read_bytes())
        return register_conversion(dest, model.name)

    monkeypatch.setattr("draftlight.ui.picker.installed_panel.convert_installed", fake_convert)
    panel.select(downloaded.name)
    conversion = panel.convert(downloaded, "Q8_0")
    qtbot.waitUntil(lambda: panel.progress.value() == 2 and panel.progress.maximum() == 4,
                    timeout=TIMEOUT_MS)
    assert panel.progress.isVisible() and not panel.convert_button.isEnabled()
    assert seen["thread"] is not threading.main_thread()
    release.set()
    with qtbot.waitSignal(panel.window().installed_changed, timeout=TIMEOUT_MS):
        pass
    conversion.join(5)
    assert not panel.progress.isVisible()
    assert panel.selected().source == "converted"
    assert panel.selected().converted_from == downloaded.name


def test_use_as_draft_loads_it_in_the_window(qtbot, open_window, monkeypatch, downloaded,
                                             clean_env):
    from draftlight.ui.picker.dialog import PickerDialog
    from tests.support.scripted_engine import ScriptedFactory

    def exec_and_choose(dialog):  # instead of waiting for a person: click "Use as draft"
        dialog.installed_panel.select(downloaded.name)
        qtbot.mouseClick(dialog.installed_panel.draft_button, Qt.LeftButton)
        dialog.done(0)
        return 0

    monkeypatch.setattr(PickerDialog, "exec", exec_and_choose)
    factory = ScriptedFactory(modes=(OFF, DRAFT, NGRAM, AUTO))
    window = open_window(factory)
    window.open_models()
    qtbot.waitUntil(lambda: window.draft_name == downloaded.path.name, timeout=5000)
    assert factory.drafts == [str(downloaded.path)] and len(factory.loads) == 1
    assert window.current_mode() == AUTO  # auto drafts with the model too: it stays auto


def test_open_folder_opens_the_models_folder(panel, monkeypatch, downloaded):
    from PySide6.QtGui import QDesktopServices
    opened = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url) or True)
    panel.select(downloaded.name)
    panel.folder_button.click()
    assert [url.toLocalFile() for url in opened] == [str(downloaded.path.parent)]


def test_a_hostile_file_is_one_row_saying_why_and_the_rest_are_listed(make_dialog,
                                                                       closed_port_url,
                                                                       downloaded):
    """Hostile headers (tests/support/hostile_gguf.py) among installed models: the tab still
    lists every model, the good one with its facts, each bad one as one row that says why."""
    from tests.support.hostile_gguf import (PAST_THE_KEYS, assert_names_an_offset_in,
                                            hostile_files, write_hostile)
    bad = sorted(set(hostile_files()) - PAST_THE_KEYS)
    folder = paths.models_dir() / "org" / "Evil-GGUF"
    for name in bad:
        path = write_hostile(folder, name)
        register_download(repo="org/Evil-GGUF", file=path.name, path=path, sha256=None,
                          commit=None)
    panel = make_dialog(closed_port_url).installed_panel
    assert [m.name for m in panel.models_shown()] == [m.name for m in list_installed()]
    assert row(panel, downloaded.name).data(SECONDARY_ROLE).startswith(
        "65.5 kB  ·  Q4_K_M  ·  fast verify  ·  ")
    for name in bad:
        facts = row(panel, name).data(SECONDARY_ROLE)
        assert f"unreadable: {name}.gguf: " in facts, facts
        assert_names_an_offset_in(facts, hostile_files()[name])


def test_add_a_gguf_lists_a_file_from_disk_and_refuses_what_is_not_one(panel, tmp_path):
    # issue 36, item 8: Installed had no way to add a model already on this computer
    told = []
    panel.message.connect(told.append)
    own = tmp_path / "my-model-Q8_0.gguf"
    own.write_bytes(synthetic_gguf(1 << 16, file_type=7))
    added = panel.add(str(own))
    assert added is not None and added.source == "local" and panel.selected() == added
    assert told[-1].startswith("Added ") and own.exists()
    before = panel.list.count()
    text = tmp_path / "notes.gguf"
    text.write_text("not a model")
    assert panel.add(str(text)) is None
    assert told[-1].startswith("Not added: ") and panel.list.count() == before
    assert panel.add(str(tmp_path / "gone.gguf")) is None and panel.list.count() == before
    assert panel.add_button.isVisible()


def test_convert_offers_only_the_types_a_model_is_not_in_yet(panel, downloaded, tmp_path):
    from draftlight.store.convert_installed import OFFERED_TYPES
    from draftlight.store.installed import register_conversion
    assert "Q4_K_M" not in panel.types_to_offer(downloaded)  # its own type
    copy = tmp_path / "tiny-Q8_0.gguf"
    copy.write_bytes(synthetic_gguf(1 << 16, file_type=7))
    register_conversion(copy, converted_from=downloaded.name)
    panel.refresh()
    offered = panel.types_to_offer(downloaded)
    assert "Q8_0" not in offered and offered == [t for t in OFFERED_TYPES
                                                 if t not in ("Q8_0", "Q4_K_M")]


def test_the_bundled_model_is_one_row_once_its_default_copy_exists(panel, bundled_model):
    from draftlight.store.default_model import DEFAULT_NAME, default_model_file
    names = [m.name for m in panel.models_shown()]
    assert BUNDLED_NAME in names and DEFAULT_NAME not in names  # no copy yet
    copy = default_model_file()
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_bytes(synthetic_gguf(1 << 16, file_type=7))
    panel.refresh()
    names = [m.name for m in panel.models_shown()]
    assert DEFAULT_NAME in names and BUNDLED_NAME not in names


def test_an_empty_selection_leaves_the_buttons_off(panel):
    panel.list.setCurrentRow(-1)
    panel._update_buttons()
    assert not panel.delete_button.isEnabled() and not panel.target_button.isEnabled()


def test_a_file_two_apps_keep_names_the_other_app_once():
    from pathlib import Path

    from draftlight.store.installed import InstalledModel
    from draftlight.ui.picker.installed_panel import also_apps
    model = InstalledModel("ollama:qwen2.5:7b", Path("/m"), "Ollama",
                           also=("lmstudio:Q/R/q.gguf", "ollama:qwen2.5:latest",
                                 "lmstudio:Q/S/q.gguf"))
    assert also_apps(model) == ["LM Studio"]
