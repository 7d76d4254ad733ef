"""The target's prompt cache kept across a restart (engine/llama/kept_prompt.py), on the real bundled
model: a long conversation reopened by a new engine is not read again, and replies are the ones
a fresh read gives."""

from __future__ import annotations

import os
import time

from draftlight import paths
from draftlight.engine.llama import kept_prompt
from draftlight.engine.reply.generator import Engine
from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.reply.compare import explain_divergence
from tests.support.real_engine import NEAR_TIE, run
from draftlight.modes import AUTO, OFF

OPTIONS = LoadOptions(n_ctx=2048)
ARTICLE = " ".join(f"Paragraph {i}: the lighthouse keeper wrote down the tide, the wind and "
                   f"the ships that passed the cape on day {i}." for i in range(16))


def conversation(*turns: str) -> list[dict[str, str]]:
    messages = [{"role": "user", "content": f"Read this log.\n\n{ARTICLE}"},
                {"role": "assistant", "content": "I have read the log."}]
    return messages + [{"role": "user", "content": turn} for turn in turns]


def kept_files():
    return sorted((paths.cache_dir() / kept_prompt.FOLDER).glob("*"))


def answer_and_close(bundled_model, messages, mode=OFF):
    """One engine's greedy answer to `messages` (its cache kept when it closes)."""
    engine = Engine.load(bundled_model, None, OPTIONS, measure_later=True)
    try:
        return run(engine, messages, mode)
    finally:
        engine.close()


def kept_state():
    return next(f for f in kept_files() if f.suffix == kept_prompt.STATE)


def test_a_long_conversation_is_not_read_again_after_a_restart(bundled_model):
    _, _, done = answer_and_close(bundled_model, conversation("What did the keeper write down?"))
    read_before = done.stats.prompt_tokens
    assert read_before > kept_prompt.MIN_TOKENS
    assert [f.suffix for f in kept_files()] == [".state", ".tokens"]

    later = conversation("Which cape was it?")
    kept_tokens, _, kept_done = answer_and_close(bundled_model, later, AUTO)
    # everything before the new question came from the file
    assert kept_done.stats.reused_prompt_tokens >= read_before - 24, kept_done.stats

    for f in kept_files():
        f.unlink()
    fresh_tokens, _, fresh_done = answer_and_close(bundled_model, later)
    assert fresh_done.stats.reused_prompt_tokens == 0
    if kept_tokens != fresh_tokens:  # the kept cache answers as a fresh read does, but where
        # the fresh read takes llama.cpp's fast prefill (fast_prefill.py: other kernels, so
        # other roundings on some CPUs, e.g. AVX-512 Xeons) a near tie may fall the other way
        engine = Engine.load(bundled_model, None, OPTIONS, measure_later=True)
        try:
            divergence = explain_divergence(engine, later, fresh_tokens, kept_tokens)
        finally:
            engine.close()
        assert divergence is not None and abs(divergence.logit_gap) <= NEAR_TIE, divergence


def test_the_kept_file_is_bounded_and_another_conversation_ignores_it(bundled_model, monkeypatch):
    monkeypatch.setattr(kept_prompt, "MAX_BYTES", 5 * 2**20)  # about 300 tokens
    answer_and_close(bundled_model, conversation("What did the keeper write down?"))
    assert kept_state().stat().st_size <= kept_prompt.MAX_BYTES  # its first tokens only
    engine = Engine.load(bundled_model, None, OPTIONS, measure_later=True)
    try:
        other = [{"role": "user", "content": "Name three rivers in Europe."}]
        _, _, done = run(engine, other, OFF)
        assert done.stats.reused_prompt_tokens == 0
        _, _, done = run(engine, conversation("Which cape was it?"), OFF)
        assert done.stats.reused_prompt_tokens >= kept_prompt.MIN_TOKENS  # the first tokens
    finally:
        engine.close()


def test_a_damaged_kept_file_is_read_past(bundled_model):
    answer_and_close(bundled_model, conversation("What did the keeper write down?"))
    state = kept_state()
    state.write_bytes(state.read_bytes()[:1000])  # cut short
    tokens, _, done = answer_and_close(bundled_model, conversation("Which cape was it?"))
    assert done.stats.reused_prompt_tokens == 0 and tokens


def test_a_write_cut_short_is_never_kept_and_is_cleared_later(bundled_model):
    answer_and_close(bundled_model, conversation("What did the keeper write down?"))
    state = kept_state()
    # what an engine killed mid-write left (the next write of the same file, cut short)
    cut = state.with_name(state.name + kept_prompt.PARTIAL)
    cut.write_bytes(state.read_bytes()[:1000])
    assert [f for f in kept_files() if f.suffix == kept_prompt.STATE] == [state]
    long_ago = time.time() - kept_prompt.ABANDONED_SECONDS - 1
    os.utime(cut, (long_ago, long_ago))

    _, _, done = answer_and_close(bundled_model, conversation("Which cape was it?"))
    assert done.stats.reused_prompt_tokens >= kept_prompt.MIN_TOKENS  # the whole file's
    assert [f.suffix for f in kept_files()] == [".state", ".tokens"]  # the cut one cleared
