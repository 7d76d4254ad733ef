"""SQLite's quick_check of a history file, off the window's thread: it reads the whole file
(0.6-0.8 s for a year of use on a 2-core CPU, `draftlight bench scale`), and the window's first
paint waited for it. History reads the file meanwhile and writes only once it has answered."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path


class IntegrityCheck:
    """SQLite's quick_check of a history file on a connection and a thread of its own."""

    def __init__(self, path: Path, busy_timeout: float) -> None:
        self.damage: str | None = None  # why the file cannot be written; None: it is sound
        self._thread = threading.Thread(target=self._run, args=(path, busy_timeout),
                                        name="history check", daemon=True)
        self._thread.start()

    def _run(self, path: Path, busy_timeout: float) -> None:
        try:
            db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=busy_timeout)
            try:
                answer = db.execute("PRAGMA quick_check").fetchone()[0]
            finally:
                db.close()
            if answer != "ok":
                self.damage = f"{path.name} is damaged ({answer})"
        except sqlite3.DatabaseError as exc:
            self.damage = f"{path.name} cannot be used ({exc})"

    @property
    def answered(self) -> bool:
        return not self._thread.is_alive()

    def wait(self) -> str | None:
        self._thread.join()
        return self.damage
