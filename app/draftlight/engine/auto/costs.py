"""How much a target pass over k tokens costs compared with one token, on this machine.

v(k) = time to evaluate k new tokens in one batch / time for 1. On a GPU it stays near 1 for
small k; on a CPU it grows ~0.3–0.6 per token, which is what decides whether drafting pays.
Measured once per model and machine (a second or two) and cached in the cache folder
(disk_cache.py; bump its KEY_VERSION when curves are measured another way).
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

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


@dataclass
class BatchCosts:
    v: dict[int, float] = field(default_factory=lambda: {1: 1.0})  # k -> relative cost
    token_seconds: float = 0.0  # one-token target pass, seconds
    # A recurrent target that rolls back from a copy of its state (llama_backend's
    # "checkpoint"): taking the copy before a verify pass, and restoring it after a rejection
    # (before the kept tokens are evaluated again: a pass of their number, priced by v), in
    # one-token passes. Both 0 where the cache is cut for free.
    checkpoint: float = 0.0
    restore: float = 0.0

    @property
    def replays(self) -> bool:
        """Whether a rejected draft costs a restore and a pass over the kept tokens."""
        return self.checkpoint > 0.0 or self.restore > 0.0

    def cheaper(self, other: "BatchCosts") -> "BatchCosts":
        """Each figure the lower of the two timings' (both timed the same way)."""
        v = {k: min(self.v[k], other.v.get(k, self.v[k])) for k in self.v}
        floor = 1.0
        for k in sorted(v):  # still non-decreasing
            floor = v[k] = max(floor, v[k])
        return BatchCosts(v, min(self.token_seconds, other.token_seconds),
                          min(self.checkpoint, other.checkpoint),
                          min(self.restore, other.restore))

    def __call__(self, k: int) -> float:
        """v(k), interpolated between measured points; linear beyond the last one."""
        if k <= 1:
            return 1.0
        ks = sorted(self.v)
        if k in self.v:
            return self.v[k]
        if k > ks[-1]:
            a, b = ks[-2], ks[-1]
            slope = (self.v[b] - self.v[a]) / (b - a)
            return self.v[b] + slope * (k - b)
        below = max(x for x in ks if x < k)
        above = min(x for x in ks if x > k)
        t = (k - below) / (above - below)
        return self.v[below] + t * (self.v[above] - self.v[below])


# What auto prices passes by until this machine's curve is timed (measuring.py): dearer than any
# CPU curve measured here (v(2) 1.6-1.8, v(8) 3.4-6.5, v(16) 6.2-9.1: SmolLM2 Q8_0 and
# Qwen2.5-Coder-1.5B Q4_K_M on 2 cores), so a draft of k tokens is checked only where nearly
# all of it is expected to be right, as a copy of the conversation is. The passes that then run
# correct it (OnlineCosts), and the timed curve replaces it.
PRIOR = BatchCosts({1: 1.0, 2: 1.8, 4: 3.4, 8: 6.6, 16: 13.0})


class OnlineCosts:
    """v(k) from the curve measured at load, corrected by the passes that really run.

    The load-time curve comes from a few seconds of back-to-back passes; real passes run between
    other work, at other context lengths, while other programs come and go (here a 2-token pass
    timed 1.7x at load and 2.0x in use, enough to make every 1-token draft a loss). Each pass
    of k > 1 tokens is divided by the median of the latest RECENT one-token passes, which ran
    at about the same context length and machine load; once a k has SEEN_ENOUGH such ratios,
    the median of its latest WINDOW replaces the measured v(k), and an unseen k is scaled by
    the correction of the nearest seen k below it. The result is kept non-decreasing and
    refreshed every REFRESH_EVERY passes.
    """

    RECENT = 9
    WINDOW = 64
    SEEN_ENOUGH = 8
    REFRESH_EVERY = 8

    def __init__(self, measured: BatchCosts) -> None:
        self.measured = measured
        self.token_seconds = measured.token_seconds
        self._ones: deque[float] = deque(maxlen=self.RECENT)
        self._ratios: dict[int, deque[float]] = {}
        self._curve: dict[int, float] = {}
        self._pending = 0

    def observe(self, k: int, seconds: float) -> None:
        """A target pass over k tokens took `seconds`."""
        if k <= 1:
            self._ones.append(seconds)
            self.token_seconds = statistics.median(self._ones)
        elif len(self._ones) >= 3:
            ratio = seconds / statistics.median(self._ones)
            self._ratios.setdefault(k, deque(maxlen=self.WINDOW)).append(ratio)
        self._pending += 1
        if self._pending >= self.REFRESH_EVERY:
            self._refresh()

    def _refresh(self) -> None:
        self._pending = 0
        correction = {k: statistics.median(ratios) / self.measured(k)
                      for k, ratios in self._ratios.items() if len(ratios) >= self.SEEN_ENOUGH}
        self._curve = {}
        if not correction:
            return
        top = max(max(correction), max(self.measured.v))
        scale, floor = 1.0, 1.0
        for k in range(2, top + 1):
            scale = correction.get(k, scale)
            floor = max(floor, self.measured(k) * scale)
            self._curve[k] = floor

    def __call__(self, k: int) -> float:
        if k <= 1:
            return 1.0
        value = self._curve.get(k)
        if value is not None:
            return value
        if not self._curve:
            return self.measured(k)
        top = len(self._curve) + 1  # the curve holds 2..top: beyond it, the measured slope
        return self._curve[top] + self.measured(k) - self.measured(top)


def context_length(backend: LanguageModel) -> int:
    """Tokens cached before the timed passes: CONTEXT_TOKENS, or less in a small context window
    (the timed passes must fit after them)."""
    return max(0, min(CONTEXT_TOKENS, backend.n_ctx - max(MEASURED_K) - REPEATS - 1))


def measure(backend: LanguageModel, probe_tokens: list[int]) -> BatchCosts:
    """Time passes of k tokens after context_length() tokens; the fastest of REPEATS runs (other
    processes only ever add time, so the minimum is the least disturbed), forced non-decreasing.
    The k values take turns within each round, so a burst of load elsewhere slows a few runs of
    every k instead of all runs of one k."""
    tokens = _probe(probe_tokens)
    cached = context_length(backend)
    context, extra = tokens[:cached], tokens[cached:cached + max(MEASURED_K)]
    backend.truncate(0)
    backend.eval(context, n_logits=0)
    backend.checkpoint()  # a recurrent model comes back here without re-reading the context
    backend.eval(extra[:1], n_logits=1)  # warm up
    backend.truncate(cached)
    seconds = {k: float("inf") for k in MEASURED_K}
    for _ in range(REPEATS):
        for k in MEASURED_K:
            start = time.perf_counter()
            backend.eval(extra[:k], n_logits=k)
            seconds[k] = min(seconds[k], time.perf_counter() - start)
            backend.truncate(cached)
    v, floor = {}, 1.0
    for k in MEASURED_K:
        floor = max(floor, seconds[k] / seconds[1])
        v[k] = floor
    checkpoint, restore = 0.0, 0.0
    if getattr(backend, "rollback", "cut") == "checkpoint":
        checkpoint, restore = _rollback_seconds(backend, cached, extra)
    backend.truncate(0)
    return BatchCosts(v, seconds[1], checkpoint / seconds[1], restore / seconds[1])


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
