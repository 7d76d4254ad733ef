"""Models other apps keep, in the window (issue 38): a model Ollama pulled is in the model bar's
Target list and the picker's Installed tab, named as Ollama names it, usable, never deletable
from here."""

from __future__ import annotations

import hashlib
import json

from draftlight.store.found_models import OLLAMA_MODEL_LAYER, forget_found
from tests.support.hub_server import synthetic_gguf
from tests.support.scripted_engine import ScriptedFactory


def pulled(root, name: str, tag: str):
    data = synthetic_gguf(1 << 14) + f"{name}:{tag}".encode()
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    blob = root / "blobs" / digest.replace(":", "-")
    blob.parent.mkdir(parents=True, exist_ok=True)
    blob.write_bytes(data)
    manifest = root / "manifests" / "registry.ollama.ai" / "library" / name / tag
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps({"layers": [{"mediaType": OLLAMA_MODEL_LAYER,
                                                "digest": digest, "size": len(data)}]}))
    return blob


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
