"""Requests handed to the engine's thread that it has not begun yet.

The worker measures its models in the background (draftlight.engine.auto.measuring) only while none
waits, and a step under way stops at its next pass when one arrives. Requests come from the GUI
thread and from the window's local server's thread, hence the lock.
"""

from __future__ import annotations

import threading


class PendingWork:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0

    def arrive(self) -> None:
        """A request was queued for the worker (called before the queued signal is emitted)."""
        with self._lock:
            self._count += 1

    def begin(self) -> None:
        """The worker took one up."""
        with self._lock:
            self._count = max(0, self._count - 1)

    def waiting(self) -> bool:
        return self._count > 0
