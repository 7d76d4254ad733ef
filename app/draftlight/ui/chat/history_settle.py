"""The history's integrity check answers after the window is shown (store/history_check.py):
asked without waiting, ten times a second, until it has; a damaged file then gets the banner and
the conversation list is read again from the file as opened read-only."""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, QTimer

from draftlight.store.history import History

POLL_MS = 100


class HistorySettle(QObject):
    """Calls `on_problem(problem, late)` once if the history turns out unusable; `late`: after
    the window was built (what it shows was read before the answer)."""

    def __init__(self, history: History, on_problem: Callable[[str, bool], None],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._history, self._on_problem = history, on_problem
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
        if self._history.check_answered():
            self._timer.stop()
            self._settle(late=True)

    def _settle(self, late: bool) -> None:
        problem = self._history.settle()
        if problem:
            self._on_problem(problem, late)
