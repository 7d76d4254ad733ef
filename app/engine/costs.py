"""How much a target pass over k tokens costs compared with one token, on this machine.

v(k) = time to evaluate k new tokens in one batch / time for 1. On a GPU it stays near 1 for
small k; on a CPU it grows ~0.3–0.6 per token, which is what decides whether drafting pays.
Measured once per model and machine (a second or two) and cached in the cache folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path

from app import paths
from app.engine.backend import Backend

MEASURED_K = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16)
# Measure with a chat-sized context in the cache: every extra query row also attends over it,
# so v(k) after a few dozen tokens is too optimistic for a real conversation.
CONTEXT_TOKENS = 384
REPEATS = 7
CURVE_VERSION = 3  # part of the cache key: curves measured the old way are not reused


@dataclass
class BatchCosts:
    v: dict[int, float] = field(default_factory=lambda: {1: 1.0})  # k -> relative cost
    token_seconds: float = 0.0  # one-token target pass, seconds

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


def measure(backend: Backend, probe_tokens: list[int]) -> BatchCosts:
    """Time passes of k tokens after CONTEXT_TOKENS tokens; the fastest of REPEATS runs (other
    processes only ever add time, so the minimum is the least disturbed), forced non-decreasing.
    The k values take turns within each round, so a burst of load elsewhere slows a few runs of
    every k instead of all runs of one k."""
    tokens = _probe(probe_tokens)
    context, extra = tokens[:CONTEXT_TOKENS], tokens[CONTEXT_TOKENS:CONTEXT_TOKENS + 16]
    backend.truncate(0)
    backend.eval(context, n_logits=0)
    backend.eval(extra[:1], n_logits=1)  # warm up
    backend.truncate(CONTEXT_TOKENS)
    seconds = {k: float("inf") for k in MEASURED_K}
    for _ in range(REPEATS):
        for k in MEASURED_K:
            start = time.perf_counter()
            backend.eval(extra[:k], n_logits=k)
            seconds[k] = min(seconds[k], time.perf_counter() - start)
            backend.truncate(CONTEXT_TOKENS)
    v, floor = {}, 1.0
    for k in MEASURED_K:
        floor = max(floor, seconds[k] / seconds[1])
        v[k] = floor
    backend.truncate(0)
    return BatchCosts(v, seconds[1])


def token_seconds(backend: Backend, probe_tokens: list[int]) -> float:
    """Fastest one-token pass after CONTEXT_TOKENS tokens (for the draft/target cost ratio)."""
    tokens = _probe(probe_tokens)
    backend.truncate(0)
    backend.eval(tokens[:CONTEXT_TOKENS], n_logits=0)
    samples = []
    for token in tokens[CONTEXT_TOKENS:CONTEXT_TOKENS + REPEATS]:
        start = time.perf_counter()
        backend.eval([token], n_logits=1)
        samples.append(time.perf_counter() - start)
    backend.truncate(0)
    return min(samples)


def _probe(probe_tokens: list[int]) -> list[int]:
    """The probe text repeated to CONTEXT_TOKENS + 20 tokens at least."""
    return probe_tokens * (1 + (CONTEXT_TOKENS + 20) // max(len(probe_tokens), 1))


def cache_key(model_path: Path, *parts: object) -> str:
    """Model file identity + machine + settings that change speed."""
    stat = model_path.stat()
    machine = (platform.machine(), platform.processor(), os.cpu_count(), _cpu_model())
    raw = json.dumps([CURVE_VERSION, str(model_path.resolve()), stat.st_size, stat.st_mtime_ns,
                      machine, [str(p) for p in parts]])
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def _cache_file() -> Path:
    return paths.cache_dir() / "batch_costs.json"


def load_cached(key: str) -> dict | None:
    try:
        return json.loads(_cache_file().read_text()).get(key)
    except (OSError, ValueError, AttributeError):
        return None


def store_cached(key: str, value: dict) -> None:
    path = _cache_file()
    try:
        data = json.loads(path.read_text()) if path.exists() else {}
        if not isinstance(data, dict):
            data = {}
    except (OSError, ValueError):
        data = {}
    data[key] = value
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)
