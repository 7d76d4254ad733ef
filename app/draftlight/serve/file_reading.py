"""Serve's readers of documents sent as file parts: a few processes, each bounded in time and
memory (bounded_process.py), shared by all requests so that none can hold them all.

    readers = DocumentReaders(FileLimits())
    attachments = await read_files(checked, readers)   # on the server's loop; cancel to stop
    readers.close()

A request reads its files one after another, so it holds at most one reader while others
answer other clients (three slow PDFs in one request held serve's single reader for 141 s while
another client's one page waited 98 s). Its files together may take `seconds` to read, the wait
for a reader included, and may draw `chars` characters; each document is read with what is left
of both and stopped as soon as it passes either. A request whose client disconnects is
cancelled, and the reader it was using is killed at once: it would otherwise read on for
nobody (the next request starts a new one).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from draftlight.bounded_process import BoundedChild
from draftlight.serve.api_error import ApiError
from draftlight.serve.file_parts import (MAX_REQUEST_FILE_TEXT, REQUEST_READ_SECONDS, FileToRead,
                                         charged, file_error)
from draftlight.serve.schema import ChatRequest, CheckedChat, checked_chat_request
from draftlight.store.attachments import Attachment, AttachmentError, Document

READER_MODULE = "draftlight.store.document_child"
RETRY_AFTER_SECONDS = 2


@dataclass(frozen=True)
class FileLimits:
    chars: int = MAX_REQUEST_FILE_TEXT  # text all of a request's file parts may draw
    seconds: float = REQUEST_READ_SECONDS  # time they may take, waiting for a reader included
    # Readers working at once. Three: one slow request holds one, and two more clients are
    # answered meanwhile; each may take `memory`, so together they stay near the 1 GB one
    # reader of the window may take.
    readers: int = 3
    memory: int = 512 << 20  # bytes each reader may grow by (a body holds at most 3 MB of file)
    # Requests that may wait for a reader (each holds its files' bytes meanwhile); one more
    # gets 429, as a full engine queue does.
    waiting: int = 16


class DocumentReaders:
    """`limits.readers` reader processes, started when first needed, lent to one document at
    a time, in the order requests asked (on the server's loop)."""

    def __init__(self, limits: FileLimits = FileLimits()) -> None:
        self.limits = limits
        self._children = [BoundedChild(READER_MODULE, seconds=limits.seconds,
                                       memory=limits.memory) for _ in range(limits.readers)]
        self._free = list(self._children)
        self._waiters: deque[asyncio.Future] = deque()  # requests waiting for a reader
        self._threads = ThreadPoolExecutor(limits.readers, thread_name_prefix="draftlight-reader")

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    async def read(self, file: FileToRead, *, max_chars: int, deadline: float) -> Attachment:
        """`file`'s document read by the next free reader, within `max_chars` characters and
        by `deadline` (time.monotonic()). ApiError: 429 when too many wait or none came free
        in time, 413 past `max_chars`, 400 past the deadline or for a file that cannot be
        read. Cancelled, it kills the reader it was using."""
        document = file.found
        assert isinstance(document, Document)
        reader = await self._lent(deadline)
        loop = asyncio.get_running_loop()
        try:
            working = self._threads.submit(document.read_with, reader, max_chars=max_chars,
                                           seconds=deadline - time.monotonic())
        except RuntimeError:  # closed: the server is stopping
            self._give_back(reader)
            raise
        # Given back once its thread is done with it, not before: a reader killed for a
        # client that left is free only once its thread has seen it end.
        working.add_done_callback(lambda _: _call_soon(loop, self._give_back, reader))
        try:
            return await asyncio.wrap_future(working)
        except asyncio.CancelledError:
            reader.interrupt()  # the client left: stop reading for nobody
            raise
        except AttachmentError as exc:
            raise file_error(file, exc, self.limits.chars, self.limits.seconds) from None

    async def _lent(self, deadline: float) -> BoundedChild:
        """The next free reader; 429 past `deadline`, or at once when too many wait."""
        if self._free and not self._waiters:
            return self._free.pop()
        if len(self._waiters) >= self.limits.waiting:
            raise _busy()
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        timer = asyncio.get_running_loop().call_later(
            max(0.0, deadline - time.monotonic()),
            lambda: waiter.done() or waiter.set_exception(_busy()))
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                self._give_back(waiter.result())  # lent just as its request was cancelled
            raise
        finally:
            timer.cancel()
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    def _give_back(self, reader: BoundedChild) -> None:
        """`reader` to the request that has waited longest, or among the free ones."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(reader)
                return
        self._free.append(reader)

    def close(self) -> None:
        """Stop every reader (a document being read ends as 'ended'); blocks up to a few
        seconds, so call it off the loop."""
        for child in self._children:
            child.interrupt()
        for child in self._children:
            child.close()
        self._threads.shutdown(wait=False, cancel_futures=True)


async def read_files(checked: CheckedChat, readers: DocumentReaders) -> list[Attachment]:
    """The attachments of `checked`'s file parts, in order: text files as they are, documents
    read one after another by `readers`, all within `readers.limits` (ApiError past them)."""
    limits = readers.limits
    deadline = time.monotonic() + limits.seconds
    left, attachments = limits.chars, []
    for file in checked.files:
        found = file.found
        if isinstance(found, Document):
            found = await readers.read(file, max_chars=left, deadline=deadline)
        left = charged(file, found, left, limits.chars)
        attachments.append(found)
    return attachments


def _busy() -> ApiError:
    return ApiError(429, "the server is busy reading other requests' files; retry later",
                    type="rate_limit_error", code="queue_full",
                    headers={"Retry-After": str(RETRY_AFTER_SECONDS)})


def _call_soon(loop: asyncio.AbstractEventLoop, callback, *args) -> None:
    """`callback` on `loop` from any thread; dropped once the loop is closed (server gone)."""
    try:
        loop.call_soon_threadsafe(callback, *args)
    except RuntimeError:
        pass


async def chat_request_from(body: bytes, *, model_id: str, n_ctx: int,
                            readers: DocumentReaders) -> ChatRequest:
    """A chat completion request from its body, off the event loop: its fields checked and its
    text joined on a thread, its documents read by `readers`, so every other request is
    answered meanwhile. ApiError (4xx) on anything wrong; cancel it to stop its reading."""
    checked = await asyncio.to_thread(checked_chat_request, body, model_id=model_id,
                                      n_ctx=n_ctx)
    del body  # its file parts are in `checked` now; the JSON need not stay while they are read
    attachments = await read_files(checked, readers)
    return await asyncio.to_thread(checked.request, attachments)
