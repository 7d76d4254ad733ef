"""Plain HTTP for the byte transfer, with our redirect policy.

huggingface_hub's HTTP library is httpx (hub 1.x) or its fork httpx2 (hub 2.x); we use whichever
it uses rather than adding a dependency. Redirects are followed by hand so that an https
address is never downgraded to http and the token never leaves the hub's origin.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator
from urllib.parse import urljoin, urlsplit

try:
    import httpx2 as httpx
except ImportError:  # huggingface_hub 1.x
    import httpx  # type: ignore[no-redef]

from draftlight.store.errors import InsecureRedirectError

TRANSPORT_ERRORS = (httpx.TransportError,)  # connect/read/write errors, timeouts, dropped streams
MAX_REDIRECTS = 10
_DEFAULT_PORTS = {"http": 80, "https": 443}

_client: httpx.Client | None = None


def client() -> httpx.Client:
    """One shared client (connection pool); it never follows redirects by itself."""
    global _client
    if _client is None:
        _client = httpx.Client(follow_redirects=False,
                               timeout=httpx.Timeout(30.0, connect=10.0))
    return _client


def origin(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    port = parts.port or _DEFAULT_PORTS.get(parts.scheme, 0)
    return parts.scheme, (parts.hostname or "").lower(), port


def check_redirect(from_url: str, to_url: str) -> None:
    """Refuse a redirect that would move from https to anything but https.

    Raises:
        InsecureRedirectError: `from_url` is https and `to_url` is not.
    """
    if urlsplit(from_url).scheme == "https" and urlsplit(to_url).scheme != "https":
        raise InsecureRedirectError(
            f"refused a redirect from https to {urlsplit(to_url).scheme or 'a relative'} address "
            f"({origin(to_url)[1] or 'same host'}); the download was stopped")


@contextmanager
def stream_get(url: str, *, headers: dict[str, str], auth_header: str | None,
               trusted_origin: tuple[str, str, int]) -> Iterator[httpx.Response]:
    """GET `url` as a stream, following redirects ourselves.

    `auth_header` (the "Bearer …" value) is sent only while the address is on `trusted_origin`.

    Raises:
        InsecureRedirectError: a redirect from https to http.
        httpx.TransportError (one of TRANSPORT_ERRORS): the connection failed or dropped.
    """
    for _ in range(MAX_REDIRECTS + 1):
        request_headers = dict(headers)
        if auth_header and origin(url) == trusted_origin:
            request_headers["Authorization"] = auth_header
        with client().stream("GET", url, headers=request_headers) as response:
            location = response.headers.get("Location")
            if response.is_redirect and location:
                target = urljoin(url, location)
                check_redirect(url, target)
                url = target
                continue
            yield response
            return
    raise httpx.TooManyRedirects(f"more than {MAX_REDIRECTS} redirects")
