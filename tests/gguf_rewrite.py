"""Copy a GGUF with some metadata changed (tests only): replace or remove string keys such as
tokenizer.chat_template, keeping every tensor byte-for-byte.

Layout (v3, see app/store/gguf_info.py): "GGUF", u32 version, u64 n_tensors, u64 n_kv, the
key/value pairs, the tensor infos (offsets relative to the data section), padding to
general.alignment (default 32), then the tensor data.
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

_SCALAR_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY, _UINT32 = 8, 9, 4
REMOVE = object()


class _Cursor:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4))[0]

    def u64(self) -> int:
        return struct.unpack("<Q", self.take(8))[0]

    def string(self) -> str:
        return self.take(self.u64()).decode("utf-8")

    def skip_value(self, value_type: int) -> None:
        if value_type in _SCALAR_SIZES:
            self.pos += _SCALAR_SIZES[value_type]
        elif value_type == _STRING:
            length = self.u64()
            self.pos += length
        elif value_type == _ARRAY:
            item_type, length = self.u32(), self.u64()
            if item_type in _SCALAR_SIZES:
                self.pos += _SCALAR_SIZES[item_type] * length
            else:
                for _ in range(length):
                    self.skip_value(item_type)
        else:
            raise ValueError(f"unknown GGUF value type {value_type}")


def _string(text: str) -> bytes:
    raw = text.encode("utf-8")
    return struct.pack("<Q", len(raw)) + raw


def rewrite_gguf(source: Path, destination: Path, changes: dict[str, object]) -> Path:
    """Write `destination`: `source` with each key in `changes` set to a string (or REMOVEd)."""
    with open(source, "rb") as stream:
        head = stream.read(64 << 20)  # the header of a small model is well under this
    cur = _Cursor(head)
    assert cur.take(4) == b"GGUF"
    version, n_tensors, n_kv = cur.u32(), cur.u64(), cur.u64()
    assert version == 3, "only GGUF v3 is rewritten"
    pairs: list[tuple[str, bytes]] = []  # key -> raw (type + value) bytes
    alignment = 32
    for _ in range(n_kv):
        key = cur.string()
        start = cur.pos
        value_type = cur.u32()
        if key == "general.alignment" and value_type == _UINT32:
            alignment = struct.unpack("<I", head[cur.pos:cur.pos + 4])[0]
        cur.skip_value(value_type)
        pairs.append((key, head[start:cur.pos]))
    tensors_start = cur.pos
    for _ in range(n_tensors):
        cur.string()
        n_dims = cur.u32()
        cur.pos += 8 * n_dims + 4 + 8  # dims, type, offset
    tensor_infos = head[tensors_start:cur.pos]
    data_start = cur.pos + (-cur.pos % alignment)

    kept = {key: raw for key, raw in pairs}
    for key, value in changes.items():
        if value is REMOVE:
            kept.pop(key, None)
        else:
            kept[key] = struct.pack("<I", _STRING) + _string(str(value))
    header = b"GGUF" + struct.pack("<IQQ", 3, n_tensors, len(kept))
    header += b"".join(_string(key) + raw for key, raw in kept.items()) + tensor_infos
    header += b"\0" * (-len(header) % alignment)
    with open(source, "rb") as stream, open(destination, "wb") as out:
        out.write(header)
        stream.seek(data_start)
        shutil.copyfileobj(stream, out, 16 << 20)
    return destination
