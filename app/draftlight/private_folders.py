"""A folder of this user's own in a place every local user shares (the system's temp folder,
where the cross-process locks live): made 0700, and checked before each use without following
links (lstat): a folder, owned by this user, closed to the others. Imports nothing of the app.

Its name is predictable, so another local user could make it first: owned and locked by them,
`chat`, `models add` and `models convert` waited for ever with no output; made a link, the
lock files were written wherever it pointed. Such a folder is now one line saying whose it is
and what to do, and nothing is written in it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

CHECKS_OWNER = hasattr(os, "getuid")  # Windows: no POSIX owner or mode; its temp is per user


class ForeignFolder(PermissionError):
    """A folder this user must own and does not: another user's, a link, open to others."""

    def __str__(self) -> str:
        return str(self.args[0])


def own_folder(folder: Path, *, purpose: str = "its locks") -> Path:
    """`folder`, made 0700 if missing, once checked to be this user's own.

    Raises:
        ForeignFolder: a link, not a folder, another user's, or writable by others; the message
            says which and how to fix it. OSError: it cannot be made."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass  # made before, by this user or another: checked below either way
    problem = _problem(os.lstat(folder))
    if problem:
        raise ForeignFolder(f"{folder} {problem}, so Draftlight does not keep {purpose} there: "
                            f"remove it, or set TMPDIR to a folder of your own")
    return folder


def _problem(status: os.stat_result) -> str:
    """What makes a folder not this user's own, in words ("" when it is)."""
    if stat.S_ISLNK(status.st_mode):
        return "is a symbolic link"
    if not stat.S_ISDIR(status.st_mode):
        return "is not a folder"
    if CHECKS_OWNER and status.st_uid != os.getuid():
        return f"belongs to another user (uid {status.st_uid})"
    if CHECKS_OWNER and status.st_mode & 0o077:
        return f"is open to other users (mode {stat.S_IMODE(status.st_mode):04o})"
    return ""
