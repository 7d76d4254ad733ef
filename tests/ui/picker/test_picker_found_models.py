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
from tests.support.picker import TIMEOUT_MS  # noqa: E402
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
    qtbot.waitUntil(lambda: bool(window.ready and not window.loading and window.draft_name
                                 and factory.loads[-1].target_path == str(ollama[TARGET])),
                    timeout=10_000)
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


def curated_coder_pair(tmp_path):
    """models.toml with one pair, qwen2.5-coder 1.5b drafted by 0.5b, sized as the `ollama`
    fixture's copies (a real 1.5b is ~1 GB; these are a few hundred kB)."""
    from draftlight.store.catalog import load_catalog
    path = tmp_path / "models.toml"
    path.write_text('''
default = "coder-1.5b"
[[models]]
name = "coder-1.5b"
repo = "bartowski/Qwen2.5-Coder-1.5B-Instruct-GGUF"
file = "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf"
quant = "Q4_K_M"
size_hint = 400000
[[models]]
name = "coder-0.5b"
repo = "bartowski/Qwen2.5-Coder-0.5B-Instruct-GGUF"
file = "Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf"
quant = "Q4_K_M"
size_hint = 60000
[[models]]
name = "llama-8b"
repo = "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF"
file = "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf"
quant = "Q4_K_M"
size_hint = 400000
[[models]]
name = "llama-1b"
repo = "bartowski/Llama-3.2-1B-Instruct-GGUF"
file = "Llama-3.2-1B-Instruct-Q4_K_M.gguf"
quant = "Q4_K_M"
size_hint = 60000
[[pairs]]
target = "coder-1.5b"
draft = "coder-0.5b"
tokenizer = "Qwen2.5 BPE, 151,936 rows (the model cards)"
[[pairs]]
target = "llama-8b"
draft = "llama-1b"
tokenizer = "Llama 3 BPE, 128,256 tokens (the model cards)"
''')
    return load_catalog(path)


def test_a_curated_pair_in_ollamas_store_is_marked_installed_and_not_downloaded(
        qtbot, ollama, tmp_path, make_dialog, fake_hub):
    """Item 2: Ollama's qwen2.5-coder:1.5b and :0.5b are the curated pair's models (same family,
    parameter count, weight type, size): the pair is installed, its draft too, the target's
    file is not offered as a download, and Download pair fetches nothing; a pair in no store
    has no chip."""
    from draftlight.ui.picker.rows import CHIPS_ROLE
    catalog = curated_coder_pair(tmp_path)
    coder = catalog.get("coder-1.5b")
    fake_hub.add_repo(coder.repo, {coder.file: b""}, sizes={coder.file: 400_000})
    dialog = make_dialog(fake_hub.url, catalog=catalog)
    dialog.resize(800, 600)
    dialog.show()
    results = dialog.search_panel.results
    chips = {results.item(i).text(): [t for t, _ in results.item(i).data(CHIPS_ROLE)]
             for i in range(results.count())}
    assert chips == {"coder-1.5b": ["pair", "installed"], "llama-8b": ["pair"]}
    results.setCurrentRow(0)  # the pair: its files and drafts
    qtbot.waitUntil(lambda: bool(dialog.files_shown), timeout=TIMEOUT_MS)
    draft = dialog.drafts_panel.options_shown()[0]
    assert draft.name == "coder-0.5b" and draft.installed
    assert draft.path == ollama[DRAFT_MODEL]
    files = dialog.files_panel
    assert files.selected_file().path == coder.file
    assert files.row_texts(coder.file)["File"] == f"★ ✓ {coder.file}"  # here: no download
    assert files.download_button.text() == "Installed"
    assert not files.download_button.isEnabled() and TARGET in files.download_button.toolTip()
    dialog.grab().save("/tmp/picker-ollama-pair-installed.png")
    asked = len(fake_hub.requests)
    qtbot.mouseClick(dialog.drafts_panel.pair_button, Qt.LeftButton)
    assert not dialog.pair_rows and not dialog.rows
    assert dialog.status.text().startswith("Both models are on this computer already")
    qtbot.wait(200)
    assert len(fake_hub.requests) == asked  # nothing fetched
