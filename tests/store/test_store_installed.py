"""Installed models (bundled, local, downloaded), names from files, and the memory badge."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from draftlight import paths
from draftlight.store import installed
from draftlight.store.errors import GGUFError, ModelNotFoundError, StoreError, UnsafeFileNameError
from draftlight.store.installed import (BUNDLED_NAME, add_local, find_installed, hub_file_path,
                                 list_installed, register_download, remove)
from draftlight.store.memory import Fit, MemoryInfo, assess, system_memory
from draftlight.store.model_names import (could_draft_for, family_from_name, parameter_size_from_name,
                                   quantisation_from_name)
from tests.support.hub_server import synthetic_gguf
from tests.support.waiting import scaled

GB = 1 << 30


def test_bundled_model_is_listed_first(bundled_model):
    first = list_installed()[0]
    assert (first.name, first.source, first.path) == (BUNDLED_NAME, "bundled", bundled_model)
    assert first.exists


def test_bundled_model_cannot_be_removed():
    with pytest.raises(StoreError, match="bundled with the app"):
        remove(BUNDLED_NAME)


def test_local_model_is_registered_and_forgotten_without_deleting_it(tmp_path):
    path = tmp_path / "My-Model-Q4_0.gguf"
    path.write_bytes(synthetic_gguf(1 << 16))
    model = add_local(path)
    assert (model.name, model.source) == ("my-model-q4_0", "local")
    assert find_installed("my-model-q4_0").path == path
    assert add_local(path) == model  # adding twice keeps one entry
    remove("my-model-q4_0")
    assert path.exists()
    with pytest.raises(ModelNotFoundError, match="no installed model named 'my-model-q4_0'"):
        find_installed("my-model-q4_0")


def test_a_non_gguf_is_not_added(tmp_path):
    path = tmp_path / "notes.gguf"
    path.write_text("hello")
    with pytest.raises(GGUFError):
        add_local(path)
    assert [m.source for m in list_installed()] in (["bundled"], [])


def test_downloaded_model_is_deleted_with_its_folders():
    path = hub_file_path("org/Repo-GGUF", "sub/x-Q8_0.gguf")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"GGUF")
    register_download(repo="org/Repo-GGUF", file="sub/x-Q8_0.gguf", path=path, sha256=None,
                      commit="c" * 40)
    assert find_installed("x-q8_0").commit == "c" * 40
    remove("x-q8_0")
    assert not path.exists() and not (paths.models_dir() / "org").exists()


def test_same_file_name_from_two_repos_gets_two_names():
    names = []
    for repo in ("alice/M-GGUF", "bob/M-GGUF"):
        path = hub_file_path(repo, "m-Q4_0.gguf")
        path.parent.mkdir(parents=True)
        path.write_bytes(b"GGUF")
        names.append(register_download(repo=repo, file="m-Q4_0.gguf", path=path, sha256=None,
                                       commit=None).name)
    assert names == ["m-q4_0", "bob-m-q4_0"]


def test_hub_file_path_stays_inside_the_models_folder():
    assert hub_file_path("org/R", "a/b.gguf") == (paths.models_dir() / "org/R/a/b.gguf").resolve()
    for bad in ("../b.gguf", "a/../../b.gguf", "/b.gguf", "a\\b.gguf", "", "a/", "a//b.gguf",
                "x\0.gguf"):
        with pytest.raises(UnsafeFileNameError):
            hub_file_path("org/R", bad)


@pytest.mark.parametrize("name, quant, size, family", [
    ("Qwen2.5-7B-Instruct-Q4_K_M.gguf", "Q4_K_M", 7.0, "qwen2.5"),
    ("qwen2.5-coder-0.5b-instruct-q8_0.gguf", "Q8_0", 0.5, "qwen2.5-coder"),
    ("SmolLM2-135M-Instruct.Q4_1.gguf", "Q4_1", 0.135, "smollm2"),
    ("google_gemma-3-270m-it-IQ4_XS.gguf", "IQ4_XS", 0.27, "gemma-3"),
    ("Llama-3.2-1B-Instruct-f16.gguf", "F16", 1.0, "llama-3.x"),
    ("mystery.gguf", None, None, None),
])
def test_names_say_quantisation_size_and_family(name, quant, size, family):
    assert quantisation_from_name(name) == quant
    assert parameter_size_from_name(name) == size
    assert family_from_name(name) == family


def test_could_draft_for_needs_the_same_family_and_a_smaller_size():
    assert could_draft_for("Meta-Llama-3.1-8B-Instruct", "Llama-3.2-1B-Instruct")
    assert not could_draft_for("Qwen2.5-0.5B", "Qwen2.5-7B")
    assert not could_draft_for("Qwen2.5-7B", "Llama-3.2-1B")
    assert not could_draft_for("mystery-7B", "mystery-1B")


def test_memory_badge():
    machine = MemoryInfo(total=16 * GB, available=8 * GB)
    assert assess(2 * GB, memory=machine).fit == Fit.FITS
    assert assess(9 * GB, memory=machine).fit == Fit.TIGHT
    assert assess(15 * GB, memory=machine).fit == Fit.TOO_BIG
    # a long context can tip a model over: 2 GB of weights + 8 GB of KV cache
    assert assess(2 * GB, kv_cache=8 * GB, memory=machine).fit == Fit.TIGHT
    estimate = assess(4 * GB, n_ctx=8192, memory=machine)
    assert estimate.kv_cache == pytest.approx(2 * assess(4 * GB, memory=machine).kv_cache, abs=2)


def test_this_machine_memory_is_readable():
    memory = system_memory()
    assert memory is not None and 0 < memory.available <= memory.total


def _pull_in_another_process(repo: str) -> subprocess.Popen:
    """`draftlight models pull` in the terminal, reduced to its last step: another process
    registers a download of `repo`. It prints a line just before it does."""
    path = hub_file_path(repo, "m-Q4_0.gguf")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"GGUF")
    script = ("import sys; from pathlib import Path\n"
              "from draftlight.store.installed import register_download\n"
              "print('registering', flush=True)\n"
              f"register_download(repo={repo!r}, file='m-Q4_0.gguf', path=Path({str(path)!r}), "
              "sha256=None, commit=None)\n")
    env = {**os.environ, "PYTHONPATH": str(Path(installed.__file__).parents[2])}
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            env=env)


def test_downloads_registered_at_once_by_two_processes_both_land(monkeypatch):
    """The window registers a download; in the middle of its read-modify-write of
    installed.toml, a pull in the terminal registers another. Both entries must be there."""
    write = installed._write_registry
    other = []

    def write_with_another_pull_meanwhile(registry):
        child = _pull_in_another_process("terminal/Pulled-GGUF")
        other.append(child)
        assert child.stdout.readline() == "registering\n"
        try:  # without a lock between processes it is done in milliseconds
            child.wait(timeout=scaled(500) / 1000)
        except subprocess.TimeoutExpired:
            pass  # it waits for this process's lock: as it should
        write(registry)

    monkeypatch.setattr(installed, "_write_registry", write_with_another_pull_meanwhile)
    path = hub_file_path("window/Chosen-GGUF", "x-Q8_0.gguf")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"GGUF")
    register_download(repo="window/Chosen-GGUF", file="x-Q8_0.gguf", path=path, sha256=None,
                      commit=None)
    monkeypatch.setattr(installed, "_write_registry", write)
    assert other[0].wait(timeout=scaled(30_000) / 1000) == 0
    assert sorted(m.repo for m in list_installed() if m.source == "hub") == [
        "terminal/Pulled-GGUF", "window/Chosen-GGUF"]


def test_registry_is_private_to_the_user(tmp_path):
    path = tmp_path / "My-Model-Q4_0.gguf"
    path.write_bytes(synthetic_gguf(1 << 16))
    add_local(path)
    for made in paths.models_dir().glob("installed.toml*"):
        assert oct(made.stat().st_mode & 0o777) == oct(0o600), made.name
