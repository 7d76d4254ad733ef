"""A GGUF header read from an untrusted file: every field is checked before it is trusted.

Layout (GGUF v2/v3): magic "GGUF", u32 version, u64 tensor count, u64 key/value count, the
key/value pairs, then one (name, dims, type, offset) record per tensor. v1 used u32 counts.
All little-endian. A model file is downloaded from anywhere, so the header may lie. Bounds:

- Nothing past the header is read, and nothing is read or skipped before its size has been
  checked against the bytes left in the file: a string's length; an array's count times its
  items' smallest size (1-8 bytes a number, 8 a string, 12 an array); the key/value count
  times 13 bytes and the tensor count times 24 (the smallest pair and tensor record).
- Arrays of numbers are skipped with one seek, never read; strings inside arrays are skipped
  by seeking too.
- A string is at most 64 MiB (a chat template is a few KB).
- At most MAX_KEYS (65,536) key/value pairs: llama.cpp's models have a few hundred, and a file
  of millions of distinct small keys fits every other bound yet cost `models list` 36 s and
  half a GB on every run (each key is kept, to refuse a repeated one).
- Arrays nest at most MAX_ARRAY_DEPTH (3) deep: llama.cpp refuses any array of arrays
  (gguf.cpp: "invalid GGUF type"), the gguf package writes one for a list of lists, and one
  more level is slack. The bound also keeps the reader's recursion to a few frames.
- At most MAX_VISITS (16M) things are visited one by one: key/value pairs, tensor records, and
  the strings and arrays inside arrays. Real headers have about a hundred pairs, up to ~50k
  tensors and vocabularies of up to a few hundred thousand tokens (and as many merges); the
  bound stops a file of empty strings from holding the reader for minutes.
- A key appears once (llama.cpp refuses a repeated key, and a reader must not pick a value).
- Keys whose values are counts (COUNT_KEYS: general.file_type, {arch}.context_length, …) hold
  a whole number >= 0, or an array (per-layer values). A float (NaN and inf included), a
  negative number, a bool or a string there is an error rather than "absent": llama.cpp checks
  these keys' types when it loads the model and refuses the file, so treating it as absent
  would only put off the failure and lose the offset.

Each broken bound is one GGUFError naming the file and the byte offset where the bad field
starts.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, NoReturn

from draftlight.store.errors import GGUFError, NotGGUFError

GGUF_MAGIC = b"GGUF"
MAX_STRING = 64 << 20
MAX_ARRAY_DEPTH = 3
MAX_VISITS = 1 << 24
MAX_KEYS = 1 << 16  # key/value pairs; real models have a few hundred
MAX_DIMS = 8  # llama.cpp's tensors have at most 4

# GGUF value types -> struct format of one scalar; 8 = string, 9 = array.
SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
           10: "<Q", 11: "<q", 12: "<d"}
STRING, ARRAY = 8, 9
_SMALLEST = {**{t: struct.calcsize(f) for t, f in SCALARS.items()}, STRING: 8, ARRAY: 12}
_PAIR, _TENSOR = 8 + 4 + 1, 8 + 4 + 4 + 8  # the smallest key/value pair and tensor record

COUNT_KEYS = {"general.file_type", "general.parameter_count"}
# … and these after the architecture's name ("llama.context_length")
COUNT_SUFFIXES = {"context_length", "vocab_size", "block_count", "embedding_length",
                  "attention.head_count", "attention.head_count_kv", "attention.key_length",
                  "attention.value_length", "nextn_predict_layers"}


@dataclass(frozen=True)
class ArrayValue:
    """An array in the header, kept as its length (token lists run to 262k strings)."""
    item_type: int
    length: int


class HeaderReader:
    """Reads one header from `stream`, front to back, within the bounds above."""

    def __init__(self, stream: BinaryIO, path: Path) -> None:
        self.stream, self.name = stream, path.name
        self.size = os.fstat(stream.fileno()).st_size
        self.offset = 0  # kept here: the stream's tell() costs a system call
        self.visits_left = MAX_VISITS
        self.keys: set[str] = set()

    def start(self) -> tuple[int, int, int]:
        """Check the magic, version and counts: (version, tensor count, key/value count)."""
        self.offset = 4
        if self.stream.read(4) != GGUF_MAGIC:
            raise NotGGUFError(f"{self.name}: not a GGUF file (it does not start with 'GGUF')")
        version = self.scalar("<I")
        if version not in (1, 2, 3):
            self.fail(4, f"unsupported GGUF version {version}")
        count = "<I" if version == 1 else "<Q"
        tensors_at, n_tensors = self.offset, self.scalar(count)
        pairs_at, n_kv = self.offset, self.scalar(count)
        if n_kv > MAX_KEYS:
            self.fail(pairs_at, f"{n_kv:,} key/value pairs: more than {MAX_KEYS:,}, far past "
                                f"any model's few hundred")
        left = self.size - self.offset
        self.within(pairs_at, n_kv * _PAIR,
                    f"{n_kv:,} key/value pairs of at least {_PAIR} bytes", left)
        self.within(tensors_at, n_tensors * _TENSOR,
                    f"{n_tensors:,} tensor records of at least {_TENSOR} bytes",
                    left - n_kv * _PAIR)
        self.visit(pairs_at, n_kv, "key/value pairs")
        self.visit(tensors_at, n_tensors, "tensor records")
        return version, n_tensors, n_kv

    def fail(self, offset: int, what: str) -> NoReturn:
        raise GGUFError(f"{self.name}: corrupt GGUF header at byte {offset:,}: {what}")

    def within(self, offset: int, nbytes: int, what: str, left: int | None = None) -> None:
        """Fail unless `nbytes` (of the field at `offset`) fit in what is left of the file."""
        if nbytes > (self.size - self.offset if left is None else left):
            self.past_end(offset, what)

    def past_end(self, offset: int, what: str) -> NoReturn:
        raise GGUFError(f"{self.name}: the GGUF header is truncated or corrupt at byte "
                        f"{offset:,}: {what} would run past the end of the file "
                        f"(byte {self.size:,})")

    def visit(self, offset: int, count: int, what: str) -> None:
        if count > self.visits_left:
            self.fail(offset, f"{count:,} {what}: more than this reader visits "
                              f"({MAX_VISITS:,} in all)")
        self.visits_left -= count

    def exact(self, n: int, offset: int | None = None) -> bytes:
        at = self.offset if offset is None else offset
        self.within(at, n, f"a {n}-byte field")
        self.offset += n
        data = self.stream.read(n)
        if len(data) != n:  # the file shrank while being read
            self.past_end(at, f"a {n}-byte field")
        return data

    def scalar(self, fmt: str, offset: int | None = None):
        return struct.unpack(fmt, self.exact(struct.calcsize(fmt), offset))[0]

    def string_length(self) -> int:
        at = self.offset
        length = self.scalar("<Q")
        if length > MAX_STRING:
            self.fail(at, f"a string of {length:,} bytes")
        self.within(at, length, f"a string of {length:,} bytes")
        return length

    def string(self) -> str:
        length = self.string_length()
        self.offset += length
        return self.stream.read(length).decode("utf-8", "replace")

    def key(self) -> tuple[str, int]:
        """The next pair's key and value type; the value is read next, with `value`."""
        at = self.offset
        key = self.string()
        if key in self.keys:
            self.fail(at, f"the key {key!r} appears twice")
        self.keys.add(key)
        return key, self.scalar("<I")

    def value(self, value_type: int, *, key: str = "", skip_items: bool = True):
        """A scalar or string; an array as ArrayValue, its items skipped (or, with
        `skip_items=False`, left where they are: only for a caller that reads no further)."""
        at = self.offset
        if value_type in SCALARS:
            value = self.scalar(SCALARS[value_type])
        elif value_type == STRING:
            value = self.string()
        elif value_type == ARRAY:
            return self.array(depth=1, skip_items=skip_items)
        else:
            self.fail(at, f"unknown value type {value_type}")
        if is_count_key(key) and (type(value) is not int or value < 0):
            self.fail(at, f"{key} is {value!r}, not a count")
        return value

    def array(self, *, depth: int, skip_items: bool = True) -> ArrayValue:
        at = self.offset
        item_type, length = self.scalar("<I"), self.scalar("<Q")
        if item_type not in _SMALLEST:
            self.fail(at, f"an array of unknown item type {item_type}")
        if item_type == ARRAY and depth >= MAX_ARRAY_DEPTH:
            self.fail(at, f"arrays nested more than {MAX_ARRAY_DEPTH} deep")
        self.within(at, length * _SMALLEST[item_type],
                    f"an array of {length:,} items of at least {_SMALLEST[item_type]} bytes")
        if skip_items:
            self.skip_items(at, item_type, length, depth)
        return ArrayValue(item_type, length)

    def skip_items(self, at: int, item_type: int, length: int, depth: int) -> None:
        if item_type in SCALARS:
            self.skip(length * _SMALLEST[item_type])
            return
        self.visit(at, length, "strings or arrays in one array")
        if item_type == STRING:
            self.skip_strings(length)
            return
        for _ in range(length):
            self.array(depth=depth + 1)

    def skip(self, nbytes: int) -> None:
        self.stream.seek(nbytes, os.SEEK_CUR)
        self.offset += nbytes

    def skip_strings(self, count: int) -> None:
        """string_length and skip for each of `count` strings, in one loop: a vocabulary is
        most of a header, and this is most of the time spent reading one."""
        read, seek, at, end = self.stream.read, self.stream.seek, self.offset, self.size
        for _ in range(count):
            if at + 8 > end:
                self.past_end(at, "a string's length")
            length = int.from_bytes(read(8), "little")
            if length > MAX_STRING:
                self.fail(at, f"a string of {length:,} bytes")
            if at + 8 + length > end:
                self.past_end(at, f"a string of {length:,} bytes")
            seek(length, os.SEEK_CUR)
            at += 8 + length
        self.offset = at

    def tensor_dims(self) -> tuple[int, ...]:
        self.string()  # tensor name
        at = self.offset
        n_dims = self.scalar("<I")
        if n_dims > MAX_DIMS:
            self.fail(at, f"a tensor with {n_dims:,} dimensions")
        dims = struct.unpack(f"<{n_dims}Q", self.exact(8 * n_dims))
        self.exact(12)  # u32 type + u64 offset
        return dims


def is_count_key(key: str) -> bool:
    return key in COUNT_KEYS or key.partition(".")[2] in COUNT_SUFFIXES
