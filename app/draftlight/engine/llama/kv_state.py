"""A sequence's KV cache as llama.cpp saves it (llama_state_seq_get_data), read and rewritten in
numpy: its keys turned from one type to another, and two saves spliced into one.

fast_prefill.py uses it to read a long prompt in a second context whose cache types take
llama.cpp's fastest attention path, then hand the result to the exact cache.

The layout (llama-kv-cache.cpp, state_write / state_write_meta / state_write_data):

    u32 magic 0xaf143cd8, i32 seq_id                                (llama-context.cpp)
    u32 n_stream
    per stream: u32 cell_count, then if cell_count > 0:
        per cell: i32 pos, u32 n_seq_id, i32 seq_id × n_seq_id     (the "meta")
        u32 v_trans, u32 n_layer
        per layer: i32 k_type, u64 k_row_bytes, cell_count rows of keys
        per layer with values (v_trans = 0): i32 v_type, u64 v_row_bytes, cell_count rows

Only the layout of one stream, one cache, one sequence at positions 0..n-1 and untransposed
values is read; anything else (a sliding-window model's second cache, M-RoPE cell extensions,
several streams) is refused with None, and the caller reads the prompt the ordinary way.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

MAGIC = 0xAF143CD8  # llama-context.cpp's io_magic
F16 = 1  # ggml_type numbers (load_options.py)
Q8_0 = 8
Q8_0_BLOCK = 32  # values per q8_0 block: an f16 scale, then 32 int8
Q8_0_BLOCK_BYTES = 34


@dataclass(frozen=True)
class Rows:
    """One layer's keys (or values): `cells` rows of `row_bytes` bytes of ggml type `type`."""
    type: int
    row_bytes: int
    data: np.ndarray  # uint8, cells × row_bytes

    def first(self, n: int) -> "Rows":
        return replace(self, data=self.data[:n * self.row_bytes])

    def after(self, n: int) -> "Rows":
        return replace(self, data=self.data[n * self.row_bytes:])


@dataclass(frozen=True)
class SequenceState:
    cells: int
    meta: np.ndarray  # uint8: the per-cell positions and sequence ids, as saved
    keys: tuple[Rows, ...]
    values: tuple[Rows, ...]

    def to_bytes(self) -> np.ndarray:
        parts = [np.array([MAGIC, 0, 1, self.cells], dtype="<u4").view(np.uint8)]
        if self.cells:
            parts += [self.meta, np.array([0, len(self.keys)], dtype="<u4").view(np.uint8)]
            for rows in self.keys + self.values:
                parts += [np.array([rows.type], dtype="<i4").view(np.uint8),
                          np.array([rows.row_bytes], dtype="<u8").view(np.uint8), rows.data]
        return np.concatenate(parts)


class _Reader:
    def __init__(self, data: np.ndarray) -> None:
        self.data, self.at = data, 0

    def take(self, n: int) -> np.ndarray:
        if n < 0 or self.at + n > len(self.data):
            raise ValueError("the saved state ends early")
        part = self.data[self.at:self.at + n]
        self.at += n
        return part

    def number(self, dtype: str) -> int:
        size = np.dtype(dtype).itemsize
        return int(self.take(size).view(dtype)[0])


def parse(data: np.ndarray) -> SequenceState | None:
    """The state saved from sequence 0 of a plain KV cache, or None when its layout is not the
    one this module reads (see the module's docstring)."""
    try:
        reader = _Reader(data)
        if (reader.number("<u4"), reader.number("<i4"), reader.number("<u4")) != (MAGIC, 0, 1):
            return None
        cells = reader.number("<u4")
        if cells == 0:
            return SequenceState(0, np.empty(0, np.uint8), (), ()) if reader.at == len(data) \
                else None
        meta = reader.take(12 * cells)  # pos, n_seq_id = 1, seq_id = 0 per cell, or refused
        fields = meta.view("<i4").reshape(cells, 3)
        if not (np.array_equal(fields[:, 0], np.arange(cells)) and (fields[:, 1] == 1).all()
                and (fields[:, 2] == 0).all()):
            return None
        v_trans, layers = reader.number("<u4"), reader.number("<u4")
        if v_trans != 0:
            return None
        keys = tuple(_rows(reader, cells) for _ in range(layers))
        values = tuple(_rows(reader, cells) for _ in range(layers))
        if reader.at != len(data):  # a second cache (sliding window), or layers without values
            return None
        return SequenceState(cells, meta, keys, values)
    except ValueError:
        return None


def _rows(reader: _Reader, cells: int) -> Rows:
    kind, row_bytes = reader.number("<i4"), reader.number("<u8")
    return Rows(kind, row_bytes, reader.take(cells * row_bytes))


def converted(rows: Rows, kind: int, rotation: int = 0) -> Rows:
    """The same rows in another type (f16 and q8_0, either way). llama.cpp turns each run of
    `rotation` values of a key by a Walsh-Hadamard matrix H before quantising it (its
    attn_rot_k: spreads outliers over the block) and turns queries the same way, so dot
    products are unchanged; H is its own inverse, so the turn is the same both ways."""
    if rows.type == kind:
        return rows
    if (rows.type, kind) == (Q8_0, F16):
        values = _turned(q8_0_to_f32(rows.data), rotation).astype(np.float16)
        per_row = rows.row_bytes // Q8_0_BLOCK_BYTES * Q8_0_BLOCK
        return Rows(F16, per_row * 2, values.view(np.uint8))
    if (rows.type, kind) == (F16, Q8_0) and (rows.row_bytes // 2) % Q8_0_BLOCK == 0:
        blocks = rows.row_bytes // 2 // Q8_0_BLOCK
        values = _turned(rows.data.view(np.float16).astype(np.float32), rotation)
        return Rows(Q8_0, blocks * Q8_0_BLOCK_BYTES, to_q8_0(values))
    raise ValueError(f"no conversion from ggml type {rows.type} to {kind}")


def hadamard(n: int) -> np.ndarray:
    """The orthonormal n x n Walsh-Hadamard matrix, built as llama.cpp's ggml_gen_hadamard."""
    matrix = np.full((1, 1), 1.0 / np.sqrt(np.float32(n)), dtype=np.float32)
    while len(matrix) < n:
        matrix = np.block([[matrix, matrix], [matrix, -matrix]])
    return matrix


def _turned(values: np.ndarray, rotation: int) -> np.ndarray:
    """f32 values, each run of `rotation` of them turned by H (H is symmetric: x @ H = H x)."""
    if not rotation:
        return values
    return (values.reshape(-1, rotation) @ hadamard(rotation)).reshape(-1)


def q8_0_to_f32(data: np.ndarray) -> np.ndarray:
    """Dequantised, as ggml's dequantize_row_q8_0 does (int8 × the block's scale in f32)."""
    blocks = data.reshape(-1, Q8_0_BLOCK_BYTES)
    scale = blocks[:, :2].copy().view(np.float16).astype(np.float32)
    quants = blocks[:, 2:].view(np.int8).astype(np.float32)
    return (quants * scale).reshape(-1)


def q8_0_to_f16(data: np.ndarray) -> np.ndarray:
    return q8_0_to_f32(data).astype(np.float16)


def to_q8_0(values: np.ndarray) -> np.ndarray:
    """f16 or f32 values quantised as ggml's quantize_row_q8_0_ref: per block of 32, scale =
    max|x| / 127, each value rounded half away from zero to x / scale."""
    x = values.astype(np.float32).reshape(-1, Q8_0_BLOCK)
    scale = np.abs(x).max(axis=1, keepdims=True) / 127
    inverse = np.divide(1.0, scale, out=np.zeros_like(scale), where=scale > 0)
    scaled = x * inverse
    quants = np.trunc(scaled + np.copysign(0.5, scaled)).astype(np.int8)
    out = np.empty((len(x), Q8_0_BLOCK_BYTES), dtype=np.uint8)
    out[:, :2] = scale.astype(np.float16).view(np.uint8)
    out[:, 2:] = quants.view(np.uint8)
    return out.reshape(-1)


def with_key_type(state: SequenceState, kind: int, rotation: int = 0) -> SequenceState:
    return replace(state, keys=tuple(converted(rows, kind, rotation) for rows in state.keys))


def spliced(kept: SequenceState, read: SequenceState, key_type: int, value_type: int,
            rotation: int = 0) -> SequenceState:
    """`kept`'s cells byte for byte, then `read`'s cells after them turned into the exact
    cache's types: only the newly read rows are converted."""
    n = kept.cells
    if n and (len(kept.keys) != len(read.keys) or len(kept.values) != len(read.values)):
        raise ValueError("the two states are of different models")

    def join(old: Rows | None, new: Rows, kind: int, turn: int) -> Rows:
        tail = converted(new.after(n), kind, turn)
        if old is None:
            return tail
        if old.type != kind or old.row_bytes != tail.row_bytes:
            raise ValueError("the kept rows are of another type or size")
        return Rows(kind, old.row_bytes, np.concatenate([old.data, tail.data]))

    keys = kept.keys if n else (None,) * len(read.keys)
    values = kept.values if n else (None,) * len(read.values)
    return SequenceState(read.cells, read.meta,
                         tuple(join(o, r, key_type, rotation) for o, r in zip(keys, read.keys)),
                         tuple(join(o, r, value_type, 0) for o, r in zip(values, read.values)))
