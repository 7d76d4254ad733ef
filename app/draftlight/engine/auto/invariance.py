"""Does a target pass over several tokens give the same logits as one token at a time?

Greedy speculation is token-identical to plain decoding only if it does. On llama.cpp's CPU
backend with a q8_0 KV cache it does, bit for bit, for Q4_0, Q4_1 and Q8_0 weights; not for
K-quants (Q4_K_M, Q6_K…), the type most models are downloaded in: a logit gap moves by up to
0.3-0.4 between the two (SmolLM2 re-quantised to Q4_K_M, Gemma 3 270M; Qwen2.5-Coder 1.5B), with
or without the repacked weight buffers (`use_extra_bufts`) and with one thread too. A GPU
backend may differ as well.

The difference is not only in the verified rows but in the keys and values a batched pass
writes to the cache, which every later token attends to. Re-evaluating near-tie rows one token
at a time was tried and changed nothing (SmolLM2 Q4_K_M, 11 prompts x n-gram and auto, 64
tokens: 18 of 22 replies identical to plain decoding with and without it), and an exact cache
would mean evaluating every accepted token alone, i.e. plain decoding. So where the difference
exists it is measured and disclosed, never hidden: once per model, backend and settings
(cached), a probe decodes a few tokens one at a time and again in one pass, after a short and a
longer context, and records the largest change of a gap between a row's top token and its
runner-up candidates. Replies, Compare and the bench show `describe()` when it is not 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from draftlight.engine.auto import costs
from draftlight.engine.core import disk_cache
from draftlight.engine.core.backend import LanguageModel

PROBE_CONTEXTS = (40, 300)  # tokens cached before the comparison (fewer in a small window)
PROBE_TOKENS = 8  # tokens decoded one at a time and then in one pass
TOP = 8  # candidates per row whose gap to the top token is compared


@dataclass(frozen=True)
class BatchDrift:
    """How far batched logits strayed from one-token ones on the load-time probe."""

    gap_change: float  # largest |Δ(logit(top) − logit(candidate))| over the probe's rows

    @property
    def exact(self) -> bool:
        return self.gap_change == 0.0

    def describe(self) -> str:
        if self.exact:
            return "greedy identity exact: batched and one-token logits are bit-identical"
        return (f"greedy identity not guaranteed here: max logit difference "
                f"{self.gap_change:.2g} between batched and one-token passes")


def measure_drift(model: LanguageModel, probe_tokens: list[int]) -> BatchDrift:
    """Compare one-token and batched evaluation of PROBE_TOKENS tokens after each context."""
    tokens = costs.repeat_to(probe_tokens, max(PROBE_CONTEXTS) + PROBE_TOKENS)
    worst = 0.0
    for context in PROBE_CONTEXTS:
        context = max(1, min(context, model.n_ctx - PROBE_TOKENS - 1))
        extra = tokens[context:context + PROBE_TOKENS]
        model.truncate(0)
        model.eval(tokens[:context], n_logits=0)
        model.checkpoint()  # a recurrent model comes back here without re-reading the context
        one_at_a_time = np.stack([model.eval([t], n_logits=1)[0] for t in extra])
        model.truncate(context)
        batched = model.eval(extra, n_logits=len(extra))
        for single, batch in zip(one_at_a_time, batched):
            top = np.argsort(-single)[:TOP]
            gaps_single = single[top[0]] - single[top[1:]]
            gaps_batch = batch[top[0]] - batch[top[1:]]
            worst = max(worst, float(np.abs(gaps_single - gaps_batch).max()))
    model.truncate(0)
    return BatchDrift(worst)


def _drift_key(model) -> str | None:
    path, options = getattr(model, "path", None), getattr(model, "options", None)
    if path is None or options is None:
        return None
    return disk_cache.cache_key(path, "batch-drift", options.n_threads, options.n_gpu_layers,
                                options.n_batch, options.k_type, options.v_type,
                                options.fast_prefill, getattr(model, "build", ""))


def known_drift(model: LanguageModel) -> BatchDrift | None:
    """The drift cached for this model file, settings, llama.cpp build and machine; None where
    it was never measured (or the model is not from a file)."""
    key = _drift_key(model)
    cached = disk_cache.load_cached(key) if key else None
    if cached and isinstance(cached.get("gap_change"), (int, float)):
        return BatchDrift(float(cached["gap_change"]))
    return None


def cached_drift(model: LanguageModel, probe_tokens: list[int]) -> BatchDrift:
    """known_drift, else measure_drift (kept in the cache for a model loaded from a file)."""
    known = known_drift(model)
    if known is not None:
        return known
    drift = measure_drift(model, probe_tokens)
    key = _drift_key(model)
    if key:
        disk_cache.store_cached(key, {"gap_change": drift.gap_change})
    return drift
