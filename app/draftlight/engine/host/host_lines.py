"""The host's answers as the app reads them (hosted.py): one JSON line each, on the thread that
waits for them.

A host that writes what no host writes is broken, and said so once (HostBroken, which
HostWaits turns into one EngineCrashed line and a kill): a line longer than
wire.MAX_LINE_BYTES (read in steps, never kept past that: 100 MB without a newline took 102 s
as the buffer was copied each step), a message of another version of the wire (its first line
says so; it was skipped until the 300 s silence limit), or more than MAX_JUNK_LINES lines that
are not its answers (not JSON, not an object, not an answer's shape: host_answers.py). Each
junk line was skipped by a recursive call: 200,000 of them ended in RecursionError, and one
that was a JSON list in AttributeError."""

from __future__ import annotations

import os
import queue
import select
import sys
import threading

from draftlight.engine.core.errors import EngineCrashed
from draftlight.engine.host import wire
from draftlight.engine.host.host_answers import check_answer

# Lines that are not answers a host may write before it is taken for broken: the host's native
# code prints to standard error (bounded_process.answer_stream), so one is already a fault
MAX_JUNK_LINES = 16
READ_BYTES = 1 << 16


class HostBroken(EngineCrashed):
    """The host wrote what no host writes; the message says what, in one line."""


class HostLines:
    """The host's messages, read on the thread that waits for them: one wake-up a line (a
    reader thread would add a second one, and on two cores every wake-up takes a core from
    llama.cpp mid-pass). Windows, whose pipes `select` cannot wait on, reads on a thread."""

    def __init__(self, stream) -> None:
        self._fd = stream.fileno()
        self._buffer = bytearray()
        self._scanned = 0  # the bytes of _buffer already known to hold no newline
        self._ended = False
        self._junk = 0
        self._queue: queue.Queue | None = None
        if sys.platform == "win32":
            self._queue = queue.Queue()
            threading.Thread(target=self._read_all, args=(stream,), daemon=True,
                             name="engine host").start()

    def next(self, timeout: float) -> dict | None:
        """The next message; None once the host has ended; queue.Empty after `timeout`.

        Raises:
            HostBroken: see the module's docstring."""
        if self._queue is not None:
            message = self._queue.get(timeout=timeout)
            if isinstance(message, HostBroken):
                self._queue.put(message)  # the host stays broken
                raise message
            return message
        while True:
            line = self._line(timeout)
            if line is None:
                return None
            message = self._message(line)
            if message is not None:
                return message

    def _line(self, timeout: float) -> bytes | None:
        """The next line, without its newline; None at the end (a last line cut short is
        not an answer)."""
        while (at := self._buffer.find(b"\n", self._scanned)) < 0:
            self._scanned = len(self._buffer)
            if self._scanned > wire.MAX_LINE_BYTES:
                raise _too_long()
            if self._ended:
                return None
            ready, _, _ = select.select([self._fd], [], [], timeout)
            if not ready:
                raise queue.Empty
            try:
                chunk = os.read(self._fd, READ_BYTES)
            except OSError:
                chunk = b""
            self._ended = not chunk
            self._buffer += chunk
        if at > wire.MAX_LINE_BYTES:
            raise _too_long()
        line = bytes(self._buffer[:at])
        del self._buffer[:at + 1]  # a bytearray lets go of its front without a copy
        self._scanned = 0
        return line

    def _message(self, line: bytes) -> dict | None:
        """The message `line` holds; None for junk (HostBroken past MAX_JUNK_LINES of it, or
        for another version of the wire)."""
        try:
            return check_answer(wire.decode(line))
        except wire.WireVersionError as exc:
            raise HostBroken(str(exc)) from None
        except wire.WireError as exc:
            self._junk += 1
            if self._junk > MAX_JUNK_LINES:
                raise HostBroken(f"the engine process wrote {self._junk} lines that are not "
                                 f"its answers (the last: {exc})") from None
            return None

    def _read_all(self, stream) -> None:
        try:
            while line := stream.readline(wire.MAX_LINE_BYTES + 1):
                if not line.endswith(b"\n"):
                    if len(line) > wire.MAX_LINE_BYTES:
                        raise _too_long()
                    break  # a last line cut short
                message = self._message(line[:-1])
                if message is not None:
                    self._queue.put(message)
        except HostBroken as exc:
            self._queue.put(exc)
            return
        except (OSError, ValueError):
            pass
        self._queue.put(None)


def _too_long() -> HostBroken:
    return HostBroken(f"the engine process wrote a line over {wire.MAX_LINE_BYTES >> 20} MiB")
