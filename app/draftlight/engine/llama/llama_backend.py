"""A GGUF model on llama.cpp, through llama-cpp-python's low-level wrappers.

We drive `llama_decode` ourselves instead of `Llama.eval`: that asks for logits only for the rows
being verified (no n_ctx × n_vocab buffer), and rolls the KV cache back with llama_memory_seq_rm.
Flash attention is on and the KV cache's keys are q8_0 (its values f16) because together they
make batched and one-at-a-time evaluation give bit-identical logits on llama.cpp's CPU backend
(see LoadOptions.k_type), which greedy speculation needs to be exactly lossless. A long prompt
is read at llama.cpp's faster f16 speed in a second context and handed to this cache
(fast_prefill.py); decoding passes stay exact.

Recurrent and hybrid models (Mamba, LFM2, Qwen3.5, Granite 4, ...) keep one state per sequence
instead of a key and value per token: how the cache is cut back for them, and made cheap to cut,
is llama_rollback.py's; the vocabulary's calls are llama_vocab.py's.

Not thread-safe: one thread owns a LlamaBackend for its whole life.
"""

from __future__ import annotations

import ctypes
import time
from contextlib import ExitStack, closing
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

import llama_cpp
from llama_cpp import _internals

from draftlight.engine.llama import cpu_check, fast_prefill
from draftlight.engine.core.errors import ModelLoadError, ReadStopped
from draftlight.engine.llama.llama_rollback import RecurrentRollback, RollbackCounters, StateCheckpoint
from draftlight.engine.llama.llama_vocab import LlamaVocabulary
from draftlight.engine.core.load_options import LoadOptions, default_threads
from draftlight.engine.llama.llama_load import (_recent_log, check_gguf_file, context_params,
                                               extra_buffers_usable)

_NO_ABORT = llama_cpp.ggml_abort_callback()  # NULL: no abort callback (llama.cpp's default)


class LlamaBackend(RecurrentRollback, LlamaVocabulary):
    """One loaded GGUF: model, context, a reusable batch, and the tokens in its KV cache."""

    def __init__(self, path: str | Path, options: LoadOptions = LoadOptions(), *,
                 should_cancel: Callable[[], bool] | None = None,
                 on_progress: Callable[[float], None] | None = None) -> None:
        """`should_cancel` is asked as the weights load; True stops the load (ModelLoadError):
        a window closing while a large model loads does not wait for it. `on_progress` hears
        llama.cpp's reports of how much of the weights is loaded (0 to 1)."""
        self.path = Path(path)
        check_gguf_file(self.path)
        self.load_note = ""  # what the user should know about how it was loaded
        left_out = options.extra_buffers and options.check_cpu and not extra_buffers_usable(
            self.path)
        if left_out:
            options = replace(options, extra_buffers=False)
        self.options = options
        self.build = cpu_check.library_build()  # part of the keys of what is measured about it
        self._stack = ExitStack()
        _recent_log.clear()
        threads = options.n_threads or default_threads()
        recurrent = self._open(threads, should_cancel, on_progress)
        self.vocab = self._model.vocab
        self.n_vocab = self._model.n_vocab()
        self.n_ctx = self._ctx.n_ctx()
        self._tokens: list[int] = []
        # "cut": a KV cache, cut anywhere for free; "native": a recurrent state with llama.cpp's
        # snapshots of the latest pass; "checkpoint": a recurrent state copied before a pass.
        self.native_rollback = int(llama_cpp.llama_n_rs_seq(self._ctx.ctx)) if recurrent else 0
        self.rollback = ("cut" if not recurrent
                         else "native" if self.native_rollback else "checkpoint")
        self.rollback_counters = RollbackCounters()
        self._checkpoint: StateCheckpoint | None = None
        self._last_pass = 0  # tokens in the latest llama_decode (its snapshots cover them)
        self._native_pending = False  # a native rollback waits for the next llama_decode
        self._seconds_per_token = 0.0  # of the latest long batched pass (a prompt's)
        self._piece_buffer = ctypes.create_string_buffer(256)
        self._fast_prefill = (fast_prefill.FastPrefill(self._model, options, threads)
                              if fast_prefill.usable(options, self.rollback) else None)
        # Set while a prompt is read (Engine._prefill): once it says so, llama.cpp's abort
        # callback ends the pass between two graph nodes (ReadStopped). Only then: the
        # callback takes the GIL at every node, which a decoding pass must not pay.
        self.stop_reading: Callable[[], bool] | None = None
        # Also set while a prompt is read: told (tokens read, tokens to read) after each batch
        self.on_read: Callable[[int, int], None] | None = None
        self._abort = llama_cpp.ggml_abort_callback(
            lambda _data: self.stop_reading is not None and bool(self.stop_reading()))
        if left_out:  # once loaded: a load that fails says only why it failed
            self.load_note = cpu_check.untold_note(cpu_check.cache_file())

    def _open(self, threads: int, should_cancel: Callable[[], bool] | None,
              on_progress: Callable[[float], None] | None) -> bool:
        """llama.cpp's model, context and batch, on self._stack; whether the model is
        recurrent. Raises ModelLoadError with llama.cpp's own last word on why it failed."""
        try:
            self._model = self._stack.enter_context(closing(
                _internals.LlamaModel(path_model=str(self.path),
                                      params=self._model_params(should_cancel, on_progress),
                                      verbose=False)))
            model = self._model.model
            recurrent = bool(llama_cpp.llama_model_is_recurrent(model)
                             or llama_cpp.llama_model_is_hybrid(model))
            ctx_params = context_params(self.options, threads, recurrent)
            self._ctx = self._stack.enter_context(closing(
                _internals.LlamaContext(model=self._model, params=ctx_params, verbose=False)))
            self._batch = self._stack.enter_context(closing(
                _internals.LlamaBatch(n_tokens=self.options.n_batch, embd=0, n_seq_max=1,
                                      verbose=False)))
        except (ValueError, RuntimeError, OSError) as exc:
            self._stack.close()
            if should_cancel is not None and should_cancel():
                raise ModelLoadError(f"loading {self.path.name} was cancelled") from exc
            reason = next((line for line in reversed(_recent_log) if line), str(exc))
            raise ModelLoadError(f"llama.cpp could not load {self.path.name}: {reason}") from exc
        return recurrent

    def _model_params(self, should_cancel: Callable[[], bool] | None,
                      on_progress: Callable[[float], None] | None):
        """llama.cpp's model parameters: GPU layers, extra buffers, and the load's progress
        callback (which cancels the load once `should_cancel` says so)."""
        model_params = llama_cpp.llama_model_default_params()
        model_params.n_gpu_layers = self.options.n_gpu_layers
        model_params.use_extra_bufts = self.options.extra_buffers
        if should_cancel is not None or on_progress is not None:
            def keep_loading(progress: float, _user_data) -> bool:
                if on_progress is not None:
                    on_progress(progress)
                return should_cancel is None or not should_cancel()

            # kept on self: llama.cpp holds only the pointer
            self._keep_loading = llama_cpp.llama_progress_callback(keep_loading)
            model_params.progress_callback = self._keep_loading
        return model_params

    # --- the Backend protocol -------------------------------------------------------------

    @property
    def tokens(self) -> list[int]:
        return list(self._tokens)

    @property
    def token_view(self) -> Sequence[int]:
        return self._tokens

    @property
    def fast_read_tokens(self) -> int:
        """Prompt tokens read so far at llama.cpp's f16 speed (fast_prefill.py)."""
        return self._fast_prefill.tokens_read if self._fast_prefill is not None else 0

    def eval(self, tokens: Sequence[int], n_logits: int = 1) -> np.ndarray:
        if len(self._tokens) + len(tokens) > self.n_ctx:
            raise RuntimeError("context window is full")
        started = time.perf_counter()
        # a plain cache only: a recurrent state cut in the middle of a pass is not rolled back
        stoppable = n_logits == 0 and self.stop_reading is not None and self.rollback == "cut"
        if stoppable:
            llama_cpp.llama_set_abort_callback(self._ctx.ctx, self._abort, None)
        try:
            if not (n_logits == 0 and self._read_fast(tokens, stoppable, self.on_read)):
                rows = self._decode(tokens, n_logits)
            else:
                rows = []
        finally:
            if stoppable:
                llama_cpp.llama_set_abort_callback(self._ctx.ctx, _NO_ABORT, None)
        if len(tokens) >= 64:
            self._seconds_per_token = (time.perf_counter() - started) / len(tokens)
        if not rows:
            return np.empty((0, self.n_vocab), dtype=np.float32)
        return np.stack(rows)

    def _decode(self, tokens: Sequence[int], n_logits: int) -> list[np.ndarray]:
        n_batch = self.options.n_batch
        rows: list[np.ndarray] = []
        first_with_logits = len(tokens) - n_logits
        for start in range(0, len(tokens), n_batch):
            chunk = tokens[start:start + n_batch]
            batch = self._batch.batch
            fast_prefill.fill_batch(batch, chunk, len(self._tokens), first_with_logits - start)
            self._last_pass, self._native_pending = 0, False  # a failed pass leaves none
            rc = llama_cpp.llama_decode(self._ctx.ctx, batch)
            if rc == 2:  # aborted (stop_reading): llama.cpp took this batch's cells out
                raise ReadStopped(read=start)
            if rc != 0:
                raise RuntimeError(f"llama_decode returned {rc}")
            self._tokens.extend(chunk)
            self._last_pass = len(chunk)
            if n_logits == 0 and self.on_read is not None:
                self.on_read(start + len(chunk), len(tokens))
            for i in range(max(first_with_logits - start, 0), len(chunk)):
                pointer = llama_cpp.llama_get_logits_ith(self._ctx.ctx, i)
                rows.append(np.ctypeslib.as_array(pointer, shape=(self.n_vocab,)).copy())
        return rows

    def _read_fast(self, tokens: Sequence[int], stoppable: bool = False,
                   on_read: Callable[[int, int], None] | None = None) -> bool:
        """A long run of prompt tokens read down llama.cpp's fastest path (fast_prefill.py);
        False: it is read the ordinary way."""
        if self._fast_prefill is None or len(tokens) < fast_prefill.MIN_TOKENS:
            return False
        try:
            if not self._fast_prefill.read(self._ctx.ctx, len(self._tokens), tokens,
                                           abort=self._abort if stoppable else None,
                                           on_read=on_read):
                return False
        except fast_prefill.CacheLost:  # start over the ordinary way: slow, but right
            keep = self._tokens + list(tokens)
            llama_cpp.llama_memory_clear(self._ctx.memory, True)
            self._tokens = []
            self._decode(keep, 0)
            return True
        except (ValueError, MemoryError):  # no memory for the second context: this cache's way
            return False
        except ReadStopped as stopped:  # the batches read before the stop were joined
            self._tokens.extend(tokens[:stopped.read])
            self._last_pass, self._native_pending = 0, False
            raise
        self._tokens.extend(tokens)
        self._last_pass, self._native_pending = 0, False
        return True

    # --- lifetime ---------------------------------------------------------------------------

    # --- the cache kept across a restart (kept_prompt.py) ---------------------------------

    def state_bytes(self) -> int:
        """The size of the cache's state as llama.cpp saves it."""
        return int(llama_cpp.llama_state_seq_get_size(self._ctx.ctx, 0))

    def save_state(self, path: Path) -> bool:
        """Write the cache and its tokens to `path` (llama.cpp's state file)."""
        tokens = (llama_cpp.llama_token * len(self._tokens))(*self._tokens)
        return llama_cpp.llama_state_seq_save_file(
            self._ctx.ctx, str(path).encode(), 0, tokens, len(self._tokens)) > 0

    def load_state(self, path: Path) -> list[int]:
        """Replace the cache by the one saved in `path`; returns its tokens ([]: the file was
        not taken, and the cache is empty)."""
        tokens = (llama_cpp.llama_token * self.n_ctx)()
        count = ctypes.c_size_t(0)
        read = llama_cpp.llama_state_seq_load_file(self._ctx.ctx, str(path).encode(), 0, tokens,
                                                   self.n_ctx, ctypes.byref(count))
        self._last_pass = 0
        if not read:
            llama_cpp.llama_memory_seq_rm(self._ctx.memory, 0, 0, -1)
            self._tokens = []
            return []
        self._tokens = list(tokens[:count.value])
        return list(self._tokens)

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> "LlamaBackend":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

