"""Files brought into a conversation: a text file (prose, Markdown, source code, any text by its
content) read with its encoding found, a PDF's text layer page by page, a Word document's
paragraphs or an HTML page's visible text (store.documents), put into the message under a header
that names it, so the reply can quote it and the drafts can copy from it.

What cannot be read gets one line that says what it is and nothing is read whole: a file over
MAX_BYTES is refused before reading, a binary file (an image, an archive, a program) by its
first bytes, an encrypted or scanned PDF by what pypdf finds. The text goes to the model as
text: a chat template's control tokens in it are tokenized as plain text by the engine
(draftlight.engine.text.control_text), as any message's are.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

from draftlight.bounded_process import BoundedChild, ChildFailed
from draftlight.regular_files import NotRegularFile, open_regular
from draftlight.store.documents import MAX_DOCUMENT_TEXT, PAGE_LINE, looks_like_html, page_at
from draftlight.store.errors import StoreError
from draftlight.user_messages import visible

MAX_BYTES = 2 << 20  # about 500k tokens of text: far more than any context here holds
MAX_DOCUMENT_BYTES = 32 << 20  # a PDF or DOCX holds far less text than its size
SNIFF = 8192  # the bytes looked at to tell text from binary
# What the first bytes of common non-text files are, for the line that refuses them
SIGNATURES = ((b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"),
              (b"GIF8", "a GIF image"), (b"PK\x03\x04", "a ZIP archive"),
              (b"\x7fELF", "a program"), (b"MZ", "a Windows program"),
              (b"GGUF", "a GGUF model (use it as a target or draft instead)"),
              (b"SQLite format 3", "a SQLite database"))
ENCODINGS = ("utf-8-sig", "utf-16", "cp1252")  # utf-16 only with its BOM (checked first)
READ_SECONDS = 60.0  # the longest a document's text may take to read (2,000 PDF pages: ~20 s)
READ_MEMORY = 1 << 30  # what reading one document may take, past the reader's own size
HEADER = "Attached file: "  # before each file's name in the message; attachment_at reads it


class AttachmentError(StoreError):
    """A file that cannot be attached, and why (one line)."""


@dataclass(frozen=True)
class Attachment:
    name: str  # the file's name, as the header shows it
    text: str
    encoding: str  # of a text file; "pdf", "docx" or "html" for the text taken from one
    sha256: str  # of the bytes read: the same file attached twice is one attachment
    pages: int | None = None  # a PDF's (those sent, when only the first ones are)
    total_pages: int | None = None  # the PDF's, when only its first `pages` are sent

    @property
    def lines(self) -> int:
        return self.text.count("\n") + (0 if self.text.endswith("\n") or not self.text else 1)

    def record(self) -> dict:
        """What the history keeps of it besides its text (which is in the message)."""
        return {"name": self.name, "type": self.encoding if self.encoding in (
            "pdf", "docx", "html") else "text", "pages": self.pages, "sha256": self.sha256}

    def describe(self) -> str:
        """"notes.md · 120 lines", "report.pdf · 12 pages" (a chip's words)."""
        if self.total_pages is not None:
            return f"{self.name} · pages 1-{self.pages} of {self.total_pages}"
        if self.pages is not None:
            return f"{self.name} · {self.pages} page{'s' if self.pages != 1 else ''}"
        return f"{self.name} · {self.lines} line{'s' if self.lines != 1 else ''}"


def read_attachment(path: Path) -> Attachment:
    """The text file at `path`.

    Raises:
        AttachmentError: missing, a folder, not a regular file (a device, pipe or socket), too
            large, empty, or not text."""
    path = Path(path)
    if path.is_dir():  # (Windows cannot open a folder to ask open_regular)
        raise AttachmentError(f"{path.name} is a folder: attach the files in it")
    document = _document_kind(path)
    limit = MAX_DOCUMENT_BYTES if document else MAX_BYTES
    too_large = (f"{path.name} is over {limit >> 20} MB: attachments are at most "
                 f"{limit >> 20} MB" + ("" if document else " of text"))
    try:
        with open_regular(path) as stream:
            size = os.fstat(stream.fileno()).st_size
            if size > limit:
                raise AttachmentError(f"{path.name} is {size / (1 << 20):.1f} MB: attachments "
                                      f"are at most {limit >> 20} MB"
                                      + ("" if document else " of text"))
            data = stream.read(limit + 1)  # never more, whatever the size said
    except AttachmentError:  # an OSError too (StoreError): said as it is
        raise
    except IsADirectoryError:
        raise AttachmentError(f"{path.name} is a folder: attach the files in it") from None
    except NotRegularFile:
        raise AttachmentError(f"{path.name} is not a file but a device, pipe or socket: "
                              f"attach a file") from None
    except FileNotFoundError:
        raise AttachmentError(f"{path.name}: the file is no longer there") from None
    except OSError as exc:
        raise AttachmentError(f"{path.name}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > limit:  # it grew while it was read
        raise AttachmentError(too_large)
    return attachment_from_bytes(path.name, data)


def attachment_from_bytes(name: str, data: bytes) -> Attachment:
    """The attachment a file named `name` with these bytes makes (a file read by
    read_attachment, or one a client of `draftlight serve` sent); a document's text is read in
    this app's bounded process.

    Raises:
        AttachmentError: empty, or not text nor a document whose text can be read."""
    found = identified(name, data)
    return found.read() if isinstance(found, Document) else found


def identified(name: str, data: bytes) -> Attachment | Document:
    """A text file's attachment, or the Document (PDF, Word, HTML) whose text is still to be
    read: what can be told of a file without a parser of untrusted documents.

    Raises:
        AttachmentError: empty, or neither text nor a document."""
    if not data.strip():
        raise AttachmentError(f"{name} is empty")
    digest = hashlib.sha256(data).hexdigest()
    if data.startswith(b"%PDF"):
        return Document("pdf", name, base64.b64encode(data).decode("ascii"), digest)
    if data.startswith(b"PK\x03\x04") and Path(name).suffix.lower() in (".docx", ".docm"):
        return Document("docx", name, base64.b64encode(data).decode("ascii"), digest)
    text, encoding = decoded(data, name)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if looks_like_html(name, text):
        return Document("html", name, text, digest)
    return Attachment(name, text, encoding, digest)


class TextTooLong(AttachmentError):
    """A document whose text passed the characters it was read with (its reading stopped
    there); `limit` is that number."""

    def __init__(self, message: str, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


class ReadTooSlow(AttachmentError):
    """A document whose text took longer to read than it was given; `seconds` is that time."""

    def __init__(self, message: str, seconds: float) -> None:
        super().__init__(message)
        self.seconds = seconds


@dataclass(frozen=True)
class Document:
    """A PDF, Word document or HTML page whose text is still to be read: in a bounded process
    (document_child.py), since its parsers were written for well-meaning files."""
    kind: str  # "pdf", "docx" or "html"
    name: str
    payload: str  # base64 of the file's bytes; an HTML page's text as it is
    sha256: str  # of the file's bytes

    def read(self, *, max_chars: int = MAX_DOCUMENT_TEXT) -> Attachment:
        """Its attachment, its text read in this app's one shared reader (read_with)."""
        return self.read_with(_reader(READ_SECONDS, READ_MEMORY), max_chars=max_chars)

    def read_with(self, reader: BoundedChild, *, max_chars: int = MAX_DOCUMENT_TEXT,
                  seconds: float | None = None) -> Attachment:
        """Its attachment, its text read by `reader` (stopped past `max_chars` characters or
        `seconds`, at most the reader's own limit).

        Raises:
            TextTooLong, ReadTooSlow, or AttachmentError: no text, unreadable, too much
                memory, or the reader was interrupted."""
        name = self.name
        try:
            answer = reader.ask({"kind": self.kind, "name": name, "data": self.payload,
                                 "max_chars": max_chars}, seconds=seconds)
        except ChildFailed as exc:
            if exc.reason == "time":
                waited = reader.seconds if seconds is None else min(seconds, reader.seconds)
                raise ReadTooSlow(f"{name}: reading its text took longer than {waited:.0f} s, "
                                  "so it was stopped", waited) from None
            if exc.reason == "ended":
                raise AttachmentError(f"{name}: reading its text stopped the reader: {exc}") \
                    from None
            raise AttachmentError(f"{name}: documents cannot be read here ({exc})") from None
        if "too_long" in answer:
            raise TextTooLong(answer["error"], answer["too_long"])
        if "error" in answer:
            raise AttachmentError(answer["error"])
        if "text" not in answer:  # {"failed": "memory"}
            raise AttachmentError(f"{name}: reading its text took more than "
                                  f"{reader.memory >> 20:,} MB of memory, so it was stopped")
        if self.kind == "html" and not answer["text"]:
            raise AttachmentError(f"{name}: the page has no visible text")
        # its "encoding" names where the text came from: "pdf", "docx" or "html"
        return Attachment(name, answer["text"], self.kind, self.sha256, answer["pages"])


@functools.cache
def _reader(seconds: float, memory: int) -> BoundedChild:
    """The one process the window and `chat --attach` read documents in (document_child.py),
    started when first needed; `draftlight serve` keeps readers of its own."""
    return BoundedChild("draftlight.store.document_child", seconds=seconds, memory=memory)


def _document_kind(path: Path) -> bool:
    """Whether `path` is named like a PDF or Word document (larger files are allowed)."""
    return path.suffix.lower() in (".pdf", ".docx", ".docm")


def decoded(data: bytes, name: str) -> tuple[str, str]:
    """(text, encoding) of a file's bytes, or an AttachmentError naming what it is instead."""
    for signature, what in SIGNATURES:
        if data.startswith(signature):
            raise AttachmentError(f"{name} is {what}, not text")
    head = data[:SNIFF]
    utf16 = head.startswith((b"\xff\xfe", b"\xfe\xff"))
    if b"\0" in head and not utf16:
        raise AttachmentError(f"{name} is not text (binary data)")
    for encoding in ENCODINGS:
        if encoding == "utf-16" and not utf16:
            continue
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if _mostly_printable(text[:SNIFF]):
            return text, encoding
    raise AttachmentError(f"{name} is not text (no text encoding reads it)")


def _mostly_printable(text: str) -> bool:
    control = sum(1 for c in text if ord(c) < 32 and c not in "\n\r\t\f")
    return control <= len(text) // 100


def with_attachments(message: str, attachments: list[Attachment]) -> str:
    """The message as the model gets it: each file under a header that names it, then the
    message (a fence longer than any backtick run inside keeps code intact)."""
    parts = []
    for attachment in attachments:
        fence = "`" * max(3, _longest_backtick_run(attachment.text) + 1)
        parts.append(f"{HEADER}{visible(attachment.name)}\n{fence}\n{attachment.text.rstrip()}\n"
                     f"{fence}")
    parts.append(message)
    return "\n\n".join(p for p in parts if p)


def _longest_backtick_run(text: str) -> int:
    longest = run = 0
    for c in text:
        run = run + 1 if c == "`" else 0
        longest = max(longest, run)
    return longest


_BLOCK = re.compile(re.escape(HEADER) + r"(?P<name>[^\n]+)\n(?P<fence>`{3,})\n")


@dataclass(frozen=True)
class Block:
    """An attached file inside a message made by with_attachments."""
    name: str
    start: int  # where the file's text starts in the message
    end: int  # … and ends
    after: int  # where the block (its closing fence and the blank line) ends

    def describe(self, message: str) -> str:
        """"report.pdf · 3 pages" or "notes.md · 12 lines", from the text in the message."""
        text = message[self.start:self.end]
        pages = len(PAGE_LINE.findall(text))
        if pages:
            return f"{self.name} · {pages} page{'s' if pages != 1 else ''}"
        lines = text.count("\n") + 1
        return f"{self.name} · {lines} line{'s' if lines != 1 else ''}"


def attachment_blocks(message: str) -> list[Block]:
    """The files attached to `message`, in order (none for a message without any)."""
    blocks, at = [], 0
    while (match := _BLOCK.match(message, at)) is not None:
        start = match.end()
        close = message.find("\n" + match.group("fence"), start)
        if close < 0:
            break
        after = close + 1 + len(match.group("fence"))
        blocks.append(Block(match.group("name"), start, close, after))
        at = after + 2 if message.startswith("\n\n", after) else after
    return blocks


def own_text_start(message: str) -> int:
    """Where the message's own words start, after its attached files (0 without any)."""
    blocks = attachment_blocks(message)
    if not blocks:
        return 0
    after = blocks[-1].after
    return after + 2 if message.startswith("\n\n", after) else after


def block_at(message: str, position: int) -> Block | None:
    """The attached file of `message` whose text holds character `position`; None outside."""
    return next((b for b in attachment_blocks(message) if b.start <= position < b.end), None)


def attachment_at(message: str, position: int) -> tuple[str, int, int | None] | None:
    """(file name, line number from 1, page of a PDF or None) of the attached file whose text
    holds character `position` of a message made by with_attachments; None outside every
    file."""
    block = block_at(message, position)
    if block is None:
        return None
    return (block.name, message.count("\n", block.start, position) + 1,
            page_at(message[block.start:block.end], position - block.start))


def attachment_origin(origin, messages: list[dict]):
    """A drafted token's origin (engine.origins.Origin) copied from a message's span, placed in
    the attached file it lies in: kind "attachment", the file's `name`, its `page` (a PDF's)
    or `line`, `start`/`end` as offsets into the file's text, the same `message`; any other
    origin as it is."""
    index, start, end = origin.message, origin.start, origin.end
    if (origin.kind != "message" or not isinstance(index, int)
            or not isinstance(start, int) or not isinstance(end, int)
            or not 0 <= index < len(messages)):
        return origin
    message = messages[index].get("content") or ""
    found = attachment_at(message, start)
    if found is None:
        return origin
    name, line, page = found
    block = block_at(message, start)
    return replace(origin, kind="attachment", name=name, page=page or None,
                   line=None if page else line, start=start - block.start,
                   end=min(end, block.end) - block.start)
