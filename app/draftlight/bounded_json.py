"""JSON from outside (an import, another app's manifest), read within bounds: the file must be
a regular file of at most `max_bytes` (a FIFO or a device is refused, never waited on), and its
nesting at most `max_depth` deep, checked in linear time before the parser (which recurses, and
ended in RecursionError on a file of 100,000 brackets) sees it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from draftlight.regular_files import NotRegularFile, open_regular

MAX_DEPTH = 64
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")


class BoundsError(ValueError):
    """Not read: too large, too deep, or not a regular file."""


def loads(text: str, max_depth: int = MAX_DEPTH):
    """json.loads, refusing nesting deeper than `max_depth` (BoundsError) and bad JSON
    (ValueError)."""
    depth = 0
    for bracket in _BRACKET.finditer(_STRING.sub('""', text)):
        depth += 1 if bracket.group() in "[{" else -1
        if depth > max_depth:
            raise BoundsError(f"nested more than {max_depth} levels deep")
    return json.loads(text)


def read_regular_text(path: Path, max_bytes: int) -> str:
    """The UTF-8 text of the regular file at `path`, at most `max_bytes` of it (BoundsError
    beyond, or for a FIFO, device or socket; OSError if it cannot be opened; UnicodeDecodeError
    for what is not UTF-8)."""
    try:
        with open_regular(path) as stream:
            data = stream.read(max_bytes + 1)
    except NotRegularFile as exc:
        raise BoundsError(str(exc)) from None
    if len(data) > max_bytes:
        raise BoundsError(f"{Path(path).name} is over {max_bytes:,} bytes")
    return data.decode("utf-8")


def read(path: Path, max_bytes: int, max_depth: int = MAX_DEPTH):
    """loads(read_regular_text(path, max_bytes))."""
    return loads(read_regular_text(path, max_bytes), max_depth)
