"""The models on this computer for the window's lists, found off the GUI thread.

Listing other apps' folders and reading hundreds of headers takes seconds on a full disk, so
the window never does it on its own thread: at start it shows Draftlight's own models (one small
file read), and a worker finds the rest (store.found_models) and reads each header it has not
seen at this size and modification time (store.model_facts, kept in the cache folder between
starts). `updated` says when the list or what is known of it changed. The window scans again
when it comes back to the front (at most every RESCAN_SECONDS) and when asked (Refresh).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QObject, Signal

from draftlight.settings import added_model_folders
from draftlight.store.found_models import every_model, forget_found
from draftlight.store.installed import list_installed
from draftlight.store.model_facts import FactsCache, shared_facts
from draftlight.ui.widgets.latest_request import LatestRequests

RESCAN_SECONDS = 5.0


class ModelScan(QObject):
    updated = Signal()  # `models` or their facts changed
    failed = Signal(str)  # a scan that could not finish (the last list stays)

    def __init__(self, parent: QObject | None = None, *,
                 folders: Callable[[], list[Path]] = added_model_folders,
                 facts: FactsCache | None = None) -> None:
        """`folders`: the folders the user added (the window's Settings.model_folders)."""
        super().__init__(parent)
        self.folders = folders
        self.facts = facts if facts is not None else shared_facts()
        self.scanned = False  # a whole scan has answered
        try:
            self.models = [m for m in list_installed() if m.exists]  # Draftlight's own
        except OSError:
            self.models = []
        self._requests = LatestRequests(self, workers=1, thread_name_prefix="model-scan")
        self._started = -math.inf
        self._closed = False

    def refresh(self) -> None:
        """Scan again now, on the worker; `updated` follows when it answers. Nothing once
        closed (a window closed before its first scan started)."""
        if self._closed:
            return
        self._started = time.monotonic()
        folders, facts = self.folders(), self.facts

        def scan() -> list:
            forget_found()
            models = [m for m in every_model(folders) if m.exists]
            for model in models:
                facts.get(model.path)  # read only when new or changed
            facts.save()
            return models

        self._requests.run("scan", scan, self._scanned,
                           lambda exc: self.failed.emit(f"models could not be listed: {exc}"))

    def refresh_if_stale(self) -> None:
        """On the window's return to the front: a new pull in another app shows up."""
        if time.monotonic() - self._started >= RESCAN_SECONDS:
            self.refresh()

    def _scanned(self, models: list) -> None:
        before = [(m.name, m.path, m.size, m.source) for m in self.models]
        self.models = models
        first, self.scanned = not self.scanned, True
        if first or before != [(m.name, m.path, m.size, m.source) for m in models]:
            self.updated.emit()

    def close(self) -> None:
        self._closed = True
        self._requests.shutdown()
