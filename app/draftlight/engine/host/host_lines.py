"""The host's answers as the app reads them (hosted.py): one JSON line each, on the thread that
waits for them."""

from __future__ import annotations

import os
import queue
import select
import sys
import threading

from draftlight.engine.host import wire
from draftlight.engine.core.errors import EngineError


class HostLines:
    """The host's messages, read on the thread that waits for them: one wake-up a line (a
    reader thread would add a second one, and on two cores every wake-up takes a core from
    llama.cpp mid-pass). Windows, whose pipes `select` cannot wait on, reads on a thread."""

    def __init__(self, stream) -> None:
        self._fd = stream.fileno()
        self._buffer = b""
        self._ended = False
        self._queue: queue.Queue | None = None
        if sys.platform == "win32":
            self._queue = queue.Queue()
            threading.Thread(target=self._read_all, args=(stream,), daemon=True,
                             name="engine host").start()

    def next(self, timeout: float) -> dict | None:
        """The next message; None once the host has ended; queue.Empty after `timeout`."""
        if self._queue is not None:
            return self._queue.get(timeout=timeout)
        while b"\n" not in self._buffer:
            if self._ended:
                return None
            ready, _, _ = select.select([self._fd], [], [], timeout)
            if not ready:
                raise queue.Empty
            try:
                chunk = os.read(self._fd, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                self._ended = True
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            return wire.decode(line)
        except (ValueError, EngineError):
            return self.next(timeout)

    def _read_all(self, stream) -> None:
        try:
            for line in stream:
                try:
                    self._queue.put(wire.decode(line))
                except (ValueError, EngineError):
                    continue
        except (OSError, ValueError):
            pass
        self._queue.put(None)
