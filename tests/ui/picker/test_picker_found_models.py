"""Models another app keeps, chosen in the picker (issue "The window, third round", item 1):
"Use as target" and "Use as draft" keep an Ollama model by its reference, as the model bar
does, so the settings file, the title and the status bar name it (never its blob's
sha256-…), and it is the same model after a restart; Settings' Browse… into Ollama's blobs
keeps the reference too."""

from __future__ import annotations

import tomllib

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402

from draftlight.settings import Settings, load_settings, settings_path  # noqa: E402
from draftlight.store.found_models import forget_found  # noqa: E402
from draftlight.modes import AUTO, DRAFT, NGRAM, OFF  # noqa: E402
from tests.support.other_apps import ollama_pull  # noqa: E402
from tests.support.scripted_engine import ScriptedFactory  # noqa: E402

TARGET, DRAFT_MODEL = "ollama:qwen2.5-coder:1.5b", "ollama:qwen2.5-coder:0.5b"


@pytest.fixture
def ollama(tmp_path, monkeypatch, closed_port_url, clean_env):
    """Ollama's store with qwen2.5-coder 1.5b and 0.5b, as `ollama pull` leaves them; the hub
    offline. {reference: blob path}."""
    root = tmp_path / "ollama"
    blobs = {TARGET: ollama_pull(root, "qwen2.5-coder", "1.5b", size=400_000),
             DRAFT_MODEL: ollama_pull(root, "qwen2.5-coder", "0.5b", size=60_000)}
    monkeypatch.setenv("OLLAMA_MODELS", str(root))
    monkeypatch.setenv("DRAFTLIGHT_HF_ENDPOINT", closed_port_url)
    forget_found()
    yield blobs
    forget_found()


def click_in_picker(qtbot, monkeypatch, *clicks):
    """PickerDialog.exec, instead of waiting for a person: for each (model name, button
    attribute) of `clicks`, select the model in Installed and click that button."""
    from draftlight.ui.picker.dialog import PickerDialog

    def exec_and_click(dialog):
        for name, button in clicks:
            dialog.installed_panel.select(name)
            qtbot.mouseClick(getattr(dialog.installed_panel, button), Qt.LeftButton)
        dialog.done(0)
        dialog._requests.shutdown(wait=True)  # its hub check ends inside this test
        return 0

    monkeypatch.setattr(PickerDialog, "exec", exec_and_click)


def saved_models() -> tuple[str | None, str | None]:
    with open(settings_path(), "rb") as stream:
        saved = tomllib.load(stream)
    return saved.get("target_path"), saved.get("draft_path")


def test_use_as_target_and_draft_keep_the_reference_and_name_it_after_a_restart(
        qtbot, open_window, monkeypatch, ollama):
    click_in_picker(qtbot, monkeypatch, (TARGET, "target_button"),
                    (DRAFT_MODEL, "draft_button"))
    factory = ScriptedFactory(modes=(OFF, DRAFT, NGRAM, AUTO))
    window = open_window(factory)
    window.open_models()
    qtbot.waitUntil(lambda: window.ready and not window.loading and window.draft_name
                    and factory.loads[-1].target_path == str(ollama[TARGET]), timeout=10_000)
    assert factory.drafts[-1] == str(ollama[DRAFT_MODEL])  # the blobs are what loads
    assert saved_models() == (TARGET, DRAFT_MODEL)  # ... never what Settings keep
    assert window.windowTitle() == f"Draftlight — {TARGET}"
    assert window.draft_name == DRAFT_MODEL
    status = window.status_label.text()
    assert TARGET in status and DRAFT_MODEL in status and "sha256" not in status, status
    assert window.model_bar.target_box.currentText() == TARGET
    window.close()

    again = open_window(ScriptedFactory(modes=(OFF, DRAFT, NGRAM, AUTO)),
                        settings=load_settings()[0])  # a restart
    qtbot.waitUntil(lambda: bool(again.ready and not again.loading and again.draft_name),
                    timeout=10_000)
    assert again.windowTitle() == f"Draftlight — {TARGET}"
    assert again.draft_name == DRAFT_MODEL and "sha256" not in again.status_label.text()


def test_a_blob_path_kept_by_an_older_version_is_named_as_ollama_names_it(
        qtbot, open_window, ollama):
    window = open_window(ScriptedFactory(), settings=Settings(target_path=str(ollama[TARGET])))
    assert window.windowTitle() == f"Draftlight — {TARGET}"
    assert TARGET in window.status_label.text()


def test_settings_browse_into_ollamas_blobs_keeps_the_reference(qtbot, ollama, tmp_path):
    from draftlight.ui.chat.settings_dialog import SettingsDialog
    own = tmp_path / "mine-Q8_0.gguf"
    own.write_bytes(b"GGUF")
    older = Settings(target_path=str(own))
    dialog = SettingsDialog(older, gpu_offload=False)
    qtbot.addWidget(dialog)
    assert dialog.result_settings().target_path == str(own)  # untouched: stays as it was
    dialog.draft.edit.setText(str(ollama[DRAFT_MODEL]))  # as Browse… leaves it
    assert dialog.result_settings().draft_path == DRAFT_MODEL
    dialog.target.edit.setText(str(ollama[TARGET]))
    assert dialog.result_settings().target_path == TARGET
