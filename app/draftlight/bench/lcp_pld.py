"""The peer baseline: llama-cpp-python's own prompt lookup (`LlamaPromptLookupDecoding`).

It verifies by sample-and-match inside `Llama.generate`; we time it through its streaming chat
API with the same threads, context, KV cache type and flash attention as our engine.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from draftlight.engine.core.load_options import LoadOptions, default_threads


@dataclass
class PeerResult:
    text: str
    new_tokens: int
    seconds: float  # whole call
    first_token_seconds: float  # until the first streamed token (prefill + one token)

    @property
    def decode_seconds(self) -> float:
        return max(self.seconds - self.first_token_seconds, 1e-9)


class PromptLookupPeer:
    def __init__(self, target: Path, options: LoadOptions, num_pred_tokens: int = 10) -> None:
        from llama_cpp import Llama
        from llama_cpp.llama_speculative import LlamaPromptLookupDecoding
        from draftlight.engine.llama.llama_load import extra_buffers_usable
        threads = options.n_threads or default_threads()
        # Its draft path needs logits for every prompt row; a batch as large as the context
        # avoids the "could not broadcast" crash on prompts longer than n_batch (FACTS.md).
        with extra_buffers(options.extra_buffers and extra_buffers_usable(target)):
            self.llama = Llama(
                model_path=str(target), n_ctx=options.n_ctx, n_batch=options.n_ctx,
                n_ubatch=options.n_batch, n_threads=threads, n_threads_batch=threads,
                flash_attn=True, verbose=False, type_k=options.k_type, type_v=options.v_type,
                draft_model=LlamaPromptLookupDecoding(num_pred_tokens=num_pred_tokens))

    def run(self, messages: list[dict[str, str]], max_tokens: int, temperature: float,
            seed: int | None) -> PeerResult:
        start = time.perf_counter()
        first = None
        pieces: list[str] = []
        count = 0
        stream = self.llama.create_chat_completion(
            messages=messages, max_tokens=max_tokens, temperature=temperature,
            seed=seed, stream=True)
        for chunk in stream:
            delta = chunk["choices"][0]["delta"].get("content")
            if delta is None:
                continue
            if first is None:
                first = time.perf_counter() - start
            pieces.append(delta)
            count += 1
        seconds = time.perf_counter() - start
        return PeerResult("".join(pieces), count, seconds, first or seconds)

    def close(self) -> None:
        self.llama.close()


@contextmanager
def extra_buffers(usable: bool):
    """`Llama(...)` with llama.cpp's extra buffer types only where they run on this CPU
    (engine/llama/cpu_check.py): Llama takes no option for them, so the default model parameters it
    starts from have them off while it loads."""
    if usable:
        yield
        return
    import llama_cpp.llama_cpp as low_level
    defaults = low_level.llama_model_default_params

    def without_extra_buffers():
        params = defaults()
        params.use_extra_bufts = False
        return params
    low_level.llama_model_default_params = without_extra_buffers
    try:
        yield
    finally:
        low_level.llama_model_default_params = defaults
