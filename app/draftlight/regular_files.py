"""Opening a file that came from outside (an attachment, an import, another app's model folder,
a model path typed on the command line) only when it is a regular file: opened without
blocking, so a FIFO put in its place opens at once, and asked of the descriptor opened, so a
name checked first cannot be swapped for a device before the open. /dev/zero read until
MemoryError, and a FIFO given as a model (`models add x.gguf`, `chat --target x.gguf`) blocked
for ever, before."""

from __future__ import annotations

import os
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator


class NotRegularFile(OSError):
    """A device, pipe or socket (or a link to one) where a file was expected."""


def kind_of(mode: int) -> str:
    """What a file that is not a regular one is, in words ("a named pipe (FIFO)")."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def _refuse(path: Path, mode: int) -> None:
    """Raise for anything but a regular file (IsADirectoryError for a folder)."""
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(f"{Path(path).name} is a folder")
    if not stat.S_ISREG(mode):
        raise NotRegularFile(f"{Path(path).name} is not a regular file but {kind_of(mode)}")


def require_regular(path: Path) -> None:
    """Stat `path` (links followed) and refuse what is not a regular file, for a path handed
    on to another program (llama.cpp, llama-server, the quantizer), which opens it itself.
    What this process reads goes through open_regular, which asks the descriptor.

    Raises:
        FileNotFoundError, IsADirectoryError, NotRegularFile, OSError."""
    _refuse(path, os.stat(path).st_mode)


@contextmanager
def open_regular(path: Path, buffering: int = -1) -> Iterator[BinaryIO]:
    """The regular file at `path`, for reading bytes (`buffering` as open()'s).

    Raises:
        IsADirectoryError: a folder. NotRegularFile: a device, pipe or socket. OSError: it
        cannot be opened (FileNotFoundError, PermissionError, …)."""
    handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0))
    try:
        _refuse(path, os.fstat(handle).st_mode)
        stream = os.fdopen(handle, "rb", buffering=buffering)
    except BaseException:
        os.close(handle)
        raise
    with stream:
        yield stream
