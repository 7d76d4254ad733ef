"""The listening socket of serve's HTTP server, which sheds connections it has no descriptor for.

When the process is out of file descriptors, accept() fails with EMFILE while the connection
stays queued. asyncio (Python 3.11) then logs a traceback and schedules a retry for each
connection it tries in that one pass (up to the backlog), each retry doing the same: serve wrote
496 MB of tracebacks in 75 s, and answered no one. This socket keeps one descriptor spare;
out of them, it lets go of the spare, accepts the waiting connection with it and closes it at
once (the client sees the connection end, and may retry), takes the spare back, and tells
asyncio there is nothing more to accept now. The connection cap (connections.py) keeps this
for what others hold: the readers, the engine, the window.
"""

from __future__ import annotations

import errno
import logging
import os
import socket

log = logging.getLogger("draftlight.serve")
OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE)


class SheddingListener(socket.socket):
    """A listening socket (made from `listening`, which it takes over) whose accept() sheds a
    connection instead of failing when the process has no descriptor left for it."""

    def __init__(self, listening: socket.socket) -> None:
        super().__init__(listening.family, listening.type, listening.proto,
                         fileno=listening.detach())
        self._spare: int | None = _spare_descriptor()

    def accept(self):
        try:
            return super().accept()
        except OSError as exc:
            if exc.errno not in OUT_OF_DESCRIPTORS:
                raise
            self._shed()
            raise BlockingIOError(errno.EAGAIN, "no file descriptor for a new connection") \
                from None

    def _shed(self) -> None:
        """Accept one waiting connection with the spare descriptor and close it at once."""
        if self._spare is not None:
            os.close(self._spare)
            self._spare = None
        try:
            connection, _ = super().accept()
            connection.close()
        except OSError:
            pass
        log.warning("serve: the process is out of file descriptors: a new connection was "
                    "closed at once")
        self._spare = _spare_descriptor()

    def close(self) -> None:
        if self._spare is not None:
            os.close(self._spare)
            self._spare = None
        super().close()


def _spare_descriptor() -> int | None:
    try:
        return os.open(os.devnull, os.O_RDONLY)
    except OSError:
        return None
