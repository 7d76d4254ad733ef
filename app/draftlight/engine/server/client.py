"""A streaming OpenAI chat-completions client for one server, with one-line errors.

    for chunk in stream_chat(Endpoint(url, api_key), body):   # parsed "data:" objects
        ...

Every failure a user can meet is one ServerError sentence: unreachable, a refused key, an
unknown model or endpoint, a server error, a timeout, a stream cut before its end. Reads wait
at most `timeout` seconds for the next byte; the whole reply is bounded by max_tokens.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
from dataclasses import dataclass, replace
from typing import Iterator
from urllib.parse import urlsplit

from draftlight.engine.core.errors import EngineError


class ServerError(EngineError):
    """A server engine failed; the conversation is kept and the request can be retried."""


@dataclass(frozen=True)
class Endpoint:
    url: str  # http(s)://host:port[/prefix]; "/v1/chat/completions" is added
    api_key: str | None = None
    model: str | None = None  # the "model" field; servers with one model ignore it
    timeout: float = 300.0  # seconds without a byte before giving up

    @property
    def base(self) -> str:
        url = self.url.rstrip("/")
        return url[: -len("/v1")] if url.endswith("/v1") else url


def check_url(url: str) -> str:
    """`url` if it is an http(s) URL with a host, else ServerError."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ServerError(f"{url!r} is not a server address (write it like "
                          f"http://127.0.0.1:8080)")
    return url


def stream_chat(endpoint: Endpoint, body: dict) -> Iterator[dict]:
    """POST body (with "stream": true) and yield each streamed JSON object.

    Raises:
        ServerError: one line saying what went wrong."""
    parts = urlsplit(check_url(endpoint.base))
    connection_type = (http.client.HTTPSConnection if parts.scheme == "https"
                       else http.client.HTTPConnection)
    connection = connection_type(parts.hostname, parts.port, timeout=endpoint.timeout)
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    payload = dict(body, stream=True)
    if endpoint.model:
        payload["model"] = endpoint.model
    where = f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"
    try:
        try:
            connection.request("POST", parts.path.rstrip("/") + "/v1/chat/completions",
                               json.dumps(payload), headers)
            response = connection.getresponse()
        except (ConnectionError, socket.gaierror, ssl.SSLError, OSError) as exc:
            raise ServerError(f"cannot reach the server at {where}: "
                              f"{getattr(exc, 'strerror', None) or exc}") from None
        if response.status != 200:
            raise ServerError(_status_line(response.status, _error_text(response)))
        yield from _events(response, where, endpoint.timeout)
    finally:
        connection.close()


def post_json(endpoint: Endpoint, path: str, body: dict) -> dict:
    """POST `body` to `path` (e.g. "/tokenize") and return the JSON answer.

    Raises:
        ServerError: one line, as for stream_chat."""
    return _json_request(endpoint, "POST", path, body)


def served_models(endpoint: Endpoint) -> list[str]:
    """The model ids the server lists at /v1/models (OpenAI's list format).

    Raises:
        ServerError: it cannot be reached, or does not list its models."""
    answer = _json_request(endpoint, "GET", "/v1/models", None)
    try:
        return [str(item["id"]) for item in answer.get("data") or []]
    except (AttributeError, KeyError, TypeError):
        raise ServerError("the server's /v1/models is not a list of models") from None


def with_model(endpoint: Endpoint) -> Endpoint:
    """`endpoint` with the model to ask for: the one it names, else the server's only one.
    vLLM and `draftlight serve` refuse a request without "model"; a server that does not list
    its models is asked without one, as before.

    Raises:
        ServerError: the server lists several models: the sentence names them and how to choose."""
    if endpoint.model:
        return endpoint
    try:
        models = served_models(endpoint)
    except ServerError:
        return endpoint
    if len(models) == 1:
        return replace(endpoint, model=models[0])
    if len(models) > 1:
        shown = ", ".join(models[:8]) + (f" and {len(models) - 8} more" if len(models) > 8 else "")
        raise ServerError(f"the server has {len(models)} models ({shown}): choose one with "
                          f"--model NAME (in the window: Settings ▸ Engine ▸ Model)")
    return endpoint


def _json_request(endpoint: Endpoint, method: str, path: str, body: dict | None) -> dict:
    parts = urlsplit(check_url(endpoint.base))
    connection_type = (http.client.HTTPSConnection if parts.scheme == "https"
                       else http.client.HTTPConnection)
    connection = connection_type(parts.hostname, parts.port, timeout=endpoint.timeout)
    headers = {"Content-Type": "application/json"}
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    try:
        connection.request(method, parts.path.rstrip("/") + path,
                           None if body is None else json.dumps(body), headers)
        response = connection.getresponse()
        if response.status != 200:
            raise ServerError(_status_line(response.status, _error_text(response)))
        return json.loads(response.read())
    except (OSError, ValueError) as exc:
        raise ServerError(f"cannot ask the server at {parts.hostname}:{parts.port} for "
                          f"{path}: {exc}") from None
    finally:
        connection.close()


def _events(response, where: str, timeout: float) -> Iterator[dict]:
    finished = False
    try:
        for raw in response:
            line = raw.decode("utf-8", "replace").strip()
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                return
            try:
                chunk = json.loads(data)
            except ValueError:
                raise ServerError(f"the server at {where} sent something that is not JSON: "
                                  f"{data[:80]!r}") from None
            if "error" in chunk:
                raise ServerError(f"the server reported an error: {_message(chunk['error'])}")
            if any(c.get("finish_reason") for c in chunk.get("choices") or []):
                finished = True
            yield chunk
    except (socket.timeout, TimeoutError):
        raise ServerError(f"the server at {where} sent nothing for {timeout:g} s; the reply "
                          f"stopped") from None
    except (ConnectionError, http.client.IncompleteRead, OSError) as exc:
        raise ServerError(f"the connection to {where} broke mid-reply ({exc})") from None
    if not finished:
        raise ServerError(f"the server at {where} closed the stream before the reply ended")


def _status_line(status: int, detail: str) -> str:
    detail = f": {detail}" if detail else ""
    if status in (401, 403):
        return f"the server refused the API key (HTTP {status}){detail}"
    if status == 404:
        return f"the server has no such model or endpoint (HTTP 404){detail}"
    if status >= 500:
        return f"the server failed (HTTP {status}){detail}"
    return f"the server refused the request (HTTP {status}){detail}"


def _error_text(response) -> str:
    try:
        body = response.read(4096).decode("utf-8", "replace")
    except OSError:
        return ""
    try:
        return _message(json.loads(body).get("error", body))
    except (ValueError, AttributeError):
        return body.strip().splitlines()[0][:200] if body.strip() else ""


def _message(error) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)[:200]
    return str(error)[:200]
