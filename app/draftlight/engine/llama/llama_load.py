"""What loading a GGUF with llama.cpp takes before a LlamaBackend (llama_backend.py) holds it:
the file checked in plain words first, llama.cpp's log kept (its last error says why a load
failed, and the terminal stays clean), whether this CPU may use llama.cpp's extra buffers,
whether the build offloads to a GPU, and the context's parameters."""

from __future__ import annotations

import ctypes
from collections import deque
from pathlib import Path

import llama_cpp

from draftlight.engine.core.errors import ModelLoadError
from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.llama import cpu_check
from draftlight.regular_files import open_regular
from draftlight.store.gguf_info import GGUF_MAGIC

# llama.cpp logs to stderr by default. Keep its recent lines instead: the last error explains a
# failed load in our one-line message, and the terminal stays clean.
_recent_log: deque[str] = deque(maxlen=20)


@llama_cpp.llama_log_callback
def _log_to_buffer(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
    if level in (2, 3):  # warnings and errors
        _recent_log.append(text.decode("utf-8", "replace").strip())


llama_cpp.llama_log_set(_log_to_buffer, ctypes.c_void_p(0))

def gpu_offload_supported() -> bool:
    return bool(llama_cpp.llama_supports_gpu_offload())


def extra_buffers_usable(path: Path) -> bool:
    """cpu_check.extra_buffers_usable, trying the bundled model (or this one) once per machine:
    every in-process load asks it (LlamaBackend here, the bench's llama-cpp-python peer)."""
    from draftlight import paths
    return cpu_check.extra_buffers_usable(paths.bundled_model_path() or path,
                                          cpu_check.cache_file())


def check_gguf_file(path: Path) -> None:
    """Fail early, in plain words, on a missing file or one that is not GGUF."""
    if not path.exists():
        raise ModelLoadError(f"model file not found: {path}")
    try:  # asked of the descriptor: a FIFO or a device is refused, never waited on
        with open_regular(path) as handle:
            magic = handle.read(4)
    except OSError as exc:  # IsADirectoryError, NotRegularFile, PermissionError, …
        raise ModelLoadError(f"{exc.strerror or exc}: {path}") from None
    if magic != GGUF_MAGIC:
        raise ModelLoadError(f"not a GGUF model file (it does not start with 'GGUF'): {path}")


def context_params(options: LoadOptions, threads: int, recurrent: bool):
    """llama.cpp's context parameters for `options`: one batch size for both batches, flash
    attention, every cell of a sliding-window cache, a recurrent model's rollback room."""
    ctx_params = llama_cpp.llama_context_default_params()
    ctx_params.n_ctx = options.n_ctx
    ctx_params.n_batch = options.n_batch
    ctx_params.n_ubatch = options.n_batch
    ctx_params.n_threads = threads
    ctx_params.n_threads_batch = threads
    ctx_params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED
    ctx_params.no_perf = True
    # Sliding-window layers (Gemma 2/3, Mistral, ...) keep all n_ctx cells, not a ring of
    # n_swa + n_batch that overwrites keys leaving the window: cutting the cache back
    # (truncate: a Regenerate, a new conversation) needs them, and seq_rm does not say
    # they are gone. It is llama.cpp's default; store/memory.py counts this full size.
    ctx_params.swa_full = True
    if options.k_type is not None:
        ctx_params.type_k = options.k_type
    if options.v_type is not None:
        ctx_params.type_v = options.v_type
    if recurrent:  # llama.cpp grants it only to architectures that can roll back
        ctx_params.n_rs_seq = options.rollback_tokens
    return ctx_params
