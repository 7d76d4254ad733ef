"""The connections serve's HTTP server holds, bounded. uvicorn reads a request's headers for as
long as a client takes and accepts every connection it is offered: 300 half-open connections
under a 256-descriptor limit shut every new client out for over a minute. So each connection
goes through GuardedConnection, which wraps uvicorn's own protocol:

- A request's headers must arrive within `header_seconds` of the connection (or of the answer
  before, on a kept-alive one), else it is answered 408 and closed. (Its body has a time of its
  own: routes.BODY_TIMEOUT_SECONDS.)
- At most `most` connections are open (fewer where the process has few file descriptors). One
  more closes the connection that has waited longest for its request to arrive (a slow client
  holds no place a new one needs); where every open connection has a request in hand, the new
  one is answered 503 and closed. Either is one log line, whose repeats are limited
  (log_limits.py), never a traceback per connection.

ConnectionTracking, an ASGI middleware, tells each connection when its request has arrived and
when its answer is sent; it finds the connection by the client's address, which uvicorn puts in
the request (unique among open TCP connections).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass

try:
    import resource
except ImportError:  # Windows
    resource = None

log = logging.getLogger("draftlight.serve")

# Local clients send their headers in milliseconds; 10 s is patient with a slow network and
# frees a half-open connection long before the next hundred arrive.
HEADER_TIMEOUT_SECONDS = 10.0
# Connections open at once: a browser keeps 6 per host, a client one per request in flight,
# and the engine answers one request at a time with 8 waiting.
MAX_CONNECTIONS = 100


@dataclass(frozen=True)
class ConnectionLimits:
    most: int = MAX_CONNECTIONS  # open at once (fewer with few file descriptors: cap())
    header_seconds: float = HEADER_TIMEOUT_SECONDS  # for a request's headers to arrive

    def cap(self) -> int:
        """`most`, or half the descriptors this process may open if that is less: the rest
        are the engine's, the readers' and the listener's (macOS allows 256 by default)."""
        if resource is None:
            return self.most
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        return self.most if soft == resource.RLIM_INFINITY else max(1, min(self.most, soft // 2))


class OpenConnections:
    """The server's open connections, and which of them wait for a request to arrive."""

    def __init__(self, limits: ConnectionLimits = ConnectionLimits()) -> None:
        self.limits = limits
        self.cap = limits.cap()
        self._open: dict[tuple | int, GuardedConnection] = {}  # by the client's address

    def __len__(self) -> int:
        return len(self._open)

    def protocol(self, inner_class):
        """The protocol factory uvicorn is given (its `http`): `inner_class` behind a guard."""
        def guarded(**uvicorn_arguments) -> GuardedConnection:
            return GuardedConnection(self, inner_class(**uvicorn_arguments))
        return guarded

    def admit(self, connection: GuardedConnection) -> bool:
        """Whether `connection` may stay open: below the cap, or once the connection that has
        waited longest for its request is closed for it."""
        if len(self._open) >= self.cap:
            waiting = [c for c in self._open.values() if c.waiting_since is not None]
            if not waiting:
                log.warning("serve: %d connections are open, the most it holds, each with a "
                            "request in hand: a new one was answered 503", len(self._open))
                return False
            oldest = min(waiting, key=lambda c: c.waiting_since)
            log.warning("serve: %d connections are open, the most it holds: closed the one "
                        "that had waited longest (%.0f s) for its request", len(self._open),
                        time.monotonic() - oldest.waiting_since)
            oldest.close()
        self._open[connection.key] = connection
        return True

    def forget(self, connection: GuardedConnection) -> None:
        if self._open.get(connection.key) is connection:
            del self._open[connection.key]

    def of(self, client) -> GuardedConnection | None:
        """The connection of a request's scope["client"] (None for one not tracked here)."""
        return self._open.get(tuple(client)) if client else None


class GuardedConnection(asyncio.Protocol):
    """One connection: uvicorn's protocol (`inner`), with a deadline for each request's headers
    and a place counted among the open ones."""

    def __init__(self, table: OpenConnections, inner: asyncio.Protocol) -> None:
        self.table, self.inner = table, inner
        self.transport: asyncio.Transport | None = None
        self.key: tuple | int = id(self)
        self.waiting_since: float | None = None  # since when it waits for a request to arrive
        self._deadline: asyncio.TimerHandle | None = None
        self._admitted = False

    def connection_made(self, transport) -> None:
        self.transport = transport
        peer = transport.get_extra_info("peername")
        if isinstance(peer, (tuple, list)) and len(peer) >= 2:
            self.key = (str(peer[0]), int(peer[1]))  # as uvicorn writes scope["client"]
        self.waiting_since = time.monotonic()
        if not self.table.admit(self):
            _answer_and_close(transport, 503, "the server holds as many connections as it "
                                              "can; retry later", "too_many_connections")
            return
        self._admitted = True
        self.inner.connection_made(transport)
        self.awaiting_request()

    def data_received(self, data: bytes) -> None:
        if self._admitted:
            self.inner.data_received(data)

    def eof_received(self):
        return self.inner.eof_received() if self._admitted else None

    def connection_lost(self, exc) -> None:
        self._stop_deadline()
        self.table.forget(self)
        if self._admitted:
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self._admitted:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self._admitted:
            self.inner.resume_writing()

    # What ConnectionTracking tells it, and the server's own shutdown
    def awaiting_request(self) -> None:
        """Its answer is sent (or it is new): the next request's headers have
        `header_seconds` to arrive."""
        self.waiting_since = time.monotonic()
        self._stop_deadline()
        loop = asyncio.get_running_loop()
        self._deadline = loop.call_later(self.table.limits.header_seconds, self._too_slow)

    def headers_arrived(self) -> None:
        self._stop_deadline()

    def request_arrived(self) -> None:
        """Its request is read whole (or is being answered without its body)."""
        self.waiting_since = None
        self._stop_deadline()

    def close(self) -> None:
        self.table.forget(self)
        self._stop_deadline()
        if self.transport is not None:
            self.transport.close()

    def _too_slow(self) -> None:
        log.warning("serve: a connection sent no request headers for %g s: closed",
                    self.table.limits.header_seconds)
        self.table.forget(self)
        _answer_and_close(self.transport, 408, "the request's headers did not arrive within "
                                               f"{self.table.limits.header_seconds:g} s",
                          "request_timeout")

    def _stop_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None


class ConnectionTracking:
    """ASGI middleware: tells each request's GuardedConnection when the request has arrived and
    when its answer has been sent."""

    def __init__(self, app, table: OpenConnections) -> None:
        self.app, self.table = app, table

    async def __call__(self, scope, receive, send) -> None:
        connection = self.table.of(scope.get("client")) if scope["type"] == "http" else None
        if connection is None:
            return await self.app(scope, receive, send)
        connection.headers_arrived()

        async def receiving():
            message = await receive()
            if message["type"] == "http.request" and not message.get("more_body", False):
                connection.request_arrived()
            return message

        async def sending(message) -> None:
            if message["type"] == "http.response.start":
                connection.request_arrived()  # answered without (all of) its body
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                connection.awaiting_request()

        await self.app(scope, receiving, sending)


def _answer_and_close(transport, status: int, message: str, code: str) -> None:
    """A whole HTTP answer written straight to the socket, then closed: the request was never
    read, so uvicorn's own answer cannot be used."""
    if transport is None or transport.is_closing():
        return
    body = json.dumps({"error": {"message": message, "type": "server_error"
                                 if status == 503 else "invalid_request_error",
                                 "param": None, "code": code}}).encode()
    reason = {408: "Request Timeout", 503: "Service Unavailable"}[status]
    transport.write(b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d"
                    b"\r\nconnection: close\r\n%s\r\n" % (
                        status, reason.encode(), len(body),
                        b"retry-after: 2\r\n" if status == 503 else b"") + body)
    transport.close()
