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
        if k in self.v:  # a timed length: no search (auto asks at every step)
            return self.v[k]
        ks = sorted(self.v)
        if k > ks[-1]:
            a, b = ks[-2], ks[-1]
            slope = (self.v[b] - self.v[a]) / (b - a)
            return self.v[b] + slope * (k - b)
        below = max(x for x in ks if x < k)
        above = min(x for x in ks if x > k)
        t = (k - below) / (above - below)
        return self.v[below] + t * (self.v[above] - self.v[below])


# What auto prices passes by until this machine's curve is timed (measuring.py): the median,
# for each k, of the CPU curves measured on this project's 2-core machines (SmolLM2-135M Q8_0
# and Qwen2.5-Coder-1.5B Q4_K_M, AVX2 EPYCs and AVX-512 Xeons: v(2) 1.34-2.25, v(4) 1.92-3.69,
# v(8) 2.96-6.92, v(16) 5.44-8.68), so that a copy nearly sure to be right is drafted from the
# first reply of a fresh home, as n-gram mode drafts it. It was dearer than any curve measured
# (v(16) 13.0), and a newcomer's first minutes showed no colour (issue 74). Where this machine
# is dearer, the passes that run correct it within a few of each length (OnlineCosts, which
# trusts a prior's corrections after PRIOR_SEEN passes), and the first timed round replaces it.
PRIOR = BatchCosts({1: 1.0, 2: 1.85, 4: 2.75, 8: 5.0, 16: 7.7})


class OnlineCosts:
    """v(k) from the curve measured at load, corrected by the passes that really run.

    The load-time curve comes from a few seconds of back-to-back passes; real passes run between
    other work, at other context lengths, while other programs come and go (here a 2-token pass
    timed 1.7x at load and 2.0x in use, enough to make every 1-token draft a loss). Each pass
    of k > 1 tokens is divided by the median of the latest RECENT one-token passes, which ran
    at about the same context length and machine load; once a k has SEEN_ENOUGH such ratios,
    the median of its latest WINDOW replaces the measured v(k), and an unseen k is scaled by
    the correction of the nearest seen k below it. The result is kept non-decreasing and
    refreshed every REFRESH_EVERY passes that brought new ratios.
    """

    RECENT = 9
    WINDOW = 64
    SEEN_ENOUGH = 8
    PRIOR_SEEN = 3  # ... or this many where `measured` is only the PRIOR, never timed here
    REFRESH_EVERY = 8

    def __init__(self, measured: BatchCosts) -> None:
        self.measured = measured
        self.seen_enough = self.PRIOR_SEEN if measured is PRIOR else self.SEEN_ENOUGH
        self._ones: deque[float] = deque(maxlen=self.RECENT)
        self._one_median: float | None = measured.token_seconds  # None: to be worked out
        self._ratios: dict[int, deque[float]] = {}
        self._curve: dict[int, float] = {}
        self._pending = 0  # passes since the curve was last worked out
        self._unrefreshed = False  # ratios added since then

    @property
    def token_seconds(self) -> float:
        """A one-token pass now: the median of the latest RECENT (the timed one before any)."""
        if self._one_median is None:
            self._one_median = statistics.median(self._ones)
        return self._one_median

    def observe(self, k: int, seconds: float) -> None:
        """A target pass over k tokens took `seconds`. A one-token pass only files its time
        (auto's own work at every step where it drafts nothing: kept to a few microseconds);
        a pass of k > 1 adds a ratio, and every REFRESH_EVERY ratios the curve is worked out
        again (at once when a length has just been seen enough)."""
        self._pending += 1
        if k <= 1:
            self._ones.append(seconds)
            self._one_median = None
            if self._pending >= self.REFRESH_EVERY and self._unrefreshed:
                self._refresh()
            return
        if len(self._ones) < 3:
            return
        ratios = self._ratios.setdefault(k, deque(maxlen=self.WINDOW))
        ratios.append(seconds / self.token_seconds)
        self._unrefreshed = True
        if self._pending >= self.REFRESH_EVERY or len(ratios) == self.seen_enough:
            self._refresh()

    def _refresh(self) -> None:
        self._pending, self._unrefreshed = 0, False
        correction = {k: statistics.median(ratios) / self.measured(k)
                      for k, ratios in self._ratios.items() if len(ratios) >= self.seen_enough}
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
