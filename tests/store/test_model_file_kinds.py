"""A model path that names a FIFO, a device or a folder (or a link to one): every reader of
model files refuses it at once, in words that say what it is, and never waits on it (a FIFO
given to `models add` or `chat --target` blocked for ever)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from draftlight.engine.core.errors import ModelLoadError
from draftlight.engine.llama.llama_load import check_gguf_file
from draftlight.store.gguf_info import header_values, read_gguf_info, vocabulary_of, weight_type_of
from draftlight.store.model_facts import read_facts

SECONDS = 10


def kinds(folder: Path) -> dict[str, tuple[Path, str]]:
    """Name -> (a path named like a model, the words its refusal must hold)."""
    fifo = folder / "fifo.gguf"
    os.mkfifo(fifo)
    (folder / "to-fifo.gguf").symlink_to(fifo)
    (folder / "folder.gguf").mkdir()
    (folder / "null.gguf").symlink_to(os.devnull)
    return {"fifo": (fifo, "named pipe (FIFO)"),
            "link-to-fifo": (folder / "to-fifo.gguf", "named pipe (FIFO)"),
            "folder": (folder / "folder.gguf", "is a folder"),
            "device": (folder / "null.gguf", "a device")}


def refused_at_once(read, path: Path) -> str:
    """What `read(path)` raised (or returned), within SECONDS; a read blocked on a FIFO is
    freed (a writer opens it) and fails the test."""
    outcome: list = []

    def run() -> None:
        try:
            outcome.append(("returned", read(path)))
        except Exception as exc:  # noqa: BLE001 - what it raised is the answer
            outcome.append(("raised", exc))
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(SECONDS)
    if worker.is_alive():
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))  # let the blocked open return
        worker.join(SECONDS)
        pytest.fail(f"{read} waited on {path.name}")
    how, what = outcome[0]
    return f"{how}: {what}"


READERS = {
    "read_gguf_info": read_gguf_info,
    "header_values": lambda path: header_values(path, {"general.file_type"}),
    "vocabulary_of": vocabulary_of,
    "weight_type_of": weight_type_of,
    "read_facts": lambda path: read_facts(path).error,
}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("kind", ["fifo", "link-to-fifo", "folder", "device"])
def test_every_header_reader_refuses_what_is_not_a_regular_file(tmp_path, reader, kind):
    path, words = kinds(tmp_path)[kind]
    said = refused_at_once(READERS[reader], path)
    assert words in said, said
    if reader != "read_facts":  # it never raises: the reason is its `error`
        assert said.startswith("raised: "), said


@pytest.mark.parametrize("kind", ["fifo", "link-to-fifo", "folder", "device"])
def test_the_loader_refuses_what_is_not_a_regular_file(tmp_path, kind):
    path, words = kinds(tmp_path)[kind]
    with pytest.raises(ModelLoadError, match=r"\(FIFO\)|folder|device") as raised:
        check_gguf_file(path)
    assert words in str(raised.value) and str(path) in str(raised.value)
