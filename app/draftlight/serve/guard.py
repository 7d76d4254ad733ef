"""Who may talk to the server. A server on 127.0.0.1 is reachable from every web page the user
opens, two ways, and this middleware closes both:

- DNS rebinding: a page on attacker.example re-points its name at 127.0.0.1, and its requests
  then arrive with `Host: attacker.example:8080`. Only the names this server is reached by are
  answered (the bound address, localhost, 127.0.0.1, [::1], with the port, and `--allow-host`
  names); any other Host gets 421.
- Cross-site requests: a page may POST a form (`Content-Type: text/plain`) to any address
  without asking first. A request that carries an Origin other than the server's own gets 403
  unless the user named that origin (`--allow-origin`); a POST must be
  `Content-Type: application/json` (415), which a browser sends cross-site only after a CORS
  preflight that only named origins pass.

Clients that are not browsers (curl, the `openai` package) send no Origin and are unaffected.
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from urllib.parse import urlsplit

from draftlight.serve.schema import ApiError
from draftlight.user_messages import UserError

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
CORS_METHODS = ("GET", "POST")
CORS_HEADERS = ("authorization", "content-type")


@dataclass(frozen=True)
class Access:
    hosts: frozenset[str]  # Host header values answered, lower-case, "name:port" (and bare name)
    origins: frozenset[str]  # origins a browser page may call from: "scheme://host[:port]"


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(host: str) -> str:
    """An address as a Host header writes it: IPv6 in brackets, lower case."""
    host = host.strip().lower()
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def access_for(bound_host: str, port: int, *, allow_hosts=(), allow_origins=()) -> Access:
    """The hosts and origins answered by a server bound to `bound_host`:`port`. Raises
    UserError for an --allow-host or --allow-origin value that cannot be one."""
    names = set(LOOPBACK_NAMES) | {host_name(bound_host)}
    hosts = set()
    for given in allow_hosts:
        name, given_port = _split_host(given)
        if not name or not _valid_name(name) or (given_port and not given_port.isdigit()):
            raise UserError(f"--allow-host {given!r} is not a host name (as in "
                            f"'my-pc.local' or 'my-pc.local:{port}')")
        if given_port:
            hosts.add(f"{name}:{given_port}")
        else:
            names.add(name)
    for name in names - {"0.0.0.0", "[::]"}:
        hosts.add(f"{name}:{port}")
        if port == 80:  # a browser leaves the default port out of Host
            hosts.add(name)
    return Access(frozenset(hosts), frozenset(normal_origin(o) for o in allow_origins))


def normal_origin(given: str) -> str:
    """'https://Tool.Example:8443/' -> 'https://tool.example:8443', as browsers send Origin;
    UserError for anything that is not an http(s) origin."""
    parts = urlsplit(given.strip())
    if given.strip() == "*":
        raise UserError("the allowed origin '*' would let every web page use the model: name "
                        "each origin, as in 'http://localhost:3000'")
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/") \
            or parts.query or parts.fragment or parts.username:
        raise UserError(f"the allowed origin {given!r} is not a web origin: give scheme, "
                        "host and port only, as in 'http://localhost:3000'")
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # a port that is not a number, or past 65535
        raise UserError(f"the allowed origin {given!r} has no valid port") from None
    return f"{parts.scheme}://{host_name(parts.hostname)}{port}"


def _split_host(given: str) -> tuple[str, str]:
    """'name', 'name:port', '[v6]:port' or a bare IPv6 address -> (name as Host writes it, port
    or '')."""
    given = given.strip().lower()
    if given.startswith("["):
        name, _, rest = given.partition("]")
        return name + "]", rest.removeprefix(":")
    if given.count(":") == 1:
        name, _, port = given.partition(":")
        return name, port
    return host_name(given), ""


def _valid_name(name: str) -> bool:
    return all(c.isalnum() or c in "-._[]:" for c in name)


class GuardMiddleware:
    """ASGI middleware in front of the routes (and of CORS): Host, Origin and content type."""

    def __init__(self, app, access: Access) -> None:
        self.app, self.access = app, access

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        problem = self.refusal(scope["method"], headers)
        if problem is None:
            return await self.app(scope, receive, send)
        body = json.dumps(problem.body()).encode()
        await send({"type": "http.response.start", "status": problem.status,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    def refusal(self, method: str, headers: dict[str, str]) -> ApiError | None:
        host = headers.get("host", "").strip().lower()
        if host not in self.access.hosts:
            return ApiError(421, f"this server does not answer for the host {host!r}: only "
                                 "for the names it is bound to (start it with --allow-host "
                                 "NAME to add one)", code="host_not_allowed",
                            type="permission_error")
        origin = headers.get("origin")
        if origin is not None and origin not in self.access.origins \
                and origin not in (f"http://{host}", f"https://{host}"):
            return ApiError(403, f"requests from web pages on {origin!r} are not allowed "
                                 "(start the server with --allow-origin ORIGIN to allow one)",
                            code="origin_not_allowed", type="permission_error")
        if method == "POST":
            media = headers.get("content-type", "").split(";")[0].strip().lower()
            if media != "application/json":
                return ApiError(415, "the body must be sent as 'Content-Type: "
                                     f"application/json' (got {media or 'none'!r})",
                                code="unsupported_media_type")
        return None
