"""The routes: GET /v1/models, POST /v1/chat/completions and /v1/completions (JSON, or
server-sent events).

Every error is OpenAI's `{"error": {...}}` with a 4xx (5xx only for the server's own faults).
Requests pass draftlight.serve.guard first (Host, Origin, content type; CORS for named origins only).
A request waits in the worker's queue; a full queue answers 429 with Retry-After. A client that
goes away cancels its job, whether it was waiting, streaming or awaiting a JSON answer; so does
one that stops reading a stream for SEND_TIMEOUT_SECONDS. Before that, its file parts are read
by the app's DocumentReaders (file_reading.py), which a client that leaves stops too; a body
that has not all arrived BODY_TIMEOUT_SECONDS after its headers is answered 408.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import queue
import time
import uuid

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from sse_starlette.sse import EventSourceResponse
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.middleware.cors import CORSMiddleware

from draftlight.engine.reply.events import TextPiece
from draftlight.store.attachments import attachment_origin
from draftlight.serve.guard import CORS_HEADERS, CORS_METHODS, Access, GuardMiddleware, access_for
from draftlight.serve.answer_bodies import chunk, completion, finish_reason, usage
from draftlight.serve.schema import MAX_BODY_BYTES, MAX_USER_CHARS, ApiError, ChatRequest
from draftlight.serve.serve_worker import ServeWorker, Finished, Job
from draftlight.serve.file_reading import DocumentReaders, FileLimits, chat_request_from
from draftlight.serve.completion_schema import parse_completion_request
from draftlight.serve.text_completion import TextCompletionReply
from draftlight.serve.tool_calls import ToolCallReader, answered_with_calls

RETRY_AFTER_SECONDS = 2
SEND_TIMEOUT_SECONDS = 30  # a stream the client stops reading for this long is cancelled
# A body still arriving this long after its headers is answered 408 (slowloris): 4 MiB at
# 1 Mbit/s; on a LAN or this machine a body takes milliseconds.
BODY_TIMEOUT_SECONDS = 30


def create_app(worker: ServeWorker, *, api_key: str | None = None,
               access: Access | None = None,
               send_timeout: float = SEND_TIMEOUT_SECONDS,
               body_timeout: float = BODY_TIMEOUT_SECONDS,
               file_limits: FileLimits = FileLimits()) -> FastAPI:
    """The routes over `worker`: serve's own engine thread, or the window's (its model may
    change while it serves, so its id is read per request). `access` says which hosts and
    origins are answered (default: this machine's loopback names on port 8080). The readers
    of file parts stop when the server does (lifespan)."""
    readers = DocumentReaders(file_limits)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        yield
        await asyncio.to_thread(readers.close)

    app = FastAPI(title="Draftlight", docs_url=None, redoc_url=None, openapi_url=None,
                  lifespan=lifespan)
    timeouts = (send_timeout, body_timeout)
    _add_guards(app, access or access_for("127.0.0.1", 8080))
    _add_error_handlers(app)
    authorise = _authoriser(api_key)

    @app.get("/v1/models")
    async def models(request: Request) -> dict:
        authorise(request)
        return {"object": "list", "data": [{"id": worker.model_id, "object": "model",
                                            "created": 0, "owned_by": "draftlight"}]}

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request):
        authorise(request)
        return await _chat_completion(request, worker, readers, timeouts)

    @app.post("/v1/completions")
    async def completions(request: Request):
        authorise(request)
        return await _chat_completion(request, worker, readers, timeouts, text=True)

    return app


def _add_guards(app: FastAPI, access: Access) -> None:
    """The guard (Host, Origin, content type), and CORS for the origins the user named."""
    if access.origins:  # CORS only for the origins the user named, preflight included
        app.add_middleware(CORSMiddleware, allow_origins=sorted(access.origins),
                           allow_methods=list(CORS_METHODS), allow_headers=list(CORS_HEADERS),
                           max_age=600)
    app.add_middleware(GuardMiddleware, access=access)  # added last: runs first


def _add_error_handlers(app: FastAPI) -> None:
    """Every error as OpenAI's body: ours, Starlette's (404, 405), a client gone, a fault."""
    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code)
        return JSONResponse(ApiError(exc.status_code, str(exc.detail), code=code).body(),
                            status_code=exc.status_code)

    @app.exception_handler(ClientGone)
    async def client_gone(request: Request, exc: ClientGone) -> Response:
        return Response(status_code=499)  # nobody reads it: nginx's "client closed request"

    @app.exception_handler(Exception)
    async def server_error(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse(ApiError(500, "internal error; see the server's log",
                                     type="server_error").body(), status_code=500)


def _authoriser(api_key: str | None):
    """A check that raises ApiError (401) unless the request bears `api_key` (None: any)."""
    def authorise(request: Request) -> None:
        if api_key is None:
            return
        given = request.headers.get("authorization", "")
        scheme, _, token = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(),
                                                                 api_key.encode()):
            raise ApiError(401, "a valid API key is required: send 'Authorization: Bearer KEY'",
                           code="invalid_api_key")
    return authorise


async def _chat_completion(request: Request, worker: ServeWorker, readers: DocumentReaders,
                           timeouts: tuple[float, float], *, text: bool = False):
    """POST /v1/chat/completions (or with `text`, /v1/completions: text_completion.py): the
    request read (its files by `readers`), queued on `worker`, answered as JSON or streamed;
    its reading or its job is cancelled when the client leaves or the request fails."""
    model_id, (send_timeout, body_timeout) = worker.model_id, timeouts
    # Off the event loop: a request's fields are checked on a thread and its documents read
    # in bounded processes (seconds), and every other request goes on being answered.
    reading = (asyncio.to_thread(parse_completion_request, await _body(request, body_timeout),
                                 model_id=model_id, n_ctx=worker.n_ctx) if text
               else chat_request_from(await _body(request, body_timeout), model_id=model_id,
                                      n_ctx=worker.n_ctx, readers=readers))
    gone = asyncio.create_task(_disconnected(request))
    try:
        chat = await _until_gone(reading, gone)
    except BaseException:
        gone.cancel()
        raise
    loop = asyncio.get_running_loop()
    items: asyncio.Queue = asyncio.Queue()
    job = Job(chat, _deliver_to(loop, items), client=(
        getattr(chat, "user", "") or request.headers.get("user-agent", "")[:MAX_USER_CHARS]))
    try:
        worker.submit(job)
    except queue.Full:
        gone.cancel()
        raise ApiError(429, "the server is busy: too many requests are waiting; retry later",
                       type="rate_limit_error", code="queue_full",
                       headers={"Retry-After": str(RETRY_AFTER_SECONDS)}) from None
    try:
        first = await _next(items, gone)
        if isinstance(first, ApiError):
            raise first
        reply = (TextCompletionReply(chat, model_id, first.prompt_tokens) if text
                 else Reply(chat, model_id, first.prompt_tokens, tools=first.tools))
        if chat.stream:  # from here sse-starlette watches the client
            gone.cancel()
            return EventSourceResponse(_stream(reply, items, job), ping=15,
                                       send_timeout=send_timeout)
        while not isinstance(item := await _next(items, gone), (Finished, ApiError)):
            pass
    except BaseException:
        job.cancel()  # the client left, or the request failed: free the engine and the body
        raise
    finally:
        gone.cancel()
    if isinstance(item, ApiError):
        raise item
    return JSONResponse(reply.completion(item))


async def _body(request: Request, seconds: float) -> bytes:
    """The request body, or 413 once it passes MAX_BODY_BYTES (before all of it is read), or
    408 when it has not all come within `seconds`."""
    too_large = ApiError(413, f"the request body is larger than {MAX_BODY_BYTES // 2**20} MiB",
                         code="request_too_large")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise too_large
    body = bytearray()
    try:
        async with asyncio.timeout(seconds):
            async for part in request.stream():
                body += part
                if len(body) > MAX_BODY_BYTES:
                    raise too_large
    except TimeoutError:
        raise ApiError(408, f"the request body did not all arrive within {seconds:g} s",
                       code="request_timeout", headers={"Connection": "close"}) from None
    except ClientDisconnect:
        raise ClientGone from None
    return bytes(body)


def _deliver_to(loop: asyncio.AbstractEventLoop, items: asyncio.Queue):
    """The job's `deliver`, called on the engine's thread: hands each item to this request's
    queue on the server's loop. Once the server has stopped (its loop closed) nobody waits, and
    the item is dropped."""
    def deliver(item) -> None:
        try:
            loop.call_soon_threadsafe(items.put_nowait, item)
        except RuntimeError:
            pass
    return deliver


class ClientGone(Exception):
    """The client disconnected while its request waited or ran."""


async def _disconnected(request: Request) -> None:
    """Returns when the client disconnects (the body has been read: nothing else arrives)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def _until_gone(work, gone: asyncio.Task):
    """`work`'s result; raises ClientGone if the client disconnects first, after cancelling
    `work` (a document being read for it is stopped)."""
    task = asyncio.ensure_future(work)
    try:
        await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:  # the server stops
        task.cancel()
        raise
    if not task.done():
        task.cancel()
        with contextlib.suppress(BaseException):  # how it ended is news to nobody
            await task
        raise ClientGone
    return task.result()


async def _next(items: asyncio.Queue, gone: asyncio.Task):
    """The worker's next item; raises ClientGone if the client disconnects first."""
    if items.empty():
        getting = asyncio.ensure_future(items.get())
        await asyncio.wait({getting, gone}, return_when=asyncio.FIRST_COMPLETED)
        if not getting.done():
            getting.cancel()
            raise ClientGone
        return getting.result()
    return items.get_nowait()


class Reply:
    """The identity of one completion and the JSON bodies that carry it."""

    def __init__(self, chat: ChatRequest, model_id: str, prompt_tokens: int, *,
                 tools=None) -> None:
        self.chat, self.model, self.prompt_tokens = chat, model_id, prompt_tokens
        self.tools = tools  # the ToolPlan its calls are read by (tool_plan.py), or None
        self.id = f"chatcmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())

    def chunk(self, delta: dict, **extra) -> str:
        return json.dumps(chunk(self.id, self.created, self.model, delta, **extra),
                          ensure_ascii=False)

    def completion(self, done: Finished) -> dict:
        body = completion(self.id, self.created, self.model, done.text,
                          finish_reason(done.finish_reason), usage(done.stats, done.prompt_tokens))
        return answered_with_calls(body, self.tools, done.text) if self.tools else body


async def _stream(reply: Reply, items: asyncio.Queue, job: Job):
    """Server-sent events: a role chunk, one chunk per token with its provenance, a chunk with
    the finish reason and usage, then [DONE]. sse-starlette cancels this generator when the
    client disconnects; `finally` then cancels the job."""
    # a reply that may call tools: its text is read into content and tool_calls deltas
    calls = ToolCallReader(reply.tools) if getattr(reply, "tools", None) else None
    try:
        yield {"data": reply.chunk({"role": "assistant", "content": ""})}
        while True:
            item = await items.get()
            if isinstance(item, TextPiece):
                provenance = {"source": item.source, "pass": item.step}
                if item.origin is not None:  # a file part's span: that file, page or line
                    provenance["origin"] = attachment_origin(item.origin,
                                                             reply.chat.messages).record()
                for delta in calls.feed(item.text) if calls else [{"content": item.text}]:
                    yield {"data": reply.chunk(delta, provenance=provenance)}
            elif isinstance(item, Finished):
                use = usage(item.stats, item.prompt_tokens)
                finish, note = finish_reason(item.finish_reason), None
                if calls is not None:
                    for delta in calls.finish():
                        yield {"data": reply.chunk(delta)}
                    finish = "tool_calls" if calls.calls else finish
                    note = {"tool_call_error": calls.error} if calls.error else None
                yield {"data": reply.chunk({}, finish=finish, usage_=use, provenance=note)}
                if reply.chat.include_usage:
                    yield {"data": reply.chunk({}, usage_=use, choices=False)}
                break
            elif isinstance(item, ApiError):  # the headers are sent: report it in the stream
                yield {"data": json.dumps(item.body())}
                break
        yield {"data": "[DONE]"}
    finally:
        job.cancel()
