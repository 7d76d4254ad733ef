"""Calls that run on a thread pool and answer on the GUI thread, where only the newest request
of each kind counts: typing a second search before the first one answers must not show the
first one's results over the second's."""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal, Slot


class LatestRequests(QObject):
    """`run(kind, call, on_done)`: `call()` on a worker, then `on_done(result)` on the GUI
    thread, unless a newer request of the same kind was made meanwhile."""

    failed = Signal(object)  # the exception of the newest request of its kind
    _finished = Signal(int, object, object)  # request number, (kind, on_done, on_error), result

    def __init__(self, parent: QObject | None = None, *, workers: int = 2,
                 thread_name_prefix: str = "request") -> None:
        super().__init__(parent)
        self._pool = ThreadPoolExecutor(max_workers=workers,
                                        thread_name_prefix=thread_name_prefix)
        self._numbers = itertools.count(1)
        self._newest: dict[str, int] = {}  # kind of request -> newest request number
        self._stopped = False  # shut down: answers still queued for this thread are dropped
        # emitted on a worker thread, received on this object's (the GUI) thread: queued
        self._finished.connect(self._deliver)

    def run(self, kind: str, call: Callable[[], Any], on_done: Callable[[Any], None],
            on_error: Callable[[BaseException], None] | None = None) -> None:
        """`on_error(exc)`, when given, hears this request's failure instead of `failed`."""
        number = next(self._numbers)
        self._newest[kind] = number

        def work() -> None:
            try:
                result = call()
            except Exception as exc:  # noqa: BLE001 - delivered through `failed`
                result = exc
            try:
                self._finished.emit(number, (kind, on_done, on_error), result)
            except RuntimeError:  # the owner (and this object) is gone
                pass

        self._pool.submit(work)

    @Slot(int, object, object)
    def _deliver(self, number: int, target, result) -> None:
        kind, on_done, on_error = target
        if self._stopped or number != self._newest.get(kind):
            return  # a newer request of this kind superseded it
        if isinstance(result, BaseException):
            on_error(result) if on_error is not None else self.failed.emit(result)
            return
        on_done(result)

    def shutdown(self, wait: bool = False) -> None:
        """Answer nothing more, not even calls that finished but whose answer has not reached
        the GUI thread yet; calls already running finish on their own (`wait`: before this
        returns)."""
        self._stopped = True
        self._pool.shutdown(wait=wait, cancel_futures=True)
