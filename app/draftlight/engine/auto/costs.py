"""How much a target pass over k tokens costs compared with one token, on this machine: timed
and cached here; the curve itself (BatchCosts, PRIOR, OnlineCosts) is cost_curve.py's.

v(k) = time to evaluate k new tokens in one batch / time for 1. On a GPU it stays near 1 for
small k; on a CPU it grows ~0.3–0.6 per token, which is what decides whether drafting pays.
Measured once per model and machine (a second or two) and cached in the cache folder
(disk_cache.py; bump its KEY_VERSION when curves are measured another way).
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

# the curve itself (importable from here too, as before)
from draftlight.engine.auto.cost_curve import PRIOR, BatchCosts, OnlineCosts  # noqa: F401
from draftlight.engine.core.backend import LanguageModel
from draftlight.engine.core.disk_cache import cache_key, load_cached, store_cached

MEASURED_K = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16)
# Measure with a chat-sized context in the cache: every extra query row also attends over it,
# so v(k) after a few dozen tokens is too optimistic for a real conversation.
CONTEXT_TOKENS = 384
REPEATS = 7
# A curve timed while other programs kept the CPU busy prices every draft too high, and auto,
# which then never drafts, never runs the passes that would correct it (OnlineCosts sees only
# the k it runs): seen here, v(2) timed 2.65 beside a running test suite, 1.68 quiet, and auto
# drafted nothing on the README's demo while n-gram mode copied it. So each curve keeps the
# load it was timed under, and a later load that finds the machine at least QUIETER runnable
# processes per core less busy times it again and keeps, for each k, the cheaper figure (other
# work only ever adds time). A v(k) too low corrects itself once passes of k run; one too high
# never would.
QUIETER = 0.5


def context_length(backend: LanguageModel) -> int:
    """Tokens cached before the timed passes: CONTEXT_TOKENS, or less in a small context window
    (the timed passes must fit after them)."""
    return max(0, min(CONTEXT_TOKENS, backend.n_ctx - max(MEASURED_K) - REPEATS - 1))


def measure(backend: LanguageModel, probe_tokens: list[int]) -> BatchCosts:
    """Time passes of k tokens after context_length() tokens; the fastest of REPEATS runs (other
    processes only ever add time, so the minimum is the least disturbed), forced non-decreasing.
    The k values take turns within each round, so a burst of load elsewhere slows a few runs of
    every k instead of all runs of one k.

    Each round's figures are kept on disk as it ends (a model loaded from a file): a timing
    that a request interrupts, a crash ends or a model change closes resumes there on this
    model the next time, instead of starting again (on a 1.5B model on a busy 2-core CPU,
    timing from scratch after every request kept "timing passes" on for 25 minutes)."""
    tokens = _probe(probe_tokens)
    cached = context_length(backend)
    context, extra = tokens[:cached], tokens[cached:cached + max(MEASURED_K)]
    key = _partial_key(backend)
    seconds, rounds = _resumed(key)
    backend.truncate(0)
    backend.eval(context, n_logits=0)
    backend.checkpoint()  # a recurrent model comes back here without re-reading the context
    backend.eval(extra[:1], n_logits=1)  # warm up
    backend.truncate(cached)
    for _ in range(rounds, REPEATS):
        for k in MEASURED_K:
            start = time.perf_counter()
            backend.eval(extra[:k], n_logits=k)
            seconds[k] = min(seconds[k], time.perf_counter() - start)
            backend.truncate(cached)
        rounds += 1
        if key is not None and rounds < REPEATS:
            store_cached(key, {"rounds": rounds, "seconds": seconds})
    v = _relative(seconds)
    checkpoint, restore = 0.0, 0.0
    if getattr(backend, "rollback", "cut") == "checkpoint":
        checkpoint, restore = _rollback_seconds(backend, cached, extra)
    backend.truncate(0)
    if key is not None and rounds > 0:
        store_cached(key, {})  # done: the next timing starts afresh
    return BatchCosts(v, seconds[1], checkpoint / seconds[1], restore / seconds[1])


def _partial_key(backend) -> str | None:
    """Where measure() keeps its finished rounds for this model; None for a model not loaded
    from a file (tests' fakes)."""
    if getattr(backend, "path", None) is None or getattr(backend, "options", None) is None:
        return None
    return _costs_key(backend, "target-rounds")


def _partial_curve(backend) -> BatchCosts | None:
    """The curve of a timing's finished rounds (measure() goes on from them), or None: none
    finished, or a target that rolls back from checkpoints (their cost is timed last)."""
    if getattr(backend, "rollback", "cut") == "checkpoint":
        return None
    seconds, rounds = _resumed(_partial_key(backend))
    if not rounds:
        return None
    return BatchCosts(_relative(seconds), seconds[1])


def _relative(seconds: dict[int, float]) -> dict[int, float]:
    """v(k): each k's fastest pass over the one-token pass, forced non-decreasing."""
    v, floor = {}, 1.0
    for k in MEASURED_K:
        floor = v[k] = max(floor, seconds[k] / seconds[1])
    return v


def _resumed(key: str | None) -> tuple[dict[int, float], int]:
    """(the fastest pass of each k so far, rounds done) of a timing interrupted earlier."""
    seconds = {k: float("inf") for k in MEASURED_K}
    kept = load_cached(key) if key is not None else None
    try:
        rounds = int(kept["rounds"])
        earlier = {int(k): float(v) for k, v in kept["seconds"].items()}
    except (TypeError, KeyError, ValueError, AttributeError):
        return seconds, 0
    if not 0 < rounds < REPEATS or set(earlier) != set(MEASURED_K) or not all(
            0.0 < v < math.inf for v in earlier.values()):
        return seconds, 0
    return earlier, rounds


def _rollback_seconds(backend, cached: int, extra: list[int]) -> tuple[float, float]:
    """(take a state checkpoint, restore it) in seconds, the fastest of REPEATS: a 4-token pass
    after the checkpoint is rolled back to its first token, which is then evaluated again; the
    restore is that truncate less one one-token pass."""
    take, back, one = (float("inf"),) * 3
    for _ in range(REPEATS):
        start = time.perf_counter()
        backend.checkpoint()
        take = min(take, time.perf_counter() - start)
        backend.eval(extra[:4], n_logits=4)
        start = time.perf_counter()
        backend.truncate(cached + 1)
        back = min(back, time.perf_counter() - start)
        backend.truncate(cached)
        start = time.perf_counter()
        backend.eval(extra[:1], n_logits=1)
        one = min(one, time.perf_counter() - start)
        backend.truncate(cached)
    return take, max(back - one, 0.0)


def token_seconds(backend: LanguageModel, probe_tokens: list[int]) -> float:
    """Fastest one-token pass after context_length() tokens (for the draft/target cost ratio)."""
    tokens = _probe(probe_tokens)
    cached = context_length(backend)
    backend.truncate(0)
    backend.eval(tokens[:cached], n_logits=0)
    samples = []
    for token in tokens[cached:cached + REPEATS]:
        start = time.perf_counter()
        backend.eval([token], n_logits=1)
        samples.append(time.perf_counter() - start)
    backend.truncate(0)
    return min(samples)


def _costs_key(backend, role: str) -> str:
    options = backend.options
    return cache_key(backend.path, role, options.n_threads, options.n_gpu_layers,
                     options.n_batch, context_length(backend), options.k_type, options.v_type,
                     getattr(backend, "build", ""))


def known_costs(backend, role: str) -> tuple[BatchCosts | None, bool]:
    """(the curve cached for this model file, settings, llama.cpp build and machine, or None;
    whether to time it again because the machine is QUIETER now than then). Nothing is timed:
    a model not loaded from a file (tests' fakes) has no entry."""
    if getattr(backend, "path", None) is None or getattr(backend, "options", None) is None:
        return None, False
    cached = load_cached(_costs_key(backend, role))
    if not cached and role == "target":  # a timing cut short: its finished rounds, to go on
        return _partial_curve(backend), True
    if not cached or ("checkpoint" not in cached
                      and getattr(backend, "rollback", "") == "checkpoint"):
        return None, False  # never timed, or before rollback from checkpoints was priced
    curve = BatchCosts({int(k): v for k, v in cached["v"].items()}, cached["token_seconds"],
                       cached.get("checkpoint", 0.0), cached.get("restore", 0.0))
    load, then = machine_load(), cached.get("load", math.inf)  # inf: timed before loads were kept
    quieter = load is not None and then is not None and load <= then - QUIETER
    return curve, quieter


def cached_costs(backend, probe: list[int], role: str) -> tuple[BatchCosts, float]:
    """(v(k) curve, one-token seconds) for a loaded model (a llama_backend.LlamaBackend: its
    file, load options and build are part of the cache key), from the cache or timed now, and
    timed again when the machine is quieter than it was then (QUIETER). A draft model is
    timed for one-token passes only (its cost per drafted token)."""
    curve, quieter = known_costs(backend, role)
    if curve is not None and not quieter:
        return curve, curve.token_seconds
    load = machine_load()  # before the timing, which adds its own
    if role == "draft":
        timed = BatchCosts({1: 1.0}, token_seconds(backend, probe))
    else:
        timed = measure(backend, probe)
    curve = curve.cheaper(timed) if curve is not None else timed
    store_cached(_costs_key(backend, role),
                 {"v": curve.v, "token_seconds": curve.token_seconds,
                  "checkpoint": curve.checkpoint, "restore": curve.restore,
                  "load": load})
    if role != "draft" and backend.options.n_gpu_layers == 0:
        store_cached(_verify_key(backend.path), {"v8": curve(8)})
    return curve, curve.token_seconds


def machine_load() -> float | None:
    """Runnable processes per core over the last minute; None where the system does not say."""
    try:
        return os.getloadavg()[0] / (os.cpu_count() or 1)
    except (AttributeError, OSError):
        return None


def measured_verify_cost(model_path: Path) -> float | None:
    """v(8) of this file as last measured on this machine's CPU (None: never measured)."""
    try:
        cached = load_cached(_verify_key(Path(model_path)))
    except OSError:  # the file is gone
        return None
    return float(cached["v8"]) if cached and "v8" in cached else None


def _verify_key(model_path: Path) -> str:
    return cache_key(model_path, "verify-v8")


def _probe(probe_tokens: list[int]) -> list[int]:
    """The probe text repeated to CONTEXT_TOKENS + 20 tokens at least."""
    return repeat_to(probe_tokens, CONTEXT_TOKENS + 20)


def repeat_to(tokens: list[int], length: int) -> list[int]:
    """`tokens` repeated until there are at least `length` of them."""
    return tokens * (1 + length // max(len(tokens), 1))
