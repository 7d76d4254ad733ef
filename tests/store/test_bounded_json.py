"""JSON from outside within bounds (issue 56, items 5 and 6): an import or another app's manifest
nested 100,000 deep, a FIFO or a device in place of a file, or a huge file is one clear
refusal or a skipped entry, in a moment, and the rest of a list is still shown."""

from __future__ import annotations

import json
import os
import time
import tracemalloc

import pytest

from draftlight import bounded_json
from draftlight.store.export import ExportError, import_conversation
from draftlight.store.found_models import find_models, forget_found
from draftlight.store.history import History
from tests.support.other_apps import ollama_pull

DEEP = "[" * 100_000 + "]" * 100_000


def test_depth_is_checked_before_the_parser_recurses():
    with pytest.raises(bounded_json.BoundsError, match="more than 64 levels"):
        bounded_json.loads(DEEP)
    assert bounded_json.loads('{"a": "[[[[{{{{", "b": [1, [2]]}') == {"a": "[[[[{{{{",
                                                                       "b": [1, [2]]}
    assert bounded_json.loads(json.dumps({"s": "\\\"]]]"})) == {"s": "\\\"]]]"}


def test_an_import_that_is_deep_a_fifo_or_a_device_is_one_error(tmp_path):
    history = History(tmp_path / "h.sqlite3")
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    started = time.monotonic()
    for path, why in ((deep, "nested more than"), (fifo, "not a regular file"),
                      (tmp_path / "zero.json", "not a regular file")):
        if path.name == "zero.json":
            path.symlink_to("/dev/zero")
        with pytest.raises(ExportError, match=why):
            import_conversation(history, path)
    assert time.monotonic() - started < 5 and history.conversations() == []
    history.close()


def test_a_deep_manifest_or_a_fifo_blob_is_skipped_and_the_rest_listed(tmp_path):
    root = tmp_path / "ollama"
    good = ollama_pull(root, "qwen2.5", "7b")
    ollama_pull(root, "deep", "1b")
    (root / "manifests/registry.ollama.ai/library/deep/1b").write_text(DEEP)
    fifo_blob = ollama_pull(root, "piped", "1b")
    fifo_blob.unlink()
    os.mkfifo(fifo_blob)
    forget_found()
    started = time.monotonic()
    found = find_models(env={"OLLAMA_MODELS": str(root)})
    assert [m.path for m in found] == [good]
    assert time.monotonic() - started < 5
    forget_found()


def test_the_depth_check_holds_a_window_not_a_copy_per_character(tmp_path):
    """Issue 76, hole 5: the check kept about 120 bytes per character of a string (a 63 MB
    export hit MemoryError at 6 GB). Now the whole import of a 2 MB one peaks at a few times
    its size (its bytes, its text, the parsed string), the check itself at its window."""
    text = "word \\n \\\" [{ " * 150_000
    export = {"format": "draftlight-conversation", "version": 1,
              "messages": [{"role": "user", "text": text}]}
    path = tmp_path / "big.json"
    path.write_text(json.dumps(export))
    size = path.stat().st_size
    data = path.read_bytes()
    tracemalloc.start()
    try:
        bounded_json.check_depth(data)
        _, check_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        history = History(tmp_path / "h.sqlite3")
        started = tracemalloc.get_traced_memory()[0]
        import_conversation(history, path)
        _, import_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert check_peak < 4 * bounded_json.WINDOW
    assert import_peak - started < 5 * size
    assert history.messages(history.conversations()[0].id)[0].text == text
    history.close()


@pytest.mark.parametrize("data, deep", [
    (b"[" * 65 + b"]" * 65, True), (b"[" * 64 + b"]" * 64, False),
    (b'["' + b"\\\\" * 10 + b'", ' + b"[" * 64 + b"]" * 64 + b"]", True),
    (b'["\\"[[[[", ' + b"[" * 63 + b"]" * 63 + b"]", False),
    (b'{"a": "' + b"[" * 100 + b'"}', False), (b'"\\\\"' + b"[" * 65, True)])
@pytest.mark.parametrize("window", [1, 2, 3, 1 << 20])
def test_the_depth_is_the_same_whatever_the_window(monkeypatch, data, deep, window):
    """A string, an escape or a run of backslashes cut between two windows is read as one."""
    monkeypatch.setattr(bounded_json, "WINDOW", window)
    if deep:
        with pytest.raises(bounded_json.BoundsError):
            bounded_json.check_depth(data)
    else:
        bounded_json.check_depth(data)
