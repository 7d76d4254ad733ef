"""What a download says while it runs: its state (JobState), the progress a caller is told
(DownloadProgress: bytes on disk, total, speed, time left, bytes kept from an earlier attempt),
and the speed measured over the last few seconds (SpeedMeter). store/downloads.py's DownloadJob
reports through these; the picker's and the terminal's progress bars read them."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from enum import Enum

PROGRESS_INTERVAL_S = 0.1  # at most ten progress events a second (plus state changes)
SPEED_WINDOW_S = 3.0


class JobState(Enum):
    QUEUED = "queued"
    CHECKING = "checking"  # asking the hub for size and hash, checking disk space
    WAITING = "waiting"  # for another Draftlight downloading the same file, then using it
    DOWNLOADING = "downloading"
    VERIFYING = "verifying"  # sha256 of the complete file
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        return self in (JobState.DONE, JobState.FAILED, JobState.CANCELLED)


@dataclass(frozen=True)
class DownloadProgress:
    state: JobState
    downloaded: int = 0  # bytes on disk, including those kept from an earlier attempt
    total: int | None = None
    speed: float = 0.0  # bytes per second over the last few seconds
    eta: float | None = None  # seconds left at that speed
    resumed_from: int = 0  # bytes that were already on disk when this run started

    @property
    def fraction(self) -> float | None:
        return self.downloaded / self.total if self.total else None


class SpeedMeter:
    """Bytes per second over the last SPEED_WINDOW_S seconds (at least two samples kept)."""

    def __init__(self) -> None:
        self._samples: deque[tuple[float, int]] = deque()

    def add(self, now: float, downloaded: int) -> None:
        self._samples.append((now, downloaded))
        while len(self._samples) > 2 and now - self._samples[0][0] > SPEED_WINDOW_S:
            self._samples.popleft()

    def speed(self) -> float | None:
        """None until two samples at different times."""
        if len(self._samples) >= 2 and self._samples[-1][0] > self._samples[0][0]:
            (t0, b0), (t1, b1) = self._samples[0], self._samples[-1]
            return (b1 - b0) / (t1 - t0)
        return None
