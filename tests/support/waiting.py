"""Waiting in the window's and the servers' tests: timeouts that grow with this machine's
measured slowness, and a timeout that says what was awaited and what the app was doing.

A fixed 60 s wait passes on a quiet fast machine and fails on one half its speed, or when the
suite runs beside other work. So each wait's limit is its base figure (set on the machines the
suite was written on) times `slowness()`: a fixed workload (a float32 matrix product, as a
model's pass is, and a Python loop, as the app's own bookkeeping is) timed once per session,
best of three, against what it took there. And a wait that still runs out names what it waited
for and the app's state then (status line, banner, whether a reply streams, what llama-server
printed last), instead of pytest-qt's bare "signal not emitted".
"""

from __future__ import annotations

import contextlib
import time
from typing import Callable, Iterator

import numpy as np
from pytestqt.exceptions import TimeoutError as QtTimeout

# The calibration workload's best time on the machines the base timeouts were set on (2 cores,
# measured beside a running suite: 0.087 s): one that takes twice as long waits twice as long.
REFERENCE_SECONDS = 0.080
MOST = 6.0  # a machine more than this much slower is broken, not slow: fail in bounded time

_slowness: float | None = None


def _workload() -> float:
    started = time.perf_counter()
    a = np.random.default_rng(0).standard_normal((384, 384), dtype=np.float32)
    for _ in range(8):
        a = np.tanh(a @ a.T / 384.0)
    total = 0
    for i in range(200_000):
        total += i % 7
    return time.perf_counter() - started


def slowness() -> float:
    """How many times slower than the reference this machine is now (1 to MOST), measured the
    first time it is asked in a session."""
    global _slowness
    if _slowness is None:
        best = min(_workload() for _ in range(3))
        _slowness = min(MOST, max(1.0, best / REFERENCE_SECONDS))
    return _slowness


def scaled(ms: int) -> int:
    """A wait of `ms` on the reference machine, on this one."""
    return int(ms * slowness())


def window_state(window) -> str:
    """What the window was doing, in one line: for a timeout's message."""
    parts = [f"status {window.status_label.text()!r}"]
    banner = window.banner
    if banner.isVisible():
        parts.append(f"banner {banner.label.text()[:200]!r}")
    parts.append(f"streaming={window.session.streaming} loading={window.models.loading} "
                 f"ready={window.models.ready} engine={window.models.engine_kind}")
    parts.append(f"engine thread running={window.engine.thread.isRunning()}")
    log = list(getattr(window.server_log, "lines", ()))[-4:]
    if log:
        parts.append("llama-server last printed: " + " | ".join(line[:120] for line in log))
    return "; ".join(parts)


def _timed_out(what: str, ms: int, state: Callable[[], str] | None) -> AssertionError:
    said = f"waited {ms / 1000:.0f} s ({slowness():.1f}x the reference) for {what}"
    return AssertionError(f"{said}; the app then: {state()}" if state else said)


@contextlib.contextmanager
def waiting_for(qtbot, signal, what: str, ms: int,
                state: Callable[[], str] | None = None) -> Iterator:
    """qtbot.waitSignal with a scaled limit and a timeout that says what it waited for."""
    limit = scaled(ms)
    try:
        with qtbot.waitSignal(signal, timeout=limit) as blocker:
            yield blocker
    except QtTimeout:
        raise _timed_out(what, limit, state) from None


def wait_until(qtbot, condition: Callable[[], bool], what: str, ms: int,
               state: Callable[[], str] | None = None) -> None:
    """qtbot.waitUntil with a scaled limit and a timeout that says what it waited for."""
    limit = scaled(ms)
    try:
        qtbot.waitUntil(condition, timeout=limit)
    except (QtTimeout, AssertionError):
        if condition():
            return
        raise _timed_out(what, limit, state) from None
