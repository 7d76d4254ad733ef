"""JSON from outside (an import, another app's manifest), read within bounds: the file must be
a regular file of at most `max_bytes` (a FIFO or a device is refused, never waited on), and its
nesting at most `max_depth` deep, checked before the parser (which recurses, and ended in
RecursionError on a file of 100,000 brackets) sees it.

The nesting is counted over the bytes, a window at a time, by C's own passes (bytes.replace,
translate, split, accumulate): memory is the window's, whatever the file holds. A regular
expression that matched each string whole kept about 120 bytes per character of it on the
regex engine's stack (a 63 MB import: MemoryError at 6 GB); one that removed them match by
match built a Python object per match (9 s and gigabytes for 64 MB of short strings)."""

from __future__ import annotations

import json
import os
from array import array
from itertools import accumulate
from pathlib import Path

from draftlight.regular_files import NotRegularFile, open_regular

MAX_DEPTH = 64
WINDOW = 1 << 20  # bytes of the file looked at in one pass (what the check holds at once)
_STRUCTURE = b'"[]{}'
_NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(_STRUCTURE)))
_STEP = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # as signed bytes: +1 opens, -1 closes


class BoundsError(ValueError):
    """Not read: too large, too deep, or not a regular file."""


def check_depth(data: bytes, max_depth: int = MAX_DEPTH) -> None:
    """BoundsError if brackets outside strings nest deeper than `max_depth` anywhere the
    parser would reach (bad JSON may be refused here too; the parser refuses it anyway)."""
    carry, in_string, depth = b"", False, 0
    for start in range(0, len(data), WINDOW):
        window = carry + data[start:start + WINDOW]
        # An escape never starts or ends a string: pairs of backslashes go first, then each
        # escaped quote. A backslash left last escapes the next window's first byte.
        window = window.replace(b"\\\\", b"")
        carry = b"\\" if window.endswith(b"\\") else b""
        window = window[:len(window) - len(carry)].replace(b'\\"', b"")
        # Every quote left starts or ends a string: what lies between is not structure.
        pieces = window.translate(None, _NOT_STRUCTURE).split(b'"')
        outside = b"".join(pieces[1 if in_string else 0::2])
        in_string ^= (len(pieces) - 1) % 2 == 1
        for at in range(0, len(outside), 1 << 16):
            steps = array("b", outside[at:at + (1 << 16)].translate(_STEP))
            running = list(accumulate(steps, initial=depth))
            if max(running) > max_depth:
                raise BoundsError(f"nested more than {max_depth} levels deep")
            depth = running[-1]


def loads(text: str | bytes, max_depth: int = MAX_DEPTH):
    """json.loads, refusing nesting deeper than `max_depth` (BoundsError) and bad JSON
    (ValueError)."""
    check_depth(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text,
                max_depth)
    return json.loads(text)


def read_regular_bytes(path: Path, max_bytes: int) -> bytes:
    """The bytes of the regular file at `path`, at most `max_bytes` of them (BoundsError
    beyond, or for a FIFO, device or socket; OSError if it cannot be opened)."""
    too_large = BoundsError(f"{Path(path).name} is over {max_bytes:,} bytes")
    try:
        with open_regular(path) as stream:
            # read(n) sets n bytes aside before it reads: asked for the limit, a 2 MB import
            # took 64 MB. The file's size says how much to ask for (one byte more: a file
            # that grew since is read on, in steps).
            size = os.fstat(stream.fileno()).st_size
            if size > max_bytes:
                raise too_large
            parts = [stream.read(size + 1)]
            held = len(parts[0])
            while size < held <= max_bytes and (more := stream.read(1 << 20)):
                parts.append(more)
                held += len(more)
    except NotRegularFile as exc:
        raise BoundsError(str(exc)) from None
    if held > max_bytes:
        raise too_large
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_regular_text(path: Path, max_bytes: int) -> str:
    """read_regular_bytes as UTF-8 text (UnicodeDecodeError for what is not UTF-8)."""
    return read_regular_bytes(path, max_bytes).decode("utf-8")


def read(path: Path, max_bytes: int, max_depth: int = MAX_DEPTH):
    """The JSON in the regular file at `path`: read_regular_bytes, its depth checked, then
    parsed (UnicodeDecodeError for what is not UTF-8, ValueError for what is not JSON)."""
    data = read_regular_bytes(path, max_bytes)
    check_depth(data, max_depth)
    text = data.decode("utf-8")
    del data  # the parser's objects take its room
    return json.loads(text)
