"""The history's integrity check answers after the window is shown (store/history_check.py):
asked without waiting, ten times a second, until it has; a damaged file then gets the banner and
the conversation list is read again from the file as opened read-only. A file another program
held as the window opened is said to be busy (no "start a new history": it is not damaged) and,
once let go, is read: the list, empty till then, is filled."""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, QTimer

from draftlight.store.history import History

POLL_MS = 100


class HistorySettle(QObject):
    """Calls `on_problem(problem, late)` once if the history turns out unusable; `late`: after
    the window was built (what it shows was read before the answer). `on_lock(line, held)`:
    another program holds the file (held, with the line to show) or has let it go (the file
    is read now)."""

    def __init__(self, history: History, on_problem: Callable[[str, bool], None],
                 parent: QObject | None = None, *,
                 on_lock: Callable[[str, bool], None] = lambda line, held: None) -> None:
        super().__init__(parent)
        self._history, self._on_problem, self._on_lock = history, on_problem, on_lock
        self._lock_line: str | None = None  # said while another program holds the file
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)
        if history.check_answered():
            self._settle(late=False)
        else:
            self._timer.start()

    @property
    def waiting(self) -> bool:
        return self._timer.isActive()

    def _poll(self) -> None:
        line = self._history.lock_notice
        if line and self._lock_line is None:
            self._lock_line = line
            self._on_lock(line, True)
        if self._history.check_answered():
            self._timer.stop()
            self._settle(late=True)

    def _settle(self, late: bool) -> None:
        problem = self._history.settle()
        if not self._history.check_answered():  # held again as it was read: waits once more
            self._timer.start()
            return
        if self._lock_line is not None:
            line, self._lock_line = self._lock_line, None
            self._on_lock(line, False)
        if problem:
            self._on_problem(problem, late)
