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
        if number != self._newest.get(kind):
            return  # a newer request of this kind superseded it
        if isinstance(result, BaseException):
            on_error(result) if on_error is not None else self.failed.emit(result)
            return
        on_done(result)

    def shutdown(self) -> None:
        """Answer nothing more; calls already running finish on their own."""
        self._pool.shutdown(wait=False, cancel_futures=True)
