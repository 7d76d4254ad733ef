"""SQLite's quick_check of a history file, off the window's thread: it reads the whole file
(0.6-0.8 s for a year of use on a 2-core CPU, `draftlight bench scale`), and the window's first
paint waited for it. History reads the file meanwhile and writes only once it has answered.

A file another program holds (SQLITE_BUSY, "database is locked": a second Draftlight mid-write,
a backup tool, `sqlite3` in a terminal) is not damaged: the check waits for it to let go, trying
again after a pause that doubles up to LONGEST_PAUSE, and only then reads it. Taken for damage,
a lock of a second left the session read-only with an empty list, and the banner's advice (start
a new history) set the healthy file aside as `.corrupt-…`."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

FIRST_PAUSE = 0.05  # seconds before the first try again
LONGEST_PAUSE = 2.0  # a lock held for minutes is tried every 2 s: one cheap open each


def held_by_another(exc: BaseException) -> bool:
    """Whether `exc` says another connection holds the file (SQLITE_BUSY, SQLITE_LOCKED and
    their extended codes): the same read succeeds once it lets go."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


class IntegrityCheck:
    """The file's user_version and SQLite's quick_check, on a connection and a thread of its
    own, tried again while another program holds the file."""

    def __init__(self, path: Path, busy_timeout: float) -> None:
        self.damage: str | None = None  # why the file cannot be written; None: it is sound
        self.version: int | None = None  # the file's user_version (None: not read)
        self.waiting_for_lock = False  # another program holds the file: tried again later
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(path, busy_timeout),
                                        name="history check", daemon=True)
        self._thread.start()

    def _run(self, path: Path, busy_timeout: float) -> None:
        pause = FIRST_PAUSE
        while not self._stop.is_set():
            try:
                self.version, answer = _version_and_check(path, busy_timeout)
            except sqlite3.DatabaseError as exc:
                if held_by_another(exc):
                    self.waiting_for_lock = True
                    self._stop.wait(pause)
                    pause = min(2 * pause, LONGEST_PAUSE)
                    continue
                self.damage = f"{path.name} cannot be used ({exc})"
            else:
                if answer != "ok":
                    self.damage = f"{path.name} is damaged ({answer})"
            self.waiting_for_lock = False
            return

    @property
    def answered(self) -> bool:
        return not self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> str | None:
        """`damage`, once answered (or after `timeout` seconds: see `answered`)."""
        self._thread.join(timeout)
        return self.damage

    def stop(self) -> None:
        """No more tries (the history closes): the thread ends within a moment."""
        self._stop.set()


def _version_and_check(path: Path, busy_timeout: float) -> tuple[int, str]:
    db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=busy_timeout)
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        return version, db.execute("PRAGMA quick_check").fetchone()[0]
    finally:
        db.close()
