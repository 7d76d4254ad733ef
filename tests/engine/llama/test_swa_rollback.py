"""Rolling the KV cache back past a sliding attention window, on a real model with one: Gemma 3
270M (window 512 in 15 of its 18 layers).

llama.cpp can keep a sliding-window layer's cache in a ring just larger than the window (the
"SWA cache": n_swa + n_ubatch cells, padded to 256), overwriting keys once they fall out of the
window. `llama_memory_seq_rm` still reports success when the engine cuts the cache back, but the
keys the ring overwrote are gone: the next tokens attend to less than their window, and a
Regenerate (cut back to the prompt) or a new conversation (cut back to the chat template's
first tokens) answers differently from a fresh engine. LlamaBackend asks for a full-size SWA
cache (`swa_full`), which keeps them all; these checks fail without it.

n_batch 256 makes the ring 768 cells (with the app's 512 it is 1024): a 547-token prompt and a
300-token reply pass it, and a Regenerate cuts back 300 tokens, 44 more than the ring can give
back (a cut of up to 256 tokens loses nothing, whatever the batch size). Those 44 keys barely
move a greedy reply that copies a repeating log, so the Regenerate is also checked where it is
sharp: the logits of the reply's first token, bit-identical to a fresh engine's (same batches,
same positions). A new conversation loses the chat template's first tokens, BOS included: its
reply differs from the first token on. The long reply is written in n-gram mode (it copies the
log: a few long drafts), the Regenerate in mode off, the new conversation in n-gram mode.
"""

from __future__ import annotations

import numpy as np

from draftlight.engine.core.backend import sync_cache
from draftlight.engine.reply.generator import Engine
from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.core.sampling import SamplingParams
from tests.support.replies import reply as run_reply
from draftlight.modes import NGRAM, OFF

# One thread: on a loaded 2-core machine two threads wait on each other (10x slower here)
OPTIONS = LoadOptions(n_ctx=2048, n_batch=256, n_threads=1)
LONG_REPLY = SamplingParams(temperature=0.0, max_tokens=300)
REPLY = SamplingParams(temperature=0.0, max_tokens=24)
# A log that repeats itself (the reply goes on copying it: n-gram lookup drafts it in long runs)
LOG = "The tide came in, the gulls cried, and the keeper lit the lamp at nine. " * 28
LONG = [{"role": "user", "content": "Read this log and continue it:\n" + LOG}]
OTHER = [{"role": "user", "content": "Write a story about a cat."}]  # shares the template's start


def reply(engine, messages, params, mode) -> list[int]:
    return run_reply(engine, messages, params, mode).tokens


def first_token_logits(engine, messages) -> np.ndarray:
    """What Regenerate does to the cache (sync_cache to the prompt), then the pass that gives
    the reply's first token."""
    prompt = engine.tokenize_chat(messages)
    sync_cache(engine.target, prompt[:-1])
    return engine.target.eval(prompt[-1:], n_logits=1)[0]


def test_rolling_back_past_the_sliding_window_answers_as_a_fresh_engine(gemma_model):
    fresh = Engine.load(gemma_model, None, OPTIONS)
    used = Engine.load(gemma_model, None, OPTIONS)
    try:
        window = int(used.target.metadata().get("gemma3.attention.sliding_window", 0))
        prompt = len(used.tokenize_chat(LONG))
        assert window == 512 and prompt > window
        first = reply(used, LONG, LONG_REPLY, NGRAM)
        assert len(first) == LONG_REPLY.max_tokens and prompt + len(first) > 768  # past the ring
        # Regenerate: back to the prompt, 300 tokens behind the latest.
        assert reply(used, LONG, REPLY, OFF) == reply(fresh, LONG, REPLY, OFF)
        assert np.array_equal(first_token_logits(used, LONG), first_token_logits(fresh, LONG))
        # A new conversation: back to the template's first tokens.
        assert reply(used, OTHER, REPLY, NGRAM) == reply(fresh, OTHER, REPLY, NGRAM)
    finally:
        fresh.close()
        used.close()
