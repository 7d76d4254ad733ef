"""The HTTP side of `draftlight serve` on a thread of its own, for a program that already owns an
engine: the window's "Serve on localhost" switch (app/draftlight/ui/engine/serve_switch.py).

    server = BackgroundServer(runner, port=8080)   # binds now: a port in use fails here
    server.start(); server.url                     # http://127.0.0.1:8080/v1
    server.stop()                                  # waiting and running requests are cancelled

`runner` is what the routes need (routes.py): submit(job), n_ctx and model_id. uvicorn installs
no signal handlers off the main thread, so the host program keeps its own. Both this and
`draftlight serve` run their app on `http_server`, bounded the same way.
"""

from __future__ import annotations

import socket
import threading

from draftlight.serve.connections import ConnectionLimits, ConnectionTracking, OpenConnections
from draftlight.serve.guard import access_for, normal_origin
from draftlight.serve.listener import SheddingListener
from draftlight.serve.log_limits import limit_serve_logs
from draftlight.user_messages import UserError

GRACE_SECONDS = 2  # how long stopping waits for a response that is still being written


def bind(host: str, port: int) -> socket.socket:
    """A listening socket, or UserError in words (a port in use, a bad address)."""
    if not 0 <= port <= 65535:
        raise UserError("the port must be between 0 and 65535")
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        return SheddingListener(socket.create_server((host, port), family=family, backlog=128))
    except OSError as exc:
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def url_of(listener: socket.socket) -> str:
    host, port = listener.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/v1"


def http_stack():
    """(uvicorn, create_app), or UserError where the HTTP stack is not installed (the
    standalone app leaves it out: packaging/draftlight.spec)."""
    try:
        import uvicorn

        from draftlight.serve.routes import create_app
    except ImportError as exc:
        raise UserError(f"serving needs fastapi, uvicorn and sse-starlette ({exc}); install "
                        "Draftlight with pip to serve") from None
    return uvicorn, create_app


def http_server(app, *, limits: ConnectionLimits = ConnectionLimits()):
    """The uvicorn server `app` runs on, in `draftlight serve` and in the window alike: each
    connection guarded (connections.py: a deadline for its headers, a cap on how many are
    open), its log lines limited (log_limits.py), and the app's lifespan run, so that what it
    started (its document readers) stops with it."""
    import uvicorn
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    connections = OpenConnections(limits)
    config = uvicorn.Config(ConnectionTracking(app, connections),
                            http=connections.protocol(AutoHTTPProtocol), log_level="warning",
                            timeout_graceful_shutdown=GRACE_SECONDS, lifespan="on")
    limit_serve_logs()  # after the Config: it configures uvicorn's loggers
    return uvicorn.Server(config)


class BackgroundServer:
    """`options` are create_app's (send_timeout, body_timeout, file_limits); `limits` bound
    the connections (http_server)."""

    def __init__(self, runner, *, host: str = "127.0.0.1", port: int = 8080,
                 api_key: str | None = None, allow_origins: tuple[str, ...] = (),
                 allow_hosts: tuple[str, ...] = (), send_timeout: float | None = None,
                 limits: ConnectionLimits = ConnectionLimits(), **options) -> None:
        uvicorn, create_app = http_stack()
        allow_origins = [normal_origin(o) for o in allow_origins]  # a bad one fails before binding
        self.listener = bind(host, port)
        self.url = url_of(self.listener)
        access = access_for(host, self.listener.getsockname()[1], allow_hosts=allow_hosts,
                            allow_origins=allow_origins)
        if send_timeout is not None:
            options["send_timeout"] = send_timeout
        self._server = http_server(create_app(runner, api_key=api_key, access=access, **options),
                                   limits=limits)
        self._thread = threading.Thread(target=self._server.run,
                                        kwargs={"sockets": [self.listener]},
                                        name="draftlight-http", daemon=True)

    def start(self) -> None:
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float = GRACE_SECONDS + 3) -> None:
        """Stop accepting, let responses finish for GRACE_SECONDS, then close the socket."""
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout)
        self.listener.close()
