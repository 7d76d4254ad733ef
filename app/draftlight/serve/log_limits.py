"""A bound on what serve writes to its log. A log line per connection is a second way to be
flooded: under a 256-descriptor limit asyncio (before Python 3.12) logs a traceback for each
failed accept and schedules one retry per connection waiting, and serve wrote 496 MB of them in
75 s; uvicorn warns once per malformed request. So each of the loggers serve's HTTP side writes
to passes at most BURST lines at once and then one every REFILL_SECONDS; what it holds back is
counted, and the next line it lets through says how many.
"""

from __future__ import annotations

import logging
import threading
import time

BURST = 10  # lines a logger may write at once
REFILL_SECONDS = 6.0  # then one more every this long: 10 a minute
LOGGERS = ("uvicorn.error", "asyncio", "draftlight.serve")


class LineBudget(logging.Filter):
    """A logging filter that lets a logger's lines through at a bounded rate (a token bucket)."""

    def __init__(self, burst: int = BURST, refill_seconds: float = REFILL_SECONDS) -> None:
        super().__init__()
        self.burst, self.refill_seconds = burst, refill_seconds
        self._tokens, self._at = float(burst), time.monotonic()
        self._held_back = 0
        self._lock = threading.Lock()  # loggers are called from any thread

    def filter(self, record: logging.LogRecord) -> bool:
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._at) / self.refill_seconds)
            self._at = now
            if self._tokens < 1:
                self._held_back += 1
                return False
            self._tokens -= 1
            held, self._held_back = self._held_back, 0
        if held:  # said in the line itself: a handler may format it any way it likes
            record.msg = f"({held} similar log lines left out) {record.msg}"
        return True


def limit_serve_logs() -> None:
    """Put a LineBudget on each of LOGGERS, once per process (uvicorn configures its loggers
    when a server is made, and keeps filters it did not make)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, LineBudget) for f in logger.filters):
            logger.addFilter(LineBudget())
