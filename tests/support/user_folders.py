"""The user's folders are out of bounds for the suite (imported by tests/conftest.py before any
test module): HOME and the XDG folders point at NOT_HOME, an empty folder with mode 0555, and
every write there is recorded, by an audit hook in this process (even one the code catches
and carries on from) and by looking in the folder (what a child process or root wrote).

A module of its own, not part of conftest.py, imported by everything under one name
(tests.support.user_folders), so that all this runs once: a module imported under two names
runs twice, here with another folder (as conftest.py did when pytest imported it as `conftest`
and a test as `tests.conftest`, before tests/ was a package).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

NOT_HOME = Path(tempfile.mkdtemp(prefix="draftlight-not-home-")).resolve()
# Tools the tests run keep caches of their own (matplotlib's font list, PyInstaller's binaries):
# in a scratch folder, which unlike NOT_HOME may be written.
TOOL_CACHES = Path(tempfile.mkdtemp(prefix="draftlight-tool-caches-")).resolve()
for _name in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
    os.environ[_name] = str(NOT_HOME)
for _name in ("MPLCONFIGDIR", "PYINSTALLER_CONFIG_DIR", "HF_HOME"):
    os.environ[_name] = str(TOOL_CACHES / _name.lower())
os.environ.pop("DRAFTLIGHT_HOME", None)
NOT_HOME.chmod(0o555)

_writes: list[str] = []  # writes this process attempted under NOT_HOME, since the last check
_clearing = False  # True while writes_to_not_home() empties the folder itself
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def _under_not_home(path) -> bool:
    if isinstance(path, int):  # a file descriptor: its path was checked when it was opened
        return False
    try:
        return os.path.abspath(os.fsdecode(path)).startswith(str(NOT_HOME))
    except (TypeError, ValueError):
        return False


def _record(what: str) -> None:
    """One attempted write, with the thread and the app's frames that made it (so a failure
    says where to look)."""
    import threading
    import traceback
    frames = [f"{f.filename.rpartition('/work/')[2] or f.filename}:{f.lineno} {f.name}"
              for f in traceback.extract_stack()[:-3] if "/app/" in f.filename
              or "/tests/" in f.filename and "user_folders" not in f.filename]
    _writes.append(f"{what} (thread {threading.current_thread().name}: "
                   f"{' <- '.join(reversed(frames[-8:])) or 'no app frame'})")


def _audit(event: str, args: tuple) -> None:
    """Records attempted writes even where the app catches the error and carries on."""
    if _clearing:
        return
    if event == "open":
        path, mode, flags = args
        writing = (any(c in mode for c in "wax+") if isinstance(mode, str)
                   else bool(flags & _WRITE_FLAGS))
        if writing and _under_not_home(path):
            _record(f"open {path}")
    elif event in ("os.mkdir", "os.remove", "os.rmdir", "os.truncate", "os.chmod"):
        if _under_not_home(args[0]):
            _record(f"{event} {args[0]}")
    elif event in ("os.rename", "os.replace", "os.link", "os.symlink"):
        if _under_not_home(args[0]) or _under_not_home(args[1]):
            _record(f"{event} {args[0]} -> {args[1]}")
    elif event == "sqlite3.connect" and _under_not_home(args[0]):
        _record(f"sqlite3.connect {args[0]}")


sys.addaudithook(_audit)


def writes_to_not_home() -> list[str]:
    """What was written (or attempted) under NOT_HOME since the last call; what is there is
    removed, so that the next test is not blamed for it."""
    global _clearing
    found = [*_writes, *(str(p) for p in NOT_HOME.rglob("*"))]
    _writes.clear()
    if any(NOT_HOME.iterdir()):
        _clearing = True
        try:
            NOT_HOME.chmod(0o755)
            for entry in NOT_HOME.iterdir():
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        finally:
            NOT_HOME.chmod(0o555)
            _clearing = False
    return found


def remove_folders() -> None:
    """At the end of the session: NOT_HOME (checked by then) and the tools' caches."""
    NOT_HOME.chmod(0o755)
    shutil.rmtree(NOT_HOME, ignore_errors=True)
    shutil.rmtree(TOOL_CACHES, ignore_errors=True)
