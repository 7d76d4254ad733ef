"""This process's peak resident memory over a block, sampled by a thread (ru_maxrss is the
peak over the whole run, which an earlier test may already have set)."""

from __future__ import annotations

import threading

import psutil


class PeakMemory:
    """`with PeakMemory() as memory: ...` then `memory.growth_mb`: the peak over the block
    less where it started, sampled every 10 ms."""

    def __enter__(self) -> PeakMemory:
        self._process = psutil.Process()
        self.start = self.peak = self._process.memory_info().rss
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, name="peak memory", daemon=True)
        self._sampler.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.01):
            self.peak = max(self.peak, self._process.memory_info().rss)

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._sampler.join()

    @property
    def growth_mb(self) -> float:
        return (self.peak - self.start) / 2**20
