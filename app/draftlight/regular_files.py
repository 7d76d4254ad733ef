"""Opening a file that came from outside (an attachment, an import, another app's model folder)
only when it is a regular file: opened without blocking, so a FIFO put in its place opens at
once, and asked of the descriptor opened, so a name checked first cannot be swapped for a device
before the open. /dev/zero read until MemoryError and a FIFO blocked for ever before."""

from __future__ import annotations

import os
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator


class NotRegularFile(OSError):
    """A device, pipe or socket (or a link to one) where a file was expected."""


@contextmanager
def open_regular(path: Path) -> Iterator[BinaryIO]:
    """The regular file at `path`, for reading bytes.

    Raises:
        IsADirectoryError: a folder. NotRegularFile: a device, pipe or socket. OSError: it
        cannot be opened (FileNotFoundError, PermissionError, …)."""
    handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0))
    try:
        mode = os.fstat(handle).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(f"{Path(path).name} is a folder")
        if not stat.S_ISREG(mode):
            raise NotRegularFile(f"{Path(path).name} is not a regular file")
        stream = os.fdopen(handle, "rb")
    except BaseException:
        os.close(handle)
        raise
    with stream:
        yield stream
