"""The history's file: opened so that a damaged or newer file is never written (checked before
the first write, even before WAL mode is switched on, which rewrites its header), read-only with
`problem` saying why, moved aside on request (`start_fresh`), and every sqlite error as a
HistoryError of one line. History (history.py) is what is kept in it.

A file another program holds when it is opened is neither damaged nor read-only: it is read once
that program lets go (history_check.py waits for it), and until then the history is empty,
`lock_notice` says why, and a write is HistoryUnavailable (the window keeps it and writes it
later)."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from draftlight.store.history_check import IntegrityCheck, held_by_another
from draftlight.store.history_schema import SCHEMA_VERSION, migrate

# How long opening waits for another program's lock, where no window is there to go on
# meanwhile (the command line, a bench); the window waits on the check's thread instead
OPEN_PATIENCE = 5.0


class HistoryError(Exception):
    """The history cannot be written (it is read-only or unavailable); one line for the UI."""


class HistoryUnavailable(HistoryError):
    """The store did not answer (locked by another process, disk full, I/O error): the same
    write may succeed later."""


@contextmanager
def sqlite_errors(doing: str = "saved") -> Iterator[None]:
    """sqlite3's exceptions as HistoryError, one line each that says what failed: the history
    could not be `doing` ("saved", or "read" for a read)."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        raise HistoryUnavailable(f"history could not be {doing} ({_line(exc)})") from exc
    except sqlite3.Error as exc:
        raise HistoryError(f"history could not be used ({_line(exc)})") from exc


def _line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]


class HistoryFile:
    """One SQLite connection to the history file (or memory), used from one thread."""

    def __init__(self, path: str | Path, *, busy_timeout: float,
                 check_in_background: bool = False) -> None:
        self.path = None if str(path) == ":memory:" else Path(path)  # None: in memory
        self.busy_timeout = busy_timeout
        self.problem: str | None = None
        self.read_only = False
        self._db: sqlite3.Connection | None = None
        self._background = check_in_background
        self._check: IntegrityCheck | None = None  # running in the background
        self._open()

    def _open(self) -> None:
        if self.path is None:
            self._db = self._connect(":memory:")
            self._create()
            return
        db = None
        try:
            _create_private(self.path)
            db = self._connect(str(self.path))
            # Checked before the first write: switching to WAL rewrites the header.
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                db.close()
                self._open_read_only(f"{self.path.name} was written by a newer Draftlight")
                return
            self._db = db
            if self._background and version == SCHEMA_VERSION:  # no migration to write first
                self._check = IntegrityCheck(self.path, self.busy_timeout)
                return
            check = db.execute("PRAGMA quick_check").fetchone()[0]
            self._checked(None if check == "ok" else f"{self.path.name} is damaged ({check})")
        except sqlite3.DatabaseError as exc:
            if not held_by_another(exc):
                self._unusable(db, exc)
                return
            if db is not None:
                db.close()
            self._db = None  # nothing is read until the check has read the file
            self._check = IntegrityCheck(self.path, self.busy_timeout)
            if not self._background and self._check.wait(OPEN_PATIENCE) is None \
                    and self._check.answered:
                self.settle()

    def _unusable(self, db: sqlite3.Connection | None, exc: sqlite3.DatabaseError) -> None:
        if db is not None:
            db.close()
        self._db = None
        self._open_read_only(f"{self.path.name} cannot be used ({exc})")

    def _checked(self, damage: str | None, version: int | None = None) -> None:
        """The check's answer: WAL and writes when the file is sound, read-only if not."""
        if damage is None and version is not None and version > SCHEMA_VERSION:
            damage = f"{self.path.name} was written by a newer Draftlight"
        if damage is not None:
            self._db.close()
            self._db = None
            self._open_read_only(damage)
            return
        self._db.execute("PRAGMA journal_mode=WAL")
        self._create()

    def check_answered(self) -> bool:
        """Whether `settle()` would return at once (no check runs, or it has answered)."""
        return self._check is None or self._check.answered

    @property
    def lock_notice(self) -> str | None:
        """While another program holds the file and the history waits to read it: one line
        saying so; None otherwise."""
        if self._check is None or not self._check.waiting_for_lock:
            return None
        return (f"History is busy: another program holds {self.path.name}; it is read and "
                f"saved to once that program lets go.")

    def settle(self) -> str | None:
        """Wait for the background check, if one runs, and act on its answer: the file
        becomes writable, or read-only with `problem` saying why. Returns `problem`. While
        another program holds the file, returns at once (None): see `lock_notice`."""
        check = self._check
        while check is not None and not check.answered and not check.waiting_for_lock:
            check.wait(0.05)
        if check is not None and check.answered:
            self._check = None
            try:
                damage = check.wait()
                if self._db is None and damage is None:  # held by another when it opened
                    self._db = self._connect(str(self.path))
                self._checked(damage, check.version)
            except sqlite3.DatabaseError as exc:
                if held_by_another(exc):  # held again since the check: it waits once more
                    self._check = IntegrityCheck(self.path, self.busy_timeout)
                else:
                    self._unusable(self._db, exc)
        return self.problem

    def _connect(self, target: str, read_only: bool = False) -> sqlite3.Connection:
        if read_only:
            db = sqlite3.connect(f"{Path(target).as_uri()}?mode=ro", uri=True,
                                 timeout=self.busy_timeout)
        else:
            db = sqlite3.connect(target, timeout=self.busy_timeout)
        db.execute("PRAGMA foreign_keys=ON")
        return db

    def _open_read_only(self, reason: str) -> None:
        self.read_only = True
        self.problem = (f"History is read-only: {reason}. It was left untouched; "
                        f"start a new history to keep chatting with history saved.")
        try:
            db = self._connect(str(self.path), read_only=True)
            db.execute("SELECT count(*) FROM conversations").fetchone()
            db.execute("SELECT count(*) FROM messages").fetchone()
            self._db = db
        except sqlite3.DatabaseError:
            self._db = None  # unreadable: show an empty list

    def _create(self) -> None:
        """The tables of a new file, or what an older file lacks (history_schema.py)."""
        migrate(self._db)

    def start_fresh(self) -> Path | None:
        """Move an unusable file aside (history.sqlite3.corrupt-…) and create a new history.

        Returns where the old file went (None if there was none)."""
        self.close()
        moved = None
        if self.path is not None and self.path.exists():
            moved = self.path.with_name(
                f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
            os.replace(self.path, moved)
            for suffix in ("-wal", "-shm"):
                side = self.path.with_name(self.path.name + suffix)
                if side.exists():
                    os.replace(side, moved.with_name(moved.name + suffix))
        self.problem, self.read_only = None, False
        self._open()
        return moved

    def set_busy_timeout(self, seconds: float) -> None:
        """How long a write waits for another process's lock from now on."""
        self.busy_timeout = seconds
        if self._db is not None:
            self._db.execute(f"PRAGMA busy_timeout = {int(seconds * 1000)}")

    def close(self) -> None:
        if self._check is not None:  # its connection is closed before the file is let go
            self._check.stop()
            self._check.wait()
            self._check = None
        if self._db is not None:
            self._db.close()
            self._db = None

    def _writable(self) -> sqlite3.Connection:
        if self.lock_notice:  # the window keeps the write and tries it again later
            raise HistoryUnavailable(f"history is busy (another program holds "
                                     f"{self.path.name})")
        self.settle()  # nothing is written before the file is known to be sound
        if self._db is None or self.read_only:
            raise HistoryError(self.problem or "history is closed")
        return self._db

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """One transaction; HistoryError (HistoryUnavailable: try again later) if it fails."""
        db = self._writable()
        with sqlite_errors(), db:
            yield db

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """Many writes as one, on the history's own connection and schema (a made-up year of
        use for `draftlight bench scale`); HistoryError if it fails."""
        return self._writing()


def _create_private(path: Path) -> None:
    """A new history file is the user's alone (0600, as settings.toml is); SQLite gives its
    -wal and -shm files the same mode. An empty file is an empty database."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError:  # it exists (or cannot be made: sqlite3 says so next, in its words)
        pass
