"""Which of a repository's GGUF files to take: each one's memory badge, grouped by quantisation,
and the recommended file with a one-line reason.

The badge counts what runs together: the target's weights, the chosen draft's, and the KV cache
of both at the chosen context (draftlight.store.memory). The recommendation is the largest file that
leaves headroom: a bigger quantisation keeps more of the model's quality, and spare memory keeps
the OS, the browser and the page cache from pushing the weights out to disk.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from draftlight.store.hub import HubFile
from draftlight.store import memory as machine  # looked up at call time: tests set the RAM
from draftlight.store.memory import Fit, MemoryEstimate, MemoryInfo, assess
from draftlight.store.model_names import quant_bits
from draftlight.units import format_bytes

# Recommended only when target + draft + KV cache need at most this share of the free memory.
HEADROOM = 0.75
# The fewest bits at which a fast-verify file is preferred to a larger slow-verify one.
MIN_FAST_BITS = 4


@dataclass(frozen=True)
class FileOption:
    file: HubFile
    estimate: MemoryEstimate | None  # None where the size or this machine's RAM is unknown

    @property
    def fit(self) -> Fit | None:
        return self.estimate.fit if self.estimate else None

    @property
    def group(self) -> str:
        return quant_group(self.file.quant)


@dataclass(frozen=True)
class Recommendation:
    file: HubFile | None
    reason: str


def quant_group(quant: str | None) -> str:
    """'Q4_K_M' -> '4-bit', 'F16' -> '16-bit', None -> 'Other'."""
    bits = quant_bits(quant)
    return f"{bits}-bit" if bits else "Other"


def file_options(files: list[HubFile], *, n_ctx: int, draft_bytes: int = 0,
                 memory: MemoryInfo | None = None) -> list[FileOption]:
    """The single-file models of a repository (no split parts, no projectors), each with the
    memory it needs next to a draft of `draft_bytes`; the largest quantisation first, smallest
    file first within one."""
    memory = memory or machine.system_memory()
    options = [FileOption(f, assess(f.size + draft_bytes, n_ctx=n_ctx, memory=memory)
                          if f.size and memory else None)
               for f in files if f.is_single_model]
    return sorted(options, key=lambda o: (-(quant_bits(o.file.quant) or 0), o.file.size or 0,
                                          o.file.path))


def recommend(options: list[FileOption], *, n_ctx: int, with_draft: bool = False,
              memory: MemoryInfo | None = None,
              fast: Callable[[HubFile], bool] | None = None) -> Recommendation:
    """The largest file whose total need is at most HEADROOM of the free memory; else the
    smallest that still fits; else none, with the reason in one line.

    With `fast` (does this file verify drafts fast here? draftlight.engine.auto.verify_speed), the largest
    roomy file that does is preferred: a slow-verify file gains little from any draft."""
    memory = memory or machine.system_memory()
    sized = [o for o in options if o.estimate is not None]
    if memory is None or not sized:
        return Recommendation(None, "no recommendation: this machine's memory or the file "
                                    "sizes are unknown")
    what = f"with the draft and a {n_ctx:,}-token context" if with_draft else \
        f"with a {n_ctx:,}-token context"
    roomy = [o for o in sized if o.fit is Fit.FITS
             and o.estimate.needed <= HEADROOM * memory.available]
    # Below 4 bits a model loses more than fast drafting wins back: a fast Q2_K never
    # displaces a slow Q5_K_M.
    quick = [o for o in roomy if fast is not None and fast(o.file)
             and (quant_bits(o.file.quant) or 0) >= MIN_FAST_BITS]
    if roomy:
        best = max(quick or roomy, key=lambda o: (o.file.size, o.file.path))
        kind = "file that verifies drafts fast and" if quick else "file that"
        return Recommendation(best.file, (
            f"Recommended {best.file.quant or best.file.path}: the largest {kind} leaves "
            f"{1 - HEADROOM:.0%} of free memory spare ({format_bytes(best.estimate.needed)} "
            f"{what}, {format_bytes(memory.available)} free)"))
    loadable = [o for o in sized if o.fit is not Fit.TOO_BIG]
    if loadable:
        best = min(loadable, key=lambda o: (o.file.size, o.file.path))
        return Recommendation(best.file, (
            f"Recommended {best.file.quant or best.file.path}, but tight: it needs "
            f"{format_bytes(best.estimate.needed)} {what} and "
            f"{format_bytes(memory.available)} is free; close other programs first"))
    return Recommendation(None, f"None of these files fits: the smallest needs "
                                f"{format_bytes(min(o.estimate.needed for o in sized))} {what}, "
                                f"this machine has {format_bytes(memory.total)} of RAM")


def pick_draft_file(files: list[HubFile]) -> HubFile | None:
    """The file to take from a draft's repository: Q8_0 (a draft's quality sets acceptance and
    a small model costs little at 8 bits), else Q4_0, Q4_K_M, else the smallest single file."""
    single = [f for f in files if f.is_single_model]
    for quant in ("Q8_0", "Q4_0", "Q4_K_M"):
        match = [f for f in single if f.quant == quant]
        if match:
            return min(match, key=lambda f: f.size or 0)
    return min(single, key=lambda f: f.size or 0, default=None)
