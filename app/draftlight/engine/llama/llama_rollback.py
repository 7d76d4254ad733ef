"""How a LlamaBackend rolls its cache back to fewer tokens (truncate), and makes that cheap.

A KV cache is cut anywhere for free (llama_memory_seq_rm). A recurrent or hybrid model (Mamba,
LFM2, Qwen3.5, Granite 4, ...) keeps one state per sequence, so a rejected draft cannot simply
be cut off: llama.cpp's own per-token snapshots of the latest pass (`n_rs_seq`, where the
architecture has them) take it back, and otherwise a copy of the sequence's recurrent state
taken by checkpoint() before a verify pass is restored by truncate(), which then re-evaluates
only the accepted tokens (what llama-server does). Without either, truncate() re-evaluates the
whole kept context.

A mixin of LlamaBackend: it uses the backend's context (`_ctx`), token list (`_tokens`), its
`eval`, `rollback` kind and `native_rollback` depth, and keeps its own state on it
(`_checkpoint`, `_last_pass`, `_native_pending`, `rollback_counters`).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import llama_cpp


@dataclass
class StateCheckpoint:
    """A copy of a sequence's recurrent state (llama_state_seq_get_data_ext, partial only: the
    attention part of a hybrid model can be cut, so it is not copied) after `position` tokens."""
    position: int
    data: ctypes.Array


@dataclass
class RollbackCounters:
    """How this backend's rollbacks went (tests check that the cheap ways are taken)."""
    native: int = 0  # rollbacks by llama.cpp's snapshots: free
    restored: int = 0  # rollbacks from a checkpoint, then the kept tokens evaluated again
    full: int = 0  # rollbacks that re-evaluated the whole kept context


class RecurrentRollback:
    """truncate() and the checkpoints that make it cheap (see the module's docstring)."""

    def checkpoint(self, span: int = 0) -> None:
        """Make a later truncate() back to here cheap. `span` > 0 promises that the next eval
        is one pass of at most that many tokens, of which truncate() keeps at least the first.

        A KV cache needs nothing; llama.cpp's snapshots cover such a pass when it is short
        enough; otherwise the recurrent state is copied now (partial: the attention half of a
        hybrid model is cut as usual)."""
        if self.rollback == "cut":
            return
        if self.rollback == "native" and 0 < span <= min(self.native_rollback + 1,
                                                          self.options.n_batch):
            return
        if self._native_pending:
            self._checkpoint = None  # a later rollback re-evaluates: slow, but right
            return
        flags = llama_cpp.LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY
        size = llama_cpp.llama_state_seq_get_size_ext(self._ctx.ctx, 0, flags)
        previous = self._checkpoint  # its buffer is reused: a state may be tens of MB
        if previous is not None and len(previous.data) == size:
            data = previous.data
        else:
            data = (ctypes.c_uint8 * size)()
        if llama_cpp.llama_state_seq_get_data_ext(self._ctx.ctx, data, size, 0, flags) != size:
            self._checkpoint = None
            return
        self._checkpoint = StateCheckpoint(len(self._tokens), data)

    def checkpoint_bytes(self) -> int:
        """Size of one checkpoint: the sequence's recurrent state (0 for a KV cache)."""
        if self.rollback == "cut":
            return 0
        return int(llama_cpp.llama_state_seq_get_size_ext(
            self._ctx.ctx, 0, llama_cpp.LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY))

    def rewind_tokens(self, n: int) -> int:
        """How many tokens truncate(n) would have to evaluate again (0: it just cuts)."""
        drop = len(self._tokens) - n
        if drop <= 0 or self.rollback == "cut" or self._native_covers(drop):
            return 0
        checkpoint = self._checkpoint
        return n - checkpoint.position if checkpoint and checkpoint.position <= n else n

    def rewind_seconds(self, n: int) -> float | None:
        """About how long truncate(n) will take (None: not known yet)."""
        tokens = self.rewind_tokens(n)
        if tokens == 0:
            return 0.0
        return tokens * self._seconds_per_token if self._seconds_per_token else None

    def _native_covers(self, drop: int) -> bool:
        # llama.cpp keeps the states after each token of the latest pass (n_rs_seq of them); it
        # does not check that the pass had that many tokens, so we do: dropping all of it would
        # need the state before it, which it does not have.
        return self.rollback == "native" and drop <= self.native_rollback and drop < self._last_pass

    def truncate(self, n: int) -> None:
        drop = len(self._tokens) - n
        if drop <= 0:
            return
        memory = self._ctx.memory
        if self.rollback == "cut" or self._native_covers(drop):
            if llama_cpp.llama_memory_seq_rm(memory, 0, n, -1):
                if self.rollback == "native":
                    self.rollback_counters.native += 1
                    # Single-use, and applied by the next llama_decode: until then the state
                    # in memory is still the one before it (checkpoint() must not copy it).
                    self._last_pass, self._native_pending = 0, True
                del self._tokens[n:]
                self._forget_checkpoint_after(n)
                return
        checkpoint = self._checkpoint
        if checkpoint is not None and checkpoint.position <= n:
            data, flags = checkpoint.data, llama_cpp.LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY
            if (llama_cpp.llama_state_seq_set_data_ext(self._ctx.ctx, data, len(data), 0, flags)
                    == len(data)
                    and llama_cpp.llama_memory_seq_rm(memory, 0, checkpoint.position, -1)):
                replay = self._tokens[checkpoint.position:n]
                del self._tokens[checkpoint.position:]
                self._last_pass = 0
                if replay:
                    self.eval(replay, n_logits=0)
                self.rollback_counters.restored += 1
                return
        # No cheaper way back: start over and refill (recurrent state before the checkpoint).
        keep = self._tokens[:n]
        llama_cpp.llama_memory_clear(memory, True)
        self._tokens, self._last_pass = [], 0
        self._native_pending = False
        self._forget_checkpoint_after(0)
        if keep:
            self.rollback_counters.full += 1
            self.eval(keep, n_logits=0)

    def _forget_checkpoint_after(self, n: int) -> None:
        if self._checkpoint is not None and self._checkpoint.position > n:
            self._checkpoint = None
