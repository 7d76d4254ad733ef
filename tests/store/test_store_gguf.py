"""GGUF metadata read from headers: the real SmolLM2 and Gemma files, and broken ones."""

from __future__ import annotations

import pytest

from draftlight.store.errors import GGUFError
from draftlight.store.gguf_info import header_values, read_gguf_info, vocabulary_of
from tests.support.hub_server import synthetic_gguf


def test_smollm2_metadata(bundled_model):
    info = read_gguf_info(bundled_model)
    assert info.architecture == "llama"
    assert info.vocab_size == 49152 and info.vocab_type == "gpt2"
    assert info.quantisation == "Q4_1"
    assert info.context_length == 8192
    assert (info.block_count, info.embedding_length, info.head_count, info.head_count_kv) == (
        30, 576, 9, 3)
    assert 130_000_000 < info.parameter_count < 140_000_000  # "135M", summed from tensor shapes
    assert info.file_size == 98_362_432
    assert "<|im_start|>" in info.chat_template  # ChatML
    # 30 layers x 3 KV heads x (64 + 64) x 2 bytes per token
    assert info.kv_cache_bytes(4096, key_bytes=2) == 30 * 4096 * 3 * 128 * 2  # f16
    # the engine's: q8_0 keys, f16 values
    assert info.kv_cache_bytes(4096) == 30 * 4096 * 3 * 64 * (34 / 32 + 2)


@pytest.mark.slow
def test_gemma_metadata(gemma_model):
    info = read_gguf_info(gemma_model)
    assert info.architecture == "gemma3"
    assert info.vocab_size == 262144
    assert info.quantisation == "Q4_K_M"
    assert 200_000_000 < info.parameter_count < 300_000_000


def test_synthetic_gguf_round_trip(tmp_path):
    path = tmp_path / "s.gguf"
    path.write_bytes(synthetic_gguf(1 << 16, vocab=300))
    info = read_gguf_info(path)
    assert (info.architecture, info.vocab_size, info.context_length) == ("llama", 300, 2048)


def test_vocabulary_without_reading_the_tokens(bundled_model, tmp_path):
    """The model bar's cheap read agrees with the full one, and stops at the token list."""
    assert vocabulary_of(bundled_model) == ("gpt2", 49152)
    path = tmp_path / "s.gguf"
    path.write_bytes(synthetic_gguf(1 << 16, vocab=300))
    assert vocabulary_of(path) == (read_gguf_info(path).vocab_type, 300)
    # a key after the arrays is still found; one the file lacks leaves the rest found
    both = header_values(bundled_model, {"tokenizer.ggml.tokens", "llama.context_length", "x"})
    assert both["tokenizer.ggml.tokens"].length == 49152 and both["llama.context_length"] == 8192
    assert "x" not in both


def test_not_a_gguf(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(b"<html>rate limited</html>")
    with pytest.raises(GGUFError, match="model.gguf: not a GGUF file"):
        read_gguf_info(path)


@pytest.mark.parametrize("keep", [6, 30, 200, 2000])
def test_truncated_header(tmp_path, keep):
    path = tmp_path / "cut.gguf"
    path.write_bytes(synthetic_gguf(1 << 16, vocab=300)[:keep])
    with pytest.raises(GGUFError, match="cut.gguf: .*(truncated|corrupt)"):
        read_gguf_info(path)


def test_corrupt_string_length(tmp_path):
    data = bytearray(synthetic_gguf(1 << 16, vocab=10))
    data[24:32] = (1 << 60).to_bytes(8, "little")  # length of the first key
    path = tmp_path / "bad.gguf"
    path.write_bytes(bytes(data))
    with pytest.raises(GGUFError, match="corrupt"):
        read_gguf_info(path)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_gguf_info(tmp_path / "nope.gguf")
