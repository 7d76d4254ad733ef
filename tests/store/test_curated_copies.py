"""Which curated model is on this computer already (store/curated_copies.py): the same bytes,
the same file by name, or Ollama's own conversion of the same model; and what only looks alike
(another size, weight type, variant or family, a size far off, an unknown weight type) is not."""

from __future__ import annotations

import pytest

from draftlight.store.catalog import CatalogModel
from draftlight.store.curated_copies import copy_of
from draftlight.store.installed import InstalledModel

CODER = CatalogModel("qwen2.5-coder-1.5b-instruct-q4_k_m",
                     "bartowski/Qwen2.5-Coder-1.5B-Instruct-GGUF",
                     "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf", "Q4_K_M", size_hint=1_000_000,
                     sha256="ab" * 32)


@pytest.fixture
def found(tmp_path):
    """found(reference, app, size=1_000_000, file_name=None) -> an InstalledModel as
    every_model lists another app's model, its file on disk."""
    def make(reference, app="Ollama", size=1_000_000, file_name=None):
        path = tmp_path / (file_name or reference.replace(":", "_").replace("/", "_"))
        path.write_bytes(b"GGUF")
        return InstalledModel(reference, path, app, size=size)
    return make


def no_header(_path):
    return None


def test_ollamas_conversion_of_the_same_model_is_a_copy(found):
    plain = found("ollama:qwen2.5-coder:1.5b")  # the tag says no weight type: the header does
    assert copy_of(CODER, [plain], weight_type=lambda _p: "Q4_K_M") == plain
    assert copy_of(CODER, [plain], weight_type=no_header) is None  # unknown: not claimed
    tagged = found("ollama:qwen2.5-coder:1.5b-instruct-q4_K_M", size=960_000)
    assert copy_of(CODER, [tagged], weight_type=no_header) == tagged


@pytest.mark.parametrize("reference, size, why", [
    ("ollama:qwen2.5-coder:7b", 1_000_000, "another parameter count"),
    ("ollama:qwen2.5-coder:1.5b-instruct-q8_0", 1_000_000, "another weight type"),
    ("ollama:qwen2.5-coder:1.5b-base-q4_K_M", 1_000_000, "the pretrained-only variant"),
    ("ollama:qwen2.5:1.5b-instruct-q4_K_M", 1_000_000, "another family (not the coder)"),
    ("ollama:qwen2.5-coder:1.5b-instruct-q4_K_M", 1_300_000, "a size 30% off"),
    ("ollama:someone/qwen2.5-coder:1.5b-instruct-q4_K_M", 1_000_000, "not Ollama's library"),
    ("lmstudio:lmstudio-community/Qwen2.5-Coder-1.5B-GGUF/Qwen2.5-Coder-1.5B-Q4_K_M.gguf",
     1_000_000, "another uploader's file, maybe the base model"),
])
def test_what_only_looks_alike_is_not_a_copy(found, reference, size, why):
    app = "LM Studio" if reference.startswith("lmstudio:") else "Ollama"
    assert copy_of(CODER, [found(reference, app, size)],
                   weight_type=lambda _p: "Q4_K_M") is None, why


def test_the_same_bytes_or_the_same_file_by_name_is_a_copy_whatever_its_size(found):
    blob = found("ollama:my-coder:latest", size=5, file_name=f"sha256-{'ab' * 32}")
    assert copy_of(CODER, [blob], weight_type=no_header) == blob  # the digest is the sha256
    pulled = found("ollama:bartowski/Qwen2.5-Coder-1.5B-Instruct-GGUF:Q4_K_M", size=5)
    assert copy_of(CODER, [pulled], weight_type=no_header) == pulled  # ollama pull hf.co/…
    lm = found("lmstudio:bartowski/Qwen2.5-Coder-1.5B-Instruct-GGUF/"
               "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf", "LM Studio", size=5)
    assert copy_of(CODER, [lm], weight_type=no_header) == lm
    other_sha = found("ollama:my-coder:old", size=5, file_name=f"sha256-{'cd' * 32}")
    assert copy_of(CODER, [other_sha], weight_type=no_header) is None


def test_a_download_comes_first_and_a_missing_file_is_no_copy(found, tmp_path):
    ollama = found("ollama:qwen2.5-coder:1.5b-instruct-q4_K_M")
    own_path = tmp_path / CODER.file
    own_path.write_bytes(b"GGUF")
    own = InstalledModel(CODER.name, own_path, "hub", repo=CODER.repo, file=CODER.file)
    assert copy_of(CODER, [ollama, own], weight_type=no_header) == own
    gone = InstalledModel(CODER.name, tmp_path / "gone.gguf", "hub", repo=CODER.repo,
                          file=CODER.file)
    assert copy_of(CODER, [gone], weight_type=no_header) is None
