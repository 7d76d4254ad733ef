"""A long prompt read at llama.cpp's fastest speed into the exact cache.

On llama.cpp's CPU backend flash attention takes one of three paths (load_options.py): with f16
keys and values a pass of >= 64 tokens goes down a tiled path (matrix products over tiles of 64
queries x 64 cells) and a one-token pass over >= 512 cells down a split one, both summing in
other orders than the per-row path every other pass takes. The engine's cache (q8_0 keys, f16
values) takes the per-row path always, which is what makes a verify pass give exactly the logits
of one-token passes; but on a prompt, where attention over thousands of cells dominates, the
per-row path costs 1.3x llama.cpp's default at 1,000 tokens and over 3x at 10,000.

So a run of at least MIN_TOKENS (128) prompt tokens is read in a second, short-lived context on the
same weights whose cache has f16 keys and values:
1. the exact cache's state for the tokens before the run (its keys dequantised to f16) is
   copied in (kv_state.py);
2. the run is decoded there, down the tiled path;
3. the run's keys and values are copied back into the exact cache, the keys quantised to q8_0;
   the tokens before it keep every byte they had.
The cache is then a function of the tokens and of which runs of them were read as prompts; every
mode reads the same prompts the same way and all decoding passes still take the per-row path, so
greedy speculation stays token-identical to plain decoding. A read stopped half-way keeps the
batches it read (the user's Stop loses no minutes of reading): the rest is then a run of its own.

Only for a plain KV cache on the CPU with the engine's cache types; anything else, or a state
whose layout kv_state does not read, is read the ordinary way (`read` returns False).
"""

from __future__ import annotations

import ctypes
from contextlib import closing
from typing import Sequence

import numpy as np
import psutil

import llama_cpp
from llama_cpp import _internals

from draftlight.engine.llama import kv_state
from draftlight.engine.core.errors import ReadStopped
from draftlight.engine.core.load_options import GGML_TYPE_F16, GGML_TYPE_Q8_0, LoadOptions

MIN_TOKENS = 128  # a shorter run gains less than copying the cached state twice costs


class CacheLost(RuntimeError):
    """The exact cache could not take the read state back: it must be rebuilt."""


def usable(options: LoadOptions, rollback: str) -> bool:
    return (options.fast_prefill and rollback == "cut" and options.n_gpu_layers == 0
            and options.k_type == GGML_TYPE_Q8_0 and options.v_type == GGML_TYPE_F16)


def fill_batch(batch, chunk: Sequence[int], n_past: int, first_with_logits: int) -> None:
    """Put `chunk` at positions n_past.. of sequence 0, asking logits from its index
    `first_with_logits` on."""
    batch.n_tokens = len(chunk)
    for i, token in enumerate(chunk):
        batch.token[i] = token
        batch.pos[i] = n_past + i
        batch.seq_id[i][0] = 0
        batch.n_seq_id[i] = 1
        batch.logits[i] = i >= first_with_logits


class FastPrefill:
    """Reads runs of prompt tokens for one exact context (owned by the same thread)."""

    def __init__(self, model: _internals.LlamaModel, options: LoadOptions, threads: int) -> None:
        self._model, self._options, self._threads = model, options, threads
        self.refused = False  # the cache's saved layout is not one kv_state reads: never again
        self.reads = 0  # runs read this way (tests check that it is taken)
        self.tokens_read = 0  # tokens in them
        self.rotation: int | None = None  # how llama.cpp turns keys it quantises; None: unknown
        self.max_cells = 0  # the longest context read this way (memory), set with the rotation

    def read(self, ctx, cached: int, tokens: Sequence[int], abort=None, on_read=None) -> bool:
        """Append `tokens` to sequence 0 of `ctx`, which holds `cached` tokens. False: nothing
        was changed (read them the ordinary way); CacheLost: the exact cache is gone;
        ReadStopped: `abort` (llama.cpp's abort callback) ended it, `ctx` holding the batches
        read before it (its `read` tokens of `tokens`), as an ordinary read would.
        `on_read(done, total)` hears of each batch read."""
        if self.refused or (self.rotation is None and not self._calibrate(tokens)):
            return False
        total = cached + len(tokens)
        if total > self.max_cells:
            return False
        kept = kv_state.parse(_saved(ctx))
        if kept is None or kept.cells != cached:
            self.refused = True
            return False
        n_batch = self._options.n_batch
        with closing(self._context(total)) as fast, closing(_internals.LlamaBatch(
                n_tokens=n_batch, embd=0, n_seq_max=1, verbose=False)) as batch:
            if cached and not _restore(fast.ctx, kv_state.with_key_type(
                    kept, kv_state.F16, self.rotation).to_bytes()):
                return False
            if abort is not None:
                llama_cpp.llama_set_abort_callback(fast.ctx, abort, None)
            try:
                if not _decode(fast.ctx, batch.batch, n_batch, tokens, cached, on_read):
                    return False
            except ReadStopped as stopped:  # what was read before the stop is kept too
                read = kv_state.parse(_saved(fast.ctx)) if stopped.read else None
                if read is None or read.cells != cached + stopped.read:
                    stopped.read = 0
                    raise
                self._join(ctx, kept, read)
                raise
            read = kv_state.parse(_saved(fast.ctx))
        if read is None or read.cells != total:
            self.refused = True
            return False
        self._join(ctx, kept, read)
        self.reads += 1
        self.tokens_read += len(tokens)
        return True

    def _join(self, ctx, kept, read) -> None:
        """The exact cache takes the read cells back (its own kept as they were)."""
        joined = kv_state.spliced(kept, read, kv_state.Q8_0, kv_state.F16,
                                  self.rotation).to_bytes()
        del read
        if not _restore(ctx, joined):
            raise CacheLost("llama.cpp did not take the prompt's cache back")

    def _calibrate(self, tokens: Sequence[int]) -> bool:
        """Find how llama.cpp turns the keys it quantises (kv_state.converted), once: the first
        layer's keys of a few tokens (no attention before them) read in both caches must agree
        after the conversion, within the quantisation's error. None agreeing: refused."""
        probe = list(tokens[:8])
        n_batch = self._options.n_batch
        with closing(self._context(len(probe))) as fast, \
                closing(self._context(len(probe), exact=True)) as exact, \
                closing(_internals.LlamaBatch(n_tokens=n_batch, embd=0, n_seq_max=1,
                                              verbose=False)) as batch:
            if not (_decode(fast.ctx, batch.batch, n_batch, probe, 0)
                    and _decode(exact.ctx, batch.batch, n_batch, probe, 0)):
                self.refused = True
                return False
            read, native = kv_state.parse(_saved(fast.ctx)), kv_state.parse(_saved(exact.ctx))
        if read is None or native is None or native.keys[0].type != kv_state.Q8_0:
            self.refused = True
            return False
        # An f16 cell's keys and values: a read of n cells holds them ~4 times (the second
        # context's cache, its saved state, the spliced one, the engine's own state). Decided
        # once per load, not per read: every mode must read the same prompts the same way.
        cell_bytes = sum(len(rows.data) for rows in read.keys + read.values) // len(probe)
        self.max_cells = _free_memory() // 2 // max(cell_bytes * 4, 1)
        want = kv_state.q8_0_to_f32(native.keys[0].data)
        values_per_row = read.keys[0].row_bytes // 2
        for rotation in (0, 64, 128, 256):
            if rotation and values_per_row % rotation:
                continue
            ours = kv_state.q8_0_to_f32(kv_state.converted(read.keys[0], kv_state.Q8_0,
                                                           rotation).data)
            if np.abs(ours - want).max() <= 0.05 * np.abs(want).max():
                self.rotation = rotation
                return True
        self.refused = True
        return False

    def _context(self, cells: int, exact: bool = False) -> _internals.LlamaContext:
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = -(-cells // 256) * 256
        params.n_batch = params.n_ubatch = self._options.n_batch
        params.n_threads = params.n_threads_batch = self._threads
        params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED
        params.no_perf = True
        params.swa_full = True
        params.type_k = params.type_v = GGML_TYPE_F16
        if exact:
            params.type_k, params.type_v = self._options.k_type, self._options.v_type
        return _internals.LlamaContext(model=self._model, params=params, verbose=False)


def _free_memory() -> int:
    """Bytes free now (0 where it cannot be read: then every prompt is read the ordinary way,
    slower, but never pushing the machine into swap)."""
    try:
        return int(psutil.virtual_memory().available)
    except (OSError, psutil.Error, NotImplementedError):
        return 0


def _decode(ctx, batch, n_batch: int, tokens: Sequence[int], n_past: int,
            on_read=None) -> bool:
    for start in range(0, len(tokens), n_batch):
        chunk = tokens[start:start + n_batch]
        fill_batch(batch, chunk, n_past + start, len(chunk))
        rc = llama_cpp.llama_decode(ctx, batch)
        if rc == 2:  # its abort callback said so (this batch's cells are taken out)
            raise ReadStopped(read=start)
        if rc != 0:
            return False
        if on_read is not None:
            on_read(start + len(chunk), len(tokens))
    return True


def _saved(ctx) -> np.ndarray:
    size = llama_cpp.llama_state_seq_get_size(ctx, 0)
    data = np.empty(size, dtype=np.uint8)
    written = llama_cpp.llama_state_seq_get_data(
        ctx, data.ctypes.data_as(ctypes.POINTER(ctypes.c_ubyte)), size, 0)
    return data[:written]


def _restore(ctx, data: np.ndarray) -> bool:
    data = np.ascontiguousarray(data)
    return llama_cpp.llama_state_seq_set_data(
        ctx, data.ctypes.data_as(ctypes.POINTER(ctypes.c_ubyte)), len(data), 0) == len(data)
