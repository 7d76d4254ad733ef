"""How a model is loaded: the options every engine shares (the in-process one and llama-server's
command line), without importing llama.cpp, so that starting a server never loads it here."""

from __future__ import annotations

import os
from dataclasses import dataclass

# ggml's type numbers (enum ggml_type in ggml.h; llama_cpp.GGML_TYPE_*, checked by a test)
GGML_TYPE_F16 = 1
GGML_TYPE_Q8_0 = 8


def default_threads() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        cores = os.cpu_count() or 1
    # Beyond 4 logical cores assume SMT: llama.cpp is fastest on physical cores.
    return cores if cores <= 4 else cores // 2


@dataclass(frozen=True)
class LoadOptions:
    n_ctx: int = 4096  # context window in tokens
    n_batch: int = 512  # most tokens per llama_decode call
    n_threads: int = 0  # 0 = default_threads()
    n_gpu_layers: int = 0  # -1 = all layers on the GPU (CUDA/Metal builds only)
    # KV cache types. Not llama.cpp's default f16 keys: on the CPU backend f16 keys and values
    # send a single-token pass down a split-KV flash-attention path once the cache has >= 512
    # cells, whose other summation order makes one-at-a-time logits differ from batched ones
    # (up to 0.9 here) and greedy speculation drift from plain decoding. With q8_0 keys every
    # pass takes one path (bit-identical logits, tested). f16 values keep that path (it asks
    # for keys and values of one type) and it adds no dequantising per row: on the bundled
    # model at 1,500 cached tokens verify passes of 4-8 tokens take 0.79-0.82x the time of an
    # all-q8_0 cache and a 1,934-token prompt is read 1.22x faster (docs/weights.md), for 1.44x
    # the cache's memory (still 0.72x of llama.cpp's f16 default). llama.cpp's fastest prompt
    # path (f16 keys: tiled attention) reads long prompts 2.3x faster but is not exact: it is
    # used for long prompts only, in a second context (fast_prefill below).
    k_type: int | None = GGML_TYPE_Q8_0
    v_type: int | None = GGML_TYPE_F16
    # Long prompts are read in a second context with llama.cpp's fast f16 cache and handed to
    # this one (fast_prefill.py): llama.cpp's prompt speed, decoding still exact. False: every
    # prompt is read in this context (slower on long prompts: the per-row attention path).
    fast_prefill: bool = True
    # llama.cpp's extra buffer types: repacked weights for its batched CPU kernels (and AMX
    # tiles where compiled in). Off only where they crash this CPU (cpu_check.py), which the
    # first load finds out in a child process unless check_cpu is False.
    extra_buffers: bool = True
    check_cpu: bool = True
    # Recurrent models whose architecture has native rollback: how many of the latest pass's
    # tokens it can take back (llama.cpp's n_rs_seq; the state is kept once more per token).
    # Auto mode's longest verify pass is 17 tokens, of which at most 16 are ever taken back.
    rollback_tokens: int = 16
