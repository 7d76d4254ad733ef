"""Will a model fit in this machine's memory? Weights + KV cache at a chosen context vs RAM.

llama.cpp memory-maps the weights, so a model a little larger than free RAM still loads but
pages from disk on every token: that is "tight". Larger than total RAM is "too big".
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import psutil

from draftlight.store.errors import (GGUFError, InsufficientMemoryError, NotGGUFError,
                                     StoreError)
from draftlight.units import format_bytes

OVERHEAD_BYTES = 300 << 20  # compute buffers, the app itself
KV_FRACTION_PER_4K = 0.08  # KV cache at 4k context / weights, typical of GQA models (estimate)


class Fit(Enum):
    FITS = "fits"
    TIGHT = "tight"
    TOO_BIG = "too big"


@dataclass(frozen=True)
class MemoryInfo:
    total: int  # bytes of RAM
    available: int  # bytes free for new allocations (page cache counts as free)


@dataclass(frozen=True)
class MemoryEstimate:
    weights: int
    kv_cache: int
    needed: int  # weights + KV cache + overhead
    fit: Fit


def system_memory() -> MemoryInfo | None:
    """RAM of this machine, or None where it cannot be read (a sandbox without /proc, say).

    psutil's "available" is what the OS would hand out without swapping, on Linux, macOS and
    Windows alike (reclaimable page cache counts as free)."""
    try:
        ram = psutil.virtual_memory()
    except (OSError, psutil.Error, NotImplementedError):
        return None
    return MemoryInfo(ram.total, ram.available)


def estimate_kv_cache(weights: int, n_ctx: int) -> int:
    """A rough KV cache size when the header is not at hand (hub files before download)."""
    return int(weights * KV_FRACTION_PER_4K * n_ctx / 4096)


def assess(weights: int, *, kv_cache: int | None = None, n_ctx: int = 4096,
           memory: MemoryInfo | None = None) -> MemoryEstimate | None:
    """Fits / tight / too big for a model of `weights` bytes at `n_ctx` tokens.

    `kv_cache` comes from `GGUFInfo.kv_cache_bytes` when the file is on disk; otherwise it is
    estimated from the size. Returns None when this machine's RAM cannot be read.
    """
    memory = memory or system_memory()
    if memory is None:
        return None
    kv = kv_cache if kv_cache is not None else estimate_kv_cache(weights, n_ctx)
    needed = weights + kv + OVERHEAD_BYTES
    if needed > memory.total * 0.9:
        fit = Fit.TOO_BIG
    elif needed > memory.available * 0.9:
        fit = Fit.TIGHT
    else:
        fit = Fit.FITS
    return MemoryEstimate(weights, kv, needed, fit)


def check_models_fit(target: str | Path, draft: str | Path | None = None, *,
                     n_ctx: int = 4096, memory: MemoryInfo | None = None) -> MemoryEstimate | None:
    """Refuse, before anything is loaded, a target (+ draft) that cannot fit in RAM.

    Weights are the file sizes, the KV cache comes from each header at `n_ctx`. Returns the
    estimate (TIGHT means it will load but page from disk); None when RAM cannot be read, or a
    file is missing or not a GGUF at all (the loader then says so in its own words).

    Raises:
        GGUFError: a GGUF header is truncated or corrupt (the message gives the byte).
        InsufficientMemoryError: the estimate is over 90% of this machine's RAM; the message
            gives the numbers.
    """
    from draftlight.store.gguf_info import read_gguf_info
    files = [Path(p) for p in (target, draft) if p]
    weights = kv = 0
    try:
        for path in files:
            info = read_gguf_info(path)
            weights += info.file_size
            kv += info.kv_cache_bytes(n_ctx) or estimate_kv_cache(info.file_size, n_ctx)
    except NotGGUFError:
        return None
    except GGUFError:
        raise  # found before anything loads, with the offset: llama.cpp would only say "failed"
    except (OSError, StoreError):
        return None
    memory = memory or system_memory()
    estimate = assess(weights, kv_cache=kv, n_ctx=n_ctx, memory=memory)
    if estimate is None or estimate.fit is not Fit.TOO_BIG:
        return estimate
    what = " + ".join(p.name for p in files)
    raise InsufficientMemoryError(
        f"not enough memory for {what}: it needs about {format_bytes(estimate.needed)} "
        f"(weights {format_bytes(weights)}, KV cache at {n_ctx:,} tokens {format_bytes(kv)}, "
        f"overhead {format_bytes(OVERHEAD_BYTES)}) but this machine has "
        f"{format_bytes(memory.total)} of RAM ({format_bytes(memory.available)} available); "
        f"choose a smaller model or context")


MIN_AUTO_CONTEXT = 2048  # an automatic context is never smaller (unless the model's is)
MAX_AUTO_CONTEXT = 32768  # … nor larger: a KV cache beyond it costs memory few chats use
AUTO_SHARE = 0.8  # of the memory available, what a model, its draft and their caches may take
DEFAULT_CONTEXT = 4096  # where the header or the memory cannot be read


@dataclass(frozen=True)
class ContextChoice:
    n_ctx: int
    why: str  # "what fits in free memory with the draft (trained for 32,768)"; "" unread


def fitting_context(target: str | Path, draft: str | Path | None = None, *,
                    memory: MemoryInfo | None = None) -> ContextChoice:
    """The context an automatic setting loads `target` (and `draft`) with: the largest of the
    model's trained context, MAX_AUTO_CONTEXT, and their halvings down to MIN_AUTO_CONTEXT
    whose weights, KV caches (from the headers, as the picker's badge counts them) and overhead
    fit in AUTO_SHARE of the memory available now. Never raises: a header or memory that
    cannot be read gives DEFAULT_CONTEXT (the loader then says what is wrong with the file)."""
    from draftlight.store.gguf_info import read_gguf_info
    try:
        infos = [read_gguf_info(p) for p in (target, draft) if p]
    except (OSError, StoreError):
        return ContextChoice(DEFAULT_CONTEXT, "")  # the loader says what is wrong with it
    trained = infos[0].context_length or DEFAULT_CONTEXT
    memory = memory or system_memory()
    if memory is None:
        n = min(trained, DEFAULT_CONTEXT)
        return ContextChoice(n, "the default (this machine's free memory is unknown)")
    weights = sum(info.file_size for info in infos)

    def needed(n: int) -> int:
        kv = sum(info.kv_cache_bytes(n) or estimate_kv_cache(info.file_size, n)
                 for info in infos)
        return weights + kv + OVERHEAD_BYTES

    n = min(trained, MAX_AUTO_CONTEXT)
    smallest = min(trained, MIN_AUTO_CONTEXT)
    while n > smallest and needed(n) > AUTO_SHARE * memory.available:
        n = max(n // 2, smallest)
    with_draft = " with the draft" if draft else ""
    if n == trained:
        why = f"the model's trained context, which fits in free memory{with_draft}"
    elif n == MAX_AUTO_CONTEXT:
        why = f"the automatic maximum (trained for {trained:,})"
    elif needed(n) > AUTO_SHARE * memory.available:
        why = f"the smallest automatic context; free memory is short (trained for {trained:,})"
    else:
        why = f"what fits in free memory{with_draft} (trained for {trained:,})"
    return ContextChoice(n, why)
