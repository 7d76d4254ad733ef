"""A request's file parts: each identified (a text file's text, or a document still to read), and
the bounds on what reading them may take: the text of all of a request's parts together, and
the time they take to read. The answers that name a part which broke one. Plain data, no I/O;
serve reads the documents in readers of its own (file_reading.py)."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from draftlight.serve.api_error import ApiError
from draftlight.store.attachments import (Attachment, AttachmentError, Document, ReadTooSlow,
                                          TextTooLong, identified)

# The text of a request's file parts, all together: a few KB of PDF can draw millions of
# characters (a 57 KB request took serve to 3.5 GB). As much as the body itself may carry, about
# a million tokens: more than any context a laptop holds. Each part is read with what is left,
# and its reading stops as soon as it passes that (never built whole first).
MAX_REQUEST_FILE_TEXT = 4 * 2**20
# The time one request's files may take to read, all together (waiting for a reader included):
# a 2,000-page PDF takes ~20 s; three slow ones held serve's one reader for 141 s.
REQUEST_READ_SECONDS = 60.0


@dataclass(frozen=True)
class FileToRead:
    """A file part, identified: a text file's attachment, or a Document still to be read."""
    where: str  # the part, as an error names it: "messages[0].content[1].file"
    found: Attachment | Document


def identified_part(file_data: str, filename: str, where: str) -> Attachment | Document:
    """A file part's bytes, identified (its text, or the Document to read); 400 for data
    that is not base64, or a file that is neither text nor a document."""
    data = file_data
    if data.startswith("data:"):
        data = data.partition(",")[2]
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ApiError(400, f"{where}.file_data must be base64 (or a data: URL of it)",
                       param=f"{where}.file_data") from None
    name = filename.replace("\n", " ").strip()[:200] or "attached file"
    try:
        return identified(name, raw)
    except AttachmentError as exc:
        raise ApiError(400, f"{where}: {exc}", param=f"{where}.file_data",
                       code="unsupported_file") from None


def charged(file: FileToRead, attachment: Attachment, left: int, limit: int) -> int:
    """What is left of a request's MAX_REQUEST_FILE_TEXT once `attachment` is counted; 413
    past it."""
    if len(attachment.text) > left:
        raise _too_much_text(file, limit)
    return left - len(attachment.text)


def file_error(file: FileToRead, exc: AttachmentError, limit: int,
               seconds: float = REQUEST_READ_SECONDS) -> ApiError:
    """The answer to a file part that could not be read: 413 past the request's text, 400
    past its reading time, or for a file that cannot be read at all."""
    if isinstance(exc, TextTooLong):
        return _too_much_text(file, limit)
    if isinstance(exc, ReadTooSlow):
        return ApiError(400, f"{file.where}: reading this request's files took longer than "
                             f"{seconds:.0f} s, the most this server spends on one request, so "
                             "it was stopped", param=f"{file.where}.file_data",
                        code="file_read_timeout")
    return ApiError(400, f"{file.where}: {exc}", param=f"{file.where}.file_data",
                    code="unsupported_file")


def _too_much_text(file: FileToRead, limit: int) -> ApiError:
    return ApiError(413, f"{file.where} ({file.found.name}): the text of this request's files "
                         f"passes {limit:,} characters, the most this server reads for one "
                         "request", param=f"{file.where}.file_data", code="file_text_too_large")
