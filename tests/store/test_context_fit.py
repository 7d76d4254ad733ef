"""The automatic context (issue 38, part 6): the model's trained context when it and its draft
fit in free memory with their KV caches, else the largest halving that fits, never below 2,048
tokens; a header that cannot be read gives the default, and the loader says what is wrong."""

from __future__ import annotations

from draftlight.store.gguf_info import read_gguf_info
from draftlight.store.memory import (AUTO_SHARE, MIN_AUTO_CONTEXT, OVERHEAD_BYTES, ContextChoice,
                                     MemoryInfo,
                                     fitting_context)

GB = 1 << 30


def test_the_trained_context_when_it_fits(bundled_model):
    trained = read_gguf_info(bundled_model).context_length
    choice = fitting_context(bundled_model, memory=MemoryInfo(64 * GB, 32 * GB))
    assert choice.n_ctx == trained == 8192
    assert "trained context" in choice.why


def test_less_free_memory_halves_the_context_until_the_caches_fit(bundled_model):
    info = read_gguf_info(bundled_model)
    # room for the weights and a KV cache of 3,000 tokens, not 4,096
    room = info.file_size + OVERHEAD_BYTES + info.kv_cache_bytes(3000)
    choice = fitting_context(bundled_model, memory=MemoryInfo(64 * GB, int(room / AUTO_SHARE)))
    assert choice.n_ctx == 2048 and "fits in free memory" in choice.why
    with_draft = fitting_context(bundled_model, bundled_model,
                                 memory=MemoryInfo(64 * GB, int(room / AUTO_SHARE)))
    assert with_draft.n_ctx == MIN_AUTO_CONTEXT and "short" in with_draft.why


def test_an_unreadable_header_gives_the_default(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF\x03\x00\x00\x00")
    unread = ContextChoice(4096, "")  # no reason given: the loader says what is wrong
    assert fitting_context(bad) == fitting_context(tmp_path / "gone.gguf") == unread
