"""The cost curve auto prices drafts on: v(k), a target pass over k tokens against one token
(BatchCosts, interpolated between measured k), the PRIOR auto uses until this machine's curve is
timed, and OnlineCosts, the timed curve corrected by the passes that really run. No timing here:
engine/auto/costs.py measures and caches the curve."""

from __future__ import annotations

import statistics
from collections import deque
from dataclasses import dataclass, field


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
