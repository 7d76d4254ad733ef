"""Hostile GGUF files (tests only): headers written byte by byte to break a reader that trusts
them. Each file is small; what it claims (counts, lengths, nesting) is not.

The bytes are packed here with struct, not with the `gguf` package or the reader under test, so
a file is as hostile as its recipe says. The bad part comes first in each header (ahead of
general.file_type), so every reader meets it, even one that stops early.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from pathlib import Path

U8, U32, I32, F32, STRING, ARRAY, U64 = 0, 4, 5, 6, 8, 9, 10
MANY_KEYS = 65_537  # one past gguf_reader.MAX_KEYS, written here so the corpus stays its own


def string(text: str | bytes) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(raw)) + raw


def kv(key: str, value_type: int, payload: bytes) -> bytes:
    return string(key) + struct.pack("<I", value_type) + payload


def good_kvs(arch: str = "llama") -> list[bytes]:
    """The key/value pairs of a small valid model header, general.file_type among them."""
    tokens = b"".join(string(f"t{i}") for i in range(10))
    return [kv("general.architecture", STRING, string(arch)),
            kv("general.file_type", U32, struct.pack("<I", 15)),
            kv(f"{arch}.context_length", U32, struct.pack("<I", 2048)),
            kv(f"{arch}.block_count", U32, struct.pack("<I", 4)),
            kv(f"{arch}.embedding_length", U32, struct.pack("<I", 64)),
            kv(f"{arch}.attention.head_count", U32, struct.pack("<I", 4)),
            kv("tokenizer.ggml.model", STRING, string("gpt2")),
            kv("tokenizer.ggml.tokens", ARRAY, struct.pack("<IQ", STRING, 10) + tokens)]


GOOD_TENSOR = string("blob") + struct.pack("<IQIQ", 1, 16, 0, 0)  # 1-D, 16 values, F32


def gguf_bytes(kvs: list[bytes], *, n_kv: int | None = None, n_tensors: int = 1,
               tensor: bytes = GOOD_TENSOR, tail: int = 4096) -> bytes:
    """A GGUF v3 file: the header counts (as given, or the true ones), `kvs`, one tensor's info
    and `tail` bytes of zeros standing in for tensor data."""
    header = b"GGUF" + struct.pack("<IQQ", 3, n_tensors, len(kvs) if n_kv is None else n_kv)
    return header + b"".join(kvs) + tensor + b"\0" * tail


def nested_arrays(depth: int) -> bytes:
    """The payload of an array value `depth` arrays deep: [[[...[]...]]]."""
    return struct.pack("<IQ", ARRAY, 1) * (depth - 1) + struct.pack("<IQ", U8, 0)


@dataclass(frozen=True)
class Hostile:
    data: bytes
    start: int  # where the hostile part lies: an error must name an offset in [start, end)
    end: int


def first_key(bad: bytes, *, rest: list[bytes] | None = None) -> Hostile:
    """A header whose first key/value pair is `bad`, followed by the good ones (or `rest`)."""
    return Hostile(gguf_bytes([bad] + (good_kvs() if rest is None else rest)), 24, 24 + len(bad))


def without(kvs: list[bytes], key: str) -> list[bytes]:
    return [pair for pair in kvs if not pair.startswith(string(key))]


def hostile_files() -> dict[str, Hostile]:
    """Name -> each hostile file: it must give one GGUFError naming an offset in its bad part."""
    good = good_kvs()
    past_the_keys = 24 + sum(map(len, good))
    return {
        # a few thousand levels deep: Python's recursion limit, if the reader recurses unbounded
        "nested-arrays": first_key(kv("x.nested", ARRAY, nested_arrays(5000))),
        "four-deep-arrays": first_key(kv("x.nested", ARRAY, nested_arrays(4))),
        "huge-tensor-count": Hostile(gguf_bytes(good, n_tensors=1 << 62), 8, 16),
        "huge-kv-count": Hostile(gguf_bytes(good, n_kv=(1 << 64) - 1), 16, 24),
        "kv-count-past-the-file": Hostile(gguf_bytes(good, n_kv=10_000), 16, 24),
        # a count the file's size allows (13 bytes a pair), past any model's few hundred keys
        "too-many-keys": Hostile(gguf_bytes(good, n_kv=MANY_KEYS, tail=MANY_KEYS * 13), 16, 24),
        "huge-scalar-array": first_key(kv("x.ids", ARRAY, struct.pack("<IQ", U64, 1 << 60))),
        "huge-string-array": first_key(kv("x.words", ARRAY, struct.pack("<IQ", STRING, 1 << 40))),
        "huge-array-of-arrays": first_key(kv("x.lists", ARRAY, struct.pack("<IQ", ARRAY, 1 << 40))),
        "huge-string": first_key(struct.pack("<Q", 1 << 40) + b"general.name"),
        "unknown-value-type": first_key(kv("x.odd", 99, b"\0" * 8)),
        "unknown-array-item-type": first_key(kv("x.odd", ARRAY, struct.pack("<IQ", 99, 0))),
        # numbers that must be counts, each in place of the good header's own (no duplicate)
        "nan-context-length": first_key(
            kv("llama.context_length", F32, struct.pack("<f", float("nan"))),
            rest=without(good, "llama.context_length")),
        "inf-context-length": first_key(
            kv("llama.context_length", F32, struct.pack("<f", float("inf"))),
            rest=without(good, "llama.context_length")),
        "inf-file-type": first_key(kv("general.file_type", F32, struct.pack("<f", float("inf"))),
                                   rest=without(good, "general.file_type")),
        "negative-head-count": first_key(
            kv("llama.attention.head_count", I32, struct.pack("<i", -4)),
            rest=without(good, "llama.attention.head_count")),
        # llama.cpp refuses a repeated key; a reader must not pick one of the two values
        "duplicate-key": Hostile(gguf_bytes([good[0]] + good), 24 + len(good[0]),
                                 24 + 2 * len(good[0])),
        "tensor-with-64-dims": Hostile(
            gguf_bytes(good, tensor=string("t") + struct.pack("<I", 64)), past_the_keys,
            past_the_keys + 13),
    }


# Problems in the tensor infos, after the key/value pairs: readers that stop early never meet them.
PAST_THE_KEYS = {"tensor-with-64-dims"}


def write_hostile(folder: Path, name: str) -> Path:
    """hostile_files()[name] written to folder/name.gguf."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.gguf"
    path.write_bytes(hostile_files()[name].data)
    return path


def assert_names_an_offset_in(text: str, hostile: Hostile) -> None:
    """One line, naming a byte offset inside the hostile part of the file."""
    assert "\n" not in text
    found = re.search(r"at byte ([\d,]+)", text)
    assert found, text
    assert hostile.start <= int(found.group(1).replace(",", "")) < hostile.end, (
        f"{text!r}: expected an offset in [{hostile.start}, {hostile.end})")


def header_end(data: bytes) -> int:
    """Where the header of a well-formed GGUF v2/v3 ends (after its last tensor info), found
    without the reader under test: the cut points of the truncation tests lie before it."""
    pos = 24
    n_tensors, n_kv = struct.unpack_from("<QQ", data, 8)

    def skip_string() -> None:
        nonlocal pos
        pos += 8 + struct.unpack_from("<Q", data, pos)[0]

    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
    for _ in range(n_kv):
        skip_string()
        value_type = struct.unpack_from("<I", data, pos)[0]
        pos += 4
        if value_type == ARRAY:
            item_type, count = struct.unpack_from("<IQ", data, pos)
            pos += 12
            if item_type == STRING:
                for _ in range(count):
                    skip_string()
            else:
                pos += sizes[item_type] * count
        elif value_type == STRING:
            skip_string()
        else:
            pos += sizes[value_type]
    for _ in range(n_tensors):
        skip_string()
        n_dims = struct.unpack_from("<I", data, pos)[0]
        pos += 4 + 8 * n_dims + 12
    return pos
